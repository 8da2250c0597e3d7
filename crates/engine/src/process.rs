//! Child processes: spawning, feeding stdin, collecting output, and killing
//! whole process groups when a run is aborted or times out.

use std::collections::HashSet;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::context::Env;

/// What a finished child produced.
#[derive(Debug)]
pub struct ProcOutput {
    /// Exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
}

impl ProcOutput {
    /// The exit code as Node prints it (`null` for a signal).
    pub fn code_text(&self) -> String {
        self.code.map_or_else(|| "null".to_string(), |c| c.to_string())
    }
}

/// Process groups of children still running, killed on abort.
fn live_groups() -> &'static Mutex<HashSet<i32>> {
    static GROUPS: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    GROUPS.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Sends `signal` to the process group of every running child.
pub fn signal_all_children(signal: i32) {
    let groups = live_groups().lock().unwrap_or_else(|e| e.into_inner());
    for pgid in groups.iter() {
        // SAFETY: killpg only sends a signal.
        unsafe {
            libc::killpg(*pgid, signal);
        }
    }
}

/// Kills the child's process group with SIGKILL if dropped before it exits
/// (a timeout, a lost `parallel` race, or an abort).
struct GroupGuard {
    pgid: i32,
    done: bool,
}

impl GroupGuard {
    fn new(pgid: i32) -> Self {
        live_groups().lock().unwrap_or_else(|e| e.into_inner()).insert(pgid);
        GroupGuard { pgid, done: false }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        live_groups().lock().unwrap_or_else(|e| e.into_inner()).remove(&self.pgid);
        if !self.done {
            // SAFETY: killpg only sends a signal.
            unsafe {
                libc::killpg(self.pgid, libc::SIGKILL);
            }
        }
    }
}

/// Decodes bytes as UTF-8 without copying when they are valid.
fn utf8_lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The program and arguments that run `line` through the configured shell:
/// `/bin/sh -lc` (a login shell), or `$LOBSTER_SHELL` with matching flags.
pub fn shell_command(line: &str, env: &Env) -> (String, Vec<String>) {
    let shell = env.get("LOBSTER_SHELL").map(|s| s.trim()).filter(|s| !s.is_empty()).unwrap_or("/bin/sh");
    let base = Path::new(shell).file_name().and_then(|n| n.to_str()).unwrap_or(shell).to_ascii_lowercase();
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    let flags: &[&str] = match base {
        "pwsh" | "powershell" => &["-NoProfile", "-Command"],
        "cmd" => &["/d", "/s", "/c"],
        _ => &["-lc"],
    };
    let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    args.push(line.to_string());
    (shell.to_string(), args)
}

/// Runs `program args...` to completion with `env` and `cwd`, writing
/// `stdin` (or closing it at once) and collecting stdout and stderr.
#[tracing::instrument(level = "debug", skip(args, env, stdin))]
pub async fn run_process(
    program: &str,
    args: &[String],
    env: &Env,
    cwd: &Path,
    stdin: Option<Vec<u8>>,
) -> std::io::Result<ProcOutput> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let mut guard = child.id().and_then(|id| i32::try_from(id).ok()).map(GroupGuard::new);

    let mut child_stdin = child.stdin.take();
    let mut child_stdout = child.stdout.take();
    let mut child_stderr = child.stderr.take();
    let feed = async move {
        if let (Some(pipe), Some(data)) = (child_stdin.as_mut(), stdin) {
            // A child that exits without reading its input is not an error.
            let _ = pipe.write_all(&data).await;
        }
        drop(child_stdin);
    };
    let read_out = async {
        let mut buf = Vec::new();
        if let Some(p) = child_stdout.as_mut() {
            p.read_to_end(&mut buf).await?;
        }
        Ok::<_, std::io::Error>(buf)
    };
    let read_err = async {
        let mut buf = Vec::new();
        if let Some(p) = child_stderr.as_mut() {
            p.read_to_end(&mut buf).await?;
        }
        Ok::<_, std::io::Error>(buf)
    };
    let ((), out, err, status) = tokio::join!(feed, read_out, read_err, child.wait());
    let status = status?;
    if let Some(g) = guard.as_mut() {
        g.done = true;
    }
    Ok(ProcOutput { code: status.code(), stdout: utf8_lossy(out?), stderr: utf8_lossy(err?) })
}
