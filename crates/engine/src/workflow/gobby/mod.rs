//! Gobby's pipeline files (`type: pipeline`), run natively by the same
//! engine: `inputs` become the workflow's args, each step `exec`s a
//! command without a shell, asks the configured LLM (`prompt`) or runs
//! another pipeline of the library (`invoke_pipeline`), and `${{ … }}`
//! expressions ([`expr`]) read inputs and earlier steps' outputs. As in
//! Gobby, a step's `approval` gate stops the run *before* the step runs;
//! a denial cancels the run. `outputs` are the run's output.

pub(crate) mod expr;
mod step;

pub(crate) use step::output_of;

use std::path::Path;

use crate::error::{Error, Result};
use crate::value::{Object, Value};

use super::file::{OnError, Step, Workflow, args_schema, checked_triggers, validate_approval};
use super::webhooks::Webhooks;

/// A Gobby pipeline's own settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    /// `outputs`: each name's expression or `$step.output` reference.
    pub outputs: Object,
    /// `enabled: false` pipelines load but do not run.
    pub enabled: bool,
}

/// What a pipeline step does.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `exec`: a command line split as a POSIX shell would, run without a
    /// shell; its output is `{stdout, stderr, exit_code}` plus the fields
    /// of a JSON object it prints.
    Exec(String),
    /// `prompt`: the configured LLM's answer, `{response}`.
    Prompt(String),
    /// `invoke_pipeline`: a pipeline of the library by name, with
    /// `arguments` (else this run's inputs).
    Invoke {
        /// Its name.
        name: String,
        /// Its inputs.
        arguments: Option<Object>,
    },
}

impl Action {
    /// What the step does, in one line (`exec: make build`).
    pub fn describe(&self) -> String {
        match self {
            Action::Exec(line) => format!("exec: {line}"),
            Action::Prompt(text) => format!("prompt: {text}"),
            Action::Invoke { name, .. } => format!("invoke_pipeline: {name}"),
        }
    }

    /// The step kind's name (as the file writes it).
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Exec(_) => "exec",
            Action::Prompt(_) => "prompt",
            Action::Invoke { .. } => "invoke_pipeline",
        }
    }
}

/// How long an `exec` runs unless the step says (Gobby's default).
const EXEC_TIMEOUT_MS: u64 = 300_000;

const TOP_KEYS: [&str; 16] = [
    "name",
    "type",
    "version",
    "description",
    "enabled",
    "priority",
    "deprecated",
    "inputs",
    "outputs",
    "steps",
    "webhooks",
    "expose_as_tool",
    "resume_on_restart",
    "tags",
    "triggers",
    "project_id",
];

const STEP_KEYS: [&str; 12] = [
    "id",
    "name",
    "exec",
    "prompt",
    "invoke_pipeline",
    "mcp",
    "wait",
    "condition",
    "approval",
    "tools",
    "input",
    "timeout_seconds",
];

/// Whether a parsed file is a Gobby pipeline (`type: pipeline`).
pub(crate) fn is_pipeline(doc: &Object) -> bool {
    doc.get("type").and_then(Value::as_str) == Some("pipeline")
}

