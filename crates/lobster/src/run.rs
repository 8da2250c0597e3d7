//! `lobster run`, `resume`, `doctor` and `graph`.

use clawdis_engine::envelope::Envelope;
use clawdis_engine::error::Error;
use clawdis_engine::items::Items;
use clawdis_engine::journal::Journal;
use clawdis_engine::pipeline::parse::parse_pipeline;
use clawdis_engine::pipeline::tool as pipeline_tool;
use clawdis_engine::pipeline::{dry_run_plan, run_pipeline};
use clawdis_engine::value::{Object, Value};
use clawdis_engine::{Ctx, Mode, resume as engine_resume, workflow};

use crate::{err, out, process_ctx};

/// Parsed `run` arguments.
struct RunArgs {
    mode: Mode,
    rest: Vec<String>,
    file: Option<String>,
    args_json: Option<String>,
    dry_run: bool,
    trailing_dry_run: bool,
}

fn parse_run_args(argv: &[String]) -> RunArgs {
    let mut a = RunArgs {
        mode: Mode::Human,
        rest: Vec::new(),
        file: None,
        args_json: None,
        dry_run: false,
        trailing_dry_run: false,
    };
    let mut i = 0;
    while i < argv.len() {
        let tok = argv[i].as_str();
        let value_of = |flag: &str| tok.strip_prefix(flag).and_then(|r| r.strip_prefix('='));
        if tok == "--mode" || tok == "--file" || tok == "--args-json" {
            if let Some(v) = argv.get(i + 1) {
                match tok {
                    "--mode" => a.mode = mode_of(v),
                    "--file" => a.file = Some(v.clone()),
                    _ => a.args_json = Some(v.clone()),
                }
                i += 1;
            }
        } else if let Some(v) = value_of("--mode") {
            a.mode = mode_of(v);
        } else if let Some(v) = value_of("--file") {
            a.file = Some(v.to_string());
        } else if let Some(v) = value_of("--args-json") {
            a.args_json = Some(v.to_string());
        } else if tok == "--dry-run" && a.rest.is_empty() {
            a.dry_run = true;
        } else if tok == "--dry-run" {
            a.trailing_dry_run = true;
            a.rest.push(tok.to_string());
        } else {
            a.rest.push(tok.to_string());
        }
        i += 1;
    }
    a
}

fn mode_of(v: &str) -> Mode {
    if v == "tool" { Mode::Tool } else { Mode::Human }
}

/// Prints an error the way the mode wants it and returns the exit code.
pub(crate) fn report(mode: Mode, e: &Error) -> i32 {
    match mode {
        Mode::Tool => out(&Envelope::Failure(e.clone()).render()),
        Mode::Human => match e.kind {
            clawdis_engine::ErrorKind::ParseError => err(&format!("Parse error: {}\n", e.message)),
            clawdis_engine::ErrorKind::RuntimeError => err(&format!("Error: {}\n", e.message)),
        },
    }
    e.kind.exit_code()
}

pub async fn run(argv: Vec<String>) -> i32 {
    let mut a = parse_run_args(&argv);
    let ctx = process_ctx(a.mode);
    let workflow_path = match &a.file {
        Some(f) => match workflow::file::resolve_path(f, &ctx.cwd) {
            Ok(p) => Some(p),
            Err(msg) => return report(a.mode, &Error::parse(msg)),
        },
        None => {
            let positional: Vec<&String> = a.rest.iter().filter(|t| *t != "--dry-run").collect();
            let single = positional.len() == 1 && (a.rest.len() == 1 || a.trailing_dry_run);
            match positional.first() {
                Some(p) if single && !p.contains('|') => {
                    workflow::file::resolve_path(p, &ctx.cwd).ok()
                }
                _ => None,
            }
        }
    };
    if let Some(path) = workflow_path {
        if a.trailing_dry_run {
            a.dry_run = true;
        }
        let args = match &a.args_json {
            None => Value::Object(Object::new()),
            Some(raw) => match Value::from_json(raw) {
                Ok(v) => v,
                Err(_) => {
                    let e = Error::parse("run --args-json must be valid JSON");
                    if a.mode == Mode::Tool {
                        return report(a.mode, &e);
                    }
                    err(&format!("{}\n", e.message));
                    return e.kind.exit_code();
                }
            },
        };
        return crate::workflow_file::run_file(&path, args, a.dry_run, &ctx).await;
    }

    let text = a.rest.join(" ");
    let stages = match parse_pipeline(&text) {
        Ok(s) => s,
        Err(e) => return report(a.mode, &e),
    };
    if a.dry_run {
        return match dry_run_plan(&stages) {
            Ok(plan) => {
                err(&plan);
                if a.mode == Mode::Tool {
                    out(&Envelope::ok(Vec::new()).render());
                }
                0
            }
            Err(e) => report(a.mode, &e),
        };
    }

    match a.mode {
        Mode::Tool => {
            // A pause records the run in the home's history, under a run id
            // of its own (the envelope stays Lobster's).
            let journal = Journal::for_lobster_pipeline(text, &ctx.cwd);
            let ctx = Ctx {
                journal: Some(journal),
                ..ctx
            };
            let envelope = pipeline_tool::run_tool(&stages, &ctx).await;
            out(&envelope.render());
            envelope.exit_code()
        }
        Mode::Human => match run_pipeline(&stages, Items::empty(), &ctx).await {
            Ok(result) => {
                if !result.rendered {
                    out(&(Value::Array(result.items).to_json_pretty() + "\n"));
                }
                0
            }
            Err(e) => report(Mode::Human, &e),
        },
    }
}

pub async fn resume(argv: Vec<String>) -> i32 {
    let ctx = process_ctx(Mode::Tool);
    let envelope = match crate::resume_args::parse_args(&argv) {
        Ok(args) => engine_resume::resume(args, &ctx).await,
        Err(e) => e.into(),
    };
    out(&envelope.render());
    envelope.exit_code()
}

pub async fn doctor(argv: Vec<String>) -> i32 {
    let ctx = process_ctx(Mode::Tool);
    let result = match parse_pipeline("exec --json --shell 'echo [1]'") {
        Ok(stages) => run_pipeline(&stages, Items::empty(), &ctx).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(_) => {
            let mut info = Object::new();
            info.insert("toolMode", Value::Bool(true));
            info.insert("protocolVersion", Value::from(1.0));
            info.insert("version", Value::from(env!("CARGO_PKG_VERSION")));
            if !argv.is_empty() {
                info.insert(
                    "notes",
                    Value::Array(argv.into_iter().map(Value::from).collect()),
                );
            }
            out(&Envelope::ok(vec![Value::Object(info)]).render());
            0
        }
        Err(e) => {
            let mut env = Envelope::Failure(e).to_value();
            if let Value::Object(o) = &mut env
                && let Some(Value::Object(error)) = o.get("error").cloned()
            {
                let mut error = error;
                error.insert("type", Value::from("doctor_error"));
                o.insert("error", Value::Object(error));
            }
            out(&(env.to_json_pretty() + "\n"));
            1
        }
    }
}

pub async fn graph(argv: Vec<String>) -> i32 {
    let ctx = process_ctx(Mode::Human);
    crate::workflow_file::graph(&argv, &ctx).await
}
