//! Running a pipeline: parsing its text ([`parse`]), running the stages in
//! order, and tool mode's pausing at `approve`/`ask` ([`tool`]).

pub mod parse;
pub mod tool;

use crate::commands::{self, Halt};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::pipeline::parse::Stage;
use crate::value::Value;

/// The result of running a pipeline.
#[derive(Debug)]
pub struct PipelineResult {
    /// Final items (the halting stage's output when halted).
    pub items: Vec<Value>,
    /// Whether any stage rendered to stdout.
    pub rendered: bool,
    /// The stage index and kind of halt, when a gate stopped the run.
    pub halted: Option<(usize, Halt)>,
}

/// Runs `stages` over `input`. Stages run left to right; an unknown command
/// fails when it is reached, after earlier stages have run.
#[tracing::instrument(level = "debug", skip_all, fields(stages = stages.len()))]
pub async fn run_pipeline(stages: &[Stage], input: Items, ctx: &Ctx) -> Result<PipelineResult> {
    let mut stream = input;
    let mut rendered = false;
    let mut halted = None;
    let later_ctx = Ctx {
        resume_response: None,
        ..ctx.clone()
    };
    let mut idx = 0;
    while let Some(stage) = stages.get(idx) {
        if !commands::exists(&stage.name) {
            return Err(Error::runtime(format!("Unknown command: {}", stage.name)));
        }
        let stage_ctx = if idx == 0 { ctx } else { &later_ctx };
        let (out, taken) = commands::run_stages_from(&stages[idx..], stream, stage_ctx).await?;
        rendered |= out.rendered;
        stream = out.items;
        if let Some(h) = out.halt {
            halted = Some((idx, h));
            break;
        }
        idx += taken;
    }
    Ok(PipelineResult {
        items: stream.collect()?,
        rendered,
        halted,
    })
}

/// `--dry-run` for a pipeline: checks every command exists and describes
/// the stages (for stderr).
pub fn dry_run_plan(stages: &[Stage]) -> Result<String> {
    let mut lines = vec![format!(
        "[DRY RUN] Pipeline ({} stage{}):",
        stages.len(),
        if stages.len() == 1 { "" } else { "s" }
    )];
    for (idx, stage) in stages.iter().enumerate() {
        if !commands::exists(&stage.name) {
            return Err(Error::runtime(format!("Unknown command: {}", stage.name)));
        }
        let mut parts: Vec<String> = stage.args.positional.clone();
        for (k, v) in &stage.args.flags {
            parts.push(match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={}", other.to_json()),
            });
        }
        let args = if parts.is_empty() {
            String::new()
        } else {
            format!("  args: {}", parts.join(", "))
        };
        lines.push(format!("  {}. {}{}", idx + 1, stage.name, args));
    }
    lines.push(String::new());
    Ok(lines.join("\n"))
}
