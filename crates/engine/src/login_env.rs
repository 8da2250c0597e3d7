//! Login-shell environments, captured once per run.
//!
//! Lobster runs every shell step through a login shell (`/bin/sh -lc`),
//! which re-reads `/etc/profile` and `~/.profile` each time; on a typical
//! machine that costs several milliseconds per step. When a workflow has
//! more than one shell step, Clawdis captures what the profile does to the
//! environment once, in parallel with the first step, and runs later steps
//! with `sh -c` and that environment applied. Profiles that print output,
//! write to stderr or change directory are not safe to replay this way, so
//! for them every step keeps its own login shell.

use std::path::Path;

use crate::context::Env;
use crate::process::run_process;

/// Variables a shell sets for itself on every start.
const SHELL_OWNED: [&str; 4] = ["PWD", "OLDPWD", "SHLVL", "_"];
const MARKER: &str = "\u{1}LOBSTER-LOGIN-ENV\u{1}";

/// What a login shell's profile does to the environment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoginEnv {
    set: Vec<(String, String)>,
    unset: Vec<String>,
}

/// The shell when it takes `-lc` (a POSIX-style login shell); `None` for
/// PowerShell and cmd, which have no login profile to replay.
pub fn login_shell(env: &Env) -> Option<String> {
    let shell = env.get("LOBSTER_SHELL").map(|s| s.trim()).filter(|s| !s.is_empty()).unwrap_or("/bin/sh");
    let base = Path::new(shell).file_name().and_then(|n| n.to_str()).unwrap_or(shell).to_ascii_lowercase();
    let base = base.strip_suffix(".exe").unwrap_or(&base).to_string();
    (!matches!(base.as_str(), "pwsh" | "powershell" | "cmd")).then(|| shell.to_string())
}

impl LoginEnv {
    /// Runs the login shell once in `cwd` and records how its profile
    /// changes `env`; `None` when replaying it would not be faithful.
    pub async fn capture(env: &Env, cwd: &Path) -> Option<LoginEnv> {
        let shell = login_shell(env)?;
        let script = format!("printf '{}'; pwd; printf '\\001'; env -0", MARKER.replace('\u{1}', "\\001"));
        let out = run_process(&shell, &["-lc".to_string(), script], env, cwd, None).await.ok()?;
        if out.code != Some(0) || !out.stderr.is_empty() {
            return None;
        }
        let rest = out.stdout.strip_prefix(MARKER)?;
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
        let owned = |k: &str| SHELL_OWNED.contains(&k);
        let set = login.iter().filter(|(k, v)| !owned(k) && env.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect();
        let unset = env.keys().filter(|k| !owned(k) && !login.contains_key(*k)).cloned().collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn replays_what_the_profile_exports() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".profile"), "export FROM_PROFILE=yes\nunset DROP_ME\n").unwrap();
        let mut env = Env::new();
        env.insert("HOME".into(), dir.path().to_string_lossy().into_owned());
        env.insert("PATH".into(), std::env::var("PATH").unwrap());
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
        let mut env = Env::new();
        env.insert("HOME".into(), dir.path().to_string_lossy().into_owned());
        env.insert("PATH".into(), std::env::var("PATH").unwrap());
        assert_eq!(LoginEnv::capture(&env, dir.path()).await, None);
    }
}
