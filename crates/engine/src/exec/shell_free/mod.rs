//! Shell lines dash would run without doing more than starting one
//! program, or without starting any.
//!
//! `sh -c 'cat'` costs a second process start: the shell, then the command;
//! `sh -c 'echo done'` costs one for output dash computes itself. When
//! `/bin/sh` is dash (Debian, Ubuntu) and a line is one command of words
//! that need only quote removal (see [`words`]), or patterns that match no
//! file and so stay as written (see [`glob`]), this does what dash would:
//!
//! - a builtin whose only effect is its output and status (`echo`,
//!   `printf`, `true`, `false`, `:`; see [`builtins`]) is run in-process;
//! - a word naming an external program is looked up on `PATH` and run with
//!   the same argv, directory, stdio and process group, and the environment
//!   dash would pass on (it drops variables whose names are not shell names
//!   and exports `PWD`). The exit is reported as dash reports it: a death by
//!   signal becomes status 128+N, with the signal's name on stderr except
//!   for SIGINT and SIGPIPE.
//!
//! Anything else takes the shell: expansions, patterns that may match,
//! redirections, several commands, other builtins, reserved words,
//! assignments, a command that is not found or cannot be started, or a
//! shell that is not dash.

mod builtins;
mod glob;
mod words;

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

use crate::context::Env;
use crate::exec::process::{ChildIo, ProcOutput, collect, spawn, utf8_lossy};

/// Names a shell runs itself (dash's and bash's builtins, POSIX and bash
/// reserved words): a line starting with one of these needs the shell.
const SHELL_WORDS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "case",
    "cd",
    "chdir",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "coproc",
    "declare",
    "dirs",
    "disown",
    "do",
    "done",
    "echo",
    "elif",
    "else",
    "enable",
    "esac",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "fi",
    "for",
    "function",
    "getopts",
    "hash",
    "help",
    "history",
    "if",
    "in",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "select",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "then",
    "time",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "until",
    "wait",
    "while",
];

/// A line dash would run as one builtin or one program.
#[derive(Debug)]
pub enum Direct {
    /// A builtin's outcome, computed already.
    Builtin(builtins::Done),
    /// An external program, resolved as the shell would resolve it.
    Program {
        /// The program's path.
        program: PathBuf,
        /// Its arguments, the first naming it as the line did.
        argv: Vec<String>,
    },
}

impl Direct {
    /// `line` as run by `shell -c` with `env` in `cwd`, when it is one
    /// builtin or plain command; `None` when it needs the shell.
    pub fn plain(line: &str, shell: &str, env: &Env, cwd: &Path) -> Option<Direct> {
        if !is_dash(shell) {
            return None;
        }
        // Newlines around the command (a YAML block scalar ends in one) only
        // end it; newlines inside it separate commands and stay refused.
        let words = words::split(line.trim_matches('\n'))?;
        let first = words.first()?;
        if first.quoted
            || !first.text.bytes().all(words::plain_byte)
            || first.text.starts_with('-')
            || first.text.contains('=')
        {
            return None;
        }
        // A pattern that matches nothing stays as it is; one that may match
        // is the shell's to expand.
        let patterns: Vec<&str> = words.iter().filter_map(|w| w.glob.as_deref()).collect();
        if !patterns.is_empty() && !glob::matches_nothing(&patterns, cwd) {
            return None;
        }
        let argv: Vec<String> = words.into_iter().map(|w| w.text).collect();
        if let Some(done) = builtins::run(&argv) {
            return Some(Direct::Builtin(done));
        }
        let first = &argv[0];
        if SHELL_WORDS.contains(&first.as_str()) {
            return None;
        }
        let program = if first.contains('/') {
            executable(&cwd.join(first))?
        } else {
            lookup(first, env)?
        };
        Some(Direct::Program { program, argv })
    }

    /// Runs the line; gives `io` back when the program cannot be started,
    /// so the caller can hand the line to the shell instead.
    pub async fn run(
        &self,
        env: &Env,
        cwd: &Path,
        io: ChildIo,
    ) -> Result<std::io::Result<ProcOutput>, ChildIo> {
        let (program, argv) = match self {
            Direct::Builtin(done) => return Ok(deliver(done, io)),
            Direct::Program { program, argv } => (program, argv),
        };
        let child = match spawn(
            program,
            Some(&argv[0]),
            &argv[1..],
            &dash_env(env, cwd),
            cwd,
        ) {
            Ok(child) => child,
            Err(e) => {
                tracing::debug!(program = %program.display(), error = %e, "plain command left to the shell");
                return Err(io);
            }
        };
        Ok(collect(child, io)
            .await
            .map(|(status, stdout, mut stderr)| {
                let mut code = status.code();
                if let Some(signal) = status.signal() {
                    code = Some(128 + signal);
                    if signal != libc::SIGINT && signal != libc::SIGPIPE {
                        stderr.extend_from_slice(signal_name(signal).as_bytes());
                        if status.core_dumped() {
                            stderr.extend_from_slice(b" (core dumped)");
                        }
                        stderr.push(b'\n');
                    }
                }
                ProcOutput {
                    code,
                    stdout: utf8_lossy(stdout),
                    stderr: utf8_lossy(stderr),
                }
            }))
    }
}

