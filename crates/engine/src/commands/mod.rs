//! The built-in pipeline commands and their registry.

mod catalog;
mod discovery;
mod exec;
mod gates;
mod github;
pub(crate) mod http;
mod integrations;
mod llm;
mod mail;
mod render;
mod state;
mod template;
pub(crate) mod transform;

pub(crate) mod filters;

use std::future::Future;
use std::pin::Pin;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::pipeline::parse::{Args, Stage};
use crate::value::Value;

pub use catalog::{describe_all, help};
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

/// A stage's future: commands that need the context may wait on it.
pub type StageFuture<'a> = Pin<Box<dyn Future<Output = Result<Output>> + Send + 'a>>;

/// How a command runs.
#[derive(Clone, Copy)]
pub enum Runs {
    /// A pure transform of items: no effects and no context, so it may run
    /// ahead on another thread while its input still arrives
    /// (`crate::exec::ahead`).
    Pure(fn(&Args, Items) -> Result<Output>),
    /// Anything else: effects, the context, or both. The stage is passed
    /// whole because some commands answer to two names.
    Effects(for<'a> fn(&'a Stage, Items, &'a Ctx) -> StageFuture<'a>),
}

/// A built-in command: its name and how it runs. What it documents
/// (`commands.list`, `help`) is its entry in `catalog.json`.
pub struct Command {
    /// The name a pipeline calls it by.
    pub name: &'static str,
    /// How it runs.
    pub runs: Runs,
}

/// Every built-in command, sorted by name: the one list of them.
pub static COMMANDS: &[Command] = &[
    effects("approve", |s, i, c| Box::pin(gates::approve(&s.args, i, c))),
    effects("ask", |s, i, c| Box::pin(gates::ask(&s.args, i, c))),
    effects("clawd.invoke", |s, i, c| {
        Box::pin(integrations::invoke(&s.name, &s.args, i, c))
    }),
    effects("commands.list", |_, i, _| {
        Box::pin(async move { discovery::commands_list(i) })
    }),
    pure("dedupe", transform::dedupe),
    effects("diff.last", |s, i, c| {
        Box::pin(state::diff_last(&s.args, i, c))
    }),
    effects("email.triage", |s, i, c| {
        Box::pin(mail::triage(&s.args, i, c))
    }),
    effects("exec", |s, i, c| Box::pin(exec::run(&s.args, i, c, &[]))),
    effects("gog.gmail.search", |s, i, c| {
        Box::pin(mail::search(&s.args, i, c))
    }),
    effects("gog.gmail.send", |s, i, c| {
        Box::pin(mail::send(&s.args, i, c))
    }),
    pure("groupBy", transform::group_by),
    pure("head", transform::head),
    effects("json", |_, i, c| {
        Box::pin(async move { render::json(i, c) })
    }),
    effects("llm.invoke", |s, i, c| {
        Box::pin(llm::invoke(&s.name, &s.args, i, c))
    }),
    effects("llm_task.invoke", |s, i, c| {
        Box::pin(llm::invoke(&s.name, &s.args, i, c))
    }),
    pure("map", transform::map),
    effects("openclaw.agent", |s, i, c| {
        Box::pin(integrations::openclaw_agent(&s.args, i, c))
    }),
    effects("openclaw.invoke", |s, i, c| {
        Box::pin(integrations::invoke(&s.name, &s.args, i, c))
    }),
    pure("pick", transform::pick),
    pure("sort", transform::sort),
    effects("state.get", |s, i, c| Box::pin(state::get(&s.args, i, c))),
    effects("state.set", |s, i, c| Box::pin(state::set(&s.args, i, c))),
    effects("table", |_, i, c| {
        Box::pin(async move { render::table(i, c) })
    }),
    effects("template", |s, i, c| Box::pin(template::run(&s.args, i, c))),
    pure("where", transform::where_),
    effects("workflows.list", |_, i, _| {
        Box::pin(async move { discovery::workflows_list(i) })
    }),
    effects("workflows.run", |s, i, c| {
        Box::pin(discovery::workflows_run(&s.args, i, c))
    }),
];

const fn pure(name: &'static str, run: fn(&Args, Items) -> Result<Output>) -> Command {
    Command {
        name,
        runs: Runs::Pure(run),
    }
}

const fn effects(
    name: &'static str,
    run: for<'a> fn(&'a Stage, Items, &'a Ctx) -> StageFuture<'a>,
) -> Command {
    Command {
        name,
        runs: Runs::Effects(run),
    }
}

/// The built-in command called `name`.
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS
        .binary_search_by(|c| c.name.cmp(name))
        .ok()
        .map(|i| &COMMANDS[i])
}

/// Whether `name` is a built-in command.
pub fn exists(name: &str) -> bool {
    find(name).is_some()
}

/// Whether `name` is a pure item transform ([`Runs::Pure`]).
pub fn is_pure(name: &str) -> bool {
    find(name).is_some_and(|c| matches!(c.runs, Runs::Pure(_)))
}

fn unknown(name: &str) -> Error {
    Error::runtime(format!("Unknown command: {name}"))
}

/// Runs one pure stage (see [`is_pure`]).
fn run_pure_stage(stage: &Stage, input: Items) -> Result<Items> {
    match find(&stage.name).map(|c| c.runs) {
        Some(Runs::Pure(run)) => run(&stage.args, input).map(|o| o.items),
        _ => Err(unknown(&stage.name)),
    }
}

/// Runs pure stages (see [`is_pure`]) one after another over `input`.
pub fn run_pure(stages: &[Stage], input: Items) -> Result<Items> {
    stages
        .iter()
        .try_fold(input, |items, stage| run_pure_stage(stage, items))
}

/// Runs the first of `stages` and tells how many stages that took: an
/// `exec` also runs the pure stages right after it, with `--json` over its
/// output while the child is still writing it (see `crate::exec::ahead`).
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
    match find(&stage.name).map(|c| c.runs) {
        Some(Runs::Pure(run)) => run(&stage.args, input),
        Some(Runs::Effects(run)) => run(stage, input, ctx).await,
        None => Err(unknown(&stage.name)),
    }
}
