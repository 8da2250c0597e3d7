//! What a paused run's gate unlocks, and what ran before it, read from the
//! state the run kept at the pause: the steps (or pipeline stages) that run
//! once the gate is approved, with their templates resolved where their
//! inputs are known, and the steps already run with the start of their
//! output. This is what a person decides on (issue #35); it is read from
//! the definition the run resumes with, never from the file as edited
//! since.

use std::path::Path;

use serde::Serialize;

use super::file::{self, Exec, Step};
use super::template;
use crate::value::{Object, Value};

/// How much of a step's output is shown.
const OUTPUT_BYTES: usize = 2048;

/// A step (or stage) that runs once the gate is approved, as it will run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unlocked {
    /// The step's id (a stage's position, `3`, in a pipeline).
    pub id: String,
    /// What it executes: `shell`, `pipeline`, `workflow`, a stage's command
    /// name, ...
    pub kind: String,
    /// Its command line, templates resolved where their inputs are known
    /// (`${env}`, `$build.stdout`); references to steps that have not run
    /// stay as written.
    pub command: Option<String>,
    /// The directory it runs in, when the step or the workflow names one.
    pub cwd: Option<String>,
    /// The names of the environment variables it sets (never their values).
    pub env: Vec<String>,
    /// Where its standard input comes from, as written (`$build.stdout`).
    pub stdin: Option<String>,
    /// Its condition, when it has one.
    pub when: Option<String>,
}

/// A step already run when the gate paused.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ran {
    /// The step's id (a stage's position in a pipeline).
    pub id: String,
    /// `ok`, `skipped` or `error`.
    pub status: String,
    /// Its command line as it ran, where the state kept it.
    pub command: Option<String>,
    /// The first 2 KB of its output (stdout, else its JSON).
    pub output: String,
    /// Whether `output` was cut.
    pub output_truncated: bool,
}

/// A paused run's gate in context: what it unlocks and what ran before.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unlocks {
    /// The step whose gate this is (a workflow's; none for a pipeline).
    pub step: Option<String>,
    /// What runs once the gate is approved, until the next gate.
    pub unlocks: Vec<Unlocked>,
    /// What ran before it, in order.
    pub before: Vec<Ran>,
}

/// The context of the gate a run paused at, from the state it kept;
/// `None` when the state is not a workflow's or a pipeline's.
pub fn of_state(state_json: &str) -> Option<Unlocks> {
    let state = Value::from_json(state_json).ok()?;
    let resume_at = state
        .get_key("resumeAtIndex")
        .map(Value::to_number)
        .filter(|n| *n >= 0.0)? as usize;
    if let Some(stages) = state.get_key("pipeline").and_then(Value::as_array) {
        return Some(of_pipeline(stages, resume_at));
    }
    let text = state.get_key("definition")?.as_str()?;
    let path = state
        .get_key("filePath")
        .and_then(Value::as_str)
        .unwrap_or("workflow.lobster");
    let workflow = file::parse(text, Path::new(path)).ok()?;
    let empty = Object::new();
    let args = state
        .get_key("args")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let results = state
        .get_key("steps")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut unlocks = Vec::new();
    for step in workflow.steps.iter().skip(resume_at) {
        unlocks.push(unlocked(step, &workflow, args, results));
        if step.approval.is_some() || step.input.is_some() {
            break;
        }
    }
    let before = workflow
        .steps
        .iter()
        .take(resume_at)
        .filter_map(|step| {
            let result = results.get(&step.id)?;
            let command = match &step.exec {
                Exec::Shell(c) | Exec::Pipeline(c) => Some(template::resolve(c, args, results)),
                _ => None,
            };
            Some(ran(&step.id, result, command))
        })
        .collect();
    let step = ["approvalStepId", "inputStepId"]
        .iter()
        .find_map(|key| state.get_key(key).and_then(Value::as_str))
        .map(str::to_string);
    Some(Unlocks {
        step,
        unlocks,
        before,
    })
}

fn unlocked(step: &Step, workflow: &file::Workflow, args: &Object, results: &Object) -> Unlocked {
    let resolve = |text: &str| template::resolve(text, args, results);
    let command = match &step.exec {
        Exec::Shell(c) | Exec::Pipeline(c) => Some(resolve(c)),
        Exec::Workflow { path, .. } => Some(resolve(path)),
        Exec::Gobby(action) => Some(action.describe()),
        Exec::Parallel(_) | Exec::ForEach(_) | Exec::None => None,
    };
    let kind = if step.input.is_some() && matches!(step.exec, Exec::None) {
        "input"
    } else if step.approval.is_some() && matches!(step.exec, Exec::None) {
        "approval"
    } else {
        step.exec.kind()
    };
    let mut env: Vec<String> = workflow
        .env
        .iter()
        .chain(&step.env)
        .flat_map(|e| e.keys().map(str::to_string))
        .collect();
    env.sort();
    env.dedup();
    Unlocked {
        id: step.id.clone(),
        kind: kind.to_string(),
        command,
        cwd: step.cwd.as_deref().or(workflow.cwd.as_deref()).map(resolve),
        env,
        stdin: step.stdin.as_ref().map(|s| match s {
            Value::String(text) => text.clone(),
            other => format!("inline JSON: {}", other.to_json()),
        }),
        when: step.when.as_ref().map(Value::to_js_string),
    }
}

