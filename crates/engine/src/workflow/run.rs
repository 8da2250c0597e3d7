//! Executing workflow steps: conditions, templating, shell / pipeline /
//! sub-workflow / parallel / for_each steps, retries, timeouts, error
//! policies, and approval and input gates.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::context::{Ctx, Env, Mode, Sink};
use crate::error::{Error, Result};
use crate::items::Items;
use crate::parser::parse_pipeline;
use crate::process::{run_process, shell_command};
use crate::runtime::run_pipeline;
use crate::value::{Object, Value, is_js_space};

use super::condition;
use super::file::{self, Branch, Exec, ForEach, OnError, Parallel, Step, Workflow};
use super::template::{resolve, resolve_args, strict_lookup, whole_ref};

/// A boxed future (for recursion through sub-workflows and loops).
type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a run paused.
#[derive(Debug)]
pub enum Gate {
    /// At an approval gate: the request block and the identity to check on resume.
    Approval {
        /// The step id.
        step_id: String,
        /// `{type, prompt, items, preview?, initiatedBy?, ...}`.
        request: Object,
        /// `{initiatedBy?, requiredApprover?, requireDifferentApprover?}`.
        identity: Object,
    },
    /// At an input gate.
    Input {
        /// The step id.
        step_id: String,
        /// `{type, prompt, responseSchema, defaults?, subject?}`.
        request: Object,
        /// The subject shown with the request.
        subject: Option<Value>,
    },
}

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    /// Finished with these output items.
    Done(Vec<Value>),
    /// Paused at a gate; `resume_at` is the next step index.
    Paused {
        /// The gate.
        gate: Gate,
        /// Index of the step to continue with.
        resume_at: usize,
        /// Step results so far.
        results: Object,
    },
}

/// The state of one workflow run.
pub struct Run<'a> {
    /// The workflow.
    pub workflow: &'a Workflow,
    /// Resolved args.
    pub args: Object,
    /// Step results by id.
    pub results: Object,
    /// The last completed step.
    pub last: Option<String>,
    /// Files being executed (cycle detection for sub-workflows).
    pub stack: Vec<PathBuf>,
    /// Whether this is a sub-workflow (gates are errors there).
    pub nested: bool,
}

/// `defaults ← Object.entries(provided)`.
pub fn resolve_workflow_args(workflow: &Workflow, provided: &Value) -> Object {
    let mut args = Object::new();
    for (name, default) in &workflow.args {
        if let Some(d) = default {
            args.insert(name.clone(), d.clone());
        }
    }
    match provided {
        Value::Object(o) => {
            for (k, v) in o.iter() {
                args.insert(k, v.clone());
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                args.insert(i.to_string(), v.clone());
            }
        }
        Value::String(s) => {
            for (i, u) in s.encode_utf16().enumerate() {
                args.insert(i.to_string(), Value::String(String::from_utf16_lossy(&[u])));
            }
        }
        _ => {}
    }
    args
}

