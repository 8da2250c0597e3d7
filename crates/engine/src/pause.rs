//! Recording a paused run in the store and claiming it on resume.

pub use clawdis_store::Gate;
use clawdis_store::{
    Channel, Claim, Decided, Decision, Finish, HistoryEnd, NewRun, ProcessOwner, Run, RunKind,
    RunStatus, current_owner,
};

use crate::context::Ctx;
use crate::envelope::Envelope;
use crate::error::{Error, Result};
use crate::token;
use crate::value::{Object, Value};

/// A pause about to be recorded.
pub struct Pause {
    /// What paused.
    pub kind: RunKind,
    /// The gate.
    pub gate: Gate,
    /// The request block without token or id.
    pub request: Object,
    /// What a resume needs.
    pub state: Value,
    /// Workflow name, if any.
    pub workflow_name: Option<String>,
}

/// A fresh 8-hex-digit approval id.
fn new_approval_id() -> String {
    let bytes = uuid::Uuid::new_v4();
    bytes.as_bytes()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Pause {
    /// Prepares the row and the envelope (token and id added to the request).
    pub async fn prepare(self, ctx: &Ctx) -> Result<(NewRun, Envelope)> {
        let state_key = token::new_state_key(self.kind.as_str());
        let resume_token = token::encode(self.kind.as_str(), &state_key);
        // Every gate has a short id to decide it by; Lobster's envelope
        // shows it on approval gates only, as Lobster does.
        let store = ctx.state.store().await?;
        let mut approval_id = None;
        for _ in 0..16 {
            let id = new_approval_id();
            if !store.approval_id_exists(&id).await? {
                approval_id = Some(id);
                break;
            }
        }
        let Some(approval_id) = approval_id else {
            return Err(Error::runtime("could not allocate an approval id"));
        };
        let mut request = self.request;
        request.insert("resumeToken", Value::from(resume_token));
        if self.gate == Gate::Approval {
            request.insert("approvalId", Value::from(approval_id.as_str()));
        }
        let request = Value::Object(request);
        let run = NewRun {
            state_key,
            kind: self.kind,
            gate: self.gate,
            approval_id: Some(approval_id),
            workflow_name: self.workflow_name,
            request_json: request.to_json(),
            state_json: self.state.to_json(),
            cwd: ctx.cwd.to_str().map(str::to_string),
            run_id: ctx.journal.as_ref().map(|j| j.run_id().to_string()),
            expires_at: self
                .state
                .get_key("approvalIdentity")
                .and_then(|i| i.get_key("expiresAt"))
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let envelope = match self.gate {
            Gate::Approval => Envelope::needs_approval(request),
            Gate::Input => Envelope::needs_input(request),
        };
        Ok((run, envelope))
    }

    /// Records a new pause (not a continuation of a resumed run); the
    /// run's history records it in the same transaction (a `lobster` run's
    /// history row is written then).
    pub async fn record(self, ctx: &Ctx) -> Result<Envelope> {
        let (run, envelope) = self.prepare(ctx).await?;
        let store = ctx.state.store().await?;
        let end = history_end(&envelope, ctx);
        match &ctx.journal {
            Some(journal) => match journal.take_unrecorded() {
                Some((history, steps)) => {
                    store.record_paused(&history, &steps, &end, &run).await?;
                }
                None => {
                    store
                        .end_history(journal.run_id(), &end, Some(&run))
                        .await?;
                }
            },
            None => store.insert_run(&run).await?,
        }
        Ok(envelope)
    }
}

/// What a resume asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Intent {
    /// `--approve yes|no`.
    Approve(bool),
    /// `--response-json`.
    Respond(Value),
    /// `--cancel`.
    Cancel,
}

impl Intent {
    /// The decision recorded for this intent.
    pub fn decision(&self) -> Decision {
        match self {
            Intent::Approve(true) => Decision::Approve,
            Intent::Approve(false) => Decision::Reject,
            Intent::Respond(_) => Decision::Respond,
            Intent::Cancel => Decision::Cancel,
        }
    }
}

/// The envelope of a run that `intent` stops (a cancel, a denial): a
/// denial decided through the backend tells the agent why and that it
/// means stop; Lobster's own `resume --approve no` answers as Lobster does.
pub fn stopped(intent: &Intent, ctx: &Ctx) -> Envelope {
    match (intent, &ctx.decider) {
        (Intent::Approve(false), Some(decider)) => {
            let by = match (&decider.by, decider.via) {
                (_, clawdis_store::Channel::Expiry) => {
                    "the gate's expiry (nobody decided in time)".to_string()
                }
                (Some(by), _) => by.clone(),
                (None, via) => format!("a decision through {}", via.as_str()),
            };
            Envelope::denied(&by, decider.comment.as_deref())
        }
        _ => Envelope::cancelled(),
    }
}

/// Where a service run got to with `envelope`, its steps from the
/// context's journal (none for a run without one).
pub fn history_end(envelope: &Envelope, ctx: &Ctx) -> HistoryEnd {
    HistoryEnd {
        status: envelope.history_status(),
        result_json: Some(envelope.to_value().to_json()),
        steps: ctx
            .journal
            .as_ref()
            .map(crate::journal::Journal::steps)
            .unwrap_or_default(),
    }
}

/// A run claimed by this process; it must be finished with [`Claimed::finish`].
pub struct Claimed {
    /// The claimed run.
    pub run: Run,
    owner: ProcessOwner,
}

/// The stored run a resume may continue, from the row as read: `None` if it
/// is gone or used.
pub fn pending(run: Option<Run>) -> Option<Run> {
    run.filter(|r| r.status == RunStatus::Pending || stale_running(r))
}

fn stale_running(run: &Run) -> bool {
    run.status == RunStatus::Running
        && run
            .claim_id
            .as_deref()
            .and_then(ProcessOwner::parse)
            .is_none_or(|o| !o.is_alive())
}

/// Claims a run for execution, exactly once. `not_found` is the message
/// when it is gone or was used.
pub async fn claim(
    ctx: &Ctx,
    state_key: &str,
    decision: Decided,
    not_found: &str,
) -> Result<Claimed> {
    let owner = current_owner();
    match ctx
        .state
        .store()
        .await?
        .claim(state_key, &owner, &decision)
        .await?
    {
        Claim::Claimed(run) => Ok(Claimed { run, owner }),
        Claim::Taken(run) if run.status == RunStatus::Running => Err(Error::runtime(format!(
            "{not_found}: it is already being resumed by another process"
        ))),
        Claim::Taken(_) | Claim::Missing => Err(Error::runtime(not_found)),
    }
}

/// The decision record for a resume: the context's [`Decider`](crate::context::Decider),
/// else this CLI (`LOBSTER_APPROVAL_APPROVED_BY` names who).
pub fn decision_for(intent: &Intent, ctx: &Ctx) -> Decided {
    let (decided_by, decided_via, comment) = match &ctx.decider {
        Some(d) => (d.by.clone(), d.via, d.comment.clone()),
        None => (
            ctx.env_var("LOBSTER_APPROVAL_APPROVED_BY")
                .map(|s| s.trim().to_string()),
            Channel::Cli,
            None,
        ),
    };
    let presence = ctx.decider.as_ref().and_then(|d| d.presence);
    Decided {
        // What the backend decides for an expired gate is its expiry.
        decision: if decided_via == Channel::Expiry {
            Decision::Expire
        } else {
            intent.decision()
        },
        decided_by,
        decided_via,
        comment,
        presence,
        digest: None,
    }
}

/// Checks that the decider saw the gate paused as `row` is: an approval
/// or an answer made on another digest is refused, and the gate keeps
/// waiting (a denial or a cancel only stops the run, whatever was shown).
/// The digest the decision is made on, to record with it.
pub fn as_shown(row: &clawdis_store::Run, intent: &Intent, ctx: &Ctx) -> Result<String> {
    let now = crate::shown::digest(&row.state_json, &row.request_json);
    let stops = matches!(intent, Intent::Cancel | Intent::Approve(false));
    match ctx.decider.as_ref().and_then(|d| d.seen.as_deref()) {
        Some(seen) if seen != now && !stops => Err(Error::failed(
            crate::Failure::Stale,
            format!(
                "this approval changed since it was shown (digest {seen}, now {now}): look at it \
                 again before deciding"
            ),
        )),
        _ => Ok(now),
    }
}

impl Claimed {
    /// `ctx` with a journal for the service run this gate belongs to, if
    /// any: the steps the resume runs are recorded in the run's history,
    /// whichever process resumes it.
    pub fn journaled(&self, ctx: &Ctx) -> Ctx {
        let mut ctx = ctx.clone();
        ctx.journal = self.run.run_id.as_deref().map(crate::journal::Journal::new);
        ctx
    }

    /// Ends the claimed run with `envelope`; a new pause in it is recorded
    /// in the same transaction.
    pub async fn finish(
        self,
        ctx: &Ctx,
        envelope: Envelope,
        next: Option<NewRun>,
    ) -> Result<Envelope> {
        let status = match &envelope {
            Envelope::Failure(_) => RunStatus::Failed,
            Envelope::Success {
                status: crate::envelope::Status::Cancelled,
                ..
            } => RunStatus::Cancelled,
            Envelope::Success { .. } => RunStatus::Done,
        };
        let finish = Finish {
            status,
            result_json: envelope.to_value().to_json(),
            history: self
                .run
                .run_id
                .is_some()
                .then(|| history_end(&envelope, ctx)),
            next,
        };
        let store = ctx.state.store().await?;
        if !store
            .finish(&self.run.state_key, &self.owner, &finish)
            .await?
        {
            return Err(Error::runtime(
                "resume state was taken over by another process",
            ));
        }
        Ok(envelope)
    }
}
