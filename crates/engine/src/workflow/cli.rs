//! CLI entry points for workflow files: `run` and `graph`.

use std::path::Path;

use crate::context::{Ctx, Mode};
use crate::envelope::{Envelope, Status};
use crate::error::Error;
use crate::value::{Object, Value};

use super::{dry_run, file, graph as graph_mod};

fn print_out(text: &str) {
    crate::context::Sink::Stdout.write(text);
}

fn print_err(text: &str) {
    use std::io::Write;
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes());
    let _ = e.flush();
}

fn report(mode: Mode, e: &Error) -> i32 {
    match mode {
        Mode::Tool => print_out(&Envelope::Failure(e.clone()).render()),
        Mode::Human => print_err(&match e.kind {
            crate::ErrorKind::ParseError => format!("Parse error: {}\n", e.message),
            crate::ErrorKind::RuntimeError => format!("Error: {}\n", e.message),
        }),
    }
    e.kind.exit_code()
}

/// Runs a workflow file for the CLI, printing its output; returns the exit code.
pub async fn run_file(path: &Path, args: Value, dry_run: bool, ctx: &Ctx) -> i32 {
    if dry_run {
        return match file::load(path).and_then(|wf| dry_run::plan(&wf, &args)) {
            Ok(plan) => {
                print_err(&plan);
                if ctx.mode == Mode::Tool {
                    print_out(&Envelope::ok(Vec::new()).render());
                }
                0
            }
            Err(e) => report(ctx.mode, &e),
        };
    }
    let envelope = match super::run_file(path, &args, ctx).await {
        Ok(env) => env,
        Err(e) => return report(ctx.mode, &e),
    };
    match (ctx.mode, &envelope) {
        (Mode::Tool, _) => {
            print_out(&envelope.render());
            envelope.exit_code()
        }
        (Mode::Human, Envelope::Failure(e)) => report(Mode::Human, e),
        (Mode::Human, Envelope::Success { status: Status::Ok, output, .. }) => {
            if !output.is_empty() {
                print_out(&(Value::Array(output.clone()).to_json_pretty() + "\n"));
            }
            0
        }
        (Mode::Human, Envelope::Success { status, requires_approval, requires_input, .. }) => {
            let mut obj = Object::new();
            obj.insert("status", Value::from(status.as_str()));
            obj.insert("output", Value::Array(Vec::new()));
            obj.insert("requiresApproval", requires_approval.clone().unwrap_or_default());
            obj.insert("requiresInput", requires_input.clone().unwrap_or_default());
            print_out(&(Value::Object(obj).to_json_pretty() + "\n"));
            0
        }
    }
}

/// `lobster graph [--file] <path> [--format mermaid|dot|ascii] [--args-json JSON]`.
pub async fn graph(argv: &[String], ctx: &Ctx) -> i32 {
    let usage = |msg: &str| {
        print_err(&format!("{msg}\n"));
        2
    };
    let mut path = None;
    let mut format = "mermaid".to_string();
    let mut args_json = None;
    let mut i = 0;
    while i < argv.len() {
        let tok = argv[i].as_str();
        let inline = |flag: &str| tok.strip_prefix(flag).and_then(|r| r.strip_prefix('=')).map(str::to_string);
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
    let Some(format) = graph_mod::Format::parse(&format) else {
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
    match file::resolve_path(&path, &ctx.cwd).map_err(Error::runtime).and_then(|p| file::load(&p)) {
        Ok(wf) => {
            print_out(&graph_mod::render(&wf, &args, format));
            0
        }
        Err(e) => report(Mode::Human, &e),
    }
}
