//! A workflow's shell line is split into words, its patterns checked
//! against the directory and, for dash's output-only builtins, its output
//! computed, all in-process (`Direct::plain`). Whatever the line, that must
//! never panic nor take long: it either gives the line back to the shell
//! or decides how to run it.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use clawdis_engine::context::Env;
use clawdis_engine::fuzzing::Direct;
use libfuzzer_sys::fuzz_target;

/// A directory with a few odd names for patterns to match against.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("clawdis-fuzz-shell-line-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["a", "b1", "[x]", ".hidden", "-n", "*"] {
            std::fs::write(dir.join(name), "").unwrap();
        }
        dir
    })
}

fuzz_target!(|line: &str| {
    let mut env = Env::new();
    env.insert("PATH".into(), "/usr/bin:/bin".into());
    if let Some(Direct::Program { argv, .. }) = Direct::plain(line, "/bin/sh", &env, dir()) {
        assert!(!argv.is_empty(), "a program has a name");
    }
});
