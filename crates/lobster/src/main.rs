//! `lobster`: a drop-in replacement for OpenClaw's Lobster CLI.
//!
//! OpenClaw spawns `lobster run --mode tool …` and `lobster resume …` and
//! parses the last JSON envelope on stdout; argv handling, output and exit
//! codes here follow the real Lobster exactly.

mod help;
mod resume_args;
mod run;
mod signals;
mod workflow_file;

use std::io::Write;

use clawdis_engine::{Ctx, Mode, StateHandle};

/// Writes text to stdout.
pub(crate) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Writes text to stderr.
pub(crate) fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes());
    let _ = stderr.flush();
}

fn init_tracing() {
    if let Ok(filter) = std::env::var("LOBSTER_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .try_init();
    }
}

/// Runs `work` on a single-threaded runtime, aborting on SIGINT/SIGTERM/
/// SIGHUP/SIGQUIT with Lobster's exit codes.
fn block_on<F: std::future::Future<Output = i32>>(work: F) -> i32 {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            err(&format!("Error: cannot start runtime: {e}\n"));
            return 1;
        }
    };
    rt.block_on(async {
        let code = signals::run_until_signal(work).await;
        // Settle the store before exit rather than racing it: a long
        // write-ahead log is checkpointed for the next process. The
        // connection itself is left to the exit.
        if let Some(state) = STATE.get() {
            state.settle_before_exit().await;
        }
        code
    })
}

/// The state store of this process's context, settled before exit.
static STATE: std::sync::OnceLock<StateHandle> = std::sync::OnceLock::new();

fn main() {
    init_tracing();
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let code = dispatch(argv);
    std::process::exit(code);
}

fn dispatch(argv: Vec<String>) -> i32 {
    let wants_help = |args: &[String]| args.iter().any(|a| a == "-h" || a == "--help");
    if argv.first().is_some_and(|a| a == "graph") && wants_help(&argv) {
        out(help::GRAPH);
        return 0;
    }
    if argv.is_empty() || wants_help(&argv) {
        out(help::GENERAL);
        return 0;
    }
    match argv[0].as_str() {
        "help" => match argv.get(1) {
            None => {
                out(help::GENERAL);
                0
            }
            Some(topic) => match clawdis_engine::commands::help(topic) {
                Ok(Some(text)) => {
                    out(&text);
                    0
                }
                Ok(None) => {
                    err(&format!("Unknown command: {topic}\n"));
                    2
                }
                Err(e) => {
                    err(&format!("{e}\n"));
                    1
                }
            },
        },
        "version" | "--version" | "-v" => {
            out(&format!("{}\n", env!("CARGO_PKG_VERSION")));
            0
        }
        "doctor" => block_on(run::doctor(argv[1..].to_vec())),
        "graph" => block_on(run::graph(argv[1..].to_vec())),
        "resume" => block_on(run::resume(argv[1..].to_vec())),
        "run" => block_on(run::run(argv[1..].to_vec())),
        _ => block_on(run::run(argv)),
    }
}

/// A context for this process in `mode`. A step that asks an LLM (and
/// names no Lobster adapter) gets the one of the Clawdis home's settings,
/// read then, with its key from the keychain.
pub(crate) fn process_ctx(mode: Mode) -> Ctx {
    let mut ctx = Ctx::from_process(mode);
    let home = clawdis_engine::context::clawdis_home(&ctx.env);
    ctx.services = std::sync::Arc::new(clawdis_engine::context::Services::llm_from(move || {
        match clawdis_engine::llm::LlmSettings::in_home(&home) {
            Ok(settings) => settings.map(|llm| {
                let key =
                    clawdis_secrets::Secrets::new(&home).reader(clawdis_engine::llm::KEY_SECRET);
                llm.config(std::sync::Arc::new(key))
            }),
            Err(e) => {
                tracing::warn!(error = %e, "the Clawdis settings' llm is not read");
                None
            }
        }
    }));
    let _ = STATE.set(ctx.state.clone());
    ctx
}
