//! Resuming a paused tool-mode pipeline from its stored state.

use crate::context::Ctx;
use crate::envelope::Envelope;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::pause::{Claimed, Intent, as_shown, claim, decision_for, pending, stopped};
use crate::pipeline::parse::Stage;
use crate::pipeline::run_pipeline;
use crate::pipeline::tool::{PauseOrItems, pause_from};
use crate::schema::Schema;
use crate::value::Value;

const NOT_FOUND: &str = "Pipeline resume state not found";

/// Resumes the paused pipeline stored under `state_key`; `row` is its
/// record as the caller read it.
pub async fn resume(
    state_key: &str,
    row: Option<clawdis_store::Run>,
    intent: Intent,
    ctx: &Ctx,
) -> Envelope {
    match resume_inner(state_key, row, intent, ctx).await {
        Ok(env) => env,
        Err(e) => e.into(),
    }
}

async fn resume_inner(
    state_key: &str,
    row: Option<clawdis_store::Run>,
    intent: Intent,
    ctx: &Ctx,
) -> Result<Envelope> {
    let Some(run) = pending(row) else {
        return Err(Error::runtime(if intent == Intent::Cancel {
            "Resume state not found"
        } else {
            NOT_FOUND
        }));
    };
    let state = Value::from_json(&run.state_json)
        .map_err(|_| Error::runtime("Invalid pipeline resume state"))?;
    let halt_type = state
        .get_key("haltType")
        .and_then(Value::as_str)
        .unwrap_or("approval_request");
    match (&intent, halt_type) {
        (Intent::Respond(_), "approval_request") => {
            return Err(Error::parse(
                "approval resumes require approved=true|false, not response",
            ));
        }
        (Intent::Approve(_), "input_request") => {
            return Err(Error::parse("pipeline input resumes require response"));
        }
        _ => {}
    }
    if let Intent::Respond(response) = &intent
        && let Some(schema) = state
            .get_key("inputSchema")
            .filter(|s| matches!(s, Value::Object(_)))
    {
        let schema = Schema::compile(schema)
            .map_err(|e| Error::runtime(format!("invalid input schema: {e}")))?;
        if let Err(e) = schema.validate(response) {
            return Err(Error::parse(format!(
                "pipeline input response failed schema validation at {}: {}",
                e.path, e.message
            )));
        }
    }
    let mut decided = decision_for(&intent, ctx);
    decided.digest = Some(as_shown(&run, &intent, ctx)?);
    let claimed = claim(ctx, state_key, decided, NOT_FOUND).await?;
    let ctx = &claimed.journaled(ctx);
    if matches!(intent, Intent::Cancel | Intent::Approve(false)) {
        return claimed.finish(ctx, stopped(&intent, ctx), None).await;
    }
    continue_run(claimed, &state, intent, ctx).await
}

async fn continue_run(
    claimed: Claimed,
    state: &Value,
    intent: Intent,
    ctx: &Ctx,
) -> Result<Envelope> {
    let stages: Vec<Stage> = state
        .get_key("pipeline")
        .and_then(Value::as_array)
        .map(|records| {
            records
                .iter()
                .map(|r| Stage {
                    name: r
                        .get_key("name")
                        .map(Value::to_js_string)
                        .unwrap_or_default(),
                    args: crate::pipeline::parse::Args::from_value(
                        r.get_key("args").unwrap_or(&Value::Null),
                    ),
                    raw: r
                        .get_key("raw")
                        .map(Value::to_js_string)
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    let at = state
        .get_key("resumeAtIndex")
        .map_or(0.0, Value::to_number)
        .max(0.0) as usize;
    let remaining = &stages[at.min(stages.len())..];
    let stored_items = state
        .get_key("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let same_stage = state.get_key("resumeMode").and_then(Value::as_str) == Some("same-stage");
    let mut run_ctx = ctx.clone();
    let input = match intent {
        Intent::Respond(response) if same_stage => {
            run_ctx.resume_response = Some(response);
            stored_items
        }
        Intent::Respond(response) => vec![response],
        _ => stored_items,
    };
    let result = run_pipeline(remaining, Items::List(input), &run_ctx).await;
    let (envelope, next) = match result.and_then(|r| pause_from(remaining, r)) {
        Err(e) => (Envelope::from(e), None),
        Ok(PauseOrItems::Items(items)) => (Envelope::ok(items), None),
        Ok(PauseOrItems::Pause(pause)) => {
            let (run, env) = pause.prepare(ctx).await?;
            (env, Some(run))
        }
    };
    claimed.finish(ctx, envelope, next).await
}
