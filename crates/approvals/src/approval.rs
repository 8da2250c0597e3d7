//! One paused (or decided) run as the app shows it, and the bus events.

use clawdis_store::{Channel, Decision, Gate, RunKind, RunStatus};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use clawdis_engine::workflow::{Ran, Unlocked};

use crate::legible::{Legible, legible};
use crate::view::{DecisionView, gate_decisions};

/// How many items a preview carries; `itemCount` has the total.
const PREVIEW_ITEMS: usize = 5;

/// JSON kept as the run wrote it: the windows show objects with their keys
/// in the workflow's order (a schema's fields, an item's columns).
pub type Json = Box<RawValue>;

/// A run paused at a gate, or decided, in the shape the windows read.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The run's id, as every route that takes a run knows it (`GET
    /// /runs/{id}`, `/approvals/{id}`); the same as `runId`.
    pub id: String,
    /// The run's id: the run it belongs to, whoever started it (the
    /// service, or a `lobster` process, whose run is recorded when it
    /// pauses). A gate recorded before runs had ids has its own.
    pub run_id: String,
    /// The gate's key in the store: what a decision on exactly this gate
    /// resumes (a run may pause again at a later gate).
    #[serde(skip)]
    pub state_key: String,
    /// What paused (its spelling is the token kind).
    #[serde(skip)]
    pub kind: RunKind,
    /// The gate's short id: decides exactly this gate (`lobster resume
    /// --id` takes those of approval gates, as in Lobster).
    pub approval_id: Option<String>,
    /// The gate: `approval` or `input`.
    pub gate: Gate,
    /// The gate: `pending`, `decided` (by anyone, through any channel)
    /// or `expired` (decided by its `on_expiry`).
    #[serde(rename = "status")]
    pub state: ApprovalState,
    /// The paused run behind it: `pending`, `running` (being resumed),
    /// `done`, `cancelled` or `failed`.
    #[serde(rename = "runStatus")]
    pub status: RunStatus,
    /// The workflow's name, for workflow files.
    pub workflow: Option<String>,
    /// What the person is asked.
    pub prompt: String,
    /// The first items the gate holds.
    pub items: Vec<Json>,
    /// How many items it holds.
    pub item_count: usize,
    /// The JSON schema of the answer an input gate wants.
    pub response_schema: Option<Json>,
    /// Defaults for that answer, when the workflow gave some.
    pub defaults: Option<Json>,
    /// Who may decide and how many must approve: `{approvers, minApprovals}`.
    pub policy: Policy,
    /// The directory the run paused in; its remaining steps run there.
    pub cwd: Option<String>,
    /// Whether the workflow file on disk differs from the definition the
    /// run paused with, which is what it resumes with; none for a
    /// pipeline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_changed: Option<bool>,
    /// SHA-256 of what the gate shows: its request (prompt, items, policy)
    /// and the state it resumes with (the definition it paused with, the
    /// steps run so far). A decision that names another is refused (409):
    /// the gate changed since it was shown.
    pub digest: String,
    /// When the run paused (RFC 3339).
    pub created_at: String,
    /// `approve`, `reject`, `respond` or `cancel`, once decided.
    pub decision: Option<Decision>,
    /// Who decided, when known.
    pub decided_by: Option<String>,
    /// `cli`, `app`, `notification` or `http`.
    pub decided_via: Option<Channel>,
    /// When (RFC 3339).
    pub decided_at: Option<String>,
    /// What the decider said: an approval's comment, a denial's reason.
    pub comment: Option<String>,
    /// How the decided run ended: its final tool envelope.
    pub result: Option<Json>,
    /// Every decision on the gate, oldest first: the approvals counted
    /// toward `minApprovals`, then the one that decided it.
    pub decisions: Vec<DecisionView>,
    /// What the person decides on: what the gate unlocks, what ran before,
    /// who started the run, and where its policy stands.
    pub context: Context,
}

