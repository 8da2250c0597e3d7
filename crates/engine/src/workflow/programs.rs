//! The program files a paused run's remaining steps run, bound to the
//! pause: a step after a gate that runs `./deploy.sh` (or `bash
//! deploy.sh`) from the workflow's directory runs that file as it was when
//! the person was asked, or not at all.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use super::file::{Exec, Workflow};
use crate::error::{Error, Failure, Result};
use crate::value::{Object, Value};

/// Interpreters whose first argument is the program they run.
const INTERPRETERS: [&str; 12] = [
    "sh", "bash", "zsh", "dash", "fish", "python", "python3", "node", "deno", "bun", "ruby", "perl",
];

/// The files inside the workflow's directory that a shell command line
/// names as its program: its first word, or an interpreter's first
/// argument (`bash deploy.sh`).
fn named_programs(command: &str, dir: &Path) -> Vec<PathBuf> {
    let words: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .collect();
    let mut words = words.into_iter();
    let Some(first) = words.next() else {
        return Vec::new();
    };
    let mut named = vec![first];
    let program = Path::new(first)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if INTERPRETERS.contains(&program)
        && let Some(script) = words.find(|w| !w.starts_with('-'))
    {
        named.push(script);
    }
    let Ok(root) = dir.canonicalize() else {
        return Vec::new();
    };
    named
        .into_iter()
        .filter(|w| !w.contains('$'))
        .filter_map(|w| dir.join(w).canonicalize().ok())
        .filter(|p| p.starts_with(&root) && p.is_file())
        .collect()
}

fn digest(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(format!("{:x}", Sha256::digest(bytes)))
}

/// The directory a workflow's relative programs are found from.
fn directory(workflow: &Workflow) -> PathBuf {
    workflow
        .path
        .parent()
        .map_or_else(PathBuf::new, Path::to_path_buf)
}

/// Each program file the steps from `start` on run, with its SHA-256.
pub(crate) fn bind(workflow: &Workflow, start: usize) -> Object {
    let dir = directory(workflow);
    let mut bound = Object::new();
    for step in workflow.steps.iter().skip(start) {
        let Exec::Shell(command) = &step.exec else {
            continue;
        };
        for path in named_programs(command, &dir) {
            if let Some(sum) = digest(&path) {
                bound.insert(path.to_string_lossy(), Value::from(sum));
            }
        }
    }
    bound
}

/// Refuses to go on when a program file bound at the pause changed (or is
/// gone), naming it.
pub(crate) fn check(bound: &Object) -> Result<()> {
    for (path, kept) in bound.iter() {
        let now = digest(Path::new(path));
        if now.as_deref() != kept.as_str() {
            return Err(Error::failed(
                Failure::NotAllowed,
                format!(
                    "{path} changed after the run paused; what the person approved ran the file \
                     as it was then, so the run does not go on (start it again to run the new file)"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_names_its_program_or_its_interpreters_script() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("scripts")).unwrap();
        for f in ["deploy.sh", "scripts/x.py", "data.txt"] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        let canon = |f: &str| root.join(f).canonicalize().unwrap();
        assert_eq!(
            named_programs("./deploy.sh --prod", root),
            vec![canon("deploy.sh")]
        );
        assert_eq!(
            named_programs("bash -e deploy.sh", root),
            vec![canon("deploy.sh")]
        );
        assert_eq!(
            named_programs("python3 'scripts/x.py' data.txt", root),
            vec![canon("scripts/x.py")]
        );
        // Not a file of the directory, a template, or a plain command.
        assert!(named_programs("echo data.txt", root).is_empty());
        assert!(named_programs("./${{ args.script }}", root).is_empty());
        assert!(named_programs("../outside.sh", root).is_empty());
        assert!(named_programs("", root).is_empty());
    }
}
