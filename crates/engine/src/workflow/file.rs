//! Loading and validating workflow files.

use std::path::{Path, PathBuf};

use super::triggers::{Trigger, TriggerKind, parse_triggers};
use super::webhooks::Webhooks;
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
    /// Cap for delays (default 30 s).
    pub max_delay_ms: f64,
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
    /// Who may decide (`approvers:`); plain Lobster gates are `Any`.
    pub approvers: Approvers,
    /// Whether the person must be verified (`presence: verified`): only a
    /// paired device's passkey or the operating system's check approves.
    /// Implies `approvers: human`.
    pub verified: bool,
    /// How many distinct approvers must approve (`min_approvals:`, 1 unless set).
    pub min_approvals: u32,
    /// How long the gate waits (`expires_in:`, e.g. `30m`), in seconds.
    pub expires_in: Option<u64>,
    /// What happens then (`on_expiry:`).
    pub on_expiry: OnExpiry,
    /// The principal that started the run may not approve it
    /// (`forbid_self_approval: true`).
    pub forbid_self_approval: bool,
}

impl Approval {
    /// Whether the gate has a policy beyond Lobster's (who approves, how
    /// many, until when).
    pub fn has_policy(&self) -> bool {
        self.approvers == Approvers::Human
            || self.verified
            || self.min_approvals > 1
            || self.expires_in.is_some()
            || self.forbid_self_approval
    }
}

/// What an expired gate comes to, decided by `expiry`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnExpiry {
    /// The run is cancelled.
    #[default]
    Cancel,
    /// The gate is denied (the run ends as cancelled, recorded as a denial).
    Deny,
    /// The gate is approved and the run goes on.
    Approve,
}

impl OnExpiry {
    /// The spelling in a workflow file.
    pub fn as_str(self) -> &'static str {
        match self {
            OnExpiry::Cancel => "cancel",
            OnExpiry::Deny => "deny",
            OnExpiry::Approve => "approve",
        }
    }
}

/// `30s`, `30m`, `2h`, `1d` in seconds.
pub fn duration_secs(text: &str) -> Option<u64> {
    let (digits, unit) = text.split_at(text.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok().filter(|n| *n > 0)?;
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// Who may decide an approval gate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Approvers {
    /// Whoever holds the resume token or the approval id (Lobster's gate).
    #[default]
    Any,
    /// Only a person: the app, its notification, or an approver token;
    /// never `lobster resume`, an agent token or the owner token.
    Human,
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
    /// A Gobby pipeline's step (`exec`, `prompt`, `invoke_pipeline`).
    Gobby(super::gobby::Action),
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
            Exec::Gobby(action) => action.kind(),
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
    /// `description`.
    pub description: Option<String>,
    /// `expose_as_tool`: offered to agents as a tool of its own.
    pub expose_as_tool: bool,
    /// Declared args in order, with their defaults when declared.
    pub args: Vec<(String, Option<Value>)>,
    /// The args as a JSON Schema object: each arg's `type`, `description`
    /// and `default` where declared; required exactly when it has no default.
    pub args_schema: Value,
    /// Workflow-level environment.
    pub env: Option<Object>,
    /// Workflow-level working directory.
    pub cwd: Option<String>,
    /// Steps.
    pub steps: Vec<Step>,
    /// Where its events are sent (`webhooks:`).
    pub webhooks: Webhooks,
    /// The schedules and file watches the backend runs it on (`triggers:`).
    pub triggers: Vec<Trigger>,
    /// A Gobby pipeline's own settings (`type: pipeline` files only).
    pub pipeline: Option<super::gobby::Pipeline>,
    /// The text it was read from (empty for one built from a value): what
    /// a run that pauses keeps, and resumes with.
    pub text: String,
}

impl Workflow {
    /// Its `name`, else its file's stem: what the library lists it as.
    pub fn library_name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| super::library::stem(&self.path))
    }

    /// Its steps as a run's history starts them: each pending, in order.
    pub fn pending_steps(&self) -> Vec<clawdis_store::StepRecord> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                clawdis_store::StepRecord::pending(&s.id, u32::try_from(i).unwrap_or(u32::MAX))
            })
            .collect()
    }
}

/// Extensions a workflow file may have.
pub(crate) const WORKFLOW_EXTENSIONS: [&str; 4] = ["lobster", "yaml", "yml", "json"];

/// Checks a workflow path, relative to `cwd`: an existing regular file with
/// a workflow extension (Lobster's `resolveWorkflowFile`, same messages).
pub fn resolve_path(candidate: &str, cwd: &Path) -> std::result::Result<PathBuf, String> {
    let resolved = cwd.join(candidate);
    let meta = std::fs::metadata(&resolved).map_err(|_| {
        format!(
            "ENOENT: no such file or directory, stat '{}'",
            resolved.display()
        )
    })?;
    if !meta.is_file() {
        return Err("Workflow path is not a file".into());
    }
    let ext = resolved
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if !WORKFLOW_EXTENSIONS.contains(&ext.as_str()) {
        return Err("Workflow file must end in .lobster, .yaml, .yml, or .json".into());
    }
    Ok(resolved)
}

