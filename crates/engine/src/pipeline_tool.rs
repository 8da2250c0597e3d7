//! Tool-mode pipelines: pausing at `approve`/`ask` and resuming from a token.

use crate::commands::Halt;
use crate::context::Ctx;
use crate::envelope::Envelope;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::parser::{Stage, StageRecord};
use crate::pause::{Claimed, Gate, Intent, Pause, claim, decision_for, pending};
use crate::runtime::{PipelineResult, run_pipeline};
use crate::schema::Schema;
use crate::token::KIND_PIPELINE;
use crate::value::{Object, Value};

const NOT_FOUND: &str = "Pipeline resume state not found";

/// Runs a pipeline in tool mode and returns its envelope.
pub async fn run_tool(stages: &[Stage], ctx: &Ctx) -> Envelope {
    let result = match run_pipeline(stages, Items::empty(), ctx).await {
        Ok(r) => r,
        Err(e) => return e.into(),
    };
    match pause_from(stages, result) {
        Ok(PauseOrItems::Items(items)) => Envelope::ok(items),
        Ok(PauseOrItems::Pause(pause)) => pause.record(ctx).await.unwrap_or_else(Envelope::from),
        Err(e) => e.into(),
    }
}

enum PauseOrItems {
    Items(Vec<Value>),
    Pause(Pause),
}

/// Turns a halted result into a pause, or returns the items.
fn pause_from(stages: &[Stage], result: PipelineResult) -> Result<PauseOrItems> {
    let Some((idx, halt)) = result.halted else {
        return Ok(PauseOrItems::Items(result.items));
    };
    let request = match result.items.as_slice() {
        [Value::Object(o)] => o.clone(),
        _ => return Ok(PauseOrItems::Items(result.items)),
    };
    let kind = request
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let records: Vec<Value> = stages
        .iter()
        .map(|s| {
            let r = StageRecord::from(s);
            Value::Object(Object::from_iter([
                ("name", Value::from(r.name)),
                ("args", r.args),
                ("raw", Value::from(r.raw)),
            ]))
        })
        .collect();
    let mut state = Object::new();
    state.insert("pipeline", Value::Array(records));
    let prompt = request.get("prompt").cloned().unwrap_or(Value::Null);
    match kind.as_str() {
        "approval_request" => {
            state.insert("resumeAtIndex", Value::from(idx + 1));
            state.insert(
                "items",
                request
                    .get("items")
                    .cloned()
                    .unwrap_or(Value::Array(Vec::new())),
            );
            state.insert("haltType", Value::from("approval_request"));
            state.insert("prompt", prompt);
            state.insert("createdAt", Value::from(clawdis_store::now_iso()));
            Ok(PauseOrItems::Pause(Pause {
                kind: KIND_PIPELINE,
                gate: Gate::Approval,
                request,
                state: Value::Object(state),
                workflow_name: None,
            }))
        }
        "input_request" => {
            let (resume_at, mode, items) = match halt {
                Halt::InPlace { input } => (idx, "same-stage", input),
                Halt::Next => (idx + 1, "next-stage", Vec::new()),
            };
            state.insert("resumeAtIndex", Value::from(resume_at));
            state.insert("items", Value::Array(items));
            state.insert("haltType", Value::from("input_request"));
            state.insert("prompt", prompt);
            state.insert("resumeMode", Value::from(mode));
            state.insert(
                "inputSchema",
                request
                    .get("responseSchema")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
            state.insert("createdAt", Value::from(clawdis_store::now_iso()));
            let mut block = Object::new();
            for key in ["type", "prompt", "responseSchema", "defaults", "subject"] {
                if let Some(v) = request.get(key) {
                    block.insert(key, v.clone());
                }
            }
            Ok(PauseOrItems::Pause(Pause {
                kind: KIND_PIPELINE,
                gate: Gate::Input,
                request: block,
                state: Value::Object(state),
                workflow_name: None,
            }))
        }
        _ => Ok(PauseOrItems::Items(result.items)),
    }
}

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
    let claimed = claim(ctx, state_key, decision_for(&intent, ctx), NOT_FOUND).await?;
    if matches!(intent, Intent::Cancel | Intent::Approve(false)) {
        return claimed.finish(ctx, Envelope::cancelled(), None).await;
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
                    args: crate::parser::Args::from_value(
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