/// A step's result as run: its status and the start of its output.
fn ran(id: &str, result: &Value, command: Option<String>) -> Ran {
    let flag = |key: &str| matches!(result.get_key(key), Some(Value::Bool(true)));
    let status = if flag("skipped") {
        "skipped"
    } else if flag("error") {
        "error"
    } else {
        "ok"
    };
    let output = match (result.get_key("stdout"), result.get_key("json")) {
        (Some(Value::String(out)), _) => out.clone(),
        (_, Some(json)) => json.to_json(),
        _ => result
            .get_key("errorMessage")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    };
    let (output, output_truncated) = cut(output);
    Ran {
        id: id.to_string(),
        status: status.to_string(),
        command,
        output,
        output_truncated,
    }
}

/// The first [`OUTPUT_BYTES`] of `text`, on a character boundary.
fn cut(mut text: String) -> (String, bool) {
    if text.len() <= OUTPUT_BYTES {
        return (text, false);
    }
    let mut end = OUTPUT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

/// A pipeline paused at an `approve` stage: the stages after it until the
/// next one, and those before it.
fn of_pipeline(stages: &[Value], resume_at: usize) -> Unlocks {
    let stage = |i: usize, record: &Value| {
        let name = record
            .get_key("name")
            .map(Value::to_js_string)
            .unwrap_or_default();
        let raw = record
            .get_key("raw")
            .and_then(Value::as_str)
            .map(str::to_string);
        (format!("{}", i + 1), name, raw)
    };
    let mut unlocks = Vec::new();
    for (i, record) in stages.iter().enumerate().skip(resume_at) {
        let (id, kind, command) = stage(i, record);
        if kind == "approve" {
            break;
        }
        unlocks.push(Unlocked {
            id,
            kind,
            command,
            ..Unlocked::default()
        });
    }
    let gate = resume_at.saturating_sub(1);
    let before = stages
        .iter()
        .enumerate()
        .take(gate)
        .map(|(i, record)| {
            let (id, _, command) = stage(i, record);
            Ran {
                id,
                status: "ok".into(),
                command,
                ..Ran::default()
            }
        })
        .collect();
    Unlocks {
        step: None,
        unlocks,
        before,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPLOY: &str = "name: deploy\nargs:\n  env: {default: prod}\nenv:\n  REGION: eu\nsteps:\n  \
        - id: build\n    run: echo '[{\"v\":\"1.2\"}]'\n  - id: gate\n    approval:\n      prompt: Deploy?\n  \
        - id: go\n    run: ./deploy.sh --env ${env} --version $build.json.0.v --after $later.stdout\n    \
        env:\n      TOKEN: secret\n    stdin: $build.stdout\n  - id: check\n    run: echo checked\n    \
        approval: Happy?\n  - id: after\n    run: echo never shown\n";

    fn state(definition: &str) -> String {
        serde_json::json!({
            "filePath": "/work/deploy.lobster",
            "definition": definition,
            "resumeAtIndex": 2,
            "steps": {
                "build": {"id": "build", "stdout": "[{\"v\":\"1.2\"}]\n", "json": [{"v": "1.2"}]},
                "gate": {"id": "gate"},
            },
            "args": {"env": "prod"},
        })
        .to_string()
    }

    #[test]
    fn a_workflow_gate_unlocks_its_next_steps_as_they_will_run() {
        let context = of_state(&state(DEPLOY)).unwrap();
        let ids: Vec<&str> = context.unlocks.iter().map(|u| u.id.as_str()).collect();
        // Up to the next step with a gate of its own, which runs before it
        // asks; nothing after.
        assert_eq!(ids, ["go", "check"]);
        let go = &context.unlocks[0];
        assert_eq!(
            go.command.as_deref(),
            Some("./deploy.sh --env prod --version 1.2 --after $later.stdout")
        );
        assert_eq!(go.env, ["REGION", "TOKEN"], "names, never values");
        assert_eq!(go.stdin.as_deref(), Some("$build.stdout"));
        assert_eq!(context.before.len(), 2);
        assert_eq!(context.before[0].id, "build");
        assert_eq!(context.before[0].output, "[{\"v\":\"1.2\"}]\n");
        assert_eq!(
            context.before[0].command.as_deref(),
            Some("echo '[{\"v\":\"1.2\"}]'")
        );
        assert!(!serde_json::to_string(&context).unwrap().contains("secret"));
    }

    #[test]
    fn long_output_is_cut_at_2_kb_and_says_so() {
        let (text, cut_off) = cut("é".repeat(2000));
        assert!(cut_off && text.len() <= OUTPUT_BYTES && text.chars().all(|c| c == 'é'));
        assert_eq!(cut("short".into()), ("short".into(), false));
    }

    #[test]
    fn a_pipeline_gate_unlocks_the_stages_after_it() {
        let state = serde_json::json!({
            "pipeline": [
                {"name": "exec", "raw": "exec --json --shell 'echo [1,2]'"},
                {"name": "approve", "raw": "approve --prompt 'Go?'"},
                {"name": "exec", "raw": "exec --shell 'echo sent'"},
                {"name": "approve", "raw": "approve --prompt 'Again?'"},
                {"name": "exec", "raw": "exec --shell 'echo later'"},
            ],
            "resumeAtIndex": 2,
        });
        let context = of_state(&state.to_string()).unwrap();
        assert_eq!(context.unlocks.len(), 1);
        assert_eq!(
            (
                context.unlocks[0].id.as_str(),
                context.unlocks[0].command.as_deref()
            ),
            ("3", Some("exec --shell 'echo sent'"))
        );
        assert_eq!(context.before.len(), 1);
        assert_eq!(
            context.before[0].command.as_deref(),
            Some("exec --json --shell 'echo [1,2]'")
        );
    }
}
