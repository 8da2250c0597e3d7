//! `exec`: run an OS command, optionally feeding it the pipeline items and
//! parsing its output as JSON.

use super::Output;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::exec::ahead::Ahead;
use crate::exec::login_env::LoginSession;
use crate::exec::process::{ChildIo, run_process, shell_command, spawn_error, utf8_lossy};
use crate::items::Items;
use crate::json_stream::json_items;
use crate::pipeline::parse::{Args, Stage};
use crate::value::{Value, is_js_space};

/// Encodes items for the child's stdin.
fn encode_stdin(items: &[Value], mode: &str) -> Result<String> {
    match mode {
        "json" => Ok(Value::Array(items.to_vec()).to_json()),
        // Joined as text, an `undefined` item is an empty line.
        "jsonl" => Ok(items
            .iter()
            .map(|i| i.stringify().unwrap_or_default() + "\n")
            .collect()),
        "raw" => Ok(items
            .iter()
            .map(|i| match i {
                Value::String(s) => s.clone(),
                other => other.stringify().unwrap_or_default(),
            })
            .collect::<Vec<_>>()
            .join("\n")),
        other => Err(Error::runtime(format!(
            "exec --stdin must be raw, json, or jsonl (got {other})"
        ))),
    }
}

/// Runs `exec`, then the pure stages `then` over its items. With `--json`
/// those stages run over the output as it arrives (see [`crate::exec::ahead`]).
pub async fn run(args: &Args, input: Items, ctx: &Ctx, then: &[Stage]) -> Result<Output> {
    let cmd = &args.positional;
    let shell_flag = args.get("shell");
    let shell_line = shell_flag.and_then(Value::as_str);
    let use_shell = shell_flag.is_some_and(Value::truthy)
        || (cmd.len() == 1 && cmd[0].chars().any(is_js_space));
    let stdin_mode = args.string("stdin").map(str::to_lowercase);
    let json = args.truthy("json");
    // `--shell ''` names no command either (issue #20: ours panicked).
    if cmd.is_empty() && shell_line.is_none_or(str::is_empty) {
        return Err(Error::runtime("exec requires a command"));
    }

    let stdin = match &stdin_mode {
        Some(mode) => Some(encode_stdin(&input.collect()?, mode)?.into_bytes()),
        None => {
            input.drain()?;
            None
        }
    };

    let mut io = ChildIo::stdin(stdin);
    let mut ahead = None;
    if json
        && !then.is_empty()
        && crate::exec::enabled(&ctx.env)
        && let Some((stdout_to, worker)) = Ahead::start(then.to_vec())
    {
        io.stdout_to = Some(stdout_to);
        ahead = Some(worker);
    }
    // `ran` is what a failure with nothing on stderr or stdout names, as
    // Lobster does: the shell line, or the program.
    let (program, ran, spawned) = if use_shell {
        let line = shell_line
            .map(str::to_string)
            .or_else(|| cmd.first().cloned())
            .unwrap_or_default();
        let program = shell_command(&line, &ctx.env).0;
        let spawned = LoginSession::default()
            .run_shell(&line, &ctx.env, &ctx.cwd, io, ctx.state.dir())
            .await;
        (program, line, spawned)
    } else {
        (
            cmd[0].clone(),
            cmd[0].clone(),
            run_process(&cmd[0], &cmd[1..], &ctx.env, &ctx.cwd, io).await,
        )
    };
    let mut out = match spawned {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::runtime(if use_shell {
                "exec shell not found; check LOBSTER_SHELL or ComSpec".to_string()
            } else {
                format!("exec command not found: {program}")
            }));
        }
        Err(e) => {
            let message = spawn_error(&program, &e)
                .unwrap_or_else(|| format!("exec could not start {program}: {e}"));
            return Err(Error::io(message, e));
        }
    };
    if let Some(ahead) = ahead {
        tracing::debug!(code = ?out.code, "command exited; waiting for the stages worked ahead");
        let outcome = ahead
            .finish()
            .await
            .ok_or_else(|| Error::runtime("exec --json output was lost"))?;
        if let (Some(0), Some(items)) = (out.code, outcome.items) {
            return Ok(Output::items(items?));
        }
        out.stdout = utf8_lossy(outcome.bytes);
    }
    if out.code != Some(0) {
        return Err(Error::runtime(format!(
            "exec failed ({}): {}",
            out.code_text(),
            out.failure_detail(&ran)
        )));
    }

    if json {
        let items = json_items(out.stdout).map_err(|e| {
            Error::runtime(format!("exec --json could not parse stdout as JSON: {e}"))
        })?;
        return Ok(Output::items(super::run_pure(then, items)?));
    }
    let lines: Vec<Value> = out
        .stdout
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(Value::from)
        .collect();
    Ok(Output::items(super::run_pure(then, lines.into())?))
}
