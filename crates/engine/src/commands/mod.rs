//! The built-in pipeline commands and their registry.

mod discovery;
mod exec;
mod gates;
mod http;
mod integrations;
mod llm;
mod render;
mod state;
mod template;
mod transform;

pub mod filters;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::parser::Stage;
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
        Output { items: items.into(), ..Output::default() }
    }

    /// A renderer's result: no items, `rendered` set.
    pub fn rendered() -> Output {
        Output { rendered: true, ..Output::default() }
    }
}

/// Static description of a command, as `commands.list` reports it.
pub struct CommandSpec {
    /// Command name.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// JSON schema of its arguments (JSON text).
    pub args_schema: &'static str,
    /// Side-effect tags.
    pub side_effects: &'static [&'static str],
    /// `lobster help <name>` text.
    pub help: &'static str,
}

/// Every built-in command, sorted by name.
pub static COMMANDS: &[&CommandSpec] = &[
    &gates::APPROVE,
    &gates::ASK,
    &integrations::CLAWD_INVOKE,
    &discovery::COMMANDS_LIST,
    &transform::DEDUPE,
    &state::DIFF_LAST,
    &integrations::EMAIL_TRIAGE,
    &exec::EXEC,
    &integrations::GOG_GMAIL_SEARCH,
    &integrations::GOG_GMAIL_SEND,
    &transform::GROUP_BY,
    &transform::HEAD,
    &render::JSON,
    &llm::LLM_INVOKE,
    &llm::LLM_TASK_INVOKE,
    &transform::MAP,
    &integrations::OPENCLAW_AGENT,
    &integrations::OPENCLAW_INVOKE,
    &transform::PICK,
    &transform::SORT,
    &state::STATE_GET,
    &state::STATE_SET,
    &render::TABLE,
    &template::TEMPLATE,
    &transform::WHERE,
    &discovery::WORKFLOWS_LIST,
    &discovery::WORKFLOWS_RUN,
];

/// Looks a command up by name.
pub fn lookup(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().copied().find(|c| c.name == name)
}

/// Runs one stage over its input.
pub async fn run_stage(stage: &Stage, input: Items, ctx: &Ctx) -> Result<Output> {
    let args = &stage.args;
    match stage.name.as_str() {
        "exec" => exec::run(args, input, ctx).await,
        "where" => transform::where_(args, input),
        "pick" => transform::pick(args, input),
        "head" => transform::head(args, input),
        "sort" => transform::sort(args, input),
        "dedupe" => transform::dedupe(args, input),
        "groupBy" => transform::group_by(args, input),
        "map" => transform::map(args, input),
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
        "workflows.run" => discovery::workflows_run(args, input),
        "openclaw.invoke" | "clawd.invoke" => integrations::invoke(&stage.name, args, input, ctx).await,
        "llm.invoke" | "llm_task.invoke" => llm::invoke(&stage.name, args, input, ctx).await,
        "openclaw.agent" => integrations::openclaw_agent(args, input, ctx).await,
        "gog.gmail.search" | "gog.gmail.send" | "email.triage" => integrations::gog(&stage.name, args, input, ctx).await,
        other => Err(Error::runtime(format!("Unknown command: {other}"))),
    }
}
