//! Discovery for agents: `commands.list`, `workflows.list`, `workflows.run`.

use super::Output;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::pipeline::parse::Args;
use crate::value::Value;

/// The built-in named workflows, as `workflows.list` reports them.
const WORKFLOWS_JSON: &str = r#"[
{"name":"github.pr.monitor","description":"Fetch PR state via gh, diff against last run, emit only on change.","argsSchema":{"type":"object","properties":{"repo":{"type":"string","description":"owner/repo (e.g. openclaw/openclaw)"},"pr":{"type":"number","description":"Pull request number"},"key":{"type":"string","description":"Optional state key override."},"changesOnly":{"type":"boolean","description":"If true, suppress output when unchanged."},"summaryOnly":{"type":"boolean","description":"If true, return only a compact change summary (smaller output)."}},"required":["repo","pr"]},"examples":[{"args":{"repo":"openclaw/openclaw","pr":1152},"description":"Monitor a PR and report when it changes."}],"sideEffects":[]},
{"name":"github.pr.monitor.notify","description":"Monitor a PR and emit a single human-friendly message when it changes.","argsSchema":{"type":"object","properties":{"repo":{"type":"string","description":"owner/repo (e.g. openclaw/openclaw)"},"pr":{"type":"number","description":"Pull request number"},"key":{"type":"string","description":"Optional state key override."}},"required":["repo","pr"]},"examples":[{"args":{"repo":"openclaw/openclaw","pr":1152},"description":"Emit \"PR updated\" message only when changed."}],"sideEffects":[]}
]"#;

/// The named workflows.
pub fn workflows() -> Vec<Value> {
    match Value::from_json(WORKFLOWS_JSON) {
        Ok(Value::Array(items)) => items,
        _ => Vec::new(),
    }
}

pub fn commands_list(input: Items) -> Result<Output> {
    input.drain()?;
    Ok(Output::items(super::describe_all()))
}

pub fn workflows_list(input: Items) -> Result<Output> {
    input.drain()?;
    Ok(Output::items(workflows()))
}

pub async fn workflows_run(args: &Args, input: Items, ctx: &crate::context::Ctx) -> Result<Output> {
    input.drain()?;
    let name = args
        .get("name")
        .map(Value::to_js_string)
        .or_else(|| args.positional.first().cloned());
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return Err(Error::runtime("workflows.run requires --name"));
    };
    if !workflows()
        .iter()
        .any(|w| w.get_key("name").and_then(Value::as_str) == Some(name.as_str()))
    {
        return Err(Error::runtime(format!("Unknown workflow: {name}")));
    }
    let wf_args = match args.get("args-json").filter(|v| v.truthy()) {
        None => Value::Object(crate::value::Object::new()),
        Some(raw) => Value::from_json(&raw.to_js_string())
            .map_err(|_| Error::runtime("workflows.run --args-json must be valid JSON"))?,
    };
    let result = if name == "github.pr.monitor" {
        super::github::pr_monitor(&wf_args, ctx).await?
    } else {
        super::github::pr_monitor_notify(&wf_args, ctx).await?
    };
    Ok(Output::items(vec![result]))
}