/// Reads and validates a workflow file.
pub fn load(path: &Path) -> Result<Workflow> {
    parse(&read(path)?, path)
}

/// The text of workflow file `path`, with Lobster's message when it
/// cannot be read.
pub fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        let message = match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "ENOENT: no such file or directory, open '{}'",
                path.display()
            ),
            _ => format!("{e}, open '{}'", path.display()),
        };
        Error::io(message, e)
    })
}

/// Validates `text`, the contents of workflow file `path` (JSON for a
/// `.json` file, else YAML), as [`load`] does.
pub fn parse(text: &str, path: &Path) -> Result<Workflow> {
    let is_json = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let doc = if is_json {
        Value::from_json(text).map_err(|e| Error::runtime(e.to_string()))?
    } else {
        parse_yaml(text)?
    };
    let mut workflow = from_value(&doc, path)?;
    workflow.text = text.to_string();
    Ok(workflow)
}

/// Parses YAML 1.2 text into a value (`null` for an empty document).
pub fn parse_yaml(text: &str) -> Result<Value> {
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Ok(Value::Null);
    }
    // YAML 1.2 core schema, as the `yaml` package Lobster uses: only
    // true/false are booleans, `1_000` is a string, `.inf` and `.nan` are
    // numbers (JSON then writes them as null).
    let options = serde_saphyr::options! {
        strict_booleans: true,
        underscored_numbers_as_strings: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::PassThrough,
    };
    serde_saphyr::from_str_with_options::<Value>(text, options)
        .map_err(|e| Error::runtime(e.to_string()))
}

/// JavaScript truthiness of an optional property.
fn truthy(v: Option<&Value>) -> bool {
    v.is_some_and(Value::truthy)
}

/// `typeof v === "string"`.
fn is_string(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(_)))
}

/// A string property that is non-blank after trimming.
fn non_blank(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
}

/// Lobster's `isApprovalStep`: `true`, a non-blank string, or an object.
fn is_approval(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(Value::Object(_)) => true,
        _ => false,
    }
}

/// Lobster's `isInputStep`: a plain object.
fn is_input(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Object(_)))
}

/// `run` if it is a string, else `command` (whatever it is).
fn shell_field(step: &Object) -> Option<&Value> {
    match step.get("run") {
        Some(v @ Value::String(_)) => Some(v),
        _ => step.get("command"),
    }
}

fn positive_int_ms(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) if n.fract() == 0.0 && *n >= 1.0 && *n <= 2_147_483_647.0 => {
            Some(*n as u64)
        }
        _ => None,
    }
}

/// What a step runs, by Lobster's priority: parallel, workflow, pipeline, shell.
fn execution(step: &Object, parallel: Option<Parallel>) -> Exec {
    if let Some(p) = parallel {
        return Exec::Parallel(p);
    }
    if let Some(path) = non_blank(step.get("workflow")) {
        let args = step
            .get("workflow_args")
            .filter(|v| !matches!(v, Value::Null))
            .cloned();
        return Exec::Workflow { path, args };
    }
    if let Some(p) = non_blank(step.get("pipeline")) {
        return Exec::Pipeline(p);
    }
    if let Some(cmd) = non_blank(shell_field(step)) {
        return Exec::Shell(cmd);
    }
    Exec::None
}

/// Validates a parsed document as a workflow, with Lobster's checks, order
/// and messages.
pub fn from_value(doc: &Value, path: &Path) -> Result<Workflow> {
    let obj = match doc {
        Value::Object(o) if super::gobby::is_pipeline(o) => {
            return super::gobby::from_value(o, path);
        }
        Value::Object(o) => o.clone(),
        Value::Array(_) => Object::new(),
        _ => return Err(Error::runtime("Workflow file must be a JSON/YAML object")),
    };
    let raw_steps = match obj.get("steps") {
        Some(Value::Array(s)) if !s.is_empty() => s.clone(),
        _ => {
            return Err(Error::runtime(
                "Workflow file requires a non-empty steps array",
            ));
        }
    };
    if let Some(limit) = obj.get("cost_limit") {
        let Value::Object(l) = limit else {
            return Err(Error::runtime("Workflow cost_limit must be an object"));
        };
        let max = l.get("max_usd").map_or(f64::NAN, Value::to_number);
        if !max.is_finite() || max < 0.0 {
            return Err(Error::runtime(
                "Workflow cost_limit.max_usd must be a non-negative number",
            ));
        }
        if let Some(action) = l.get("action")
            && !matches!(action.as_str(), Some("warn" | "stop"))
        {
            return Err(Error::runtime(
                "Workflow cost_limit.action must be \"warn\" or \"stop\"",
            ));
        }
    }
    let mut seen: Vec<String> = Vec::new();
    let mut steps = Vec::with_capacity(raw_steps.len());
    for raw in &raw_steps {
        steps.push(validate_step(raw, &mut seen)?);
    }
    let args = match obj.get("args") {
        Some(Value::Object(defs)) => defs
            .iter()
            .map(|(k, def)| {
                (
                    k.to_string(),
                    def.as_object().and_then(|d| d.get("default")).cloned(),
                )
            })
            .collect(),
        _ => Vec::new(),
    };
    let triggers = checked_triggers(obj.get("triggers"), &args)?;
    Ok(Workflow {
        path: path.to_path_buf(),
        name: obj.get("name").and_then(Value::as_str).map(str::to_string),
        description: obj
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        expose_as_tool: obj.get("expose_as_tool") == Some(&Value::Bool(true)),
        args_schema: args_schema(obj.get("args")),
        args,
        env: obj.get("env").and_then(Value::as_object).cloned(),
        cwd: obj.get("cwd").and_then(Value::as_str).map(str::to_string),
        steps,
        webhooks: Webhooks::parse(obj.get("webhooks"))?,
        triggers,
        pipeline: None,
        text: String::new(),
    })
}