/// `LOBSTER_ARG_<NAME>`: upper-cased, runs of non-`[A-Z0-9]` become `_`.
fn arg_env_key(key: &str) -> Option<String> {
    let up = key.trim_matches(is_js_space).to_uppercase();
    let mut out = String::new();
    for c in up.chars() {
        if c.is_ascii_uppercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches('_');
    (!out.is_empty()).then(|| out.to_string())
}

/// A step's result object: `{id, ...fields}`.
fn result(id: &str) -> Object {
    Object::from_iter([("id", Value::from(id))])
}

/// `JSON.parse(stdout.trim())`, or `None` when it is not JSON.
fn parse_json_stdout(stdout: &str) -> Option<Value> {
    let t = stdout.trim_matches(is_js_space);
    if t.is_empty() { None } else { Value::from_json(t).ok() }
}

/// Output items of a step result: json (spread), else response, else stdout.
pub fn output_items(result: Option<&Value>) -> Vec<Value> {
    let Some(r) = result else { return Vec::new() };
    if let Some(json) = r.get_key("json") {
        return match json {
            Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        };
    }
    if let Some(resp) = r.get_key("response") {
        return match resp {
            Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        };
    }
    match r.get_key("stdout") {
        Some(Value::String(s)) if !s.is_empty() => vec![Value::String(s.clone())],
        _ => Vec::new(),
    }
}

/// A resolved step input: absent, text, or a value.
#[derive(Clone, Debug)]
enum StdinValue {
    None,
    Text(String),
    Value(Value),
}

impl StdinValue {
    /// Bytes for a shell command's stdin.
    fn shell_bytes(&self) -> Option<Vec<u8>> {
        match self {
            StdinValue::None | StdinValue::Value(Value::Null) => None,
            StdinValue::Text(s) | StdinValue::Value(Value::String(s)) => Some(s.clone().into_bytes()),
            StdinValue::Value(v) => Some(v.to_json().into_bytes()),
        }
    }

    /// Items for a pipeline step.
    fn items(&self) -> Vec<Value> {
        match self {
            StdinValue::None | StdinValue::Value(Value::Null) => Vec::new(),
            StdinValue::Text(s) => vec![Value::String(s.clone())],
            StdinValue::Value(Value::Array(a)) => a.clone(),
            StdinValue::Value(v) => vec![v.clone()],
        }
    }
}

/// The step environment, working directory and inputs, resolved.
struct Prepared {
    env: Arc<Env>,
    cwd: PathBuf,
    stdin: StdinValue,
}

impl Run<'_> {
    fn env_for(&self, ctx: &Ctx, layers: &[Option<&Object>]) -> Arc<Env> {
        let mut env = (*ctx.env).clone();
        env.insert("LOBSTER_ARGS_JSON".into(), Value::Object(self.args.clone()).to_json());
        for (k, v) in self.args.iter() {
            if let Some(key) = arg_env_key(k) {
                env.insert(format!("LOBSTER_ARG_{key}"), v.to_js_string());
            }
        }
        for layer in layers.iter().flatten() {
            for (k, v) in layer.iter() {
                if let Value::String(s) = v {
                    env.insert(k.to_string(), resolve(s, &self.args, &self.results));
                }
            }
        }
        Arc::new(env)
    }

    fn cwd_for(&self, ctx: &Ctx, cwd: Option<&str>) -> PathBuf {
        match cwd.or(self.workflow.cwd.as_deref()) {
            Some(c) if !c.is_empty() => ctx.cwd.join(resolve_args(c, &self.args)),
            _ => ctx.cwd.clone(),
        }
    }

    fn stdin_for(&self, stdin: Option<&Value>) -> Result<StdinValue> {
        match stdin {
            None | Some(Value::Null) => Ok(StdinValue::None),
            Some(Value::String(s)) => match whole_ref(s) {
                Some((id, path)) => Ok(strict_lookup(&self.results, &id, &path)?.map_or(StdinValue::None, StdinValue::Value)),
                None => Ok(StdinValue::Text(resolve(s, &self.args, &self.results))),
            },
            Some(other) => Ok(StdinValue::Value(other.clone())),
        }
    }

    fn prepare(&self, ctx: &Ctx, env: Option<&Object>, cwd: Option<&str>, stdin: Option<&Value>) -> Result<Prepared> {
        Ok(Prepared {
            env: self.env_for(ctx, &[self.workflow.env.as_ref(), env]),
            cwd: self.cwd_for(ctx, cwd),
            stdin: self.stdin_for(stdin)?,
        })
    }

    /// Runs the steps from `start`, returning the outcome.
    pub fn run_from<'s>(&'s mut self, start: usize, ctx: &'s Ctx) -> BoxFuture<'s, Result<Outcome>> {
        Box::pin(async move {
            let steps = &self.workflow.steps;
            for idx in start..steps.len() {
                let step = &steps[idx];
                if !condition::evaluate(step.when.as_ref(), &self.results)? {
                    let mut r = result(&step.id);
                    r.insert("skipped", Value::Bool(true));
                    self.results.insert(step.id.clone(), Value::Object(r));
                    continue;
                }
                if let Some(input) = &step.input {
                    if self.nested {
                        return Err(Error::runtime(format!("Workflow step {} requested input inside a sub-workflow", step.id)));
                    }
                    let subject = match &step.stdin {
                        Some(_) => match self.stdin_for(step.stdin.as_ref())? {
                            StdinValue::None => None,
                            StdinValue::Text(t) => Some(Value::String(t)),
                            StdinValue::Value(v) => Some(v),
                        },
                        None => self.last.as_ref().and_then(|l| self.results.get(l)).and_then(|r| {
                            r.get_key("json").or_else(|| r.get_key("response")).or_else(|| r.get_key("stdout")).cloned()
                        }),
                    };
                    let mut request = Object::new();
                    request.insert("type", Value::from("input_request"));
                    request.insert("prompt", Value::from(input.prompt.as_str()));
                    request.insert("responseSchema", input.response_schema.clone());
                    if let Some(d) = &input.defaults {
                        request.insert("defaults", d.clone());
                    }
                    if let Some(s) = &subject {
                        request.insert("subject", s.clone());
                    }
                    if ctx.mode == Mode::Human && ctx.stdin_is_tty {
                        let response = prompt_input(&input.prompt, &input.response_schema, &step.id).await?;
                        let mut r = result(&step.id);
                        if let Some(s) = subject {
                            r.insert("subject", s);
                        }
                        r.insert("response", response);
                        self.results.insert(step.id.clone(), Value::Object(r));
                        self.last = Some(step.id.clone());
                        continue;
                    }
                    return Ok(Outcome::Paused {
                        gate: Gate::Input { step_id: step.id.clone(), request, subject },
                        resume_at: idx + 1,
                        results: self.results.clone(),
                    });
                }

                match self.execute_with_policies(step, ctx).await {
                    Ok(r) => {
                        store_result(&mut self.results, &step.id, r);
                        self.last = Some(step.id.clone());
                    }
                    Err(e) => match step.on_error {
                        OnError::Stop => return Err(e),
                        OnError::Continue | OnError::SkipRest => {
                            let mut r = result(&step.id);
                            r.insert("error", Value::Bool(true));
                            r.insert("errorMessage", Value::from(e.message));
                            self.results.insert(step.id.clone(), Value::Object(r));
                            if step.on_error == OnError::SkipRest {
                                break;
                            }
                            continue;
                        }
                    },
                }

                if let Some(approval) = &step.approval {
                    if self.nested {
                        return Err(Error::runtime(format!("Workflow step {} requested approval inside a sub-workflow", step.id)));
                    }
                    let step_result = self.results.get(&step.id).cloned().unwrap_or_default();
                    let (request, identity) = approval_request(step, approval, &step_result, ctx);
                    if ctx.mode == Mode::Human && ctx.stdin_is_tty {
                        let prompt = request.get("prompt").map(Value::to_js_string).unwrap_or_default();
                        ctx.stdout.write(&format!("{prompt} [y/N] "));
                        let answer = read_line().await?;
                        let answer = answer.trim().to_ascii_lowercase();
                        if answer != "y" && answer != "yes" {
                            return Err(Error::runtime("Not approved"));
                        }
                        if let Some(Value::Object(r)) = self.results.get(&step.id).cloned() {
                            let mut r = r;
                            r.insert("approved", Value::Bool(true));
                            self.results.insert(step.id.clone(), Value::Object(r));
                        }
                        continue;
                    }
                    return Ok(Outcome::Paused {
                        gate: Gate::Approval { step_id: step.id.clone(), request, identity },
                        resume_at: idx + 1,
                        results: self.results.clone(),
                    });
                }
            }
            Ok(Outcome::Done(output_items(self.last.as_ref().and_then(|l| self.results.get(l)))))
        })
    }

    /// One step with its timeout, retries and backoff.
    fn execute_with_policies<'s>(&'s self, step: &'s Step, ctx: &'s Ctx) -> BoxFuture<'s, Result<Object>> {
        Box::pin(async move {
            let max = step.retry.as_ref().map_or(1, |r| r.max.max(1));
            let mut attempt = 1;
            loop {
                let outcome = match step.timeout_ms {
                    Some(ms) => tokio::time::timeout(Duration::from_millis(ms), self.execute(step, ctx))
                        .await
                        .unwrap_or_else(|_| Err(Error::runtime(format!("Step '{}' timed out after {ms}ms", step.id)))),
                    None => self.execute(step, ctx).await,
                };
                match outcome {
                    Ok(r) => return Ok(r),
                    Err(e) if attempt < max => {
                        let delay = retry_delay(step, attempt);
                        eprint!(
                            "[RETRY] Step '{}' failed (attempt {attempt}/{max}): {}. Retrying in {}ms...\n",
                            step.id,
                            e.message,
                            crate::value::format_number(delay)
                        );
                        tokio::time::sleep(Duration::from_millis(delay.max(0.0) as u64)).await;
                        attempt += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        })
    }

    /// One attempt of a step.
    fn execute<'s>(&'s self, step: &'s Step, ctx: &'s Ctx) -> BoxFuture<'s, Result<Object>> {
        Box::pin(async move {
            match &step.exec {
                Exec::Shell(cmd) => {
                    let p = self.prepare(ctx, step.env.as_ref(), step.cwd.as_deref(), step.stdin.as_ref())?;
                    let command = resolve(cmd, &self.args, &self.results);
                    run_shell_step(&step.id, &command, &p, ctx).await
                }
                Exec::Pipeline(text) => {
                    let p = self.prepare(ctx, step.env.as_ref(), step.cwd.as_deref(), step.stdin.as_ref())?;
                    let text = resolve(text, &self.args, &self.results);
                    run_pipeline_step(&step.id, &text, &p, ctx).await
                }
                Exec::Workflow { path, args } => {
                    let p = self.prepare(ctx, step.env.as_ref(), step.cwd.as_deref(), step.stdin.as_ref())?;
                    self.run_sub_workflow(step, path, args.as_ref(), &p, ctx).await
                }
                Exec::Parallel(par) => self.run_parallel(step, par, ctx).await,
                Exec::ForEach(fe) => self.run_for_each(step, fe, ctx).await,
                Exec::None => {
                    let mut r = result(&step.id);
                    match self.stdin_for(step.stdin.as_ref())? {
                        StdinValue::None => {}
                        StdinValue::Text(t) | StdinValue::Value(Value::String(t)) => {
                            if let Some(j) = parse_json_stdout(&t) {
                                r.insert("json", j);
                            }
                            r.insert("stdout", Value::String(t));
                        }
                        StdinValue::Value(v) => r.insert("json", v),
                    }
                    Ok(r)
                }
            }
        })
    }

    async fn run_sub_workflow(&self, step: &Step, path: &str, args: Option<&Value>, p: &Prepared, ctx: &Ctx) -> Result<Object> {
        let rel = resolve(path, &self.args, &self.results);
        let base = self.workflow.path.parent().unwrap_or(Path::new("."));
        let abs = normalize(&base.join(rel));
        if self.stack.contains(&abs) {
            return Err(Error::runtime(format!(
                "Workflow step {} creates a cycle: {} is already being executed",
                step.id,
                abs.display()
            )));
        }
        if !abs.is_file() {
            return Err(Error::runtime(format!("Workflow step {} workflow file not found: {}", step.id, abs.display())));
        }
        let wf = file::load(&abs)?;
        let provided = match args {
            Some(Value::Object(o)) => Value::Object(
                o.iter()
                    .map(|(k, v)| {
                        let v = match v {
                            Value::String(s) => Value::String(resolve(s, &self.args, &self.results)),
                            other => other.clone(),
                        };
                        (k, v)
                    })
                    .collect(),
            ),
            Some(other) => other.clone(),
            None => Value::Object(Object::new()),
        };
        let mut stack = self.stack.clone();
        stack.push(abs);
        let sub_ctx = Ctx { env: p.env.clone(), cwd: ctx.cwd.clone(), ..ctx.clone() };
        let mut sub = Run { workflow: &wf, args: resolve_workflow_args(&wf, &provided), results: Object::new(), last: None, stack, nested: true };
        let output = match sub.run_from(0, &sub_ctx).await? {
            Outcome::Done(items) => items,
            Outcome::Paused { .. } => {
                return Err(Error::runtime(format!("Workflow step {} sub-workflow paused at a gate", step.id)));
            }
        };
        let json = if output.len() == 1 { output.into_iter().next().unwrap_or_default() } else { Value::Array(output) };
        let mut r = result(&step.id);
        r.insert("stdout", Value::String(json.to_json()));
        r.insert("json", json);
        Ok(r)
    }

    async fn run_branch(&self, branch: &Branch, ctx: &Ctx) -> Result<Object> {
        let p = self.prepare(ctx, branch.env.as_ref(), branch.cwd.as_deref(), branch.stdin.as_ref())?;
        match &branch.exec {
            Exec::Pipeline(text) => run_pipeline_step(&branch.id, &resolve(text, &self.args, &self.results), &p, ctx).await,
            Exec::Shell(cmd) => run_shell_step(&branch.id, &resolve(cmd, &self.args, &self.results), &p, ctx).await,
            _ => Err(Error::runtime(format!("Parallel branch {} has nothing to run", branch.id))),
        }
    }

    fn run_parallel<'s>(&'s self, step: &'s Step, par: &'s Parallel, ctx: &'s Ctx) -> BoxFuture<'s, Result<Object>> {
        Box::pin(async move {
            let work = async {
                let futures: Vec<_> = par.branches.iter().map(|b| Box::pin(self.run_branch(b, ctx))).collect();
                if par.wait_any {
                    let (first, idx, _rest) = futures::future::select_all(futures).await;
                    let branch = &par.branches[idx];
                    let r = first.map_err(|e| Error::runtime(format!("Parallel branch failed: {}", e.message)))?;
                    Ok(vec![(branch.id.clone(), r)])
                } else {
                    let results = futures::future::join_all(futures).await;
                    let mut out = Vec::new();
                    for (b, r) in par.branches.iter().zip(results) {
                        out.push((b.id.clone(), r.map_err(|e| Error::runtime(format!("Parallel branch failed: {}", e.message)))?));
                    }
                    Ok(out)
                }
            };
            let branches: Vec<(String, Object)> = match par.timeout_ms {
                Some(ms) => tokio::time::timeout(Duration::from_millis(ms), work)
                    .await
                    .unwrap_or_else(|_| Err(Error::runtime(format!("Parallel step {} timed out after {ms}ms", step.id))))?,
                None => work.await?,
            };
            let mut merged = Object::new();
            let mut r = result(&step.id);
            let mut branch_results = Object::new();
            for (id, br) in branches {
                if let Some(j) = br.get("json") {
                    merged.insert(id.clone(), j.clone());
                }
                branch_results.insert(id, Value::Object(br));
            }
            let json = Value::Object(merged);
            r.insert("stdout", Value::String(json.to_json()));
            r.insert("json", json);
            r.insert("branches", Value::Object(branch_results));
            Ok(r)
        })
    }

    fn run_for_each<'s>(&'s self, step: &'s Step, fe: &'s ForEach, ctx: &'s Ctx) -> BoxFuture<'s, Result<Object>> {
        Box::pin(async move {
            let collection = match &fe.over {
                Value::String(s) => match whole_ref(s) {
                    Some((id, path)) => strict_lookup(&self.results, &id, &path)?,
                    None => Some(Value::String(resolve(s, &self.args, &self.results))),
                },
                other => Some(other.clone()),
            };
            let items = match collection {
                Some(Value::Array(items)) => items,
                other => {
                    let type_name = other.as_ref().map_or("undefined", Value::type_of);
                    return Err(Error::runtime(format!("Workflow step {} for_each: expected array, got {type_name}", step.id)));
                }
            };
            let mut iterations = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                if let (Some(batch), Some(pause)) = (fe.batch_size, fe.pause_ms)
                    && i > 0
                    && (i as u64) % batch == 0
                {
                    tokio::time::sleep(Duration::from_millis(pause)).await;
                }
                let mut results = self.results.clone();
                results.insert(fe.item_var.clone(), Value::Object(Object::from_iter([("json", item.clone())])));
                results.insert(fe.index_var.clone(), Value::Object(Object::from_iter([("json", Value::from(i))])));
                let mut inner = Run {
                    workflow: self.workflow,
                    args: self.args.clone(),
                    results,
                    last: None,
                    stack: self.stack.clone(),
                    nested: true,
                };
                let mut row = Object::new();
                row.insert(fe.item_var.clone(), item);
                row.insert(fe.index_var.clone(), Value::from(i));
                for sub in &fe.steps {
                    if !condition::evaluate(sub.when.as_ref(), &inner.results)? {
                        let mut r = result(&sub.id);
                        r.insert("skipped", Value::Bool(true));
                        inner.results.insert(sub.id.clone(), Value::Object(r));
                        continue;
                    }
                    match inner.execute_with_policies(sub, ctx).await {
                        Ok(r) => {
                            let value = r.get("json").or_else(|| r.get("stdout")).cloned();
                            if let Some(v) = value {
                                row.insert(sub.id.clone(), v);
                            }
                            store_result(&mut inner.results, &sub.id, r);
                        }
                        Err(e) => match sub.on_error {
                            OnError::Stop => return Err(e),
                            OnError::Continue | OnError::SkipRest => {
                                let mut r = result(&sub.id);
                                r.insert("error", Value::Bool(true));
                                r.insert("errorMessage", Value::from(e.message));
                                inner.results.insert(sub.id.clone(), Value::Object(r));
                                if sub.on_error == OnError::SkipRest {
                                    break;
                                }
                            }
                        },
                    }
                }
                iterations.push(Value::Object(row));
            }
            let json = Value::Array(iterations);
            let mut r = result(&step.id);
            r.insert("stdout", Value::String(json.to_json()));
            r.insert("json", json);
            Ok(r)
        })
    }
}