/// A gate in context (issue #35): what every human view shows of it.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// The workflow step whose gate this is (none for a pipeline's).
    pub step: Option<String>,
    /// What runs once the gate is approved, until the next gate, as it
    /// will run (templates resolved where their inputs are known).
    pub unlocks: Vec<Unlocked>,
    /// What ran before it, in order.
    pub before: Vec<Before>,
    /// Who started the run, when recorded.
    pub started_by: Option<StartedBy>,
    /// Who may decide, how many have approved of how many needed, until
    /// when.
    pub policy: PolicyNow,
    /// Whether the workflow file on disk differs from the definition the
    /// run resumes with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_changed: Option<bool>,
    /// For a browser session's request (`browser_request_approval`,
    /// `POST /sessions/{id}/approval`): its page as it was when it asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser: Option<BrowserPage>,
}

/// A browser session's page as it was when the session asked a person.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserPage {
    /// The session.
    pub session: String,
    /// The page's URL.
    pub url: String,
    /// The page's title.
    pub title: String,
    /// The session's last 10 actions, one a line (what was typed only by
    /// its length).
    pub actions: String,
    /// A JPEG of the page, as a data URL (empty when none could be taken).
    pub screenshot: String,
    /// Whether the session hands its page to the person (a hand-off: they
    /// take over, then hand back with Done or Decline) rather than asking
    /// yes or no.
    pub handoff: bool,
}

/// The workflow a browser session's request for a person runs as.
pub const BROWSER_APPROVAL: &str = "browser-approval";

/// The workflow a browser session's hand-off runs as: approving its gate
/// is the person's Done, denying it their Decline.
pub const BROWSER_HANDOFF: &str = "browser-handoff";

/// A step run before the gate.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Before {
    /// Its id, status, command and the start of its output.
    #[serde(flatten)]
    pub ran: Ran,
    /// How long it took, where the run's history recorded it.
    pub duration_ms: Option<u64>,
}

/// Who started a run.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StartedBy {
    /// The principal: `owner`, `token:<name>`, `mcp:<client>`,
    /// `trigger:<id>`, or `lobster` for a run a `lobster` process started.
    pub principal: String,
    /// For a `lobster` process: that process as the OS described it when
    /// the run began (pid, executable, arguments, working directory,
    /// terminal, parents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<clawdis_engine::provenance::Process>,
}

/// A gate's policy and where it stands.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyNow {
    /// `human` or `any`.
    pub approvers: String,
    /// `verified` or `any`.
    pub presence: String,
    /// Approvals counted so far.
    pub votes: usize,
    /// Approvals needed.
    pub needed: u32,
    /// When the gate expires (RFC 3339), if it does.
    pub expires_at: Option<String>,
    /// What it comes to then.
    pub on_expiry: Option<String>,
}

/// What a person reads of a gate, made legible: the API keeps the raw
/// text, every human view shows this.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Readable {
    /// The workflow's name.
    pub workflow: Option<Legible>,
    /// The prompt.
    pub prompt: Legible,
    /// The items, one pretty-printed JSON value after another; what is not
    /// shown is said.
    pub items: Legible,
    /// What the gate unlocks, a few lines a step (command, directory, the
    /// names of the environment it sets, its input).
    pub unlocks: Legible,
    /// What ran before it: each step's status, duration, command and
    /// output.
    pub before: Legible,
    /// Who started the run, and through which process.
    pub started_by: Option<Legible>,
    /// A browser session's page (title, URL) and its last actions.
    pub browser: Option<Legible>,
}

/// What a gate unlocks, as text.
fn unlocks_text(unlocks: &[Unlocked]) -> String {
    let mut text = String::new();
    for u in unlocks {
        text.push_str(&format!("▶ {} ({})\n", u.id, u.kind));
        if let Some(command) = &u.command {
            text.push_str(&format!("  $ {command}\n"));
        }
        if let Some(cwd) = &u.cwd {
            text.push_str(&format!("  in {cwd}\n"));
        }
        if !u.env.is_empty() {
            text.push_str(&format!("  sets {}\n", u.env.join(", ")));
        }
        if let Some(stdin) = &u.stdin {
            text.push_str(&format!("  reads {stdin}\n"));
        }
        if let Some(when) = &u.when {
            text.push_str(&format!("  when {when}\n"));
        }
    }
    text.trim_end().to_string()
}

