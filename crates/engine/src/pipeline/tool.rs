//! Tool-mode pipelines: pausing at `approve`/`ask` (resuming is
//! [`crate::resume`]'s).

use crate::commands::Halt;
use crate::context::Ctx;
use crate::envelope::Envelope;
use crate::error::Result;
use crate::items::Items;
use crate::pause::{Gate, Pause};
use crate::pipeline::parse::{Stage, StageRecord};
use crate::pipeline::{PipelineResult, run_pipeline};
use crate::value::{Object, Value};
use clawdis_store::RunKind;

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

pub(crate) enum PauseOrItems {
    Items(Vec<Value>),
    Pause(Pause),
}

/// Turns a halted result into a pause, or returns the items.
pub(crate) fn pause_from(stages: &[Stage], result: PipelineResult) -> Result<PauseOrItems> {
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
                kind: RunKind::Pipeline,
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
                kind: RunKind::Pipeline,
                gate: Gate::Input,
                request: block,
                state: Value::Object(state),
                workflow_name: None,
            }))
        }
        _ => Ok(PauseOrItems::Items(result.items)),
    }
}
