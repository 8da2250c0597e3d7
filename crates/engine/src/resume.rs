//! `lobster resume`: argument parsing and dispatch by token kind.

use std::sync::Arc;

use crate::context::Ctx;
use crate::envelope::Envelope;
use crate::error::{Error, Result};
use crate::pause::Intent;
use crate::token::{self, KIND_PIPELINE, Token};
use crate::value::Value;
use crate::workflow::run::LoginCache;

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

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "y" => Some(true),
        "0" | "false" | "no" | "n" => Some(false),
        _ => None,
    }
}

/// Parses `resume` argv with Lobster's checks and messages (all `parse_error`).
pub fn parse_args(argv: &[String]) -> Result<ResumeArgs> {
    let mut token = None;
    let mut id = None;
    let mut approve: Option<String> = None;
    let mut response: Option<String> = None;
    let mut cancel: Option<String> = None;
    let mut i = 0;
    while i < argv.len() {
        let tok = argv[i].as_str();
        let (name, inline) = match tok.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (tok, None),
        };
        let take = |i: &mut usize| -> Option<String> {
            if inline.is_some() {
                return inline.clone();
            }
            let v = argv.get(*i + 1).cloned();
            if v.is_some() {
                *i += 1;
            }
            v
        };
        match name {
            "--token" => token = take(&mut i),
            "--id" => id = take(&mut i),
            "--approve" | "--decision" => approve = take(&mut i),
            "--response-json" => response = take(&mut i),
            "--cancel" => {
                cancel = match &inline {
                    Some(v) => Some(v.clone()),
                    None => match argv.get(i + 1) {
                        Some(next) if !next.starts_with("--") => {
                            i += 1;
                            Some(next.clone())
                        }
                        _ => Some("true".into()),
                    },
                }
            }
            _ => {}
        }
        i += 1;
    }
    if token.as_deref().is_none_or(str::is_empty) && id.as_deref().is_none_or(str::is_empty) {
        return Err(Error::parse("resume requires --token or --id"));
    }
    let cancel = match cancel {
        None => false,
        Some(v) => parse_bool(&v).ok_or_else(|| Error::parse("resume --cancel must be true or false"))?,
    };
    let intents = usize::from(approve.is_some()) + usize::from(response.is_some()) + usize::from(cancel);
    if intents > 1 {
        return Err(Error::parse("resume accepts only one of --approve, --response-json, or --cancel"));
    }
    if intents == 0 {
        return Err(Error::parse("resume requires --approve yes|no, --response-json, or --cancel"));
    }
    let intent = if let Some(raw) = response {
        Intent::Respond(Value::from_json(&raw).map_err(|_| Error::parse("resume --response-json must be valid JSON"))?)
    } else if let Some(decision) = approve {
        match decision.trim().to_ascii_lowercase().as_str() {
            "yes" | "y" => Intent::Approve(true),
            "no" | "n" => Intent::Approve(false),
            _ => return Err(Error::parse("resume --approve must be yes or no")),
        }
    } else {
        Intent::Cancel
    };
    Ok(ResumeArgs { token, id, intent })
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
        (Some(t), id) if !t.is_empty() && id.as_ref().is_none_or(|id| id.is_empty()) => token::decode(t)?,
        (_, Some(raw_id)) => {
            let id: String = raw_id.chars().filter(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()).collect();
            let run = ctx.state.store().await?.get_run_by_approval_id(&id).await?;
            // Like Lobster's approval index, an id dies with its run's
            // decision, except that an approved pipeline that finished
            // without pausing again keeps it (its later use then finds no
            // resume state).
            let run = run.filter(|r| {
                let approved_pipeline = r.kind == KIND_PIPELINE
                    && r.decision.as_deref() == Some("approve")
                    && r.status == clawdis_store::RunStatus::Done
                    && r.next_state_key.is_none();
                !id.is_empty()
                    && (matches!(r.status, clawdis_store::RunStatus::Pending | clawdis_store::RunStatus::Running)
                        || decided_elsewhere(r)
                        || approved_pipeline)
            });
            let Some(run) = run else {
                return Err(Error::parse(format!("Approval ID \"{raw_id}\" not found or expired")));
            };
            Token::State { kind: run.kind, state_key: run.state_key }
        }
        _ => return Err(Error::parse("resume requires --token or --id")),
    };
    let state_key = match &decoded {
        Token::State { state_key, .. } => Some(state_key.clone()),
        Token::InlineWorkflow(_) => None,
    };
    // A workflow's steps run in a login session whose profile files are
    // read while this process waits for SQLite below.
    let login = LoginCache::default();
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
        Token::State { kind, state_key } if kind == KIND_PIPELINE => crate::pipeline_tool::resume(&state_key, row, args.intent, ctx).await,
        Token::State { state_key, .. } => crate::workflow::resume::resume_stored(&state_key, row, login, args.intent, ctx).await,
        Token::InlineWorkflow(payload) => crate::workflow::resume::resume_inline(payload, args.intent, ctx).await,
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

/// Whether `run` was decided outside the CLI: in the app, by a notification.
fn decided_elsewhere(run: &clawdis_store::Run) -> bool {
    run.decided_via.as_deref().is_some_and(|via| via != "cli")
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
        let Some(decided) = run.as_ref().filter(|r| decided_elsewhere(r)) else { return Ok(Read::Row(Box::new(run))) };
        let owner_alive = decided.claim_id.as_deref().and_then(clawdis_store::ProcessOwner::parse).is_some_and(|o| o.is_alive());
        match decided.status {
            clawdis_store::RunStatus::Running if owner_alive => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            clawdis_store::RunStatus::Pending | clawdis_store::RunStatus::Running => return Ok(Read::Row(Box::new(run))),
            _ => {
                let recorded = decided.result_json.as_deref().and_then(|json| Value::from_json(json).ok());
                return Ok(match recorded.as_ref().and_then(Envelope::from_value) {
                    Some(envelope) => Read::Recorded(envelope),
                    None => Read::Row(Box::new(run)),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<ResumeArgs> {
        parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn argument_errors_match_lobster() {
        assert_eq!(args(&["--approve", "yes"]).unwrap_err().message, "resume requires --token or --id");
        assert_eq!(args(&["--token", "t"]).unwrap_err().message, "resume requires --approve yes|no, --response-json, or --cancel");
        assert_eq!(args(&["--token", "t", "--approve", "maybe"]).unwrap_err().message, "resume --approve must be yes or no");
        assert_eq!(
            args(&["--token", "t", "--approve", "yes", "--cancel"]).unwrap_err().message,
            "resume accepts only one of --approve, --response-json, or --cancel"
        );
        assert_eq!(args(&["--token", "t", "--response-json", "{bad"]).unwrap_err().message, "resume --response-json must be valid JSON");
        assert_eq!(args(&["--token", "t", "--cancel", "perhaps"]).unwrap_err().message, "resume --cancel must be true or false");
        assert_eq!(
            args(&["--token=t", "--cancel=false"]).unwrap_err().message,
            "resume requires --approve yes|no, --response-json, or --cancel"
        );
        assert_eq!(args(&["--id", "ab12cd34", "--decision", "Y"]).unwrap().intent, Intent::Approve(true));
    }
}