/// What ran before a gate, as text.
fn before_text(before: &[Before]) -> String {
    let mut text = String::new();
    for b in before {
        let took = b
            .duration_ms
            .map(|ms| format!(", {ms} ms"))
            .unwrap_or_default();
        text.push_str(&format!("{} ({}{took})\n", b.ran.id, b.ran.status));
        if let Some(command) = &b.ran.command {
            text.push_str(&format!("  $ {command}\n"));
        }
        let output = b.ran.output.trim_end();
        if !output.is_empty() {
            for line in output.lines() {
                text.push_str(&format!("  │ {line}\n"));
            }
            if b.ran.output_truncated {
                text.push_str("  │ … (the first 2 KB of its output)\n");
            }
        }
    }
    text.trim_end().to_string()
}

/// Who started a run, as text: the principal, then the process and its
/// parents one a line.
fn started_by_text(started: &StartedBy) -> String {
    match &started.process {
        Some(process) => format!("{}\n{}", started.principal, process.chain()),
        None => started.principal.clone(),
    }
}

/// A gate with what a person reads of it: the approval's own fields (JSON
/// kept as written, keys in order), and `readable`.
#[derive(Clone, Debug, Serialize)]
pub struct ForAPerson {
    /// The gate.
    #[serde(flatten)]
    pub approval: Approval,
    /// What a person reads of it.
    pub readable: Readable,
}

/// Where a gate stands, as the approvals API says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalState {
    /// Waiting for a decision.
    Pending,
    /// Decided by someone.
    Decided,
    /// Decided by its expiry.
    Expired,
}

impl ApprovalState {
    /// The state of the gate `run` paused at.
    pub fn of(run: &clawdis_store::Run) -> ApprovalState {
        match run.decision {
            None => ApprovalState::Pending,
            Some(Decision::Expire) => ApprovalState::Expired,
            Some(_) => ApprovalState::Decided,
        }
    }
}

impl Approval {
    /// Whether the gate was decided as `decision`, by `decider`.
    pub(crate) fn decided_as(&self, decision: Decision, decider: &crate::Decider) -> bool {
        self.decision == Some(decision)
            && self.decided_via == Some(decider.via)
            && self.decided_by == decider.by
    }

    /// Reads the stored run and its request block.
    pub fn from_run(run: &clawdis_store::Run) -> Approval {
        let request: Request = serde_json::from_str(&run.request_json).unwrap_or_default();
        let items = request.items.unwrap_or_default();
        let run_id = run.run_id.clone().unwrap_or_else(|| run.state_key.clone());
        Approval {
            id: run_id.clone(),
            run_id,
            state_key: run.state_key.clone(),
            kind: run.kind,
            approval_id: run.approval_id.clone(),
            gate: run.gate,
            state: ApprovalState::of(run),
            status: run.status,
            workflow: run.workflow_name.clone(),
            prompt: match request.prompt {
                Some(serde_json::Value::String(text)) => text,
                Some(other) => other.to_string(),
                None => String::new(),
            },
            item_count: items.len(),
            items: items.into_iter().take(PREVIEW_ITEMS).collect(),
            response_schema: request.response_schema,
            defaults: request.defaults,
            policy: Policy {
                approvers: request.approvers.unwrap_or_else(|| "any".to_string()),
                presence: request.presence.unwrap_or_else(|| "any".to_string()),
                min_approvals: request.min_approvals.unwrap_or(1),
                expires_at: request.expires_at,
                on_expiry: request.on_expiry,
                forbid_self_approval: request.forbid_self_approval.unwrap_or(false),
            },
            cwd: run.cwd.clone(),
            file_changed: file_changed(&run.state_json),
            digest: clawdis_engine::shown::digest(&run.state_json, &run.request_json),
            created_at: run.created_at.clone(),
            decision: run.decision,
            decided_by: run.decided_by.clone(),
            decided_via: run.decided_via,
            decided_at: run.decided_at.clone(),
            comment: run.decision_comment.clone(),
            result: run
                .result_json
                .as_deref()
                .and_then(|r| RawValue::from_string(r.to_string()).ok()),
            decisions: gate_decisions(run, &[]),
            context: Context::default(),
        }
        .in_context(run)
    }