/// Stores a step result; a parallel step's branch results are stored
/// under their own ids too.
fn store_result(results: &mut Object, id: &str, mut r: Object) {
    if let Some(Value::Object(branches)) = r.remove("branches") {
        for (bid, br) in branches {
            results.insert(bid, br);
        }
    }
    results.insert(id.to_string(), Value::Object(r));
}

/// Lexically normalises `a/./b/../c` (no symlink resolution).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Delay before retrying after failed attempt `attempt` (1-based), in whole ms.
fn retry_delay(step: &Step, attempt: u32) -> f64 {
    let Some(r) = &step.retry else { return 0.0 };
    let mut d = if r.exponential { (r.delay_ms * 2f64.powi(attempt as i32 - 1)).min(r.max_delay_ms) } else { r.delay_ms };
    if r.jitter {
        let unit = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0;
        d = (d + (unit * 2.0 - 1.0) * d * 0.1).min(r.max_delay_ms);
    }
    d.round().max(0.0)
}

async fn run_shell_step(id: &str, command: &str, p: &Prepared, _ctx: &Ctx) -> Result<Object> {
    let (program, argv) = shell_command(command, &p.env);
    let out = run_process(&program, &argv, &p.env, &p.cwd, p.stdin.shell_bytes()).await.map_err(|e| {
        Error::runtime(if e.kind() == std::io::ErrorKind::NotFound {
            "workflow shell not found; check LOBSTER_SHELL".to_string()
        } else {
            format!("workflow command could not start: {e}")
        })
    })?;
    if out.code != Some(0) {
        let detail = [out.stderr.trim_matches(is_js_space), out.stdout.trim_matches(is_js_space)]
            .into_iter()
            .find(|s| !s.is_empty())
            .unwrap_or(command)
            .to_string();
        return Err(Error::runtime(format!("workflow command failed ({}): {detail}", out.code_text())));
    }
    let mut r = result(id);
    let json = parse_json_stdout(&out.stdout);
    r.insert("stdout", Value::String(out.stdout));
    if let Some(j) = json {
        r.insert("json", j);
    }
    Ok(r)
}

