//! A machine whose system-wide profile files are plain assignments (here:
//! empty), for the tests of the fast paths that only such a machine allows
//! (the replayed login environment and the shell-free lines built on it).
//! Stock system profiles are not plain (Debian's `/etc/profile` runs
//! `id -u` and tests for directories), so on them every command takes the
//! login shell, as it must.
//!
//! The command runs in a private mount namespace (`unshare --mount`, which
//! needs root, as CI has) where `/dev/null` is mounted over every system
//! profile file a login shell may read and an empty tmpfs over the profile
//! directories; nothing outside the namespace changes.

use std::process::Command;

use clawdis_engine::exec::{SYSTEM_PROFILE_DIRS, SYSTEM_PROFILE_FILES};

/// `cmd` (its program, arguments, environment and directory) run on a
/// machine with plain system profiles.
pub fn on_plain_system(cmd: &Command) -> Command {
    crate::require_tools(&["unshare", "mount", "bash"], "util-linux, mount and bash");
    let script = format!(
        "set -e; for f in {}; do if [ -f \"$f\" ]; then mount --bind /dev/null \"$f\"; fi; done; \
         for d in {}; do if [ -d \"$d\" ]; then mount -t tmpfs tmpfs \"$d\"; fi; done; exec \"$@\"",
        SYSTEM_PROFILE_FILES.join(" "),
        SYSTEM_PROFILE_DIRS.join(" ")
    );
    let mut wrapped = Command::new("unshare");
    // bash, unlike dash, passes on variables whose names are not shell names.
    wrapped
        .args([
            "--mount",
            "--propagation",
            "private",
            "bash",
            "-c",
            &script,
            "bash",
        ])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

#[test]
fn the_system_profile_is_empty_inside_and_untouched_outside() {
    let inside = on_plain_system(Command::new("cat").arg("/etc/profile"))
        .output()
        .unwrap();
    assert!(
        inside.status.success(),
        "unshare needs root: {}",
        String::from_utf8_lossy(&inside.stderr)
    );
    assert_eq!(inside.stdout, b"");
    if std::path::Path::new("/etc/profile").is_file() {
        assert!(
            !std::fs::read("/etc/profile").unwrap().is_empty(),
            "the host's /etc/profile is as it was"
        );
    }
}