    /// The approval with its [`Context`] as the run's kept state says: what
    /// the gate unlocks, what ran before it, where its policy stands.
    fn in_context(mut self, run: &clawdis_store::Run) -> Approval {
        let kept = clawdis_engine::workflow::unlocks_of_state(&run.state_json).unwrap_or_default();
        let votes = self.votes();
        self.context = Context {
            step: kept.step,
            before: kept
                .before
                .into_iter()
                .map(|ran| Before {
                    ran,
                    duration_ms: None,
                })
                .collect(),
            unlocks: kept.unlocks,
            started_by: None,
            policy: PolicyNow {
                approvers: self.policy.approvers.clone(),
                presence: self.policy.presence.clone(),
                votes,
                needed: self.policy.min_approvals,
                expires_at: self.policy.expires_at.clone(),
                on_expiry: self.policy.on_expiry.clone(),
            },
            file_changed: self.file_changed,
            browser: None,
        };
        self
    }

    /// The approvals counted on the gate so far.
    pub(crate) fn votes(&self) -> usize {
        self.decisions
            .iter()
            .filter(|d| d.decision == "approve")
            .count()
    }

    /// Adds what the run's history knows to the context: who started the
    /// run (and, for `lobster`'s runs, its process) and how long each step
    /// before the gate took.
    pub(crate) fn with_history(
        mut self,
        history: &clawdis_store::HistoryRun,
        steps: &[clawdis_store::StepRecord],
    ) -> Approval {
        for before in &mut self.context.before {
            before.duration_ms = steps
                .iter()
                .find(|s| s.id == before.ran.id)
                .and_then(|s| s.duration_ms);
        }
        let handoff = history.workflow.as_deref() == Some(BROWSER_HANDOFF);
        if (handoff || history.workflow.as_deref() == Some(BROWSER_APPROVAL))
            && let Ok(args) = serde_json::from_str::<serde_json::Value>(&history.args_json)
        {
            let text = |key: &str| args[key].as_str().unwrap_or_default().to_string();
            self.context.browser = Some(BrowserPage {
                session: text("session"),
                url: text("url"),
                title: text("title"),
                actions: text("actions"),
                screenshot: text("screenshot"),
                handoff,
            });
        }
        self.context.started_by = Some(StartedBy {
            principal: history.started_by.clone(),
            process: history
                .provenance_json
                .as_deref()
                .and_then(|p| serde_json::from_str(p).ok()),
        });
        self
    }

    /// What a person reads of the gate: its workflow's name, prompt and
    /// items, each made legible (hidden characters escaped, look-alikes
    /// flagged).
    pub fn readable(&self) -> Readable {
        let mut items = String::new();
        for item in &self.items {
            items.push_str(&pretty(item.get()));
            items.push('\n');
        }
        let more = self.item_count.saturating_sub(self.items.len());
        if more > 0 {
            items.push_str(&format!(
                "… and {more} more item{} not shown here\n",
                if more == 1 { "" } else { "s" }
            ));
        }
        let context = &self.context;
        Readable {
            workflow: self.workflow.as_deref().map(legible),
            prompt: legible(&self.prompt),
            items: legible(items.trim_end()),
            unlocks: legible(&unlocks_text(&context.unlocks)),
            before: legible(&before_text(&context.before)),
            started_by: context
                .started_by
                .as_ref()
                .map(|s| legible(&started_by_text(s))),
            browser: context.browser.as_ref().map(|b| {
                legible(&format!(
                    "{}\n{}\n\nIts last actions:\n{}",
                    b.title,
                    b.url,
                    if b.actions.is_empty() {
                        "none"
                    } else {
                        &b.actions
                    }
                ))
            }),
        }
    }

    /// The gate as a person's view takes it: its fields, and `readable`.
    pub fn for_a_person(self) -> ForAPerson {
        ForAPerson {
            readable: self.readable(),
            approval: self,
        }
    }

    /// Whether the gate is a browser session's hand-off (approving it is
    /// the person's Done).
    pub fn is_handoff(&self) -> bool {
        self.context.browser.as_ref().is_some_and(|b| b.handoff)
    }

