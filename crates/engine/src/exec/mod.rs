//! Running shell lines and commands, and every way we do it faster than
//! Lobster does. Each fast path applies only where the result is provably
//! the same, and [`SWITCH`] turns them all off.
//!
//! | fast path | file | what it saves (measured, docs/benchmarks.md) | guard |
//! |---|---|---|---|
//! | replayed login environment | `login_env` | the login shell of every shell line: `sh -lc true` 5.0 ms against `sh -c true` 0.8 ms; (b) 11.4 → 3.8 ms with plain profiles | only where every profile file is plain assignments (`login_env`); tests/fast_paths.rs |
//! | shell-free lines | `shell_free` | the `sh -c` process of a line that is one plain command or an output-only builtin: 0.7–0.9 ms a line | only on top of a replayed environment, only with dash; compared with dash in its unit tests and tests/plain_commands.rs |
//! | working ahead | `ahead` | waiting for a command's whole output before pure stages run: `exec --json … \| head` over 100k items 30 → 25 ms | result used only for a strict JSON array from a command that succeeded; tests/exec_ahead.rs |
//!
//! `process` is the plumbing all of them share with the slow path:
//! spawning in a process group, feeding stdin, collecting output, killing.
//!
//! `CLAWDIS_FAST_PATHS=0` (or `false`, `off`, `no`) in the environment a
//! run is given turns every fast path off; tests/fast_paths.rs runs the
//! same workflows both ways and compares what they print.

pub(crate) mod ahead;
pub(crate) mod login_env;
pub(crate) mod process;
pub(crate) mod shell_free;

pub use login_env::{SYSTEM_PROFILE_DIRS, SYSTEM_PROFILE_FILES};
pub use process::signal_all_children;

use crate::context::Env;

/// The variable that turns the fast paths off.
pub const SWITCH: &str = "CLAWDIS_FAST_PATHS";

/// Whether the fast paths may be used with `env`.
pub fn enabled(env: &Env) -> bool {
    !env.get(SWITCH).is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "false" | "off" | "no"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_explicit_off_turns_them_off() {
        let with = |v: &str| Env::from([(SWITCH.to_string(), v.to_string())]);
        assert!(enabled(&Env::new()));
        for on in ["1", "", "yes", "on"] {
            assert!(enabled(&with(on)), "{on:?}");
        }
        for off in ["0", "false", "OFF", " no "] {
            assert!(!enabled(&with(off)), "{off:?}");
        }
    }
}
