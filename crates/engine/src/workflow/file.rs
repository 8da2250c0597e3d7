//! Loading and validating workflow files.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::value::{Object, Value};

/// What to do when a step fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Fail the run (default).
    Stop,
    /// Record the error on the step and go on.
    Continue,
    /// Record the error and skip the remaining steps.
    SkipRest,
}

/// Retry policy of a step.
#[derive(Clone, Debug, PartialEq)]
pub struct Retry {
    /// Attempts in total.
    pub max: u32,
    /// Whether the delay doubles each attempt.
    pub exponential: bool,
    /// Base delay.
    pub delay_ms: f64,
    /// Cap for exponential delays.
    pub max_delay_ms: Option<f64>,
    /// ±10% random jitter.
    pub jitter: bool,
}

/// Approval gate settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Approval {
    /// Configured prompt (not templated).
    pub prompt: Option<String>,
    /// Configured items.
    pub items: Option<Value>,
    /// Configured preview.
    pub preview: Option<String>,
    /// Who started the run.
    pub initiated_by: Option<String>,
    /// Who must approve.
    pub required_approver: Option<String>,
    /// Whether the approver must differ from the initiator.
    pub require_different_approver: Option<bool>,
}

/// Input gate settings.
#[derive(Clone, Debug, PartialEq)]
pub struct InputSpec {
    /// The question.
    pub prompt: String,
    /// JSON schema of the response.
    pub response_schema: Value,
    /// Suggested defaults.
    pub defaults: Option<Value>,
}

/// One branch of a `parallel` block.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    /// Branch id (shares the step id namespace).
    pub id: String,
    /// What it runs.
    pub exec: Exec,
    /// Extra environment.
    pub env: Option<Object>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Input.
    pub stdin: Option<Value>,
}

/// A `parallel` block.
#[derive(Clone, Debug, PartialEq)]
pub struct Parallel {
    /// `false` = wait for all (default), `true` = first to settle wins.
    pub wait_any: bool,
    /// The branches.
    pub branches: Vec<Branch>,
    /// Timeout for the whole block.
    pub timeout_ms: Option<u64>,
}

/// A `for_each` loop.
#[derive(Clone, Debug, PartialEq)]
pub struct ForEach {
    /// The collection (a step reference or a literal).
    pub over: Value,
    /// Sub-steps run per item.
    pub steps: Vec<Step>,
    /// Name of the item pseudo-step (`item`).
    pub item_var: String,
    /// Name of the index pseudo-step (`index`).
    pub index_var: String,
    /// Items per batch before pausing.
    pub batch_size: Option<u64>,
    /// Pause between batches.
    pub pause_ms: Option<u64>,
}

/// What a step executes.
#[derive(Clone, Debug, PartialEq)]
pub enum Exec {
    /// `run` / `command`: a shell command line.
    Shell(String),
    /// `pipeline`: Lobster stages.
    Pipeline(String),
    /// `workflow`: a sub-workflow file.
    Workflow {
        /// Path (templated; relative to the parent file's directory).
        path: String,
        /// `workflow_args`.
        args: Option<Value>,
    },
    /// `parallel`.
    Parallel(Parallel),
    /// `for_each`.
    ForEach(ForEach),
    /// Nothing (approval-only or input steps).
    None,
}

impl Exec {
    /// The kind name used in dry-run plans and graphs.
    pub fn kind(&self) -> &'static str {
        match self {
            Exec::Shell(_) => "shell",
            Exec::Pipeline(_) => "pipeline",
            Exec::Workflow { .. } => "workflow",
            Exec::Parallel(_) => "parallel",
            Exec::ForEach(_) => "for_each",
            Exec::None => "no-op",
        }
    }
}

/// A workflow step.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Step id.
    pub id: String,
    /// What it executes.
    pub exec: Exec,
    /// Approval gate after execution.
    pub approval: Option<Approval>,
    /// Input gate.
    pub input: Option<InputSpec>,
    /// Input data.
    pub stdin: Option<Value>,
    /// Extra environment.
    pub env: Option<Object>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Condition (`when`, else `condition`).
    pub when: Option<Value>,
    /// Per-attempt timeout.
    pub timeout_ms: Option<u64>,
    /// Retry policy.
    pub retry: Option<Retry>,
    /// Failure handling.
    pub on_error: OnError,
}