/// `triggers:`, each checked against the workflow's args: a watch passes
/// the changed files as the arg `paths`, so the workflow must declare it.
pub(super) fn checked_triggers(
    value: Option<&Value>,
    args: &[(String, Option<Value>)],
) -> Result<Vec<Trigger>> {
    let triggers = parse_triggers(value)?;
    let declared = |name: &str| args.iter().any(|(arg, _)| arg == name);
    for (i, trigger) in triggers.iter().enumerate() {
        if matches!(trigger.kind, TriggerKind::Watch) && !declared("paths") {
            return Err(Error::runtime(format!(
                "triggers[{i}].watch passes the changed files as the arg paths: declare it in args"
            )));
        }
        for (name, _) in trigger.args.iter() {
            if !declared(name) {
                return Err(Error::runtime(format!(
                    "triggers[{i}].args.{name}: the workflow declares no such arg"
                )));
            }
        }
    }
    Ok(triggers)
}

/// `args:` as a JSON Schema object (see [`Workflow::args_schema`]).
pub(super) fn args_schema(args: Option<&Value>) -> Value {
    let mut properties = Object::new();
    let mut required = Vec::new();
    if let Some(Value::Object(defs)) = args {
        for (name, def) in defs.iter() {
            let mut property = Object::new();
            let def = def.as_object();
            for key in ["type", "description"] {
                if let Some(text) = def
                    .and_then(|d| d.get(key))
                    .filter(|v| v.as_str().is_some())
                {
                    property.insert(key, text.clone());
                }
            }
            match def.and_then(|d| d.get("default")) {
                Some(default) => property.insert("default", default.clone()),
                None => required.push(Value::from(name)),
            }
            properties.insert(name, Value::Object(property));
        }
    }
    Value::Object(Object::from_iter([
        ("type", Value::from("object")),
        ("properties", Value::Object(properties)),
        ("required", Value::Array(required)),
    ]))
}

fn validate_parallel(step: &Object, id: &str, seen: &[String]) -> Result<Option<Parallel>> {
    let Some(raw) = step.get("parallel") else {
        return Ok(None);
    };
    let Value::Object(p) = raw else {
        return Err(Error::runtime(format!(
            "Workflow step {id} parallel must be an object"
        )));
    };
    let branches = match p.get("branches") {
        Some(Value::Array(b)) if !b.is_empty() => b,
        _ => {
            return Err(Error::runtime(format!(
                "Workflow step {id} parallel requires a non-empty branches array"
            )));
        }
    };
    let wait_any = match p.get("wait") {
        None => false,
        Some(Value::String(s)) if s == "all" => false,
        Some(Value::String(s)) if s == "any" => true,
        Some(_) => {
            return Err(Error::runtime(format!(
                "Workflow step {id} parallel wait must be \"all\" or \"any\""
            )));
        }
    };
    let timeout_ms = match p.get("timeout_ms") {
        None => None,
        Some(v) => Some(positive_int_ms(v).ok_or_else(|| {
            Error::runtime(format!("Workflow step {id} parallel timeout_ms must be a positive integer between 1 and 2147483647"))
        })?),
    };
    let mut ids: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for b in branches {
        let Value::Object(bo) = b else {
            return Err(Error::runtime(format!(
                "Workflow step {id} parallel branches must be objects"
            )));
        };
        let bid = match bo.get("id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                return Err(Error::runtime(format!(
                    "Workflow step {id} parallel branch requires an id"
                )));
            }
        };
        if bid == id {
            return Err(Error::runtime(format!(
                "Workflow step {id} parallel branch id cannot match the step id"
            )));
        }
        if ids.contains(&bid) {
            return Err(Error::runtime(format!(
                "Workflow step {id} duplicate parallel branch id: {bid}"
            )));
        }
        if seen.contains(&bid) {
            return Err(Error::runtime(format!(
                "Duplicate workflow id across steps/parallel branches: {bid}"
            )));
        }
        ids.push(bid.clone());
        let count = usize::from(truthy(shell_field(bo)))
            + usize::from(is_string(bo.get("pipeline")) && truthy(bo.get("pipeline")));
        if count == 0 {
            return Err(Error::runtime(format!(
                "Workflow step {id} parallel branch {bid} requires run, command, or pipeline"
            )));
        }
        if count > 1 {
            return Err(Error::runtime(format!(
                "Workflow step {id} parallel branch {bid} can only define one of run, command, or pipeline"
            )));
        }
        for key in ["run", "command", "pipeline"] {
            if bo.get(key).is_some_and(|v| !matches!(v, Value::String(_))) {
                return Err(Error::runtime(format!(
                    "Workflow step {id} parallel branch {bid} {key} must be a string"
                )));
            }
        }
        let exec = match (non_blank(bo.get("pipeline")), non_blank(shell_field(bo))) {
            (Some(p), _) => Exec::Pipeline(p),
            (None, Some(c)) => Exec::Shell(c),
            _ => Exec::None,
        };
        out.push(Branch {
            id: bid,
            exec,
            env: bo.get("env").and_then(Value::as_object).cloned(),
            cwd: bo.get("cwd").and_then(Value::as_str).map(str::to_string),
            stdin: bo
                .get("stdin")
                .filter(|v| !matches!(v, Value::Null))
                .cloned(),
        });
    }
    Ok(Some(Parallel {
        wait_any,
        branches: out,
        timeout_ms,
    }))
}

