//! Login-shell environments: captured, replayed and remembered.
//!
//! Lobster runs every shell command through a login shell (`/bin/sh -lc`),
//! which re-reads `/etc/profile` and `~/.profile` each time; on a typical
//! machine that costs several milliseconds per command. Clawdis captures
//! what the profile does to the environment, alongside the first shell
//! command, and runs later commands with `sh -c` and that environment
//! applied (or, for a line that is one plain command, with no shell at all:
//! see [`crate::exec::shell_free`]). The capture is remembered in the state directory (see
//! [`remembered`]) so the next `lobster` process can skip the login shell
//! too, once two captures agreed.
//!
//! Only profiles whose effect is provably a function of their own bytes
//! and the inherited variables are replayed: every profile file a login
//! shell may read must be plain assignments (see [`plain`]); profiles that
//! test for directories, source other files, run programs or read the
//! clock or the working directory keep a login shell for every command, as
//! do profiles that print output, write to stderr, change directory or
//! change the umask. `CLAWDIS_FAST_PATHS=0` turns replaying off
//! ([`crate::exec`]).

mod plain;
mod remembered;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::context::Env;
use crate::exec::process::{ChildIo, ProcOutput, run_process, shell_command};
use crate::exec::shell_free::Direct;
use remembered::Profiles;
pub use remembered::{SYSTEM_DIRS as SYSTEM_PROFILE_DIRS, SYSTEM_FILES as SYSTEM_PROFILE_FILES};

/// Variables a shell sets for itself on every start.
const SHELL_OWNED: [&str; 4] = ["PWD", "OLDPWD", "SHLVL", "_"];
const MARKER: &str = "\u{1}LOBSTER-LOGIN-ENV\u{1}";

/// What a login shell's profile does to the environment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoginEnv {
    set: Vec<(String, String)>,
    unset: Vec<String>,
}

/// The shell when it takes `-lc` (a POSIX-style login shell); `None` for
/// PowerShell and cmd, which have no login profile to replay.
pub fn login_shell(env: &Env) -> Option<String> {
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
    let base = base.strip_suffix(".exe").unwrap_or(&base).to_string();
    (!matches!(base.as_str(), "pwsh" | "powershell" | "cmd")).then(|| shell.to_string())
}

fn shell_owned(name: &str) -> bool {
    SHELL_OWNED.contains(&name)
}

/// Parses a `umask` line (`0022`, `022`).
fn parse_umask(line: &str) -> Option<u32> {
    u32::from_str_radix(line.trim(), 8).ok()
}

impl LoginEnv {
    /// Runs the login shell once in `cwd` and records how its profile
    /// changes `env`; `None` when replaying it would not be faithful.
    pub async fn capture(env: &Env, cwd: &Path) -> Option<LoginEnv> {
        let shell = login_shell(env)?;
        // A plain `sh` reports the umask the profile starts from, then
        // becomes the login shell, which reports what the profile left.
        let wrapper = r#"umask; exec "$0" -lc "$1""#;
        let script = format!(
            "printf '{}'; umask; pwd; printf '\\001'; env -0",
            MARKER.replace('\u{1}', "\\001")
        );
        let args = ["-c".to_string(), wrapper.to_string(), shell, script];
        let out = run_process("/bin/sh", &args, env, cwd, ChildIo::default())
            .await
            .ok()?;
        if out.code != Some(0) || !out.stderr.is_empty() {
            return None;
        }
        let (before, rest) = out.stdout.split_once(MARKER)?;
        let (umask_after, rest) = rest.split_once('\n')?;
        if before.lines().count() != 1 || parse_umask(before)? != parse_umask(umask_after)? {
            return None;
        }
        let (pwd, vars) = rest.split_once('\u{1}')?;
        let here = std::fs::canonicalize(cwd).ok()?;
        if std::fs::canonicalize(pwd.trim_end_matches('\n')).ok()? != here {
            return None;
        }
        let login: Env = vars
            .split('\0')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let set = login
            .iter()
            .filter(|(k, v)| !shell_owned(k) && env.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let unset = env
            .keys()
            .filter(|k| !shell_owned(k) && !login.contains_key(*k))
            .cloned()
            .collect();
        Some(LoginEnv { set, unset })
    }

    /// `env` as the login shell would leave it.
    pub fn apply(&self, env: &Env) -> Env {
        let mut out = env.clone();
        for k in &self.unset {
            out.remove(k);
        }
        for (k, v) in &self.set {
            out.insert(k.clone(), v.clone());
        }
        out
    }
}

/// The login environments learnt by one run (a pipeline, or a workflow with
/// its loops, branches and sub-workflows), by key.
#[derive(Debug, Default)]
pub struct LoginSession {
    learnt: Mutex<HashMap<String, Arc<Learning>>>,
    /// The profile files read ahead for the session's first command.
    ahead: Mutex<Ahead>,
}

/// One key's capture: started by the first command with that key.
#[derive(Debug, Default)]
struct Learning {
    started: AtomicBool,
    env: tokio::sync::OnceCell<Option<LoginEnv>>,
}

/// Profile files read before the first command needed them.
#[derive(Debug, Default)]
enum Ahead {
    #[default]
    Pending,
    Ready(Arc<Profiles>),
    /// The first command ran: every later one reads the files itself.
    Used,
}

impl LoginSession {
    /// Reads the profile files that commands run with `env` would see, on a
    /// task of its own, for a session whose first command is still some
    /// way off: a resume reads them while its process waits for SQLite.
    pub fn read_ahead(self: &Arc<Self>, env: Arc<Env>) {
        let session = Arc::clone(self);
        tokio::spawn(async move {
            let read = Profiles::read_yielding(&env).await;
            let mut ahead = session.ahead.lock().unwrap_or_else(|e| e.into_inner());
            // A command that could not wait has read them itself.
            if matches!(*ahead, Ahead::Pending) {
                *ahead = Ahead::Ready(Arc::new(read));
            }
        });
    }