/// A loaded workflow file.
#[derive(Clone, Debug, PartialEq)]
pub struct Workflow {
    /// Absolute path of the file.
    pub path: PathBuf,
    /// `name`.
    pub name: Option<String>,
    /// Declared args in order, with their defaults when declared.
    pub args: Vec<(String, Option<Value>)>,
    /// Workflow-level environment.
    pub env: Option<Object>,
    /// Workflow-level working directory.
    pub cwd: Option<String>,
    /// Steps.
    pub steps: Vec<Step>,
}

const EXEC_KEYS: [&str; 6] = ["run", "command", "pipeline", "workflow", "parallel", "for_each"];

/// Reads and validates a workflow file.
pub fn load(path: &Path) -> Result<Workflow> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::runtime(match e.kind() {
            std::io::ErrorKind::NotFound => format!("ENOENT: no such file or directory, open '{}'", path.display()),
            _ => format!("{e}, open '{}'", path.display()),
        })
    })?;
    let is_json = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let doc = if is_json { Value::from_json(&text).map_err(|e| Error::runtime(e.to_string()))? } else { parse_yaml(&text)? };
    from_value(&doc, path)
}

/// Parses YAML 1.2 text into a value (`null` for an empty document).
pub fn parse_yaml(text: &str) -> Result<Value> {
    if text.trim().is_empty() || text.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) {
        return Ok(Value::Null);
    }
    // YAML 1.2 core schema, as the `yaml` package Lobster uses: only
    // true/false are booleans, `1_000` is a string.
    let options = serde_saphyr::options! {
        strict_booleans: true,
        underscored_numbers_as_strings: true,
    };
    serde_saphyr::from_str_with_options::<Value>(text, options).map_err(|e| Error::runtime(e.to_string()))
}

fn get<'a>(obj: &'a Object, snake: &str, camel: &str) -> Option<&'a Value> {
    obj.get(snake).or_else(|| obj.get(camel)).filter(|v| !matches!(v, Value::Null))
}

