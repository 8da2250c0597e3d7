//! Approvals: the runs paused at an approval or input gate in one Clawdis
//! home, whichever process paused them (`lobster` spawned by an agent,
//! `clawdis serve`, the app), and the decisions people make on them.
//!
//! [`Approvals::watch`] polls the shared SQLite store and publishes a
//! [`Event`] on a broadcast bus for every pause and every decision, so the
//! app's notifications, tray and windows follow runs they did not start.
//! [`Approvals::decide`] resumes a run inside this process through the
//! engine, which claims it exactly once and records who decided and how.
//!
//! [`Runs`] is the workflow service's other half: runs started by a caller
//! (HTTP, MCP, the CLI), executed in this process and kept in the history
//! with their steps and the decisions on their gates.
//!
//! [`Catalog`] keeps the workflow library current as its files change.
//!
//! [`Triggers`] runs workflows on their schedules and on file changes.
//!
//! [`Webhooks`] sends what happens to runs and gates to the receivers the
//! workflows and the [`ServiceSettings`] name, signed, from a durable outbox.

mod approval;
mod catalog;
mod legible;
mod links;
pub mod os_check;
mod runs;
mod settings;
mod triggers;
mod view;
mod watch;
pub mod webhooks;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use clawdis_engine::context::{Ctx, Mode, Sink, StateHandle};
use clawdis_engine::pause::Intent;
use clawdis_engine::resume::{ResumeArgs, resume};
use clawdis_engine::value::Value;
use clawdis_store::Store;
use tokio::sync::broadcast;

pub use approval::{
    Approval, ApprovalState, BROWSER_APPROVAL, BROWSER_HANDOFF, Before, BrowserPage, Context,
    Event, ForAPerson, Policy, PolicyNow, Readable, StartedBy,
};
pub use catalog::Catalog;
pub use clawdis_engine::context::{Decider, Services};
pub use clawdis_store::{
    Channel, Decision, GENESIS, Gate, HistoryStatus, Presence, RunStatus, StepStatus, verify_audit,
};
pub use legible::{Legible, Lookalike, legible};
pub use links::{ApprovalLinks, LinkClaim};
pub use runs::{MAX_PAGE, RunEvent, RunQuery, RunRequest, Runs, Started, What};
pub use settings::{
    GlobalWebhook, LLM_KEY_SECRET, LlmSettings, ServiceSettings, WebhookRetry, event_types,
};
pub use triggers::{TriggerView, Triggers};
pub use view::{DecisionView, RunPage, RunView, StepView};
pub use webhooks::Webhooks;

/// What can go wrong with approvals.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalsError {
    /// The store could not be opened or read.
    #[error("approvals store: {0}")]
    Store(#[from] clawdis_store::StoreError),
    /// No such run, approval, workflow or trigger (the text says which).
    #[error("{0}")]
    NotFound(String),
    /// The run was already decided (here, by the CLI, or in another window).
    #[error("already decided: {0}")]
    AlreadyDecided(String),
    /// A response that is not JSON, or a choice the gate does not take.
    #[error("{0}")]
    Invalid(String),
    /// This decider may not decide this gate (it needs a person).
    #[error("{0}")]
    Forbidden(String),
    /// What the caller holds no longer works: a used or expired link.
    #[error("{0}")]
    Gone(String),
    /// The run is executing in another process, which alone can stop it.
    #[error("{0}")]
    Elsewhere(String),
    /// The gate changed since the decider was shown it (its digest).
    #[error("{0}")]
    Stale(String),
    /// A decision that the gate does not take (an answer for an approval
    /// gate, an approval for an input gate).
    #[error("{0}")]
    Mismatch(String),
    /// What a run was given does not parse, or does not fit the workflow
    /// (its file, its args): Lobster's `parse_error`, and nothing runs.
    #[error("{0}")]
    Parse(String),
}

