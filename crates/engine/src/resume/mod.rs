//! Resuming a paused run (`lobster resume`, the app, HTTP): dispatch by
//! token kind. The CLI's argument parsing is the `lobster` crate's.

mod pipeline;
pub(crate) mod workflow;

pub use workflow::expire_stored as expire;

use std::sync::Arc;

use clawdis_store::{Channel, Decision, RunKind};

use crate::context::Ctx;
use crate::envelope::Envelope;
use crate::error::{Error, Result};
use crate::exec::login_env::LoginSession;
use crate::pause::Intent;
use crate::token::{self, KIND_PIPELINE, Token};
use crate::value::{Object, Value};

/// Parsed `resume` arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct ResumeArgs {
    /// `--token`.
    pub token: Option<String>,
    /// `--id` (approval id).
    pub id: Option<String>,
    /// The single intent.
    pub intent: Intent,
}

/// Runs `lobster resume` and returns its envelope.
pub async fn resume(args: ResumeArgs, ctx: &Ctx) -> Envelope {
    match resume_inner(args, ctx).await {
        Ok(env) => env,
        Err(e) => e.into(),
    }
}

async fn resume_inner(args: ResumeArgs, ctx: &Ctx) -> Result<Envelope> {
    // A non-empty `--id` wins over `--token`, as in Lobster.
    let decoded = match (&args.token, &args.id) {
        (Some(t), id) if !t.is_empty() && id.as_ref().is_none_or(|id| id.is_empty()) => {
            token::decode(t)?
        }
        (_, Some(raw_id)) => {
            let id: String = raw_id
                .chars()
                .filter(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
                .collect();
            let run = ctx.state.store().await?.get_run_by_approval_id(&id).await?;
            // Like Lobster's approval index, an id dies with its run's
            // decision, except that an approved pipeline whose approval was
            // its last stage keeps it: Lobster retires the id only once a
            // stage after the gate started (its later use then finds no
            // resume state).
            let run = run.filter(|r| {
                let approved_pipeline = r.kind == RunKind::Pipeline
                    && r.decision == Some(Decision::Approve)
                    && r.status == clawdis_store::RunStatus::Done
                    && r.next_state_key.is_none()
                    && no_stage_after_gate(r);
                // An input gate's short id is Clawdis's own: Lobster's
                // index holds approval gates only.
                !id.is_empty()
                    && r.gate == clawdis_store::Gate::Approval
                    && (matches!(
                        r.status,
                        clawdis_store::RunStatus::Pending | clawdis_store::RunStatus::Running
                    ) || decided_elsewhere(r)
                        || approved_pipeline)
            });
            let Some(run) = run else {
                return Err(Error::parse(format!(
                    "Approval ID \"{raw_id}\" not found or expired"
                )));
            };
            Token::State {
                kind: run.kind.as_str().to_string(),
                state_key: run.state_key,
            }
        }
        _ => return Err(Error::parse("resume requires --token or --id")),
    };
    let state_key = match &decoded {
        Token::State { state_key, .. } => Some(state_key.clone()),
        Token::InlineWorkflow(_) => None,
    };
    // A workflow's steps run in a login session whose profile files are
    // read while this process waits for SQLite below.
    let login = Arc::new(LoginSession::default());
    if matches!(&decoded, Token::State { kind, .. } if kind != KIND_PIPELINE) {
        login.read_ahead(Arc::clone(&ctx.env));
    }
    let row = match &state_key {
        Some(key) => match read_run(ctx, key).await? {
            Read::Recorded(recorded) => return Ok(recorded),
            Read::Row(row) => *row,
        },
        None => None,
    };
    let envelope = match decoded {
        Token::State { kind, state_key } if kind == KIND_PIPELINE => {
            pipeline::resume(&state_key, row, args.intent, ctx).await
        }
        Token::State { state_key, .. } => {
            workflow::resume_stored(&state_key, row, login, args.intent, ctx).await
        }
        Token::InlineWorkflow(payload) => workflow::resume_inline(payload, args.intent, ctx).await,
    };
    // Lost the claim to a decision made in the app a moment ago: report how
    // that one ends rather than "already being resumed".
    if let (Envelope::Failure(_), Some(key)) = (&envelope, &state_key)
        && let Read::Recorded(recorded) = read_run(ctx, key).await?
    {
        return Ok(recorded);
    }
    Ok(envelope)
}

/// Whether paused pipeline `run` had no stage left after its gate.
fn no_stage_after_gate(run: &clawdis_store::Run) -> bool {
    let Ok(state) = Value::from_json(&run.state_json) else {
        return false;
    };
    let stages = state
        .get_key("pipeline")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let at = state.get_key("resumeAtIndex").map_or(0.0, Value::to_number);
    at >= stages as f64
}

/// Whether `run` was decided outside the CLI: in the app, by a notification.
fn decided_elsewhere(run: &clawdis_store::Run) -> bool {
    run.decided_via.is_some_and(|via| via != Channel::Cli)
}

/// What a late resume is told of the decision it did not make: the
/// decision, who made it (their credential), through what and when.
fn who_decided(run: &clawdis_store::Run) -> Value {
    let text = |s: Option<&str>| s.map_or(Value::Null, Value::from);
    let decision = run.decision.map(Decision::as_str);
    let by = run.decided_by.as_deref();
    let via = run.decided_via.map(Channel::as_str);
    let at = run.decided_at.as_deref();
    let mut said = Object::new();
    said.insert("decision", text(decision));
    said.insert("by", text(by));
    said.insert("via", text(via));
    said.insert("at", text(at));
    said.insert(
        "note",
        Value::from(format!(
            "This gate was decided before this call ({} by {} via {} at {}); this call decided \
             nothing. This envelope is how that run ended.",
            decision.unwrap_or("decided"),
            by.unwrap_or("someone"),
            via.unwrap_or("another channel"),
            at.unwrap_or("an earlier time"),
        )),
    );
    Value::Object(said)
}

/// A run's record as a resume first reads it.
enum Read {
    /// The final envelope of a run a person decided outside the CLI, so the
    /// agent's own `resume` with the same token learns how it ended instead
    /// of getting "not found" (and no step runs twice).
    Recorded(Envelope),
    /// Anything else: the row (if any) for the resume to go on with.
    Row(Box<Option<clawdis_store::Run>>),
}

/// Reads the run under `state_key`, waiting while a resume decided outside
/// the CLI is still running in a live process.
async fn read_run(ctx: &Ctx, state_key: &str) -> Result<Read> {
    let store = ctx.state.store().await?;
    loop {
        let run = store.get_run(state_key).await?;
        let Some(decided) = run.as_ref().filter(|r| decided_elsewhere(r)) else {
            return Ok(Read::Row(Box::new(run)));
        };
        let owner_alive = decided
            .claim_id
            .as_deref()
            .and_then(clawdis_store::ProcessOwner::parse)
            .is_some_and(|o| o.is_alive());
        match decided.status {
            clawdis_store::RunStatus::Running if owner_alive => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            clawdis_store::RunStatus::Pending | clawdis_store::RunStatus::Running => {
                return Ok(Read::Row(Box::new(run)));
            }
            _ => {
                let recorded = decided
                    .result_json
                    .as_deref()
                    .and_then(|json| Value::from_json(json).ok());
                return Ok(match recorded.as_ref().and_then(Envelope::from_value) {
                    Some(envelope) => Read::Recorded(envelope.decided_before(who_decided(decided))),
                    None => Read::Row(Box::new(run)),
                });
            }
        }
    }
}