/// Validates a parsed document as a workflow.
pub fn from_value(doc: &Value, path: &Path) -> Result<Workflow> {
    let obj = match doc {
        Value::Object(o) => o.clone(),
        Value::Array(_) => Object::new(),
        _ => return Err(Error::runtime("Workflow file must be a JSON/YAML object")),
    };
    let steps = match obj.get("steps") {
        Some(Value::Array(s)) if !s.is_empty() => s.clone(),
        _ => return Err(Error::runtime("Workflow file requires a non-empty steps array")),
    };
    let mut seen = Vec::new();
    let steps = parse_steps(&steps, &mut seen, false)?;
    let args = match obj.get("args") {
        Some(Value::Object(defs)) => defs
            .iter()
            .map(|(k, def)| {
                let default = def.as_object().and_then(|d| d.get("default")).cloned();
                (k.to_string(), default)
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(Workflow {
        path: path.to_path_buf(),
        name: obj.get("name").and_then(Value::as_str).map(str::to_string),
        args,
        env: obj.get("env").and_then(Value::as_object).cloned(),
        cwd: obj.get("cwd").and_then(Value::as_str).map(str::to_string),
        steps,
    })
}

fn parse_steps(raw: &[Value], seen: &mut Vec<String>, in_loop: bool) -> Result<Vec<Step>> {
    raw.iter().map(|s| parse_step(s, seen, in_loop)).collect()
}

fn string_field(step: &Object, key: &str, id: &str) -> Result<Option<String>> {
    match step.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::runtime(format!("Workflow step {id} {key} must be a string"))),
    }
}

fn parse_step(raw: &Value, seen: &mut Vec<String>, in_loop: bool) -> Result<Step> {
    let Value::Object(step) = raw else {
        return Err(Error::runtime("Workflow step requires an id"));
    };
    let id = match step.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(Error::runtime("Workflow step requires an id")),
    };
    if seen.contains(&id) {
        return Err(Error::runtime(format!("Duplicate workflow step id: {id}")));
    }
    seen.push(id.clone());

    let present: Vec<&str> = EXEC_KEYS.iter().copied().filter(|k| step.get(k).is_some_and(|v| !matches!(v, Value::Null))).collect();
    let approval = parse_approval(step.get("approval"), &id)?;
    let input = parse_input(step.get("input"), &id)?;
    if present.len() > 1 {
        return Err(Error::runtime(format!(
            "Workflow step {id} can only define one of run, command, pipeline, workflow, parallel, or for_each"
        )));
    }
    if input.is_some() && !present.is_empty() {
        return Err(Error::runtime(format!(
            "Workflow step {id} input steps cannot define run, command, pipeline, workflow, parallel, or for_each"
        )));
    }
    if present.is_empty() && approval.is_none() && input.is_none() {
        return Err(Error::runtime(format!(
            "Workflow step {id} requires run, command, pipeline, workflow, parallel, for_each, approval, or input"
        )));
    }
    let exec = match present.first().copied() {
        Some("run") | Some("command") => {
            let key = present[0];
            Exec::Shell(string_field(step, key, &id)?.unwrap_or_default())
        }
        Some("pipeline") => Exec::Pipeline(string_field(step, "pipeline", &id)?.unwrap_or_default()),
        Some("workflow") => Exec::Workflow {
            path: string_field(step, "workflow", &id)?.unwrap_or_default(),
            args: get(step, "workflow_args", "workflowArgs").cloned(),
        },
        Some("parallel") => Exec::Parallel(parse_parallel(step.get("parallel"), &id, seen)?),
        Some("for_each") => Exec::ForEach(parse_for_each(step, &id, seen)?),
        _ => Exec::None,
    };
    if in_loop && (approval.is_some() || input.is_some()) {
        return Err(Error::runtime(format!("Workflow step {id} inside for_each cannot define approval or input")));
    }

    let timeout_ms = match step.get("timeout_ms") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.fract() == 0.0 && *n >= 1.0 && *n <= 2_147_483_647.0 => Some(*n as u64),
        Some(_) => {
            return Err(Error::runtime(format!("Workflow step {id} timeout_ms must be a positive integer between 1 and 2147483647")));
        }
    };
    let on_error = match step.get("on_error") {
        None | Some(Value::Null) => OnError::Stop,
        Some(Value::String(s)) if s == "stop" => OnError::Stop,
        Some(Value::String(s)) if s == "continue" => OnError::Continue,
        Some(Value::String(s)) if s == "skip_rest" => OnError::SkipRest,
        Some(_) => {
            return Err(Error::runtime(format!("Workflow step {id} on_error must be \"stop\", \"continue\", or \"skip_rest\"")));
        }
    };
    let retry = parse_retry(step.get("retry"), &id)?;
    let when = step.get("when").filter(|v| !matches!(v, Value::Null)).or_else(|| step.get("condition")).cloned();
    let when = when.filter(|v| !matches!(v, Value::Null));
    Ok(Step {
        id: id.clone(),
        exec,
        approval,
        input,
        stdin: step.get("stdin").filter(|v| !matches!(v, Value::Null)).cloned(),
        env: step.get("env").and_then(Value::as_object).cloned(),
        cwd: string_field(step, "cwd", &id)?,
        when,
        timeout_ms,
        retry,
        on_error,
    })
}