async fn run_pipeline_step(id: &str, text: &str, p: &Prepared, ctx: &Ctx) -> Result<Object> {
    let stages = parse_pipeline(text).map_err(|e| Error::runtime(format!("Workflow step {id} pipeline parse failed: {}", e.message)))?;
    let sink = Sink::buffer();
    let pctx = Ctx { env: p.env.clone(), cwd: p.cwd.clone(), stdout: sink.clone(), resume_response: None, ..ctx.clone() };
    let res = run_pipeline(&stages, Items::List(p.stdin.items()), &pctx).await?;
    if let Some((idx, _)) = res.halted {
        return Err(Error::runtime(format!(
            "Workflow step {id} halted for approval inside pipeline stage {}. Use a separate approval step in the workflow file.",
            stages[idx].name
        )));
    }
    let rendered = sink.captured();
    let mut r = result(id);
    if res.rendered && res.items.is_empty() {
        if let Some(j) = parse_json_stdout(&rendered) {
            r.insert("json", j);
        }
        r.insert("stdout", Value::String(rendered));
        return Ok(r);
    }
    let json = if res.items.len() == 1 { res.items[0].clone() } else { Value::Array(res.items.clone()) };
    let stdout = if res.items.iter().all(|i| matches!(i, Value::String(_))) {
        res.items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n")
    } else {
        json.to_json()
    };
    r.insert("stdout", Value::String(if res.rendered { rendered + &stdout } else { stdout }));
    r.insert("json", json);
    Ok(r)
}