fn validate_for_each(step: &Object, id: &str) -> Result<Option<ForEach>> {
    let over = match step.get("for_each") {
        None => return Ok(None),
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(Error::runtime(format!(
                "Workflow step {id} for_each must be a string (step reference expression)"
            )));
        }
    };
    let err = |msg: &str| Error::runtime(format!("Workflow step {id} {msg}"));
    let subs = match step.get("steps") {
        Some(Value::Array(s)) if !s.is_empty() => s.clone(),
        _ => return Err(err("for_each requires a non-empty steps array")),
    };
    let batch_size = match step.get("batch_size") {
        None => None,
        Some(Value::Number(n)) if n.fract() == 0.0 && *n >= 1.0 => Some(*n as u64),
        Some(_) => return Err(err("batch_size must be a positive integer")),
    };
    let pause_ms = match step.get("pause_ms") {
        None => None,
        Some(Value::Number(n)) if n.is_finite() && *n >= 0.0 => Some(*n as u64),
        Some(_) => return Err(err("pause_ms must be a finite non-negative number")),
    };
    if is_approval(step.get("approval")) {
        return Err(err(
            "for_each steps cannot define approval (use a separate step after the loop)",
        ));
    }
    if is_input(step.get("input")) {
        return Err(err(
            "for_each steps cannot define input (use a separate step after the loop)",
        ));
    }
    if step.get("stdin").is_some_and(|v| !matches!(v, Value::Null)) {
        return Err(err(
            "for_each steps cannot define stdin (loop input comes from the for_each expression)",
        ));
    }
    let loop_pipeline = is_string(step.get("pipeline")) && truthy(step.get("pipeline"));
    if truthy(shell_field(step))
        || loop_pipeline
        || truthy(step.get("workflow"))
        || truthy(step.get("parallel"))
    {
        return Err(err(
            "for_each cannot also define run, command, pipeline, workflow, or parallel",
        ));
    }
    let var = |key: &str, default: &str| -> Result<String> {
        match step.get(key) {
            None => Ok(default.to_string()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(err(&format!("{key} must be a string"))),
        }
    };
    let item_var = var("item_var", "item")?;
    let index_var = var("index_var", "index")?;
    if item_var == index_var {
        return Err(err("item_var and index_var cannot be the same"));
    }
    let mut sub_ids: Vec<String> = Vec::new();
    let mut steps = Vec::new();
    for raw in &subs {
        let sub = match raw {
            Value::Object(o) if matches!(o.get("id"), Some(Value::String(s)) if !s.is_empty()) => o,
            _ => return Err(err("for_each sub-step requires an id")),
        };
        let sid = sub.get("id").map(Value::to_js_string).unwrap_or_default();
        if sid == item_var || sid == index_var {
            return Err(err(&format!(
                "for_each sub-step id '{sid}' conflicts with loop variable"
            )));
        }
        if sub_ids.contains(&sid) {
            return Err(err(&format!("duplicate for_each sub-step id: {sid}")));
        }
        sub_ids.push(sid.clone());
        if is_approval(sub.get("approval")) || is_input(sub.get("input")) {
            return Err(err(
                "for_each sub-steps cannot contain approval or input steps",
            ));
        }
        for key in ["run", "command", "pipeline"] {
            if sub.get(key).is_some_and(|v| !matches!(v, Value::String(_))) {
                return Err(err(&format!(
                    "for_each sub-step {sid} {key} must be a string"
                )));
            }
        }
        if truthy(sub.get("workflow")) || truthy(sub.get("parallel")) || truthy(sub.get("for_each"))
        {
            return Err(err(&format!(
                "for_each sub-step {sid} cannot define workflow, parallel, or for_each"
            )));
        }
        let shell = non_blank(sub.get("run")).or_else(|| non_blank(sub.get("command")));
        let pipeline = non_blank(sub.get("pipeline"));
        let exec = match (&shell, &pipeline) {
            (None, None) => {
                return Err(err(&format!(
                    "for_each sub-step {sid} requires run, command, or pipeline"
                )));
            }
            (Some(_), Some(_)) => {
                return Err(err(&format!(
                    "for_each sub-step {sid} can only define one of run, command, or pipeline"
                )));
            }
            (Some(c), None) => Exec::Shell(c.clone()),
            (None, Some(p)) => Exec::Pipeline(p.clone()),
        };
        steps.push(Step {
            id: sid,
            exec,
            approval: None,
            input: None,
            stdin: sub
                .get("stdin")
                .filter(|v| !matches!(v, Value::Null))
                .cloned(),
            env: sub.get("env").and_then(Value::as_object).cloned(),
            cwd: sub.get("cwd").and_then(Value::as_str).map(str::to_string),
            when: condition_of(sub),
            timeout_ms: None,
            retry: None,
            on_error: OnError::Stop,
        });
    }
    Ok(Some(ForEach {
        over: Value::String(over),
        steps,
        item_var,
        index_var,
        batch_size,
        pause_ms,
    }))
}