/// Reads a Gobby pipeline file as a workflow.
pub(crate) fn from_value(doc: &Object, path: &Path) -> Result<Workflow> {
    let err = |msg: String| Error::runtime(format!("Pipeline {msg}"));
    for (key, _) in doc.iter() {
        if !TOP_KEYS.contains(&key) {
            return Err(err(format!(
                "has an unknown field {key:?} ({})",
                TOP_KEYS.join(", ")
            )));
        }
    }
    let inputs = match doc.get("inputs") {
        None | Some(Value::Null) => Object::new(),
        Some(Value::Object(inputs)) => inputs.clone(),
        Some(_) => return Err(err("inputs must be an object of names".into())),
    };
    // Inputs are args: a bare value is the default; `{type, description,
    // default}` as a workflow's args.
    let mut defs = Object::new();
    for (name, spec) in inputs.iter() {
        let def = match spec {
            Value::Object(spec) => {
                for (key, _) in spec.iter() {
                    if !["type", "description", "default"].contains(&key) {
                        return Err(err(format!(
                            "inputs.{name}.{key}: unknown field (type, description, default)"
                        )));
                    }
                }
                spec.clone()
            }
            value => Object::from_iter([("default", value.clone())]),
        };
        defs.insert(name, Value::Object(def));
    }
    let defs = Value::Object(defs);
    let args: Vec<(String, Option<Value>)> = defs
        .as_object()
        .into_iter()
        .flat_map(Object::iter)
        .map(|(k, d)| (k.to_string(), d.get_key("default").cloned()))
        .collect();
    let raw_steps = match doc.get("steps") {
        Some(Value::Array(s)) if !s.is_empty() => s,
        _ => return Err(err("requires a non-empty steps list".into())),
    };
    let mut steps: Vec<Step> = Vec::with_capacity(raw_steps.len());
    for raw in raw_steps {
        let step = read_step(raw)?;
        if steps.iter().any(|s| s.id == step.id) {
            return Err(err(format!("step id {:?} is used twice", step.id)));
        }
        steps.push(step);
    }
    let outputs = match doc.get("outputs") {
        None | Some(Value::Null) => Object::new(),
        Some(Value::Object(outputs)) => outputs.clone(),
        Some(_) => return Err(err("outputs must be an object of names".into())),
    };
    let enabled = match doc.get("enabled") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(err("enabled must be true or false".into())),
    };
    if let Some(Value::Object(hooks)) = doc.get("webhooks") {
        for (key, hook) in hooks.iter() {
            if let Some(method) = hook.get_key("method").and_then(Value::as_str)
                && !method.eq_ignore_ascii_case("POST")
            {
                return Err(err(format!(
                    "webhooks.{key}.method: Clawdis sends webhooks as signed POSTs, not {method}"
                )));
            }
            if hook
                .get_key("headers")
                .and_then(Value::as_object)
                .is_some_and(|h| !h.is_empty())
            {
                return Err(err(format!(
                    "webhooks.{key}.headers: Clawdis signs its webhooks (Standard Webhooks) and \
                     sends no headers of the file's"
                )));
            }
        }
    }
    let triggers = checked_triggers(doc.get("triggers"), &args)?;
    Ok(Workflow {
        path: path.to_path_buf(),
        name: doc.get("name").and_then(Value::as_str).map(str::to_string),
        description: doc
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        expose_as_tool: doc.get("expose_as_tool") == Some(&Value::Bool(true)),
        args_schema: args_schema(Some(&defs)),
        args,
        env: None,
        cwd: None,
        steps,
        webhooks: Webhooks::parse(doc.get("webhooks"))?,
        triggers,
        pipeline: Some(Pipeline { outputs, enabled }),
        text: String::new(),
    })
}

