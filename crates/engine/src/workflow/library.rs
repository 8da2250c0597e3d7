//! The named workflows: the workflow files in the home's `workflows/`
//! directory and in the directories settings list (`workflowDirs`), found
//! by name. A file's name is its `name:`, else its file stem; where two
//! directories have the same name, the first directory wins.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::value::Value;

use super::file::{self, WORKFLOW_EXTENSIONS};

/// A workflow of the library.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The name it is run by.
    pub name: String,
    /// Its file.
    pub path: PathBuf,
    /// Its `description`, if any.
    pub description: Option<String>,
    /// Whether agents get it as a tool of its own (`expose_as_tool: true`).
    pub expose_as_tool: bool,
    /// Its args as a JSON Schema object.
    pub args_schema: Value,
    /// What runs it without a caller (`triggers:`).
    #[serde(skip)]
    pub triggers: Vec<super::triggers::Trigger>,
}

/// A file of the library that does not load.
#[derive(Clone, Debug, Serialize)]
pub struct Broken {
    /// The file.
    pub path: PathBuf,
    /// Why it does not load, as `lobster run` would say.
    pub error: String,
}

/// What the directories hold: the workflows by name, and the files that
/// do not load.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Library {
    /// Workflows, sorted by name.
    pub workflows: Vec<Entry>,
    /// Files that do not load.
    pub broken: Vec<Broken>,
}

/// Reads the workflow files directly in each of `dirs` (a missing
/// directory holds none).
pub fn discover(dirs: &[PathBuf]) -> Library {
    let mut library = Library::default();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && has_workflow_extension(p))
            .collect();
        paths.sort();
        for path in paths {
            match file::load(&path) {
                Ok(workflow) => {
                    let name = workflow.library_name();
                    if library.workflows.iter().any(|w| w.name == name) {
                        tracing::warn!(%name, path = %path.display(), "a workflow of this name came first");
                        continue;
                    }
                    library.workflows.push(Entry {
                        name,
                        path,
                        description: workflow.description,
                        expose_as_tool: workflow.expose_as_tool,
                        args_schema: workflow.args_schema,
                        triggers: workflow.triggers,
                    });
                }
                Err(e) => library.broken.push(Broken {
                    path,
                    error: e.message,
                }),
            }
        }
    }
    library.workflows.sort_by(|a, b| a.name.cmp(&b.name));
    library
}

fn has_workflow_extension(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        WORKFLOW_EXTENSIONS
            .iter()
            .any(|w| w.eq_ignore_ascii_case(e))
    })
}

/// A workflow's name when its file gives none: the file's stem.
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflows_are_found_by_name_first_directory_first() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let write =
            |dir: &Path, file: &str, text: &str| std::fs::write(dir.join(file), text).unwrap();
        write(
            a.path(),
            "deploy.lobster",
            "description: Ship it\nexpose_as_tool: true\nargs:\n  env:\n    type: string\n    description: where\n  dry:\n    default: true\nsteps:\n  - id: s\n    run: echo hi\n",
        );
        write(
            a.path(),
            "named.yaml",
            "name: tidy\nsteps:\n  - id: s\n    run: echo hi\n",
        );
        write(a.path(), "broken.lobster", "steps: []\n");
        write(a.path(), "notes.txt", "not a workflow");
        write(
            b.path(),
            "deploy.yml",
            "steps:\n  - id: other\n    run: echo other\n",
        );
        let library = discover(&[
            a.path().to_path_buf(),
            b.path().to_path_buf(),
            a.path().join("missing"),
        ]);
        let names: Vec<&str> = library.workflows.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["deploy", "tidy"]);
        let deploy = &library.workflows[0];
        assert_eq!(
            deploy.path,
            a.path().join("deploy.lobster"),
            "the first directory wins"
        );
        assert_eq!(deploy.description.as_deref(), Some("Ship it"));
        assert!(deploy.expose_as_tool);
        assert_eq!(
            deploy.args_schema.to_json(),
            r#"{"type":"object","properties":{"env":{"type":"string","description":"where"},"dry":{"default":true}},"required":["env"]}"#
        );
        assert_eq!(library.broken.len(), 1);
        assert_eq!(library.broken[0].path, a.path().join("broken.lobster"));
        assert_eq!(
            library.broken[0].error,
            "Workflow file requires a non-empty steps array"
        );
    }
}
