//! Discovery for agents: `commands.list`, `workflows.list`, `workflows.run`.

use std::future::Future;
use std::pin::Pin;

use super::Output;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::pipeline::parse::Args;
use crate::value::Value;

/// The built-in named workflows, as `workflows.list` reports them.
const WORKFLOWS_JSON: &str = r#"[
{"name":"github.pr.monitor","description":"Fetch PR state via gh, diff against last run, emit only on change.","argsSchema":{"type":"object","properties":{"repo":{"type":"string","description":"owner/repo (e.g. openclaw/openclaw)"},"pr":{"type":"number","description":"Pull request number"},"key":{"type":"string","description":"Optional state key override."},"changesOnly":{"type":"boolean","description":"If true, suppress output when unchanged."},"summaryOnly":{"type":"boolean","description":"If true, return only a compact change summary (smaller output)."}},"required":["repo","pr"]},"examples":[{"args":{"repo":"openclaw/openclaw","pr":1152},"description":"Monitor a PR and report when it changes."}],"sideEffects":[]},
{"name":"github.pr.monitor.notify","description":"Monitor a PR and emit a single human-friendly message when it changes.","argsSchema":{"type":"object","properties":{"repo":{"type":"string","description":"owner/repo (e.g. openclaw/openclaw)"},"pr":{"type":"number","description":"Pull request number"},"key":{"type":"string","description":"Optional state key override."}},"required":["repo","pr"]},"examples":[{"args":{"repo":"openclaw/openclaw","pr":1152},"description":"Emit \"PR updated\" message only when changed."}],"sideEffects":[]}
]"#;

/// A running built-in workflow, answering its one output item.
type WorkflowFuture<'a> = Pin<Box<dyn Future<Output = Result<Value>> + Send + 'a>>;

/// A built-in named workflow: its name and what runs it. What it documents
/// (`workflows.list`) is its entry in [`WORKFLOWS_JSON`]; a unit test holds
/// the two to the same names.
struct Builtin {
    name: &'static str,
    run: for<'a> fn(&'a Value, &'a Ctx) -> WorkflowFuture<'a>,
}

/// Every built-in named workflow.
static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "github.pr.monitor",
        run: |args, ctx| Box::pin(super::github::pr_monitor(args, ctx)),
    },
    Builtin {
        name: "github.pr.monitor.notify",
        run: |args, ctx| Box::pin(super::github::pr_monitor_notify(args, ctx)),
    },
];

/// The named workflows, as `workflows.list` reports them.
pub fn workflows() -> Result<Vec<Value>> {
    match Value::from_json(WORKFLOWS_JSON) {
        Ok(Value::Array(items)) => Ok(items),
        _ => Err(Error::runtime("the built-in workflow list is malformed")),
    }
}

/// `commands.list`: every command's catalog entry.
pub fn commands_list(input: Items) -> Result<Output> {
    input.drain()?;
    Ok(Output::items(super::describe_all()?))
}

/// `workflows.list`: the built-in named workflows.
pub fn workflows_list(input: Items) -> Result<Output> {
    input.drain()?;
    Ok(Output::items(workflows()?))
}

/// `workflows.run --name N [--args-json J]`: runs a built-in named workflow.
pub async fn workflows_run(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    input.drain()?;
    let name = args
        .get("name")
        .map(Value::to_js_string)
        .or_else(|| args.positional.first().cloned());
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return Err(Error::runtime("workflows.run requires --name"));
    };
    let Some(builtin) = BUILTINS.iter().find(|b| b.name == name) else {
        return Err(Error::runtime(format!("Unknown workflow: {name}")));
    };
    let wf_args = match args.get("args-json").filter(|v| v.truthy()) {
        None => Value::Object(crate::value::Object::new()),
        Some(raw) => Value::from_json(&raw.to_js_string())
            .map_err(|_| Error::runtime("workflows.run --args-json must be valid JSON"))?,
    };
    let result = (builtin.run)(&wf_args, ctx).await?;
    Ok(Output::items(vec![result]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workflow_list_names_exactly_the_builtins() {
        let listed: Vec<String> = workflows()
            .unwrap()
            .iter()
            .map(|w| {
                w.get_key("name")
                    .and_then(Value::as_str)
                    .unwrap()
                    .to_string()
            })
            .collect();
        let table: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        assert_eq!(listed, table);
    }
}