/// One pipeline step.
fn read_step(raw: &Value) -> Result<Step> {
    let Value::Object(step) = raw else {
        return Err(Error::runtime("Pipeline step must be an object"));
    };
    let id = match step.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => return Err(Error::runtime("Pipeline step requires an id")),
    };
    let err = |msg: String| Error::runtime(format!("Pipeline step {id} {msg}"));
    for (key, _) in step.iter() {
        if !STEP_KEYS.contains(&key) {
            return Err(err(format!("has an unknown field {key:?}")));
        }
    }
    for unsupported in ["mcp", "wait"] {
        if step.get(unsupported).is_some() {
            return Err(err(format!(
                "uses {unsupported}, which Clawdis does not run (exec, prompt and invoke_pipeline)"
            )));
        }
    }
    let text = |key: &str| match step.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(err(format!("{key} must be a non-empty string"))),
    };
    let mut actions = Vec::new();
    if let Some(command) = text("exec")? {
        actions.push(Action::Exec(command));
    }
    if let Some(prompt) = text("prompt")? {
        actions.push(Action::Prompt(prompt));
    }
    match step.get("invoke_pipeline") {
        None | Some(Value::Null) => {}
        Some(Value::String(name)) if !name.trim().is_empty() => actions.push(Action::Invoke {
            name: name.clone(),
            arguments: None,
        }),
        Some(Value::Object(call)) => {
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.trim().is_empty())
                .ok_or_else(|| err("invoke_pipeline.name must be a pipeline's name".into()))?;
            let arguments = match call.get("arguments") {
                None | Some(Value::Null) => None,
                Some(Value::Object(a)) => Some(a.clone()),
                Some(_) => return Err(err("invoke_pipeline.arguments must be an object".into())),
            };
            actions.push(Action::Invoke {
                name: name.to_string(),
                arguments,
            });
        }
        Some(_) => {
            return Err(err(
                "invoke_pipeline must be a name or {name, arguments}".into()
            ));
        }
    }
    let action = match actions.len() {
        1 => actions.remove(0),
        0 => return Err(err("needs one of exec, prompt or invoke_pipeline".into())),
        _ => {
            return Err(err(
                "has more than one of exec, prompt and invoke_pipeline".into()
            ));
        }
    };
    let timeout_ms = match step.get("timeout_seconds") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if *n > 0.0 && n.is_finite() => Some((n * 1000.0).ceil() as u64),
        Some(_) => return Err(err("timeout_seconds must be a positive number".into())),
    };
    let timeout_ms = match (&action, timeout_ms) {
        (Action::Exec(_), None) => Some(EXEC_TIMEOUT_MS),
        (_, t) => t,
    };
    let condition = match step.get("condition") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(Value::String(c.clone())),
        Some(Value::Bool(b)) => Some(Value::Bool(*b)),
        Some(_) => return Err(err("condition must be an expression".into())),
    };
    Ok(Step {
        approval: gate(step.get("approval"), &id)?,
        id,
        exec: super::file::Exec::Gobby(action),
        input: None,
        stdin: None,
        env: None,
        cwd: None,
        when: condition,
        timeout_ms,
        retry: None,
        on_error: OnError::Stop,
    })
}