/// `when ?? condition`.
fn condition_of(step: &Object) -> Option<Value> {
    step.get("when")
        .filter(|v| !matches!(v, Value::Null))
        .or_else(|| step.get("condition"))
        .filter(|v| !matches!(v, Value::Null))
        .cloned()
}

fn validate_step(raw: &Value, seen: &mut Vec<String>) -> Result<Step> {
    let Value::Object(step) = raw else {
        return Err(Error::runtime("Workflow step must be an object"));
    };
    let id = match step.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(Error::runtime("Workflow step requires an id")),
    };
    let err = |msg: &str| Error::runtime(format!("Workflow step {id} {msg}"));
    match step.get("workflow") {
        Some(Value::String(s)) if s.trim().is_empty() => {
            return Err(err("workflow path cannot be blank"));
        }
        Some(Value::String(_)) | None => {}
        Some(_) => return Err(err("workflow must be a string (file path)")),
    }
    if step
        .get("workflow_args")
        .is_some_and(|v| !matches!(v, Value::Object(_)))
    {
        return Err(err("workflow_args must be a plain object"));
    }
    let parallel = validate_parallel(step, &id, seen)?;
    let for_each = validate_for_each(step, &id)?;

    let approval_present = is_approval(step.get("approval"));
    let input_present = is_input(step.get("input"));
    let count = usize::from(truthy(shell_field(step)))
        + usize::from(is_string(step.get("pipeline")) && truthy(step.get("pipeline")))
        + usize::from(non_blank(step.get("workflow")).is_some())
        + usize::from(parallel.is_some())
        + usize::from(for_each.is_some());
    if count == 0 && !approval_present && !input_present {
        return Err(err(
            "requires run, command, pipeline, workflow, parallel, for_each, approval, or input",
        ));
    }
    if count > 1 {
        return Err(err(
            "can only define one of run, command, pipeline, workflow, parallel, or for_each",
        ));
    }
    if count > 0 && input_present {
        return Err(err(
            "input steps cannot define run, command, pipeline, workflow, parallel, or for_each",
        ));
    }
    if approval_present && input_present {
        return Err(err("cannot define both approval and input"));
    }
    for key in ["run", "command", "pipeline"] {
        if step
            .get(key)
            .is_some_and(|v| !matches!(v, Value::String(_)))
        {
            return Err(err(&format!("{key} must be a string")));
        }
    }
    let input = validate_input(step, &id)?;
    let approval = validate_approval(step, &id)?;
    let timeout_ms = match step.get("timeout_ms") {
        None => None,
        Some(v) => Some(positive_int_ms(v).ok_or_else(|| {
            err("timeout_ms must be a positive integer between 1 and 2147483647")
        })?),
    };
    let on_error = match step.get("on_error") {
        None => OnError::Stop,
        Some(Value::String(s)) if s == "stop" => OnError::Stop,
        Some(Value::String(s)) if s == "continue" => OnError::Continue,
        Some(Value::String(s)) if s == "skip_rest" => OnError::SkipRest,
        Some(_) => {
            return Err(err(
                "on_error must be \"stop\", \"continue\", or \"skip_rest\"",
            ));
        }
    };
    let retry = validate_retry(step.get("retry"), &id)?;
    if seen.contains(&id) {
        return Err(Error::runtime(format!("Duplicate workflow step id: {id}")));
    }
    if let Some(p) = &parallel {
        seen.extend(p.branches.iter().map(|b| b.id.clone()));
    }
    seen.push(id.clone());
    let exec = match for_each {
        Some(fe) => Exec::ForEach(fe),
        None => execution(step, parallel),
    };
    Ok(Step {
        id,
        exec,
        approval,
        input,
        stdin: step
            .get("stdin")
            .filter(|v| !matches!(v, Value::Null))
            .cloned(),
        env: step.get("env").and_then(Value::as_object).cloned(),
        cwd: step.get("cwd").and_then(Value::as_str).map(str::to_string),
        when: condition_of(step),
        timeout_ms,
        retry,
        on_error,
    })
}

