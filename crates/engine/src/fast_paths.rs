//! The one switch for the fast paths: ways of running a command that skip
//! work Lobster does, each only where the result is the same.
//!
//! | fast path | where | what it skips | guard |
//! |---|---|---|---|
//! | replayed login environment | [`crate::login_env`] | a login shell per shell line | only profiles that are plain assignments ([`crate::login_env`]); tests/fast_paths.rs |
//! | shell-free lines | [`crate::direct`] | `sh -c` for one plain command or an output-only builtin | only on top of a replayed environment, only with dash; compared with dash in its unit tests and tests/plain_commands.rs |
//! | working ahead | [`crate::ahead`] | waiting for a command's whole output before pure stages run | result used only for a strict JSON array from a command that succeeded; tests/exec_ahead.rs |
//!
//! `CLAWDIS_FAST_PATHS=0` (or `false`, `off`, `no`) in the environment a
//! run is given turns every one of them off; tests/fast_paths.rs runs the
//! same workflows both ways and compares what they print.

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
