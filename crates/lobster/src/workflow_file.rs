//! Workflow files on the command line: `lobster run <file>` and `lobster
//! graph`.

use std::path::Path;

use clawdis_engine::envelope::{Envelope, Status};
use clawdis_engine::error::Error;
use clawdis_engine::value::{Object, Value};
use clawdis_engine::{Ctx, Mode, workflow};

use crate::run::report;
use crate::{err, out};

/// Runs a workflow file for the CLI, printing its output; returns the exit code.
pub async fn run_file(path: &Path, args: Value, dry_run: bool, ctx: &Ctx) -> i32 {
    if dry_run {
        return match workflow::file::load(path).and_then(|wf| workflow::dry_run::plan(&wf, &args)) {
            Ok(plan) => {
                err(&plan);
                if ctx.mode == Mode::Tool {
                    out(&Envelope::ok(Vec::new()).render());
                }
                0
            }
            Err(e) => report(ctx.mode, &e),
        };
    }
    let envelope = match workflow::run_file(path, &args, ctx).await {
        Ok(env) => env,
        Err(e) => return report(ctx.mode, &e),
    };
    match (ctx.mode, &envelope) {
        (Mode::Tool, _) => {
            out(&envelope.render());
            envelope.exit_code()
        }
        (Mode::Human, Envelope::Failure(e)) => report(Mode::Human, e),
        (
            Mode::Human,
            Envelope::Success {
                status: Status::Ok,
                output,
                ..
            },
        ) => {
            if !output.is_empty() {
                out(&(Value::Array(output.clone()).to_json_pretty() + "\n"));
            }
            0
        }
        (
            Mode::Human,
            Envelope::Success {
                status,
                requires_approval,
                requires_input,
                ..
            },
        ) => {
            let mut obj = Object::new();
            obj.insert("status", Value::from(status.as_str()));
            obj.insert("output", Value::Array(Vec::new()));
            obj.insert(
                "requiresApproval",
                requires_approval.clone().unwrap_or_default(),
            );
            obj.insert("requiresInput", requires_input.clone().unwrap_or_default());
            out(&(Value::Object(obj).to_json_pretty() + "\n"));
            0
        }
    }
}

/// `lobster graph [--file] <path> [--format mermaid|dot|ascii] [--args-json JSON]`.
pub async fn graph(argv: &[String], ctx: &Ctx) -> i32 {
    let usage = |msg: &str| {
        err(&format!("{msg}\n"));
        2
    };
    let mut path = None;
    let mut format = "mermaid".to_string();
    let mut args_json = None;
    let mut i = 0;
    while i < argv.len() {
        let tok = argv[i].as_str();
        let inline = |flag: &str| {
            tok.strip_prefix(flag)
                .and_then(|r| r.strip_prefix('='))
                .map(str::to_string)
        };
        match tok {
            "--file" | "--format" | "--args-json" => {
                if let Some(v) = argv.get(i + 1) {
                    match tok {
                        "--file" => path = Some(v.clone()),
                        "--format" => format = v.clone(),
                        _ => args_json = Some(v.clone()),
                    }
                    i += 1;
                }
            }
            _ => {
                if let Some(v) = inline("--file") {
                    path = Some(v);
                } else if let Some(v) = inline("--format") {
                    format = v;
                } else if let Some(v) = inline("--args-json") {
                    args_json = Some(v);
                } else if path.is_none() {
                    path = Some(tok.to_string());
                }
            }
        }
        i += 1;
    }
    let Some(path) = path else {
        return usage("graph requires a workflow file path (use --file <path>)");
    };
    let Some(format) = workflow::graph::Format::parse(&format) else {
        return usage("graph --format must be one of: mermaid, dot, ascii");
    };
    let args = match args_json {
        None => Value::Object(Object::new()),
        Some(raw) => match Value::from_json(&raw) {
            Err(_) => return usage("graph --args-json must be valid JSON"),
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return usage("graph --args-json must be a JSON object"),
        },
    };
    match workflow::file::resolve_path(&path, &ctx.cwd)
        .map_err(Error::runtime)
        .and_then(|p| workflow::file::load(&p))
    {
        Ok(wf) => {
            out(&workflow::graph::render(&wf, &args, format));
            0
        }
        Err(e) => report(Mode::Human, &e),
    }
}