    /// Whether only a person may approve the gate: `approvers: human`, or
    /// `presence: verified`.
    pub fn needs_a_person(&self) -> bool {
        self.policy.approvers == "human" || self.policy.presence == "verified"
    }

    /// A notification's body: the prompt; the workflow and its item count;
    /// the first line of the command the gate unlocks; who started the run.
    pub fn summary(&self) -> String {
        let workflow = self.workflow.as_ref().map(|name| match &self.context.step {
            Some(step) => format!("{name}, step {step}"),
            None => name.clone(),
        });
        let what = match (&workflow, self.item_count) {
            (Some(name), 0) => name.clone(),
            (Some(name), 1) => format!("{name}: 1 item"),
            (Some(name), n) => format!("{name}: {n} items"),
            (None, 0) => "pipeline".to_string(),
            (None, 1) => "1 item".to_string(),
            (None, n) => format!("{n} items"),
        };
        let changed = if self.file_changed == Some(true) {
            " [the workflow file changed since it paused; the paused steps run]"
        } else {
            ""
        };
        let mut text = format!("{} ({what}){changed}", self.prompt);
        if let Some(next) = self.context.unlocks.first() {
            let command = next
                .command
                .as_deref()
                .and_then(|c| c.lines().next())
                .unwrap_or(next.kind.as_str());
            let more = if self.context.unlocks.len() > 1 {
                format!(" (and {} more)", self.context.unlocks.len() - 1)
            } else {
                String::new()
            };
            text.push_str(&format!("\nThen runs {}: {command}{more}", next.id));
        }
        if let Some(started) = &self.context.started_by {
            let through = started
                .process
                .as_ref()
                .and_then(|p| p.parents.first())
                .map(|parent| parent.name.as_str())
                .map(|parent| format!(" (from {parent})"))
                .unwrap_or_default();
            text.push_str(&format!("\nStarted by {}{through}", started.principal));
        }
        text
    }
}

/// JSON text indented, its keys in the order written.
fn pretty(raw: &str) -> String {
    let mut out = Vec::new();
    let mut from = serde_json::Deserializer::from_str(raw);
    let mut to = serde_json::Serializer::pretty(&mut out);
    match serde_transcode::transcode(&mut from, &mut to) {
        Ok(()) => String::from_utf8(out).unwrap_or_else(|_| raw.to_string()),
        Err(_) => raw.to_string(),
    }
}

/// Whether a paused workflow's file now differs from the definition its
/// state kept (a file gone or unreadable differs too); none when the state
/// kept no definition (a pipeline, or a run paused before they were kept).
fn file_changed(state_json: &str) -> Option<bool> {
    let state: serde_json::Value = serde_json::from_str(state_json).ok()?;
    let kept = state.get("definition")?.as_str()?;
    let path = state.get("filePath")?.as_str()?;
    Some(std::fs::read_to_string(path).map_or(true, |now| now != kept))
}

/// Who may decide a gate, as its workflow file says.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    /// `human` or `any`.
    pub approvers: String,
    /// `verified` when only a paired device's passkey or the operating
    /// system's check approves; else `any`.
    pub presence: String,
    /// How many distinct approvers must approve.
    pub min_approvals: u32,
    /// When the gate expires (RFC 3339), if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// What it comes to then: `cancel`, `deny` or `approve`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_expiry: Option<String>,
    /// Whether the principal that started the run may not approve it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forbid_self_approval: bool,
}

/// The stored request block (`requiresApproval` / `requiresInput`).
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    prompt: Option<serde_json::Value>,
    items: Option<Vec<Json>>,
    response_schema: Option<Json>,
    defaults: Option<Json>,
    approvers: Option<String>,
    presence: Option<String>,
    min_approvals: Option<u32>,
    expires_at: Option<String>,
    on_expiry: Option<String>,
    forbid_self_approval: Option<bool>,
}

/// What the bus carries.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Event {
    /// A run paused at a gate.
    Paused {
        /// The run.
        approval: Approval,
    },
    /// A paused run was decided (anywhere) or its resume finished.
    Changed {
        /// The run as it is now.
        approval: Approval,
    },
}
