//! Discovery for agents: `commands.list`, `workflows.list`, `workflows.run`.

use super::{COMMANDS, CommandSpec, Output};
use crate::error::{Error, Result};
use crate::items::Items;
use crate::parser::Args;
use crate::value::{Object, Value};

pub static COMMANDS_LIST: CommandSpec = CommandSpec {
    name: "commands.list",
    description: "List available Lobster pipeline commands",
    args_schema: r#"{"type":"object","properties":{},"required":[]}"#,
    side_effects: &[],
    help: "commands.list — list available Lobster pipeline commands\n\nUsage:\n  commands.list\n\nNotes:\n  - Intended for agents (e.g. Clawdbot) to discover available pipeline stages dynamically.\n  - Output includes name/description plus optional metadata (argsSchema/examples/sideEffects) when provided by commands.\n",
};

pub static WORKFLOWS_LIST: CommandSpec = CommandSpec {
    name: "workflows.list",
    description: "List available Lobster workflows",
    args_schema: r#"{"type":"object","properties":{},"required":[]}"#,
    side_effects: &[],
    help: "workflows.list — list available Lobster workflows\n\nUsage:\n  workflows.list\n\nNotes:\n  - Intended for Clawdbot to discover workflows dynamically.\n",
};

pub static WORKFLOWS_RUN: CommandSpec = CommandSpec {
    name: "workflows.run",
    description: "Run a named Lobster workflow",
    args_schema: r#"{"type":"object","properties":{"name":{"type":"string","description":"Workflow name"},"args-json":{"type":"string","description":"JSON string of workflow args"},"_":{"type":"array","items":{"type":"string"}}},"required":["name"]}"#,
    side_effects: &[],
    help: "workflows.run — run a named Lobster workflow\n\nUsage:\n  workflows.run --name <workflow> [--args-json '{...}']\n\nExample:\n  workflows.run --name github.pr.monitor.notify --args-json '{\"repo\":\"clawdbot/clawdbot\",\"pr\":1152}'\n",
};

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
    let out: Vec<Value> = COMMANDS
        .iter()
        .map(|c| {
            let mut obj = Object::new();
            obj.insert("name", Value::from(c.name));
            obj.insert("description", Value::from(c.description));
            obj.insert("argsSchema", Value::from_json(c.args_schema).unwrap_or(Value::Null));
            obj.insert("examples", Value::Null);
            obj.insert("sideEffects", Value::Array(c.side_effects.iter().map(|s| Value::from(*s)).collect()));
            Value::Object(obj)
        })
        .collect();
    Ok(Output::items(out))
}

pub fn workflows_list(input: Items) -> Result<Output> {
    input.drain()?;
    Ok(Output::items(workflows()))
}

pub fn workflows_run(args: &Args, input: Items) -> Result<Output> {
    input.drain()?;
    let name = args.get("name").map(Value::to_js_string).or_else(|| args.positional.first().cloned());
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return Err(Error::runtime("workflows.run requires --name"));
    };
    if !workflows().iter().any(|w| w.get_key("name").and_then(Value::as_str) == Some(name.as_str())) {
        return Err(Error::runtime(format!("Unknown workflow: {name}")));
    }
    Err(Error::runtime(format!("Workflow runner not implemented: {name}")))
}