fn validate_input(step: &Object, id: &str) -> Result<Option<InputSpec>> {
    let err = |msg: &str| Error::runtime(format!("Workflow step {id} {msg}"));
    let raw = match step.get("input") {
        None => return Ok(None),
        Some(Value::Object(o)) => o,
        Some(_) => return Err(err("input must be an object")),
    };
    let Some(Value::String(prompt)) = raw.get("prompt") else {
        return Err(err("input.prompt must be a string"));
    };
    let schema = match raw.get("responseSchema") {
        Some(s @ (Value::Object(_) | Value::Array(_) | Value::Null)) => s.clone(),
        _ => return Err(err("input.responseSchema must be an object")),
    };
    crate::schema::Schema::compile(&schema)
        .map_err(|e| err(&format!("input.responseSchema is invalid: {e}")))?;
    Ok(Some(InputSpec {
        prompt: prompt.clone(),
        response_schema: schema,
        defaults: raw.get("defaults").cloned(),
    }))
}

pub(super) fn validate_approval(step: &Object, id: &str) -> Result<Option<Approval>> {
    let raw = step.get("approval");
    if !is_approval(raw) {
        return Ok(None);
    }
    let Some(Value::Object(o)) = raw else {
        // `true`, "required", or a prompt string.
        let prompt = raw
            .and_then(Value::as_str)
            .filter(|s| *s != "required")
            .map(str::to_string);
        return Ok(Some(Approval {
            prompt,
            min_approvals: 1,
            ..Approval::default()
        }));
    };
    for key in [
        "initiated_by",
        "initiatedBy",
        "required_approver",
        "requiredApprover",
    ] {
        if o.get(key).is_some_and(|v| !matches!(v, Value::String(_))) {
            return Err(Error::runtime(format!(
                "Workflow step {id} approval.{key} must be a string"
            )));
        }
    }
    let approvers = match o.get("approvers") {
        None => Approvers::Any,
        Some(Value::String(s)) if s == "any" => Approvers::Any,
        Some(Value::String(s)) if s == "human" => Approvers::Human,
        Some(other) => {
            return Err(Error::runtime(format!(
                "Workflow step {id} approval.approvers must be human or any, not {}",
                other.to_json()
            )));
        }
    };
    let verified = match o.get("presence") {
        None => false,
        Some(Value::String(s)) if s == "any" => false,
        Some(Value::String(s)) if s == "verified" => true,
        Some(other) => {
            return Err(Error::runtime(format!(
                "Workflow step {id} approval.presence must be verified or any, not {}",
                other.to_json()
            )));
        }
    };
    if verified && o.get("approvers").is_some() && approvers != Approvers::Human {
        return Err(Error::runtime(format!(
            "Workflow step {id} approval.presence: verified needs a person, so approvers must be human"
        )));
    }
    let approvers = if verified {
        Approvers::Human
    } else {
        approvers
    };
    let min_approvals = match o.get("min_approvals") {
        None => 1,
        Some(Value::Number(n)) if n.fract() == 0.0 && (1.0..=100.0).contains(n) => *n as u32,
        Some(other) => {
            return Err(Error::runtime(format!(
                "Workflow step {id} approval.min_approvals must be an integer from 1 to 100, not {}",
                other.to_json()
            )));
        }
    };
    let expires_in = match o.get("expires_in") {
        None => None,
        Some(Value::String(s)) if duration_secs(s).is_some() => duration_secs(s),
        Some(other) => {
            return Err(Error::runtime(format!(
                "Workflow step {id} approval.expires_in must be a duration such as 30s, 30m, 2h or 1d, not {}",
                other.to_json()
            )));
        }
    };
    let on_expiry = match o.get("on_expiry").and_then(Value::as_str) {
        None if o.get("on_expiry").is_none() => OnExpiry::Cancel,
        Some("cancel") => OnExpiry::Cancel,
        Some("deny") => OnExpiry::Deny,
        Some("approve") => OnExpiry::Approve,
        _ => {
            return Err(Error::runtime(format!(
                "Workflow step {id} approval.on_expiry must be cancel, deny or approve"
            )));
        }
    };
    let forbid_self_approval = match o.get("forbid_self_approval") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(Error::runtime(format!(
                "Workflow step {id} approval.forbid_self_approval must be true or false, not {}",
                other.to_json()
            )));
        }
    };
    for key in ["require_different_approver", "requireDifferentApprover"] {
        if o.get(key).is_some_and(|v| !matches!(v, Value::Bool(_))) {
            return Err(Error::runtime(format!(
                "Workflow step {id} approval.{key} must be a boolean"
            )));
        }
    }
    let text = |camel: &str, snake: &str| {
        o.get(camel)
            .or_else(|| o.get(snake))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Ok(Some(Approval {
        prompt: o.get("prompt").and_then(Value::as_str).map(str::to_string),
        items: o
            .get("items")
            .filter(|v| matches!(v, Value::Array(_)))
            .cloned(),
        preview: o.get("preview").and_then(Value::as_str).map(str::to_string),
        initiated_by: text("initiatedBy", "initiated_by"),
        required_approver: text("requiredApprover", "required_approver"),
        require_different_approver: o
            .get("requireDifferentApprover")
            .or_else(|| o.get("require_different_approver"))
            .and_then(|v| match v {
                Value::Bool(b) => Some(*b),
                _ => None,
            }),
        approvers,
        verified,
        min_approvals,
        expires_in,
        on_expiry,
        forbid_self_approval,
    }))
}

