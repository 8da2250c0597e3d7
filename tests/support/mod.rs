//! Helpers for black-box tests: locating workspace binaries and running them.

pub mod control;
pub mod desktop;
pub mod webdriver;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

/// Path of a binary built from this workspace (`cargo test --workspace`
/// builds every binary next to the test executables).
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let path = dir.join(name);
    assert!(path.exists(), "{} is missing; run the suite with ./scripts/test (it builds the binaries first)", path.display());
    path
}

/// The shared materials directory beside the project (`../shared`), or
/// `CLAWDIS_SHARED_DIR`.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("CLAWDIS_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().parent().map(|p| p.join("shared")).unwrap_or_default());
    dir.is_dir().then_some(dir)
}

/// A `lobster` command with an isolated state directory and home.
pub fn lobster(state: &Path) -> Command {
    let mut cmd = Command::new(bin("lobster"));
    cmd.env("LOBSTER_STATE_DIR", state).env("HOME", state).env_remove("CLAWDIS_HOME");
    cmd
}

/// Parses the last JSON document on stdout.
pub fn envelope(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.rfind("\n{").map_or(0, |i| i + 1);
    serde_json::from_str(&text[start..]).unwrap_or_else(|e| panic!("no JSON envelope ({e}) in: {text}"))
}