fn parse_retry(raw: Option<&Value>, id: &str) -> Result<Option<Retry>> {
    let Some(raw) = raw.filter(|v| !matches!(v, Value::Null)) else {
        return Ok(None);
    };
    let Value::Object(r) = raw else {
        return Err(Error::runtime(format!("Workflow step {id} retry must be an object")));
    };
    let max = match r.get("max") {
        None | Some(Value::Null) => 1,
        Some(Value::Number(n)) if n.fract() == 0.0 && *n >= 1.0 && *n <= u32::MAX as f64 => *n as u32,
        Some(_) => return Err(Error::runtime(format!("Workflow step {id} retry.max must be a positive integer"))),
    };
    let exponential = match r.get("backoff") {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) if s == "fixed" => false,
        Some(Value::String(s)) if s == "exponential" => true,
        Some(_) => return Err(Error::runtime(format!("Workflow step {id} retry.backoff must be \"fixed\" or \"exponential\""))),
    };
    let ms = |key: &str| -> Result<Option<f64>> {
        match r.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if *n >= 0.0 && n.is_finite() => Ok(Some(*n)),
            Some(_) => Err(Error::runtime(format!("Workflow step {id} retry.{key} must be a non-negative number"))),
        }
    };
    let delay_ms = ms("delay_ms")?.unwrap_or(1000.0);
    let max_delay_ms = ms("max_delay_ms")?;
    let jitter = match r.get("jitter") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(Error::runtime(format!("Workflow step {id} retry.jitter must be a boolean"))),
    };
    Ok(Some(Retry { max, exponential, delay_ms, max_delay_ms, jitter }))
}

fn parse_approval(raw: Option<&Value>, id: &str) -> Result<Option<Approval>> {
    match raw {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some(Approval::default())),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("required") => Ok(Some(Approval::default())),
        Some(Value::String(s)) => Ok(Some(Approval { prompt: Some(s.clone()), ..Approval::default() })),
        Some(Value::Object(o)) => {
            let text = |snake: &str, camel: &str| -> Result<Option<String>> {
                match get(o, snake, camel) {
                    None => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(_) => Err(Error::runtime(format!("Workflow step {id} approval.{snake} must be a string"))),
                }
            };
            let different = match get(o, "require_different_approver", "requireDifferentApprover") {
                None => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => {
                    return Err(Error::runtime(format!("Workflow step {id} approval.require_different_approver must be a boolean")));
                }
            };
            Ok(Some(Approval {
                prompt: text("prompt", "prompt")?,
                items: o.get("items").filter(|v| !matches!(v, Value::Null)).cloned(),
                preview: text("preview", "preview")?,
                initiated_by: text("initiated_by", "initiatedBy")?,
                required_approver: text("required_approver", "requiredApprover")?,
                require_different_approver: different,
            }))
        }
        Some(_) => Err(Error::runtime(format!("Workflow step {id} approval must be a boolean, \"required\", a prompt string, or an object"))),
    }
}

fn parse_input(raw: Option<&Value>, id: &str) -> Result<Option<InputSpec>> {
    let Some(raw) = raw.filter(|v| !matches!(v, Value::Null)) else {
        return Ok(None);
    };
    let Value::Object(o) = raw else {
        return Err(Error::runtime(format!("Workflow step {id} input must be an object")));
    };
    let Some(Value::String(prompt)) = o.get("prompt") else {
        return Err(Error::runtime(format!("Workflow step {id} input.prompt must be a string")));
    };
    let schema = get(o, "responseSchema", "response_schema");
    let Some(schema @ Value::Object(_)) = schema else {
        return Err(Error::runtime(format!("Workflow step {id} input.responseSchema must be an object")));
    };
    crate::schema::Schema::compile(schema)
        .map_err(|e| Error::runtime(format!("Workflow step {id} input.responseSchema is invalid: {e}")))?;
    Ok(Some(InputSpec { prompt: prompt.clone(), response_schema: schema.clone(), defaults: o.get("defaults").filter(|v| !matches!(v, Value::Null)).cloned() }))
}