/// A builtin's output as a finished child's: collected, or written to the
/// pipe handed to `io.stdout_to` (from a thread, so output larger than the
/// pipe does not wait for its reader). Its stdin is never read.
fn deliver(done: &builtins::Done, io: ChildIo) -> std::io::Result<ProcOutput> {
    let mut stdout = done.stdout.clone();
    if let Some(to) = io.stdout_to {
        let (reader, mut writer) = std::io::pipe()?;
        let _ = to.send(std::fs::File::from(std::os::fd::OwnedFd::from(reader)));
        let bytes = std::mem::take(&mut stdout);
        std::thread::Builder::new()
            .name("builtin-stdout".into())
            .spawn(move || {
                // A reader that stops early is not an error, as for a child.
                let _ = writer.write_all(bytes.as_bytes());
            })?;
    }
    Ok(ProcOutput {
        code: Some(done.code),
        stdout,
        stderr: String::new(),
    })
}

/// Whether `shell` is dash (`/bin/sh` on Debian and Ubuntu is a link to it).
fn is_dash(shell: &str) -> bool {
    std::fs::canonicalize(shell).is_ok_and(|real| real.file_name().is_some_and(|n| n == "dash"))
}

/// The environment dash gives the commands it runs: the variables with
/// shell names, and `PWD` (kept when it names `cwd`, else `cwd` resolved).
fn dash_env(env: &Env, cwd: &Path) -> Env {
    let mut out: Env = env
        .iter()
        .filter(|(k, _)| is_name(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let same_dir = |p: &str| {
        use std::os::unix::fs::MetadataExt;
        let (Ok(a), Ok(b)) = (std::fs::metadata(p), std::fs::metadata(cwd)) else {
            return false;
        };
        a.dev() == b.dev() && a.ino() == b.ino()
    };
    if !env
        .get("PWD")
        .is_some_and(|p| p.starts_with('/') && same_dir(p))
    {
        let real = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        out.insert("PWD".into(), real.to_string_lossy().into_owned());
    }
    out
}

/// A shell variable name: a letter or `_`, then letters, digits and `_`.
fn is_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `name` looked up on `env`'s `PATH` as the shell does; `None` when `PATH`
/// is unset, names a relative directory before a match, or has no match.
fn lookup(name: &str, env: &Env) -> Option<PathBuf> {
    for dir in env.get("PATH")?.split(':') {
        if !dir.starts_with('/') {
            return None;
        }
        if let Some(found) = executable(&Path::new(dir).join(name)) {
            return Some(found);
        }
    }
    None
}

/// `path` when it is a regular file this process may execute.
fn executable(path: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(path).ok()?;
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: access only reads the NUL-terminated path.
    let ok = unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0;
    (meta.is_file() && ok).then(|| path.to_path_buf())
}

/// The C library's description of `signal` ("Terminated", "Killed").
fn signal_name(signal: i32) -> String {
    // SAFETY: strsignal returns a NUL-terminated string (for unknown
    // signals too), valid until the next call on this thread.
    let text = unsafe { libc::strsignal(signal) };
    if text.is_null() {
        return format!("Signal {signal}");
    }
    // SAFETY: non-null, NUL-terminated, read before any other strsignal call.
    unsafe { std::ffi::CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        let mut env = Env::new();
        env.insert("PATH".into(), "/usr/bin:/bin".into());
        env
    }

    fn plain(line: &str) -> Option<Direct> {
        Direct::plain(line, "/bin/sh", &env(), Path::new("/"))
    }

    fn program(line: &str) -> (PathBuf, Vec<String>) {
        match plain(line) {
            Some(Direct::Program { program, argv }) => (program, argv),
            other => panic!("{line:?} is not a plain program: {other:?}"),
        }
    }

    #[test]
    fn plain_words_resolve_on_path() {
        let (path, argv) = program("  cat\t-n  --x=1 a,b:c+d@e%f  ");
        assert!(path.ends_with("cat") && path.is_absolute());
        assert_eq!(argv, ["cat", "-n", "--x=1", "a,b:c+d@e%f"]);
        assert!(plain("/bin/cat x").is_some());
        assert_eq!(
            program("\ncat -n \n\n").1,
            ["cat", "-n"],
            "a block scalar's newlines"
        );
        assert_eq!(
            program("cat 'a b' \"*\" \\~").1,
            ["cat", "a b", "*", "~"],
            "quotes are removed"
        );
    }

    #[test]
    fn output_only_builtins_run_here() {
        for (line, code, stdout) in [
            ("echo \"a  b\" 'c'", 0, "a  b c\n"),
            ("printf '%s\\n' x", 0, "x\n"),
            ("true", 0, ""),
            (":", 0, ""),
            ("false", 1, ""),
        ] {
            match plain(line) {
                Some(Direct::Builtin(done)) => {
                    assert_eq!((done.code, done.stdout.as_str()), (code, stdout), "{line}");
                }
                other => panic!("{line:?} is not run here: {other:?}"),
            }
        }
    }

    #[test]
    fn shell_syntax_other_builtins_and_odd_commands_take_the_shell() {
        for line in [
            "",
            "   ",
            "echo $HOME",
            "echo 'a\\nb'",
            "printf %d 1",
            "'echo' x",
            "cat $HOME",
            "cat *",
            "cat ~",
            "cat a|wc",
            "cat a;ls",
            "cat a&",
            "cat >a",
            "cat <a",
            "cat `x`",
            "cat a\nls",
            "cat #x",
            "X=1 cat",
            "if",
            "while",
            "kill 1",
            "test -e x",
            "-cat",
            "no-such-command-here",
            "caté",
            "cat 'open",
            "! cat",
            "{ cat",
            "ca* x",
            "[ -e x ]",
        ] {
            assert!(plain(line).is_none(), "{line:?} should need the shell");
        }
    }

    #[test]
    fn patterns_that_match_nothing_stay_as_written_and_others_take_the_shell() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a1", "b", ".hidden"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let plain = |line: &str| Direct::plain(line, "/bin/sh", &env(), dir.path());
        for line in [
            "cat a?",
            "cat [ab]",
            "cat *",
            "cat [!x]",
            "cat ./*",
            "cat .h*",
            "cat [[:alpha:]]",
            "cat [a",
        ] {
            assert!(
                plain(line).is_none(),
                "{line:?} may match, or is not certain not to"
            );
        }
        match plain("echo [1,2,3] {a,b}! 'x'*") {
            Some(Direct::Builtin(done)) => assert_eq!(done.stdout, "[1,2,3] {a,b}! x*\n"),
            other => panic!("not run here: {other:?}"),
        }
        match plain("cat c* [!ab1] ?hidden") {
            Some(Direct::Program { argv, .. }) => {
                assert_eq!(argv, ["cat", "c*", "[!ab1]", "?hidden"]);
            }
            other => panic!("not a plain program: {other:?}"),
        }
    }

    #[test]
    fn other_shells_and_relative_or_missing_paths_take_the_shell() {
        let mut relative = env();
        relative.insert("PATH".into(), "bin:/usr/bin".into());
        assert!(Direct::plain("cat", "/bin/sh", &relative, Path::new("/")).is_none());
        assert!(Direct::plain("cat", "/bin/bash", &env(), Path::new("/")).is_none());
        assert!(Direct::plain("cat", "/nonexistent/sh", &env(), Path::new("/")).is_none());
        assert!(Direct::plain("cat", "/bin/sh", &Env::new(), Path::new("/")).is_none());
    }

    #[test]
    fn the_environment_is_what_dash_exports() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = env();
        for k in ["FOO-BAR", "A.B", "1X", "BASH_FUNC_x%%", "OK_1"] {
            e.insert(k.into(), "v".into());
        }
        let out = dash_env(&e, dir.path());
        let names: Vec<&str> = out.keys().map(String::as_str).collect();
        assert_eq!(names, ["OK_1", "PATH", "PWD"]);
        assert_eq!(
            out["PWD"],
            std::fs::canonicalize(dir.path()).unwrap().to_string_lossy()
        );
        let mut e = env();
        let dotted = format!("{}/.", dir.path().display());
        e.insert("PWD".into(), dotted.clone());
        assert_eq!(
            dash_env(&e, dir.path())["PWD"],
            dotted,
            "a PWD naming the directory is kept as written"
        );
    }
}
