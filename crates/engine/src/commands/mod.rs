//! The built-in pipeline commands and their registry.

mod discovery;
mod exec;
mod gates;
mod github;
mod http;
mod integrations;
mod llm;
mod mail;
mod render;
mod state;
mod template;
pub mod transform;

pub mod filters;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::pipeline::parse::Stage;
use crate::value::Value;

pub use template::render_item_template;

/// How a stage stopped the pipeline.
#[derive(Clone, Debug, PartialEq)]
pub enum Halt {
    /// The stage's output (an approval or input request) ends the run; a
    /// resume continues at the next stage.
    Next,
    /// The stage asked for input itself; a resume re-runs it with `input`
    /// and hands it the response.
    InPlace {
        /// The items the stage had received.
        input: Vec<Value>,
    },
}

/// What a stage returns.
#[derive(Default)]
pub struct Output {
    /// Items for the next stage.
    pub items: Items,
    /// Whether the stage wrote rendered text to stdout.
    pub rendered: bool,
    /// Set when the stage stops the pipeline.
    pub halt: Option<Halt>,
}

impl Output {
    /// Plain items.
    pub fn items(items: impl Into<Items>) -> Output {
        Output {
            items: items.into(),
            ..Output::default()
        }
    }

    /// A renderer's result: no items, `rendered` set.
    pub fn rendered() -> Output {
        Output {
            rendered: true,
            ..Output::default()
        }
    }
}

/// Every built-in command, sorted by name.
pub const NAMES: &[&str] = &[
    "approve",
    "ask",
    "clawd.invoke",
    "commands.list",
    "dedupe",
    "diff.last",
    "email.triage",
    "exec",
    "gog.gmail.search",
    "gog.gmail.send",
    "groupBy",
    "head",
    "json",
    "llm.invoke",
    "llm_task.invoke",
    "map",
    "openclaw.agent",
    "openclaw.invoke",
    "pick",
    "sort",
    "state.get",
    "state.set",
    "table",
    "template",
    "where",
    "workflows.list",
    "workflows.run",
];

/// Whether `name` is a built-in command.
pub fn exists(name: &str) -> bool {
    NAMES.binary_search(&name).is_ok()
}

/// What `commands.list` and `help` report about each command, recorded
/// from Lobster 2026.9.13 (`commands.list` plus `help <name>`) so agents
/// that read them see the same interface.
static CATALOG_JSON: &str = include_str!("catalog.json");

fn catalog() -> &'static [Value] {
    static CATALOG: std::sync::LazyLock<Vec<Value>> =
        std::sync::LazyLock::new(|| match Value::from_json(CATALOG_JSON) {
            Ok(Value::Array(entries)) => entries,
            _ => Vec::new(),
        });
    &CATALOG
}

/// `lobster help <name>` text.
pub fn help(name: &str) -> Option<String> {
    catalog()
        .iter()
        .find(|c| c.get_key("name").and_then(Value::as_str) == Some(name))
        .and_then(|c| c.get_key("help"))
        .map(Value::to_js_string)
}

/// The `commands.list` entries: `{name, description, argsSchema, examples, sideEffects}`.
pub fn describe_all() -> Vec<Value> {
    catalog()
        .iter()
        .filter_map(Value::as_object)
        .map(|c| {
            Value::Object(
                c.iter()
                    .filter(|(k, _)| *k != "help")
                    .map(|(k, v)| (k, v.clone()))
                    .collect(),
            )
        })
        .collect()
}

/// Whether `name` is a pure item transform: no effects and no context, so
/// it may run ahead on another thread while its input still arrives.
pub fn is_pure(name: &str) -> bool {
    matches!(
        name,
        "where" | "pick" | "head" | "sort" | "dedupe" | "groupBy" | "map"
    )
}

/// Runs one pure stage (see [`is_pure`]).
fn run_pure_stage(stage: &Stage, input: Items) -> Result<Items> {
    let args = &stage.args;
    let out = match stage.name.as_str() {
        "where" => transform::where_(args, input),
        "pick" => transform::pick(args, input),
        "head" => transform::head(args, input),
        "sort" => transform::sort(args, input),
        "dedupe" => transform::dedupe(args, input),
        "groupBy" => transform::group_by(args, input),
        "map" => transform::map(args, input),
        other => Err(Error::runtime(format!("Unknown command: {other}"))),
    };
    out.map(|o| o.items)
}

/// Runs pure stages (see [`is_pure`]) one after another over `input`.
pub fn run_pure(stages: &[Stage], input: Items) -> Result<Items> {
    stages
        .iter()
        .try_fold(input, |items, stage| run_pure_stage(stage, items))
}

/// Runs the first of `stages` and tells how many stages that took: an
/// `exec` also runs the pure stages right after it, with `--json` over its
/// output while the child is still writing it (see [`crate::exec::ahead`]).
pub async fn run_stages_from(stages: &[Stage], input: Items, ctx: &Ctx) -> Result<(Output, usize)> {
    let Some(stage) = stages.first() else {
        return Ok((Output::items(input), 0));
    };
    if stage.name == "exec" {
        let pure = stages[1..].iter().take_while(|s| is_pure(&s.name)).count();
        if pure > 0 {
            return Ok((
                exec::run(&stage.args, input, ctx, &stages[1..=pure]).await?,
                1 + pure,
            ));
        }
    }
    Ok((run_stage(stage, input, ctx).await?, 1))
}

/// Runs one stage over its input.
pub async fn run_stage(stage: &Stage, input: Items, ctx: &Ctx) -> Result<Output> {
    let args = &stage.args;
    match stage.name.as_str() {
        "exec" => exec::run(args, input, ctx, &[]).await,
        name if is_pure(name) => run_pure_stage(stage, input).map(Output::items),
        "template" => template::run(args, input, ctx).await,
        "json" => render::json(input, ctx),
        "table" => render::table(input, ctx),
        "approve" => gates::approve(args, input, ctx).await,
        "ask" => gates::ask(args, input, ctx).await,
        "state.get" => state::get(args, input, ctx).await,
        "state.set" => state::set(args, input, ctx).await,
        "diff.last" => state::diff_last(args, input, ctx).await,
        "commands.list" => discovery::commands_list(input),
        "workflows.list" => discovery::workflows_list(input),
        "workflows.run" => discovery::workflows_run(args, input, ctx).await,
        "openclaw.invoke" | "clawd.invoke" => {
            integrations::invoke(&stage.name, args, input, ctx).await
        }
        "llm.invoke" | "llm_task.invoke" => llm::invoke(&stage.name, args, input, ctx).await,
        "openclaw.agent" => integrations::openclaw_agent(args, input, ctx).await,
        "gog.gmail.search" => mail::search(args, input, ctx).await,
        "gog.gmail.send" => mail::send(args, input, ctx).await,
        "email.triage" => mail::triage(args, input, ctx).await,
        other => Err(Error::runtime(format!("Unknown command: {other}"))),
    }
}