/// A step's `approval: {required, message, timeout_seconds}` (plus the
/// policy keys of Clawdis' gates: `approvers`, `presence`, `min_approvals`,
/// `expires_in`, `on_expiry`, `forbid_self_approval`).
fn gate(raw: Option<&Value>, id: &str) -> Result<Option<super::file::Approval>> {
    let err = |msg: &str| Error::runtime(format!("Pipeline step {id} approval{msg}"));
    let o = match raw {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(o)) => o,
        Some(_) => return Err(err(" must be {required, message?}")),
    };
    match o.get("required") {
        Some(Value::Bool(true)) => {}
        None | Some(Value::Bool(false)) => return Ok(None),
        Some(_) => return Err(err(".required must be true or false")),
    }
    let mut policy = Object::new();
    for (key, value) in o.iter() {
        match key {
            "required" => {}
            "message" => policy.insert("prompt", value.clone()),
            "timeout_seconds" => {
                let Value::Number(n) = value else {
                    return Err(err(".timeout_seconds must be a number of seconds"));
                };
                if o.get("expires_in").is_none() {
                    policy.insert(
                        "expires_in",
                        Value::from(format!("{}s", n.max(1.0).ceil() as u64)),
                    );
                }
            }
            "approvers"
            | "presence"
            | "min_approvals"
            | "expires_in"
            | "on_expiry"
            | "forbid_self_approval" => {
                policy.insert(key, value.clone());
            }
            other => return Err(err(&format!(".{other}: unknown field"))),
        }
    }
    let step = Object::from_iter([("approval", Value::Object(policy))]);
    validate_approval(&step, id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::file::{Exec, parse_yaml};

    fn load(yaml: &str) -> Result<Workflow> {
        super::super::file::from_value(&parse_yaml(yaml)?, Path::new("/w/p.yaml"))
    }

    #[test]
    fn a_pipeline_reads_as_a_workflow() {
        let w = load(
            "name: deploy\ntype: pipeline\nversion: '1.0'\ndescription: Ship\ninputs:\n  env: prod\n  \
             count: {type: integer, description: how many}\noutputs:\n  result: '${{ steps.b.output.stdout }}'\n\
             steps:\n  - id: a\n    exec: echo ${{ inputs.env }}\n  - id: b\n    prompt: Say hi\n    \
             condition: ${{ inputs.count > 1 }}\n    approval: {required: true, message: Go?, timeout_seconds: 60}\n  \
             - id: c\n    invoke_pipeline: {name: other, arguments: {x: 1}}\n    timeout_seconds: 5\n",
        )
        .unwrap();
        assert_eq!(w.name.as_deref(), Some("deploy"));
        assert_eq!(
            w.args,
            vec![
                ("env".to_string(), Some(Value::from("prod"))),
                ("count".to_string(), None)
            ]
        );
        assert_eq!(
            w.args_schema.to_json(),
            r#"{"type":"object","properties":{"env":{"default":"prod"},"count":{"type":"integer","description":"how many"}},"required":["count"]}"#
        );
        assert_eq!(
            w.steps[0].exec,
            Exec::Gobby(Action::Exec("echo ${{ inputs.env }}".into()))
        );
        assert_eq!(w.steps[0].timeout_ms, Some(EXEC_TIMEOUT_MS));
        let gate = w.steps[1].approval.as_ref().unwrap();
        assert_eq!(gate.prompt.as_deref(), Some("Go?"));
        assert_eq!(gate.expires_in, Some(60));
        assert!(w.steps[1].when.is_some());
        assert_eq!(w.steps[2].timeout_ms, Some(5000));
        assert!(
            matches!(&w.steps[2].exec, Exec::Gobby(Action::Invoke { name, arguments: Some(_) }) if name == "other")
        );
        let pipeline = w.pipeline.unwrap();
        assert!(pipeline.enabled);
        assert!(pipeline.outputs.get("result").is_some());
    }

    #[test]
    fn a_bad_pipeline_is_an_error_naming_what() {
        for (yaml, needle) in [
            ("type: pipeline\nsteps: []\n", "non-empty steps"),
            (
                "type: pipeline\nbogus: 1\nsteps: [{id: a, exec: x}]\n",
                "unknown field \"bogus\"",
            ),
            ("type: pipeline\nsteps: [{id: a}]\n", "needs one of exec"),
            (
                "type: pipeline\nsteps: [{id: a, exec: x, prompt: y}]\n",
                "more than one",
            ),
            (
                "type: pipeline\nsteps: [{id: a, mcp: {server: s, tool: t}}]\n",
                "uses mcp",
            ),
            (
                "type: pipeline\nsteps: [{id: a, exec: x}, {id: a, exec: y}]\n",
                "used twice",
            ),
            (
                "type: pipeline\nsteps: [{id: a, exec: x, approval: {required: yes}}]\n",
                "required must be",
            ),
            (
                "type: pipeline\nsteps: [{id: a, exec: x, approval: {required: true, who: me}}]\n",
                "approval.who",
            ),
            (
                "type: pipeline\ninputs: [a]\nsteps: [{id: a, exec: x}]\n",
                "inputs must be",
            ),
            (
                "type: pipeline\nwebhooks: {on_complete: {url: 'http://h/x', method: GET}}\nsteps: [{id: a, exec: x}]\n",
                "signed POSTs",
            ),
        ] {
            let e = load(yaml).unwrap_err().message;
            assert!(e.contains(needle), "{yaml}: {e}");
        }
        let off = load("type: pipeline\nenabled: false\nsteps: [{id: a, exec: x, approval: {required: false}}]\n").unwrap();
        assert!(!off.pipeline.unwrap().enabled);
        assert!(off.steps[0].approval.is_none());
    }
}