fn parse_parallel(raw: Option<&Value>, id: &str, seen: &mut Vec<String>) -> Result<Parallel> {
    let Some(Value::Object(p)) = raw else {
        return Err(Error::runtime(format!("Workflow step {id} parallel must be an object")));
    };
    let wait_any = match p.get("wait") {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) if s == "all" => false,
        Some(Value::String(s)) if s == "any" => true,
        Some(_) => return Err(Error::runtime(format!("Workflow step {id} parallel.wait must be \"all\" or \"any\""))),
    };
    let branches = match p.get("branches") {
        Some(Value::Array(b)) if !b.is_empty() => b,
        _ => return Err(Error::runtime(format!("Workflow step {id} parallel.branches must be a non-empty array"))),
    };
    let mut out = Vec::new();
    for b in branches {
        let Value::Object(bo) = b else {
            return Err(Error::runtime(format!("Workflow step {id} parallel branch requires an id")));
        };
        let bid = match bo.get("id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(Error::runtime(format!("Workflow step {id} parallel branch requires an id"))),
        };
        if seen.contains(&bid) {
            return Err(Error::runtime(format!("Duplicate workflow step id: {bid}")));
        }
        seen.push(bid.clone());
        let keys: Vec<&str> = ["run", "command", "pipeline"].into_iter().filter(|k| bo.get(k).is_some_and(|v| !matches!(v, Value::Null))).collect();
        if keys.len() != 1 {
            return Err(Error::runtime(format!("Parallel branch {bid} requires exactly one of run, command, or pipeline")));
        }
        if bo.get("approval").is_some() || bo.get("input").is_some() {
            return Err(Error::runtime(format!("Parallel branch {bid} cannot define approval or input")));
        }
        let text = string_field(bo, keys[0], &bid)?.unwrap_or_default();
        out.push(Branch {
            id: bid.clone(),
            exec: if keys[0] == "pipeline" { Exec::Pipeline(text) } else { Exec::Shell(text) },
            env: bo.get("env").and_then(Value::as_object).cloned(),
            cwd: string_field(bo, "cwd", &bid)?,
            stdin: bo.get("stdin").filter(|v| !matches!(v, Value::Null)).cloned(),
        });
    }
    let timeout_ms = match p.get("timeout_ms") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.fract() == 0.0 && *n >= 1.0 && *n <= 2_147_483_647.0 => Some(*n as u64),
        Some(_) => {
            return Err(Error::runtime(format!("Workflow step {id} parallel.timeout_ms must be a positive integer between 1 and 2147483647")));
        }
    };
    Ok(Parallel { wait_any, branches: out, timeout_ms })
}

fn parse_for_each(step: &Object, id: &str, seen: &mut Vec<String>) -> Result<ForEach> {
    let over = step.get("for_each").cloned().unwrap_or(Value::Null);
    let steps = match step.get("steps") {
        Some(Value::Array(s)) if !s.is_empty() => s.clone(),
        _ => return Err(Error::runtime(format!("Workflow step {id} for_each requires a non-empty steps array"))),
    };
    if step.get("approval").is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)))
        || step.get("input").is_some_and(|v| !matches!(v, Value::Null))
    {
        return Err(Error::runtime(format!("Workflow step {id} for_each cannot define approval or input")));
    }
    let var = |key: &str, default: &str| -> Result<String> {
        match step.get(key) {
            None | Some(Value::Null) => Ok(default.to_string()),
            Some(Value::String(s)) if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') => {
                Ok(s.clone())
            }
            Some(_) => Err(Error::runtime(format!("Workflow step {id} {key} must be a non-empty identifier"))),
        }
    };
    let item_var = var("item_var", "item")?;
    let index_var = var("index_var", "index")?;
    if item_var == index_var {
        return Err(Error::runtime(format!("Workflow step {id} item_var and index_var must differ")));
    }
    let count = |key: &str| -> Result<Option<u64>> {
        match step.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.fract() == 0.0 && *n >= 0.0 => Ok(Some(*n as u64)),
            Some(_) => Err(Error::runtime(format!("Workflow step {id} {key} must be a non-negative integer"))),
        }
    };
    let mut sub_seen = Vec::new();
    let sub = parse_steps(&steps, &mut sub_seen, true)?;
    for s in &sub_seen {
        if *s == item_var || *s == index_var {
            return Err(Error::runtime(format!("Workflow step {id} sub-step id {s} clashes with the loop variables")));
        }
    }
    let _ = seen;
    Ok(ForEach { over, steps: sub, item_var, index_var, batch_size: count("batch_size")?.filter(|n| *n > 0), pause_ms: count("pause_ms")? })
}