    /// The profile files for a command run with `env`: the read ahead for
    /// the first command, read afresh for every other one (an earlier
    /// command may have changed them).
    fn profiles(&self, env: &Env) -> Arc<Profiles> {
        let ahead = std::mem::replace(
            &mut *self.ahead.lock().unwrap_or_else(|e| e.into_inner()),
            Ahead::Used,
        );
        match ahead {
            Ahead::Ready(read) if read.fits(env) => read,
            _ => Arc::new(Profiles::read(env)),
        }
    }

    fn learning(&self, key: &str) -> Arc<Learning> {
        let mut learnt = self.learnt.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(learnt.entry(key.to_string()).or_default())
    }

    /// Runs `line` through the configured shell as Lobster does (a login
    /// shell), replaying the profile's environment instead where that is
    /// known to give the same (see [`plain`] and [`crate::exec`]).
    /// `state_dir` holds what earlier runs learnt.
    pub async fn run_shell(
        &self,
        line: &str,
        env: &Env,
        cwd: &Path,
        io: ChildIo,
        state_dir: &Path,
    ) -> std::io::Result<ProcOutput> {
        let Some(shell) = login_shell(env) else {
            let (program, argv) = shell_command(line, env);
            return run_process(&program, &argv, env, cwd, io).await;
        };
        let login_argv = ["-lc".to_string(), line.to_string()];
        if !crate::exec::enabled(env) {
            return run_process(&shell, &login_argv, env, cwd, io).await;
        }
        let profiles = self.profiles(env);
        if !profiles.plain {
            return run_process(&shell, &login_argv, env, cwd, io).await;
        }
        let key = remembered::key(&shell, env, cwd, &profiles);
        let learning = self.learning(&key);
        let learn = || async {
            let captured = LoginEnv::capture(env, cwd).await;
            // The files may have changed while the login shell read them
            // (the command running beside it may write them): a capture
            // counts only for the files it is keyed by.
            if remembered::key(&shell, env, cwd, &Profiles::read(env)) != key {
                return None;
            }
            remembered::record(state_dir, &key, captured.as_ref());
            captured
        };
        if !learning.started.swap(true, Ordering::SeqCst) {
            match remembered::lookup(state_dir, &key) {
                Some(known) => {
                    let _ = learning.env.set(known);
                }
                None => {
                    // The first command runs as Lobster runs it, while the
                    // profile's effect is captured next to it.
                    let (out, _) = tokio::join!(
                        run_process(&shell, &login_argv, env, cwd, io),
                        learning.env.get_or_init(learn)
                    );
                    return out;
                }
            }
        }
        let Some(login) = learning.env.get_or_init(learn).await else {
            return run_process(&shell, &login_argv, env, cwd, io).await;
        };
        let env = login.apply(env);
        let io = match Direct::plain(line, &shell, &env, cwd) {
            Some(direct) => match direct.run(&env, cwd, io).await {
                Ok(out) => return out,
                Err(io) => io,
            },
            None => io,
        };
        run_process(&shell, &["-c".to_string(), line.to_string()], &env, cwd, io).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home_env(home: &Path) -> Env {
        let mut env = Env::new();
        env.insert("HOME".into(), home.to_string_lossy().into_owned());
        env.insert("PATH".into(), std::env::var("PATH").unwrap());
        env
    }

    #[tokio::test]
    async fn replays_what_the_profile_exports() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".profile"),
            "export FROM_PROFILE=yes\nunset DROP_ME\n",
        )
        .unwrap();
        let mut env = home_env(dir.path());
        env.insert("DROP_ME".into(), "1".into());
        let login = LoginEnv::capture(&env, dir.path()).await.expect("captured");
        let applied = login.apply(&env);
        assert_eq!(applied.get("FROM_PROFILE").map(String::as_str), Some("yes"));
        assert!(!applied.contains_key("DROP_ME"));
    }

    #[tokio::test]
    async fn chatty_profiles_are_not_replayed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".profile"), "echo welcome\n").unwrap();
        assert_eq!(
            LoginEnv::capture(&home_env(dir.path()), dir.path()).await,
            None
        );
    }

    #[tokio::test]
    async fn profiles_that_change_the_umask_are_not_replayed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".profile"), "umask 0077\n").unwrap();
        let env = home_env(dir.path());
        assert_eq!(LoginEnv::capture(&env, dir.path()).await, None);
        // The session then keeps a login shell for every command.
        let state = tempfile::tempdir().unwrap();
        let session = LoginSession::default();
        for _ in 0..2 {
            let out = session
                .run_shell("umask", &env, dir.path(), ChildIo::default(), state.path())
                .await
                .unwrap();
            assert_eq!(parse_umask(&out.stdout), Some(0o077));
        }
    }

    #[tokio::test]
    async fn later_commands_and_later_sessions_see_the_profile() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".profile"), "export FROM_PROFILE=yes\n").unwrap();
        let env = home_env(dir.path());
        let state = tempfile::tempdir().unwrap();
        for _ in 0..3 {
            let session = LoginSession::default();
            for _ in 0..2 {
                let out = session
                    .run_shell(
                        "echo \"$FROM_PROFILE\"",
                        &env,
                        dir.path(),
                        ChildIo::default(),
                        state.path(),
                    )
                    .await
                    .unwrap();
                assert_eq!(out.stdout, "yes\n");
            }
        }
        // Remembered exactly when every profile file a login shell reads
        // here is plain: the machine's own /etc/profile decides, and no
        // stock one is (Debian's runs `id -u` and tests for directories).
        let profiles = Profiles::read(&env);
        let remembered = remembered::lookup(
            state.path(),
            &remembered::key("/bin/sh", &env, dir.path(), &profiles),
        )
        .is_some();
        assert_eq!(
            remembered, profiles.plain,
            "two agreeing captures are remembered, for plain profiles only"
        );
    }

    /// Issue #20: a stock `~/.profile` adds `~/.local/bin` to `PATH` only
    /// when it exists; a command after the directory appeared must see it,
    /// in the same session and in a later one.
    #[tokio::test]
    async fn a_profile_that_tests_for_a_directory_sees_it_appear() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".profile"),
            "if [ -d \"$HOME/.local/bin\" ]; then PATH=\"$HOME/.local/bin:$PATH\"; fi\n",
        )
        .unwrap();
        let env = home_env(dir.path());
        let state = tempfile::tempdir().unwrap();
        let session = LoginSession::default();
        let path = || async {
            session
                .run_shell(
                    "echo \"$PATH\"",
                    &env,
                    dir.path(),
                    ChildIo::default(),
                    state.path(),
                )
                .await
                .unwrap()
                .stdout
        };
        for _ in 0..3 {
            assert!(!path().await.contains(".local/bin"));
        }
        std::fs::create_dir_all(dir.path().join(".local/bin")).unwrap();
        assert!(path().await.contains(".local/bin"), "the same session");
        let later = LoginSession::default();
        let out = later
            .run_shell(
                "echo \"$PATH\"",
                &env,
                dir.path(),
                ChildIo::default(),
                state.path(),
            )
            .await
            .unwrap();
        assert!(out.stdout.contains(".local/bin"), "a later session");
    }

    #[tokio::test]
    async fn the_switch_turns_replaying_off() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".profile"), "export FROM_PROFILE=yes\n").unwrap();
        let mut env = home_env(dir.path());
        env.insert(crate::exec::SWITCH.into(), "0".into());
        let state = tempfile::tempdir().unwrap();
        for _ in 0..3 {
            let out = LoginSession::default()
                .run_shell(
                    "echo \"$FROM_PROFILE\"",
                    &env,
                    dir.path(),
                    ChildIo::default(),
                    state.path(),
                )
                .await
                .unwrap();
            assert_eq!(out.stdout, "yes\n");
        }
        assert!(
            !state.path().join("login-env.json").exists(),
            "nothing was captured"
        );
    }
}