fn validate_retry(raw: Option<&Value>, id: &str) -> Result<Option<Retry>> {
    let Some(raw) = raw else { return Ok(None) };
    let err = |msg: &str| Error::runtime(format!("Workflow step {id} {msg}"));
    let Value::Object(r) = raw else {
        return Err(err("retry must be an object"));
    };
    let max = match r.get("max") {
        None => 1,
        Some(Value::Number(n)) if n.fract() == 0.0 && *n >= 1.0 => n.min(u32::MAX as f64) as u32,
        Some(_) => return Err(err("retry.max must be a positive integer")),
    };
    let exponential = match r.get("backoff") {
        None => false,
        Some(Value::String(s)) if s == "fixed" => false,
        Some(Value::String(s)) if s == "exponential" => true,
        Some(_) => return Err(err("retry.backoff must be \"fixed\" or \"exponential\"")),
    };
    let ms = |key: &str| -> Result<Option<f64>> {
        match r.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) if n.is_finite() && *n >= 0.0 => Ok(Some(*n)),
            Some(_) => Err(err(&format!(
                "retry.{key} must be a finite non-negative number"
            ))),
        }
    };
    let delay_ms = ms("delay_ms")?.unwrap_or(1000.0);
    let max_delay_ms = ms("max_delay_ms")?.unwrap_or(30_000.0);
    let jitter = match r.get("jitter") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(err("retry.jitter must be a boolean")),
    };
    Ok(Some(Retry {
        max,
        exponential,
        delay_ms,
        max_delay_ms,
        jitter,
    }))
}

#[cfg(test)]
mod path_tests {
    use super::*;

    /// Regression: `graph` checked its path like `run` only after reading
    /// it, so a missing file said `open` and a `.txt` file was graphed.
    #[test]
    fn workflow_paths_are_checked_like_lobster() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("wf.txt"), "steps: []").unwrap();
        std::fs::create_dir(dir.path().join("d.lobster")).unwrap();
        std::fs::write(dir.path().join("wf.YML"), "steps: []").unwrap();
        let missing = resolve_path("nope.lobster", dir.path()).unwrap_err();
        assert!(
            missing.starts_with("ENOENT: no such file or directory, stat '"),
            "{missing}"
        );
        assert_eq!(
            resolve_path("wf.txt", dir.path()).unwrap_err(),
            "Workflow file must end in .lobster, .yaml, .yml, or .json"
        );
        assert_eq!(
            resolve_path("d.lobster", dir.path()).unwrap_err(),
            "Workflow path is not a file"
        );
        assert!(resolve_path("wf.YML", dir.path()).is_ok());
    }

    /// Regression: `.inf` and `.nan` are numbers in YAML 1.2 (the parser
    /// refused the whole file).
    #[test]
    fn non_finite_yaml_floats_are_numbers() {
        let v = parse_yaml("a: .inf\nb: -.Inf\nc: .nan\n").unwrap();
        assert_eq!(v.get_key("a"), Some(&Value::Number(f64::INFINITY)));
        assert_eq!(v.get_key("b"), Some(&Value::Number(f64::NEG_INFINITY)));
        assert!(matches!(v.get_key("c"), Some(Value::Number(n)) if n.is_nan()));
        assert_eq!(v.to_json(), r#"{"a":null,"b":null,"c":null}"#);
    }
}

#[cfg(test)]
mod approval_tests {
    use super::*;

