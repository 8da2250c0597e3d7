//! Child processes: spawning, feeding stdin, collecting output, and killing
//! whole process groups when a run is aborted or times out.

use std::collections::HashSet;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use crate::context::Env;
use crate::value::is_js_space;

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
        self.code
            .map_or_else(|| "null".to_string(), |c| c.to_string())
    }

    /// What a failure message names, as Lobster does: the trimmed stderr,
    /// else the trimmed stdout, else `ran` (the line or program).
    pub fn failure_detail<'a>(&'a self, ran: &'a str) -> &'a str {
        [
            self.stderr.trim_matches(is_js_space),
            self.stdout.trim_matches(is_js_space),
        ]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or(ran)
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
        live_groups()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pgid);
        GroupGuard { pgid, done: false }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        live_groups()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.pgid);
        if !self.done {
            // SAFETY: killpg only sends a signal.
            unsafe {
                libc::killpg(self.pgid, libc::SIGKILL);
            }
        }
    }
}

/// What a child reads, and where its standard output goes.
#[derive(Debug, Default)]
pub struct ChildIo {
    /// Written to the child's stdin (closed at once when `None`).
    pub stdin: Option<Vec<u8>>,
    /// When set, the read end of the child's stdout pipe is handed here,
    /// as a blocking file, instead of being collected (`ProcOutput::stdout`
    /// is then empty).
    pub stdout_to: Option<std::sync::mpsc::Sender<std::fs::File>>,
}

impl ChildIo {
    /// Feeds `stdin` (if any) and collects stdout.
    pub fn stdin(stdin: Option<Vec<u8>>) -> Self {
        ChildIo {
            stdin,
            stdout_to: None,
        }
    }
}

/// Decodes bytes as UTF-8 without copying when they are valid.
pub fn utf8_lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The read end of a child's stdout as a blocking file for another
/// thread. On Linux the pipe grows to 1 MiB, so a child writing faster than
/// that thread reads is not held up.
fn hand_over(pipe: tokio::process::ChildStdout) -> std::io::Result<std::fs::File> {
    let fd = pipe.into_owned_fd()?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl on an open descriptor we own; failure is harmless.
        unsafe {
            libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20);
        }
    }
    Ok(std::fs::File::from(fd))
}

/// The program and arguments that run `line` through the configured shell:
/// How Node reports a failed spawn, as Lobster passes it on: `spawn <program>
/// <errno name>` (`spawn ./tool.sh EACCES`); `None` for an error that is
/// not one of the errors `execve` and `fork` report.
pub fn spawn_error(program: &str, e: &std::io::Error) -> Option<String> {
    let name = match e.raw_os_error()? {
        libc::E2BIG => "E2BIG",
        libc::EACCES => "EACCES",
        libc::EAGAIN => "EAGAIN",
        libc::EFAULT => "EFAULT",
        libc::EINVAL => "EINVAL",
        libc::EIO => "EIO",
        libc::EISDIR => "EISDIR",
        libc::ELOOP => "ELOOP",
        libc::EMFILE => "EMFILE",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENFILE => "ENFILE",
        libc::ENOENT => "ENOENT",
        libc::ENOEXEC => "ENOEXEC",
        libc::ENOMEM => "ENOMEM",
        libc::ENOTDIR => "ENOTDIR",
        libc::EPERM => "EPERM",
        libc::ETXTBSY => "ETXTBSY",
        _ => return None,
    };
    Some(format!("spawn {program} {name}"))
}

/// `/bin/sh -lc` (a login shell), or `$LOBSTER_SHELL` with matching flags.
pub fn shell_command(line: &str, env: &Env) -> (String, Vec<String>) {
    let shell = env
        .get("LOBSTER_SHELL")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .unwrap_or("/bin/sh");
    let base = Path::new(shell)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(shell)
        .to_ascii_lowercase();
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
/// `io.stdin` (or closing stdin at once) and collecting stdout (or sending
/// it to `io.stdout_to`) and stderr.
#[tracing::instrument(level = "debug", skip(args, env, io))]
pub async fn run_process(
    program: &str,
    args: &[String],
    env: &Env,
    cwd: &Path,
    io: ChildIo,
) -> std::io::Result<ProcOutput> {
    let child = spawn(Path::new(program), None, args, env, cwd)?;
    let (status, stdout, stderr) = collect(child, io).await?;
    Ok(ProcOutput {
        code: status.code(),
        stdout: utf8_lossy(stdout),
        stderr: utf8_lossy(stderr),
    })
}

/// Starts `program` (named `arg0` to itself when given) in its own process
/// group, with piped stdio, `env` only and `cwd`.
pub(crate) fn spawn(
    program: &Path,
    arg0: Option<&str>,
    args: &[String],
    env: &Env,
    cwd: &Path,
) -> std::io::Result<Child> {
    let mut cmd = Command::new(program);
    if let Some(arg0) = arg0 {
        cmd.arg0(arg0);
    }
    cmd.args(args)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd.spawn()
}

/// Feeds a spawned child and waits for it, returning its status, stdout
/// (empty when handed to `io.stdout_to`) and stderr. Dropping the future
/// kills the child's process group.
pub(crate) async fn collect(
    mut child: Child,
    io: ChildIo,
) -> std::io::Result<(ExitStatus, Vec<u8>, Vec<u8>)> {
    let ChildIo { stdin, stdout_to } = io;
    let mut guard = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(GroupGuard::new);

    let mut child_stdin = child.stdin.take();
    let mut child_stdout = child.stdout.take();
    if let Some(to) = stdout_to
        && let Some(pipe) = child_stdout.take()
    {
        let _ = to.send(hand_over(pipe)?);
    }
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
    Ok((status, out?, err?))
}