/// Builds the approval request and identity for a gate step.
fn approval_request(step: &Step, cfg: &file::Approval, step_result: &Value, ctx: &Ctx) -> (Object, Object) {
    let mut request = Object::new();
    request.insert("type", Value::from("approval_request"));
    let json = step_result.get_key("json");
    let from_output = json.and_then(Value::as_object).and_then(|o| {
        let nested = o.get("requiresApproval").and_then(Value::as_object).filter(|r| r.get("prompt").is_some_and(Value::truthy));
        nested.or_else(|| Some(o).filter(|o| o.get("prompt").is_some_and(Value::truthy)))
    });
    if let Some(src) = from_output {
        request.insert("prompt", src.get("prompt").cloned().unwrap_or_default());
        request.insert("items", src.get("items").cloned().unwrap_or(Value::Array(Vec::new())));
        if let Some(p) = src.get("preview").filter(|p| p.truthy()) {
            request.insert("preview", p.clone());
        }
    } else {
        let prompt = cfg.prompt.clone().unwrap_or_else(|| format!("Approve {}?", step.id));
        request.insert("prompt", Value::from(prompt));
        let items = cfg.items.clone().unwrap_or_else(|| match json {
            Some(Value::Array(a)) => Value::Array(a.clone()),
            Some(other) => Value::Array(vec![other.clone()]),
            None => Value::Array(Vec::new()),
        });
        request.insert("items", items);
        let stdout = step_result.get_key("stdout").and_then(Value::as_str).map(|s| s.trim_matches(is_js_space)).filter(|s| !s.is_empty());
        let preview = cfg
            .preview
            .clone()
            .or_else(|| stdout.map(|s| s.encode_utf16().take(2000).collect::<Vec<u16>>()).map(|u| String::from_utf16_lossy(&u)))
            .or_else(|| json.map(Value::to_json));
        if let Some(p) = preview {
            request.insert("preview", Value::from(p));
        }
    }
    let env_text = |name: &str| ctx.env_var(name).map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let initiated_by = cfg.initiated_by.clone().or_else(|| env_text("LOBSTER_APPROVAL_INITIATED_BY"));
    let required = cfg.required_approver.clone().or_else(|| env_text("LOBSTER_APPROVAL_REQUIRED_APPROVER"));
    let different = cfg.require_different_approver.unwrap_or_else(|| {
        env_text("LOBSTER_APPROVAL_REQUIRE_DIFFERENT_APPROVER")
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "y"))
    });
    let mut identity = Object::new();
    if let Some(i) = initiated_by {
        request.insert("initiatedBy", Value::from(i.as_str()));
        identity.insert("initiatedBy", Value::from(i));
    }
    if let Some(r) = required {
        request.insert("requiredApprover", Value::from(r.as_str()));
        identity.insert("requiredApprover", Value::from(r));
    }
    if different {
        request.insert("requireDifferentApprover", Value::Bool(true));
        identity.insert("requireDifferentApprover", Value::Bool(true));
    }
    (request, identity)
}

async fn read_line() -> Result<String> {
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(|e| Error::runtime(e.to_string()))?
    .map_err(|e| Error::runtime(e.to_string()))
}

async fn prompt_input(prompt: &str, schema: &Value, id: &str) -> Result<Value> {
    eprint!("{prompt}\n> ");
    let line = read_line().await?;
    let value = Value::from_json(line.trim()).unwrap_or_else(|_| Value::String(line.trim().to_string()));
    let compiled = crate::schema::Schema::compile(schema).map_err(Error::runtime)?;
    compiled.validate(&value).map_err(|e| {
        Error::parse(format!("Workflow input step {id} response failed schema validation at {}: {}", e.path, e.message))
    })?;
    Ok(value)
}
