//! CLI entry points for workflow files: `run` and `graph`.
use std::path::Path;

use crate::context::Ctx;
use crate::value::Value;

/// Runs a workflow file for the CLI, printing its output; returns the exit code.
pub async fn run_file(_path: &Path, _args: Value, _dry_run: bool, ctx: &Ctx) -> i32 {
    let e = crate::error::Error::runtime("workflow files are not supported by this build yet");
    report(ctx, &e)
}

/// `lobster graph`.
pub async fn graph(_argv: &[String], ctx: &Ctx) -> i32 {
    let e = crate::error::Error::runtime("graph is not supported by this build yet");
    report(ctx, &e)
}

fn report(ctx: &Ctx, e: &crate::error::Error) -> i32 {
    match ctx.mode {
        crate::context::Mode::Tool => print!("{}", crate::envelope::Envelope::Failure(e.clone()).render()),
        crate::context::Mode::Human => eprintln!("Error: {}", e.message),
    }
    e.kind.exit_code()
}