    #[test]
    fn approvers_is_human_or_any() {
        let load = |approvers: &str| {
            let text = format!(
                "steps:\n  - id: g\n    approval:\n      prompt: ok?\n      approvers: {approvers}\n"
            );
            from_value(&parse_yaml(&text).unwrap(), Path::new("wf.lobster"))
        };
        let gate = |wf: Workflow| wf.steps[0].approval.clone().unwrap().approvers;
        assert_eq!(gate(load("human").unwrap()), Approvers::Human);
        assert_eq!(gate(load("any").unwrap()), Approvers::Any);
        let err = load("agents").unwrap_err();
        assert_eq!(
            err.message,
            "Workflow step g approval.approvers must be human or any, not \"agents\""
        );
        let plain = from_value(
            &parse_yaml("steps:\n  - id: g\n    approval: required\n").unwrap(),
            Path::new("wf.lobster"),
        )
        .unwrap();
        assert_eq!(gate(plain), Approvers::Any, "Lobster's gate is anyone's");
    }

    #[test]
    fn presence_verified_makes_a_human_gate() {
        let load = |policy: &str| {
            let text = format!("steps:\n  - id: g\n    approval:\n      prompt: ok?\n{policy}");
            from_value(&parse_yaml(&text).unwrap(), Path::new("wf.lobster"))
                .map(|wf| wf.steps[0].approval.clone().unwrap())
        };
        let gate = load("      presence: verified\n").unwrap();
        assert!(gate.verified && gate.has_policy());
        assert_eq!(gate.approvers, Approvers::Human);
        assert!(!load("      presence: any\n").unwrap().verified);
        assert_eq!(
            load("      presence: yes\n").unwrap_err().message,
            "Workflow step g approval.presence must be verified or any, not \"yes\""
        );
        assert_eq!(
            load("      presence: verified\n      approvers: any\n")
                .unwrap_err()
                .message,
            "Workflow step g approval.presence: verified needs a person, so approvers must be human"
        );
    }

    #[test]
    fn expires_in_is_a_duration_and_on_expiry_an_outcome() {
        let load = |policy: &str| {
            let text = format!("steps:\n  - id: g\n    approval:\n{policy}");
            from_value(&parse_yaml(&text).unwrap(), Path::new("wf.lobster"))
        };
        let gate = |wf: Workflow| wf.steps[0].approval.clone().unwrap();
        let a = gate(load("      expires_in: 30m\n      on_expiry: approve\n").unwrap());
        assert_eq!((a.expires_in, a.on_expiry), (Some(1800), OnExpiry::Approve));
        let a = gate(load("      expires_in: 2h\n").unwrap());
        assert_eq!((a.expires_in, a.on_expiry), (Some(7200), OnExpiry::Cancel));
        assert_eq!(
            gate(load("      expires_in: 1d\n").unwrap()).expires_in,
            Some(86_400)
        );
        for bad in ["0s", "10", "5w", "1.5h", "m"] {
            let err = load(&format!("      expires_in: \"{bad}\"\n")).unwrap_err();
            assert!(
                err.message.contains("expires_in must be a duration"),
                "{bad}: {}",
                err.message
            );
        }
        let err = load("      on_expiry: later\n").unwrap_err();
        assert!(
            err.message
                .contains("on_expiry must be cancel, deny or approve")
        );
    }

    #[test]
    fn min_approvals_is_a_small_positive_integer() {
        let load = |min: &str| {
            let text = format!("steps:\n  - id: g\n    approval:\n      min_approvals: {min}\n");
            from_value(&parse_yaml(&text).unwrap(), Path::new("wf.lobster"))
        };
        assert_eq!(
            load("3").unwrap().steps[0]
                .approval
                .clone()
                .unwrap()
                .min_approvals,
            3
        );
        for bad in ["0", "1.5", "101", "two"] {
            assert!(
                load(bad)
                    .unwrap_err()
                    .message
                    .contains("min_approvals must be an integer from 1 to 100"),
                "{bad}"
            );
        }
        let plain = from_value(
            &parse_yaml("steps:\n  - id: g\n    approval: true\n").unwrap(),
            Path::new("wf.lobster"),
        )
        .unwrap();
        assert_eq!(plain.steps[0].approval.clone().unwrap().min_approvals, 1);
    }

    #[test]
    fn forbid_self_approval_is_a_boolean_and_a_policy() {
        let load = |value: &str| {
            let text =
                format!("steps:\n  - id: g\n    approval:\n      forbid_self_approval: {value}\n");
            from_value(&parse_yaml(&text).unwrap(), Path::new("wf.lobster"))
        };
        let gate = load("true").unwrap().steps[0].approval.clone().unwrap();
        assert!(gate.forbid_self_approval && gate.has_policy());
        let gate = load("false").unwrap().steps[0].approval.clone().unwrap();
        assert!(!gate.forbid_self_approval && !gate.has_policy());
        let e = load("yes please").unwrap_err();
        assert!(
            e.message
                .contains("forbid_self_approval must be true or false"),
            "{}",
            e.message
        );
    }
}