/// Whether `id` has the shape of a gate's short id: 8 lowercase hex digits.
fn is_approval_id(id: &str) -> bool {
    id.len() == 8 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The ledger's head as exports and webhook payloads carry it: `{seq,
/// hash}`, or null while the ledger is empty.
pub(crate) async fn audit_head(store: &Store) -> Result<serde_json::Value, ApprovalsError> {
    Ok(store.audit_head().await?.map_or(
        serde_json::Value::Null,
        |(seq, hash)| serde_json::json!({ "seq": seq, "hash": hash }),
    ))
}

/// A new signing key in base64: 32 bytes from the OS's random source (two
/// version-4 UUIDs, 244 random bits), for webhook and approval-link keys.
pub(crate) fn new_key_base64() -> String {
    use base64::Engine as _;
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    base64::engine::general_purpose::STANDARD.encode(key)
}

/// A person's choice on a paused run.
#[derive(Clone, Debug, PartialEq)]
pub enum Choice {
    /// Approve an approval gate.
    Approve,
    /// Deny (reject) an approval gate.
    Deny,
    /// Cancel the run, at any gate.
    Cancel,
    /// Answer an input gate with this JSON.
    Respond(serde_json::Value),
}

impl Choice {
    /// The choice named `word` (`approve`, `deny`, `cancel` or `respond`,
    /// which takes `response`): the one place a choice is read.
    pub fn parse(
        word: &str,
        response: Option<serde_json::Value>,
    ) -> Result<Choice, ApprovalsError> {
        match (word, response) {
            ("approve", _) => Ok(Choice::Approve),
            ("deny", _) => Ok(Choice::Deny),
            ("cancel", _) => Ok(Choice::Cancel),
            ("respond", Some(response)) => Ok(Choice::Respond(response)),
            ("respond", None) => Err(ApprovalsError::Invalid(
                "decision respond needs a response".into(),
            )),
            (other, _) => Err(ApprovalsError::Invalid(format!(
                "unknown choice {other:?}: approve, deny, cancel or respond"
            ))),
        }
    }
}

/// How many decided runs [`Approvals::list`] returns besides the pending ones.
const HISTORY: i64 = 50;

/// The approvals of one Clawdis home.
pub struct Approvals {
    dir: PathBuf,
    store: Store,
    bus: broadcast::Sender<Event>,
    /// The pending runs as the bus last told them, by state key; the
    /// watcher changes it and sends a look's events under its lock.
    pending: Mutex<std::collections::HashMap<String, Approval>>,
    /// What runs and resumes here are offered (library, LLM).
    services: Mutex<Arc<Services>>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Approvals {
    /// Opens the store in `state_dir` (the engine's: `LOBSTER_STATE_DIR`,
    /// else the Clawdis home).
    pub async fn open(state_dir: &Path) -> Result<Arc<Approvals>, ApprovalsError> {
        let store = Store::open_dir(state_dir).await?;
        let (bus, _) = broadcast::channel(256);
        Ok(Arc::new(Approvals {
            dir: state_dir.to_path_buf(),
            store,
            bus,
            pending: Mutex::default(),
            services: Mutex::default(),
        }))
    }

    /// Offers the runs started and resumed here `services`: the workflow
    /// library `invoke_pipeline` searches, the LLM `prompt` steps ask.
    pub fn set_services(&self, services: Services) {
        *self.services.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(services);
    }

    /// The store the approvals are kept in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Receives every later [`Event`].
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.bus.subscribe()
    }

    /// The runs pending as the bus last told them (oldest first), and every
    /// later [`Event`]: a listener that starts after the watcher's first
    /// look (the app's notifications, at start-up) misses no pause and
    /// hears none twice.
    pub fn subscribe_with_pending(&self) -> (Vec<Approval>, broadcast::Receiver<Event>) {
        let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut backlog: Vec<Approval> = pending.values().cloned().collect();
        backlog.sort_by(|a, b| a.created_at.cmp(&b.created_at));
        (backlog, self.bus.subscribe())
    }

    /// Pending runs as of the watcher's last look.
    pub fn pending_count(&self) -> usize {
        self.pending.lock().map(|p| p.len()).unwrap_or(0)
    }

    /// Pending runs (oldest first), then the most recent decided ones.
    pub async fn list(&self) -> Result<Vec<Approval>, ApprovalsError> {
        let mut pending = self
            .store
            .list_runs(Some(clawdis_store::RunStatus::Pending), i64::MAX)
            .await?;
        pending.reverse();
        let decided: Vec<clawdis_store::Run> = self
            .store
            .list_runs(None, HISTORY + pending.len() as i64)
            .await?
            .into_iter()
            .filter(|r| r.decision.is_some())
            .take(HISTORY as usize)
            .collect();
        let mut listed = Vec::with_capacity(pending.len() + decided.len());
        for run in pending.iter().chain(&decided) {
            listed.push(self.with_votes(run).await?);
        }
        Ok(listed)
    }

    /// [`Approvals::list`], keeping those whose state is `status`:
    /// `pending`, `decided` (an expired gate was decided too, by its
    /// policy) or `expired`.
    pub async fn list_in(&self, status: Option<&str>) -> Result<Vec<Approval>, ApprovalsError> {
        let wanted: fn(ApprovalState) -> bool = match status {
            None => |_| true,
            Some("pending") => |s| s == ApprovalState::Pending,
            Some("decided") => |s| s != ApprovalState::Pending,
            Some("expired") => |s| s == ApprovalState::Expired,
            Some(other) => {
                return Err(ApprovalsError::Invalid(format!(
                    "status must be pending, decided or expired, not {other:?}"
                )));
            }
        };
        let mut listed = self.list().await?;
        listed.retain(|a| wanted(a.state));
        Ok(listed)
    }

    /// The approval of `run`, with the approvals counted toward its
    /// `minApprovals` among its decisions.
    pub(crate) async fn with_votes(
        &self,
        run: &clawdis_store::Run,
    ) -> Result<Approval, ApprovalsError> {
        let mut approval = Approval::from_run(run);
        if approval.policy.min_approvals > 1 {
            let votes = self.store.votes(&run.state_key).await?;
            approval.decisions = view::gate_decisions(run, &votes);
            approval.context.policy.votes = approval.votes();
        }
        if let Some(id) = &run.run_id
            && let Some(history) = self.store.get_history(id).await?
        {
            let steps = self.store.history_steps(id).await?;
            approval = approval.with_history(&history, &steps);
        }
        Ok(approval)
    }

    /// A gate by id: the run id (the run's latest gate, the one it waits
    /// at if it waits) or a gate's 8-hex approval id. The store's own key
    /// of a gate is taken too, for callers inside this crate.
    pub async fn get(&self, id: &str) -> Result<Approval, ApprovalsError> {
        let run = match self.store.latest_gate(id).await? {
            Some(run) => Some(run),
            None if is_approval_id(id) => self.store.get_run_by_approval_id(id).await?,
            None => self.store.get_run(id).await?,
        };
        let run = run.ok_or_else(|| ApprovalsError::NotFound(format!("no paused run {id}")))?;
        self.with_votes(&run).await
    }

    /// Resumes run `id` with `choice` in this process, exactly once, and
    /// returns the resume's tool envelope. `decider` is recorded with it.
    pub async fn decide(
        &self,
        id: &str,
        choice: Choice,
        decider: Decider,
    ) -> Result<serde_json::Value, ApprovalsError> {
        let run = self.get(id).await?;
        if run.status != RunStatus::Pending {
            return Err(ApprovalsError::AlreadyDecided(format!(
                "{} was {}",
                run.id, run.status
            )));
        }
        let intent = match (choice, run.gate) {
            (Choice::Approve, Gate::Approval) => Intent::Approve(true),
            (Choice::Deny, Gate::Approval) => Intent::Approve(false),
            (Choice::Respond(json), Gate::Input) => Intent::Respond(
                Value::from_json(&json.to_string())
                    .map_err(|e| ApprovalsError::Invalid(e.to_string()))?,
            ),
            (Choice::Cancel, _) => Intent::Cancel,
            (choice, gate) => {
                return Err(ApprovalsError::Mismatch(format!(
                    "a {gate} gate does not take {choice:?}"
                )));
            }
        };
        let decision = intent.decision();
        let mut ctx = self.context(Some(decider.clone()));
        if let Some(cwd) = run.cwd.as_deref().map(PathBuf::from).filter(|d| d.is_dir()) {
            ctx.cwd = cwd;
        }
        let token = clawdis_engine::token::encode(run.kind.as_str(), &run.state_key);
        let envelope = resume(
            ResumeArgs {
                token: Some(token),
                id: None,
                intent,
            },
            &ctx,
        )
        .await;
        if let clawdis_engine::envelope::Envelope::Failure(e) = &envelope {
            // Still pending: the engine refused the decision itself (an
            // answer its schema rejects) and the run keeps waiting. Decided
            // by someone else: they got there first. Only a failure of the
            // run this decision resumed is the caller's result.
            match e.failure {
                clawdis_engine::Failure::NotAllowed => {
                    return Err(ApprovalsError::Forbidden(e.message.clone()));
                }
                clawdis_engine::Failure::Again => {
                    return Err(ApprovalsError::AlreadyDecided(e.message.clone()));
                }
                clawdis_engine::Failure::Stale => {
                    return Err(ApprovalsError::Stale(e.message.clone()));
                }
                _ => {}
            }
            let now = self.get(&run.state_key).await?;
            if now.status == RunStatus::Pending {
                // The gate waits on. An answer its schema refuses is the
                // caller's to mend (the message names the path that
                // failed); anything else conflicts with the gate.
                return Err(if e.failure == clawdis_engine::Failure::Input {
                    ApprovalsError::Invalid(e.message.clone())
                } else {
                    ApprovalsError::Mismatch(e.message.clone())
                });
            }
            if !now.decided_as(decision, &decider) {
                return Err(ApprovalsError::AlreadyDecided(e.message.clone()));
            }
        } else {
            // A gate decided by another between the look above and this
            // resume gives back its recorded end (the engine answers a
            // resume exactly once): that end is not this decision's.
            let now = self.get(&run.state_key).await?;
            if now.status != RunStatus::Pending && !now.decided_as(decision, &decider) {
                return Err(ApprovalsError::AlreadyDecided(format!(
                    "{} was {} in the meantime",
                    now.id, now.status
                )));
            }
        }
        serde_json::from_str(&envelope.to_value().to_json())
            .map_err(|e| ApprovalsError::Invalid(e.to_string()))
    }

    /// Decides every pending gate whose `expires_in` has passed as its
    /// policy says (recorded as decided by `expiry`); returns when the next
    /// one expires.
    pub async fn expire_due(&self) -> Result<Option<String>, ApprovalsError> {
        let (due, next) = self.store.expiries(&clawdis_store::now_iso()).await?;
        for state_key in due {
            let mut ctx = self.context(Some(Decider {
                by: Some("expiry".into()),
                via: Channel::Expiry,
                presence: None,
                seen: None,
                comment: None,
            }));
            // Its remaining steps run where it paused, as on a decision.
            if let Some(cwd) = self
                .store
                .get_run(&state_key)
                .await?
                .and_then(|r| r.cwd)
                .map(PathBuf::from)
                .filter(|d| d.is_dir())
            {
                ctx.cwd = cwd;
            }
            let envelope = clawdis_engine::resume::expire(&state_key, &ctx).await;
            tracing::info!(%state_key, ?envelope, "gate expired");
        }
        Ok(next)
    }

    /// A tool-mode context on this store, deciding as `decider` if any.
    pub(crate) fn context(&self, decider: Option<Decider>) -> Ctx {
        let mut ctx = Ctx::from_process(Mode::Tool);
        ctx.stdout = Sink::buffer();
        // Gates pause for a decision; nobody answers on this terminal.
        ctx.stdin_is_tty = false;
        // The run works on this store: no second pool per decision.
        ctx.state = StateHandle::opened(self.dir.clone(), self.store.clone());
        ctx.decider = decider;
        ctx.services = Arc::clone(&self.services.lock().unwrap_or_else(|e| e.into_inner()));
        ctx
    }
}
