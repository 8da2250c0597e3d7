//! Executing workflow steps: conditions, templating, shell / pipeline /
//! sub-workflow / parallel / for_each steps, retries, timeouts, error
//! policies, and approval and input gates.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::context::{Ctx, Env, Mode, Sink};
use crate::error::{Error, Failure, Result};
use crate::exec::login_env::LoginSession;
use crate::exec::process::ChildIo;
use crate::items::Items;
use crate::pipeline::parse::parse_pipeline;
use crate::pipeline::run_pipeline;
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
    /// At an `ask` stage inside a pipeline step.
    PipelineInput {
        /// The step id.
        step_id: String,
        /// `{type, prompt, responseSchema, defaults?, subject?}`.
        request: Object,
        /// The subject shown with the request.
        subject: Option<Value>,
        /// Where the pipeline resumes.
        input: PipelineInput,
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

/// An `ask` stage inside a pipeline step asked for input: the step is
/// resumed with the response at that stage.
#[derive(Debug, Clone)]
pub struct PipelineInput {
    /// Stored stages of the pipeline (`{name, args, raw}` records).
    pub pipeline: Vec<Value>,
    /// Index of the stage that asked.
    pub resume_at: usize,
    /// The items that stage had received.
    pub items: Vec<Value>,
}

/// What a resumed pipeline step continues with.
#[derive(Debug, Clone)]
pub struct PipelineResume {
    /// The step being resumed.
    pub step_id: String,
    /// Where inside it.
    pub input: PipelineInput,
    /// The response for the asking stage.
    pub response: Value,
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
    /// A pipeline step to resume mid-pipeline with an input response.
    pub pipeline_resume: Option<PipelineResume>,
    /// The login-shell environment, once captured (see [`crate::exec::login_env`]).
    pub login: Arc<LoginSession>,
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
    if t.is_empty() {
        None
    } else {
        Value::from_json(t).ok()
    }
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

/// Bytes for a shell command's stdin: strings verbatim, other values as JSON.
fn shell_input(value: Option<&Value>) -> Option<Vec<u8>> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone().into_bytes()),
        Some(v) => Some(v.to_json().into_bytes()),
    }
}

/// Items for a pipeline step: arrays are spread, null means none.
fn pipeline_items(value: Option<&Value>) -> Vec<Value> {
    match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(v) => vec![v.clone()],
    }
}

/// `String` of a value for stdout (null → "").
fn serialize_for_stdout(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_json(),
    }
}

/// A result built from a step's input alone (approval-only and no-op steps).
fn synthetic_result(id: &str, value: Option<Value>) -> Object {
    let mut r = result(id);
    match value {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            if let Some(j) = parse_json_stdout(&s) {
                r.insert("json", j);
            }
            r.insert("stdout", Value::String(s));
        }
        Some(v) => {
            r.insert("stdout", Value::String(serialize_for_stdout(&v)));
            r.insert("json", v);
        }
    }
    r
}

/// One attempt of a step: a result, or a pipeline that stopped to ask.
enum Attempt {
    Done(Object),
    Asked {
        request: Object,
        input: PipelineInput,
    },
}

/// The step environment and working directory, resolved.
struct Prepared {
    env: Arc<Env>,
    cwd: PathBuf,
}

/// Whether an error must bypass `on_error` and retries.
fn is_pipeline_halt(e: &Error) -> bool {
    e.failure == Failure::Halted
}

impl Run<'_> {
    fn env_for(&self, base: &Env, layers: &[Option<&Object>], results: &Object) -> Arc<Env> {
        let mut env = base.clone();
        env.insert(
            "LOBSTER_ARGS_JSON".into(),
            Value::Object(self.args.clone()).to_json(),
        );
        for (k, v) in self.args.iter() {
            if let Some(key) = arg_env_key(k) {
                env.insert(format!("LOBSTER_ARG_{key}"), v.to_js_string());
            }
        }
        for layer in layers.iter().flatten() {
            for (k, v) in layer.iter() {
                if let Value::String(s) = v {
                    env.insert(k.to_string(), resolve(s, &self.args, results));
                }
            }
        }
        Arc::new(env)
    }

    fn cwd_for(&self, ctx: &Ctx, cwds: &[Option<&str>]) -> PathBuf {
        match cwds
            .iter()
            .flatten()
            .copied()
            .chain(self.workflow.cwd.as_deref())
            .next()
        {
            Some(c) if !c.is_empty() => ctx.cwd.join(resolve_args(c, &self.args)),
            _ => ctx.cwd.clone(),
        }
    }

    /// Lobster's `resolveInputValue`: a lone `$step.path` is a strict lookup
    /// (may be undefined), other strings are templates, values pass through.
    fn input_value(&self, stdin: Option<&Value>, results: &Object) -> Result<Option<Value>> {
        match stdin {
            None | Some(Value::Null) => Ok(Some(Value::Null)),
            Some(Value::String(s)) => match whole_ref(s) {
                Some((id, path)) => strict_lookup(results, &id, &path),
                None => Ok(Some(Value::String(resolve(s, &self.args, results)))),
            },
            Some(other) => Ok(Some(other.clone())),
        }
    }

    fn prepare(&self, ctx: &Ctx, env: Option<&Object>, cwd: Option<&str>) -> Prepared {
        Prepared {
            env: self.env_for(&ctx.env, &[self.workflow.env.as_ref(), env], &self.results),
            cwd: self.cwd_for(ctx, &[cwd]),
        }
    }

    /// Runs the steps from `start`, returning the outcome.
    pub fn run_from<'s>(
        &'s mut self,
        start: usize,
        ctx: &'s Ctx,
    ) -> BoxFuture<'s, Result<Outcome>> {
        Box::pin(async move {
            let steps = &self.workflow.steps;
            for (idx, step) in steps.iter().enumerate().skip(start) {
                if !condition::evaluate(step.when.as_ref(), &self.results)? {
                    let mut r = result(&step.id);
                    r.insert("skipped", Value::Bool(true));
                    self.results.insert(step.id.clone(), Value::Object(r));
                    continue;
                }
                if let Some(input) = &step.input {
                    let subject = match &step.stdin {
                        Some(_) => self.input_value(step.stdin.as_ref(), &self.results)?,
                        None => Some(
                            self.last
                                .as_ref()
                                .and_then(|l| self.results.get(l))
                                .and_then(|r| {
                                    r.get_key("json")
                                        .or_else(|| r.get_key("response"))
                                        .or_else(|| r.get_key("stdout"))
                                })
                                .cloned()
                                .unwrap_or(Value::Null),
                        ),
                    };
                    let mut request = Object::new();
                    request.insert("type", Value::from("input_request"));
                    request.insert("prompt", Value::from(input.prompt.as_str()));
                    request.insert("responseSchema", input.response_schema.clone());
                    if let Some(d) = &input.defaults {
                        request.insert("defaults", d.clone());
                    }
                    if ctx.mode == Mode::Human && ctx.stdin_is_tty {
                        let response =
                            prompt_input(&input.prompt, &input.response_schema, &step.id, ctx)
                                .await?;
                        let mut r = result(&step.id);
                        if let Some(s) = subject {
                            r.insert("subject", s);
                        }
                        r.insert("response", response);
                        self.results.insert(step.id.clone(), Value::Object(r));
                        self.last = Some(step.id.clone());
                        continue;
                    }
                    let request = fit_input_request(request, subject.clone(), &step.id, ctx)?;
                    return Ok(Outcome::Paused {
                        gate: Gate::Input {
                            step_id: step.id.clone(),
                            request,
                            subject,
                        },
                        resume_at: idx + 1,
                        results: self.results.clone(),
                    });
                }

                match self.execute_with_policies(step, ctx).await {
                    Ok(Attempt::Asked { mut request, input }) => {
                        let subject = request.remove("subject");
                        let request = fit_input_request(request, subject.clone(), &step.id, ctx)?;
                        return Ok(Outcome::Paused {
                            gate: Gate::PipelineInput {
                                step_id: step.id.clone(),
                                request,
                                subject,
                                input,
                            },
                            resume_at: idx,
                            results: self.results.clone(),
                        });
                    }
                    Ok(Attempt::Done(r)) => {
                        store_result(&mut self.results, &step.id, r);
                        self.last = Some(step.id.clone());
                    }
                    Err(e) if is_pipeline_halt(&e) => return Err(e),
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
                    let step_result = self.results.get(&step.id).cloned().unwrap_or_default();
                    let (request, identity) = approval_request(step, approval, &step_result, ctx);
                    if let (Some(init), Some(Value::Object(r))) =
                        (identity.get("initiatedBy"), self.results.get(&step.id))
                    {
                        let mut r = r.clone();
                        r.insert("initiatedBy", init.clone());
                        self.results.insert(step.id.clone(), Value::Object(r));
                    }
                    if ctx.mode == Mode::Human && ctx.stdin_is_tty {
                        let prompt = request
                            .get("prompt")
                            .map(Value::to_js_string)
                            .unwrap_or_default();
                        ctx.stdout.write(&format!("{prompt} [y/N] "));
                        let answer = read_line().await?;
                        let answer = answer.trim().to_ascii_lowercase();
                        if answer != "y" && answer != "yes" {
                            return Err(Error::runtime("Not approved"));
                        }
                        let approved_by = ctx
                            .env_var("LOBSTER_APPROVAL_APPROVED_BY")
                            .map(|s| s.trim().to_string());
                        crate::resume::workflow::check_identity(
                            &step.id,
                            Some(&Value::Object(identity)),
                            approved_by.as_deref(),
                        )?;
                        if let Some(Value::Object(r)) = self.results.get(&step.id).cloned() {
                            let mut r = r;
                            r.insert("approved", Value::Bool(true));
                            if let Some(by) = approved_by {
                                r.insert("approvedBy", Value::from(by));
                            }
                            self.results.insert(step.id.clone(), Value::Object(r));
                        }
                        continue;
                    }
                    return Ok(Outcome::Paused {
                        gate: Gate::Approval {
                            step_id: step.id.clone(),
                            request,
                            identity,
                        },
                        resume_at: idx + 1,
                        results: self.results.clone(),
                    });
                }
            }
            Ok(Outcome::Done(output_items(
                self.last.as_ref().and_then(|l| self.results.get(l)),
            )))
        })
    }

    /// One step with its timeout, retries and backoff.
    fn execute_with_policies<'s>(
        &'s self,
        step: &'s Step,
        ctx: &'s Ctx,
    ) -> BoxFuture<'s, Result<Attempt>> {
        Box::pin(async move {
            let max = step.retry.as_ref().map_or(1, |r| r.max.max(1));
            let mut attempt = 1;
            loop {
                let outcome = match step.timeout_ms {
                    Some(ms) => {
                        tokio::time::timeout(Duration::from_millis(ms), self.execute(step, ctx))
                            .await
                            .unwrap_or_else(|_| {
                                Err(Error::failed(
                                    Failure::TimedOut,
                                    format!("Step '{}' timed out after {ms}ms", step.id),
                                ))
                            })
                    }
                    None => self.execute(step, ctx).await,
                };
                match outcome {
                    Ok(r) => return Ok(r),
                    Err(e) if attempt < max && !is_pipeline_halt(&e) => {
                        let delay = retry_delay(step, attempt);
                        say_retry(&step.id, attempt, max, &e.message, delay);
                        tokio::time::sleep(Duration::from_millis(delay.max(0.0) as u64)).await;
                        attempt += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        })
    }

    /// One attempt of a step.
    fn execute<'s>(&'s self, step: &'s Step, ctx: &'s Ctx) -> BoxFuture<'s, Result<Attempt>> {
        Box::pin(async move {
            let done = match &step.exec {
                Exec::ForEach(fe) => self.run_for_each(step, fe, ctx).await,
                Exec::Parallel(par) => self.run_parallel(step, par, ctx).await,
                Exec::Workflow { path, args } => {
                    let p = self.prepare(ctx, step.env.as_ref(), step.cwd.as_deref());
                    self.run_sub_workflow(step, path, args.as_ref(), &p, ctx)
                        .await
                }
                Exec::Shell(cmd) => {
                    let p = self.prepare(ctx, step.env.as_ref(), step.cwd.as_deref());
                    let command = resolve(cmd, &self.args, &self.results);
                    let input = self.input_value(step.stdin.as_ref(), &self.results)?;
                    run_shell_step(&step.id, &command, input.as_ref(), &p, &self.login, ctx).await
                }
                Exec::Pipeline(text) => {
                    let p = self.prepare(ctx, step.env.as_ref(), step.cwd.as_deref());
                    let resume = self
                        .pipeline_resume
                        .as_ref()
                        .filter(|r| r.step_id == step.id);
                    let (stages, at, items, response) = match resume {
                        Some(r) => {
                            let stages = r.input.pipeline.iter().map(stage_from_record).collect();
                            (
                                stages,
                                r.input.resume_at,
                                r.input.items.clone(),
                                Some(r.response.clone()),
                            )
                        }
                        None => {
                            let text = resolve(text, &self.args, &self.results);
                            let stages = parse_pipeline(&text).map_err(|e| {
                                Error::runtime(format!(
                                    "Workflow step {} pipeline parse failed: {}",
                                    step.id, e.message
                                ))
                            })?;
                            let input = self.input_value(step.stdin.as_ref(), &self.results)?;
                            (stages, 0, pipeline_items(input.as_ref()), None)
                        }
                    };
                    return run_stages(&step.id, &stages, at, items, response, true, &p, ctx).await;
                }
                Exec::None => Ok(synthetic_result(
                    &step.id,
                    self.input_value(step.stdin.as_ref(), &self.results)?,
                )),
            };
            done.map(Attempt::Done)
        })
    }

    async fn run_sub_workflow(
        &self,
        step: &Step,
        path: &str,
        args: Option<&Value>,
        p: &Prepared,
        ctx: &Ctx,
    ) -> Result<Object> {
        let rel = resolve(path, &self.args, &self.results);
        let base = self.workflow.path.parent().unwrap_or(Path::new("."));
        let resolved = base.join(&rel);
        let canonical = std::fs::canonicalize(&resolved).map_err(|_| {
            Error::runtime(format!(
                "Workflow step {} workflow file not found: {}",
                step.id,
                normalize(&resolved).display()
            ))
        })?;
        if self.stack.contains(&canonical) {
            return Err(Error::runtime(format!(
                "Workflow step {} creates a cycle: {} is already being executed",
                step.id,
                canonical.display()
            )));
        }
        let wf = file::load(&resolved)?;
        let mut provided = Object::new();
        if let Some(Value::Object(o)) = args {
            for (k, v) in o.iter() {
                let v = match v {
                    Value::String(s) => Value::String(resolve(s, &self.args, &self.results)),
                    other => other.clone(),
                };
                provided.insert(k, v);
            }
        }
        let mut stack = self.stack.clone();
        stack.push(canonical);
        let sub_ctx = Ctx {
            env: p.env.clone(),
            cwd: p.cwd.clone(),
            ..ctx.clone()
        };
        let mut sub = Run {
            workflow: &wf,
            args: resolve_workflow_args(&wf, &Value::Object(provided)),
            results: Object::new(),
            last: None,
            stack,
            pipeline_resume: None,
            login: self.login.clone(),
        };
        let output = match sub.run_from(0, &sub_ctx).await? {
            Outcome::Done(items) => items,
            Outcome::Paused { gate, .. } => {
                let kind = if matches!(gate, Gate::Approval { .. }) {
                    "approval"
                } else {
                    "input"
                };
                return Err(Error::runtime(format!(
                    "Workflow step {} sub-workflow halted for {kind}. Sub-workflow approval/input gates are not supported in composition.",
                    step.id
                )));
            }
        };
        let mut r = result(&step.id);
        let stdout_empty = output.is_empty();
        let json = if output.len() == 1 {
            output.into_iter().next().unwrap_or_default()
        } else {
            Value::Array(output)
        };
        r.insert(
            "stdout",
            Value::String(if stdout_empty {
                String::new()
            } else {
                serialize_for_stdout(&json)
            }),
        );
        r.insert("json", json);
        Ok(r)
    }

    async fn run_branch(&self, step: &Step, branch: &Branch, ctx: &Ctx) -> Result<Object> {
        let mut env_layer = step.env.clone().unwrap_or_default();
        for (k, v) in branch.env.iter().flat_map(Object::iter) {
            env_layer.insert(k, v.clone());
        }
        let p = Prepared {
            env: self.env_for(
                &ctx.env,
                &[self.workflow.env.as_ref(), Some(&env_layer)],
                &self.results,
            ),
            cwd: self.cwd_for(ctx, &[branch.cwd.as_deref(), step.cwd.as_deref()]),
        };
        let input = self.input_value(branch.stdin.as_ref(), &self.results)?;
        match &branch.exec {
            Exec::Pipeline(text) => {
                run_pipeline_step(
                    &branch.id,
                    &resolve(text, &self.args, &self.results),
                    input.as_ref(),
                    &p,
                    ctx,
                )
                .await
            }
            Exec::Shell(cmd) => {
                run_shell_step(
                    &branch.id,
                    &resolve(cmd, &self.args, &self.results),
                    input.as_ref(),
                    &p,
                    &self.login,
                    ctx,
                )
                .await
            }
            _ => Ok(result(&branch.id)),
        }
    }

    fn run_parallel<'s>(
        &'s self,
        step: &'s Step,
        par: &'s Parallel,
        ctx: &'s Ctx,
    ) -> BoxFuture<'s, Result<Object>> {
        Box::pin(async move {
            let work = async {
                let futures: Vec<_> = par
                    .branches
                    .iter()
                    .map(|b| Box::pin(self.run_branch(step, b, ctx)))
                    .collect();
                if par.wait_any {
                    // The first branch to settle decides, success or failure.
                    let (first, idx, _rest) = futures::future::select_all(futures).await;
                    Ok(vec![(par.branches[idx].id.clone(), first?)])
                } else {
                    let results = futures::future::join_all(futures).await;
                    let mut out = Vec::new();
                    for (b, r) in par.branches.iter().zip(results) {
                        out.push((
                            b.id.clone(),
                            r.map_err(|e| {
                                Error::runtime(format!("Parallel branch failed: {}", e.message))
                            })?,
                        ));
                    }
                    Ok(out)
                }
            };
            let branches: Vec<(String, Object)> = match par.timeout_ms {
                Some(ms) => tokio::time::timeout(Duration::from_millis(ms), work)
                    .await
                    .unwrap_or_else(|_| {
                        Err(Error::failed(
                            Failure::TimedOut,
                            format!("Parallel step {} timed out after {ms}ms", step.id),
                        ))
                    })?,
                None => work.await?,
            };
            let mut merged = Object::new();
            let mut branch_results = Object::new();
            for (id, br) in &branches {
                if let Some(j) = br.get("json") {
                    merged.insert(id, j.clone());
                }
                branch_results.insert(id, Value::Object(br.clone()));
            }
            let json = Value::Object(merged);
            let stdout = if par.wait_any {
                branches
                    .first()
                    .and_then(|(_, b)| b.get("stdout"))
                    .map(Value::to_js_string)
                    .unwrap_or_default()
            } else {
                json.to_json()
            };
            let mut r = result(&step.id);
            r.insert("json", json);
            r.insert("stdout", Value::String(stdout));
            r.insert("branches", Value::Object(branch_results));
            Ok(r)
        })
    }

    fn run_for_each<'s>(
        &'s self,
        step: &'s Step,
        fe: &'s ForEach,
        ctx: &'s Ctx,
    ) -> BoxFuture<'s, Result<Object>> {
        Box::pin(async move {
            let items = match self.input_value(Some(&fe.over), &self.results)? {
                Some(Value::Array(items)) => items,
                other => {
                    let type_name = other.as_ref().map_or("undefined", Value::type_of);
                    return Err(Error::runtime(format!(
                        "Workflow step {} for_each: expected array, got {type_name}",
                        step.id
                    )));
                }
            };
            let batch = fe.batch_size.unwrap_or(1).max(1);
            let mut iterations = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                if let Some(pause) = fe.pause_ms.filter(|p| *p > 0)
                    && i > 0
                    && (i as u64).is_multiple_of(batch)
                {
                    tokio::time::sleep(Duration::from_millis(pause)).await;
                }
                let mut scoped = self.results.clone();
                let mut item_result = result(&fe.item_var);
                item_result.insert("json", item.clone());
                let item_text = match &item {
                    Value::String(s) => s.clone(),
                    other => other.to_json(),
                };
                item_result.insert("stdout", Value::String(item_text));
                scoped.insert(fe.item_var.as_str(), Value::Object(item_result));
                let mut index_result = result(&fe.index_var);
                index_result.insert("json", Value::from(i));
                index_result.insert("stdout", Value::String(i.to_string()));
                scoped.insert(fe.index_var.as_str(), Value::Object(index_result));
                for sub in &fe.steps {
                    if !condition::evaluate(sub.when.as_ref(), &scoped)? {
                        let mut r = result(&sub.id);
                        r.insert("skipped", Value::Bool(true));
                        scoped.insert(sub.id.as_str(), Value::Object(r));
                        continue;
                    }
                    let loop_env = self.env_for(
                        &ctx.env,
                        &[
                            self.workflow.env.as_ref(),
                            step.env.as_ref(),
                            sub.env.as_ref(),
                        ],
                        &scoped,
                    );
                    let p = Prepared {
                        env: loop_env,
                        cwd: self.cwd_for(ctx, &[sub.cwd.as_deref(), step.cwd.as_deref()]),
                    };
                    let input = self.input_value(sub.stdin.as_ref(), &scoped)?;
                    let r = match &sub.exec {
                        Exec::Shell(cmd) => {
                            run_shell_step(
                                &sub.id,
                                &resolve(cmd, &self.args, &scoped),
                                input.as_ref(),
                                &p,
                                &self.login,
                                ctx,
                            )
                            .await?
                        }
                        Exec::Pipeline(text) => {
                            run_pipeline_step(
                                &sub.id,
                                &resolve(text, &self.args, &scoped),
                                input.as_ref(),
                                &p,
                                ctx,
                            )
                            .await?
                        }
                        _ => synthetic_result(&sub.id, input),
                    };
                    scoped.insert(sub.id.as_str(), Value::Object(r));
                }
                let mut row = Object::new();
                row.insert(fe.item_var.as_str(), item);
                row.insert(fe.index_var.as_str(), Value::from(i));
                for sub in &fe.steps {
                    if let Some(r) = scoped
                        .get(&sub.id)
                        .filter(|r| r.get_key("skipped").is_none())
                        && let Some(v) = r.get_key("json").or_else(|| r.get_key("stdout"))
                    {
                        row.insert(sub.id.as_str(), v.clone());
                    }
                }
                iterations.push(Value::Object(row));
            }
            let json = Value::Array(iterations);
            let mut r = result(&step.id);
            r.insert("json", json.clone());
            r.insert("stdout", Value::String(json.to_json()));
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
    results.insert(id, Value::Object(r));
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
    let mut d = if r.exponential {
        (r.delay_ms * 2f64.powi(attempt as i32 - 1)).min(r.max_delay_ms)
    } else {
        r.delay_ms
    };
    if r.jitter {
        let unit = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0;
        d = (d + (unit * 2.0 - 1.0) * d * 0.1).min(r.max_delay_ms);
    }
    d.round().max(0.0)
}

/// Runs a shell step through the run's login session (see [`crate::exec::login_env`]).
async fn run_shell_step(
    id: &str,
    command: &str,
    input: Option<&Value>,
    p: &Prepared,
    login: &LoginSession,
    ctx: &Ctx,
) -> Result<Object> {
    let out = login
        .run_shell(
            command,
            &p.env,
            &p.cwd,
            ChildIo::stdin(shell_input(input)),
            ctx.state.dir(),
        )
        .await
        .map_err(|e| {
            Error::io(
                if e.kind() == std::io::ErrorKind::NotFound {
                    "workflow shell not found; check LOBSTER_SHELL".to_string()
                } else {
                    format!("workflow command could not start: {e}")
                },
                e,
            )
        })?;
    if out.code != Some(0) {
        let detail = [
            out.stderr.trim_matches(is_js_space),
            out.stdout.trim_matches(is_js_space),
        ]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or(command)
        .to_string();
        return Err(Error::runtime(format!(
            "workflow command failed ({}): {detail}",
            out.code_text()
        )));
    }
    let mut r = result(id);
    let json = parse_json_stdout(&out.stdout);
    r.insert("stdout", Value::String(out.stdout));
    if let Some(j) = json {
        r.insert("json", j);
    }
    Ok(r)
}

/// `stdout` of a pipeline step that did not render: strings joined by
/// newlines, one item as itself, several as a JSON array.
fn serialize_items(items: &[Value]) -> String {
    if items.is_empty() {
        String::new()
    } else if items.iter().all(|i| matches!(i, Value::String(_))) {
        items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    } else if items.len() == 1 {
        serialize_for_stdout(&items[0])
    } else {
        Value::Array(items.to_vec()).to_json()
    }
}

/// A pipeline step where asking for input is not possible (parallel
/// branches and loop bodies).
async fn run_pipeline_step(
    id: &str,
    text: &str,
    input: Option<&Value>,
    p: &Prepared,
    ctx: &Ctx,
) -> Result<Object> {
    let stages = parse_pipeline(text).map_err(|e| {
        Error::runtime(format!(
            "Workflow step {id} pipeline parse failed: {}",
            e.message
        ))
    })?;
    match run_stages(id, &stages, 0, pipeline_items(input), None, false, p, ctx).await? {
        Attempt::Done(r) => Ok(r),
        Attempt::Asked { .. } => Err(Error::runtime(
            "requestInput is not supported in this pipeline context",
        )),
    }
}

/// Rebuilds a stage from its stored `{name, args, raw}` record.
fn stage_from_record(r: &Value) -> crate::pipeline::parse::Stage {
    crate::pipeline::parse::Stage {
        name: r
            .get_key("name")
            .map(Value::to_js_string)
            .unwrap_or_default(),
        args: crate::pipeline::parse::Args::from_value(r.get_key("args").unwrap_or(&Value::Null)),
        raw: r
            .get_key("raw")
            .map(Value::to_js_string)
            .unwrap_or_default(),
    }
}

/// Runs the stages of a pipeline step from `at`, capturing rendered text.
#[allow(clippy::too_many_arguments)]
async fn run_stages(
    id: &str,
    stages: &[crate::pipeline::parse::Stage],
    at: usize,
    items: Vec<Value>,
    response: Option<Value>,
    can_ask: bool,
    p: &Prepared,
    ctx: &Ctx,
) -> Result<Attempt> {
    let sink = Sink::buffer();
    let pctx = Ctx {
        env: p.env.clone(),
        cwd: p.cwd.clone(),
        stdout: sink.clone(),
        resume_response: response,
        ..ctx.clone()
    };
    let remaining = &stages[at.min(stages.len())..];
    let res = run_pipeline(remaining, Items::List(items), &pctx).await?;
    if let Some((idx, halt)) = res.halted {
        let name = &remaining[idx].name;
        let request = match res.items.as_slice() {
            [Value::Object(o)] => Some(o),
            _ => None,
        };
        let kind = request.and_then(|o| o.get("type")).and_then(Value::as_str);
        if kind == Some("approval_request") {
            return Err(Error::failed(
                Failure::Halted,
                format!(
                    "Workflow step {id} halted for approval inside pipeline stage {name}. Use a separate approval step in the workflow file."
                ),
            ));
        }
        if let (Some(req), crate::commands::Halt::InPlace { input }, true) =
            (request, &halt, can_ask)
            && kind == Some("input_request")
        {
            let mut block = Object::new();
            for key in ["type", "prompt", "responseSchema", "defaults", "subject"] {
                if let Some(v) = req.get(key) {
                    block.insert(key, v.clone());
                }
            }
            let pipeline = stages
                .iter()
                .map(|s| crate::pipeline::parse::StageRecord::from(s).to_value())
                .collect();
            return Ok(Attempt::Asked {
                request: block,
                input: PipelineInput {
                    pipeline,
                    resume_at: at + idx,
                    items: input.clone(),
                },
            });
        }
        return Err(Error::failed(
            Failure::Halted,
            format!("Workflow step {id} halted before completion at pipeline stage {name}"),
        ));
    }
    let rendered = sink.captured();
    let mut r = result(id);
    let stdout = if rendered.is_empty() {
        serialize_items(&res.items)
    } else {
        rendered.clone()
    };
    let json = match res.items.len() {
        0 => parse_json_stdout(&rendered),
        1 => res.items.into_iter().next(),
        _ => Some(Value::Array(res.items)),
    };
    r.insert("stdout", Value::String(stdout));
    if let Some(j) = json {
        r.insert("json", j);
    }
    Ok(Attempt::Done(r))
}

/// `{initiatedBy?, requiredApprover?, requireDifferentApprover?}` read from
/// a step's output (`initiatedBy` or `initiated_by`, ...).
fn identity_from(raw: &Object) -> Object {
    let text = |a: &str, b: &str| {
        raw.get(a)
            .or_else(|| raw.get(b))
            .map(Value::to_js_string)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let mut out = Object::new();
    if let Some(i) = text("initiatedBy", "initiated_by") {
        out.insert("initiatedBy", Value::from(i));
    }
    if let Some(r) = text("requiredApprover", "required_approver") {
        out.insert("requiredApprover", Value::from(r));
    }
    if raw
        .get("requireDifferentApprover")
        .or_else(|| raw.get("require_different_approver"))
        == Some(&Value::Bool(true))
    {
        out.insert("requireDifferentApprover", Value::Bool(true));
    }
    out
}

/// Builds the approval request and the identity rules for a gate step.
fn approval_request(
    step: &Step,
    cfg: &file::Approval,
    step_result: &Value,
    ctx: &Ctx,
) -> (Object, Object) {
    let env_text = |name: &str| {
        ctx.env_var(name)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let mut identity = Object::new();
    if let Some(i) = cfg
        .initiated_by
        .clone()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| env_text("LOBSTER_APPROVAL_INITIATED_BY"))
    {
        identity.insert("initiatedBy", Value::from(i.trim()));
    }
    if let Some(r) = cfg
        .required_approver
        .clone()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| env_text("LOBSTER_APPROVAL_REQUIRED_APPROVER"))
    {
        identity.insert("requiredApprover", Value::from(r.trim()));
    }
    let env_different = env_text("LOBSTER_APPROVAL_REQUIRE_DIFFERENT_APPROVER")
        .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "y"));
    if cfg.require_different_approver == Some(true) || env_different {
        identity.insert("requireDifferentApprover", Value::Bool(true));
    }

    let mut request = Object::new();
    request.insert("type", Value::from("approval_request"));
    let json = step_result.get_key("json");
    let from_output = json.and_then(Value::as_object).and_then(|o| {
        let nested = o
            .get("requiresApproval")
            .and_then(Value::as_object)
            .filter(|r| r.get("prompt").is_some_and(Value::truthy));
        nested.or_else(|| Some(o).filter(|o| o.get("prompt").is_some_and(Value::truthy)))
    });
    if let Some(src) = from_output {
        for (k, v) in identity_from(src).iter() {
            identity.insert(k, v.clone());
        }
        request.insert("prompt", src.get("prompt").cloned().unwrap_or_default());
        request.insert(
            "items",
            src.get("items")
                .filter(|v| !matches!(v, Value::Null))
                .cloned()
                .unwrap_or(Value::Array(Vec::new())),
        );
        if let Some(p) = src.get("preview").filter(|p| p.truthy()) {
            request.insert("preview", p.clone());
        }
    } else {
        request.insert(
            "prompt",
            Value::from(
                cfg.prompt
                    .clone()
                    .unwrap_or_else(|| format!("Approve {}?", step.id)),
            ),
        );
        let items = cfg.items.clone().unwrap_or_else(|| match json {
            None => Value::Array(Vec::new()),
            Some(Value::Array(a)) => Value::Array(a.clone()),
            Some(other) => Value::Array(vec![other.clone()]),
        });
        request.insert("items", items);
        let stdout = step_result
            .get_key("stdout")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let from_result = stdout
            .map(str::to_string)
            .or_else(|| json.map(serialize_for_stdout))
            .map(|s| {
                s.trim_matches(is_js_space)
                    .encode_utf16()
                    .take(2000)
                    .collect::<Vec<u16>>()
            })
            .map(|u| String::from_utf16_lossy(&u));
        if let Some(p) = cfg
            .preview
            .clone()
            .or(from_result)
            .filter(|p| !p.is_empty())
        {
            request.insert("preview", Value::from(p));
        }
    }
    for (k, v) in identity.iter() {
        request.insert(k, v.clone());
    }
    (request, identity)
}

/// Default `LOBSTER_MAX_TOOL_ENVELOPE_BYTES`.
const DEFAULT_ENVELOPE_MAX_BYTES: usize = 512_000;
/// Subjects larger than this are replaced by a preview.
const MAX_SUBJECT_BYTES: usize = 192_000;

/// Keeps a `needs_input` envelope under the size limit by truncating, then
/// omitting, the subject; fails when even that is too big.
fn fit_input_request(
    mut request: Object,
    subject: Option<Value>,
    id: &str,
    ctx: &Ctx,
) -> Result<Object> {
    let max = ctx
        .env_var("LOBSTER_MAX_TOOL_ENVELOPE_BYTES")
        .map(crate::value::string_to_number)
        .filter(|n| n.is_finite() && *n >= 1024.0)
        .map_or(DEFAULT_ENVELOPE_MAX_BYTES, |n| n.floor() as usize);
    // The envelope around the request, with room for a resume token.
    let fits = |req: &Object| {
        let mut block = req.clone();
        block.insert("resumeToken", Value::String("x".repeat(220)));
        crate::envelope::Envelope::needs_input(Value::Object(block))
            .to_value()
            .to_json()
            .len()
            <= max
    };
    let with_subject = |req: &mut Object, s: Option<Value>| {
        if let Some(s) = s {
            req.insert("subject", s);
        }
    };
    with_subject(&mut request, subject.clone());
    if fits(&request) {
        return Ok(request);
    }
    let serialized = subject
        .as_ref()
        .map_or_else(|| "null".to_string(), Value::to_json);
    let truncated = |preview: String, bytes: usize| {
        Value::Object(Object::from_iter([
            ("truncated", Value::Bool(true)),
            ("bytes", Value::from(bytes)),
            ("preview", Value::String(preview)),
        ]))
    };
    if serialized.len() > MAX_SUBJECT_BYTES {
        let units: Vec<u16> = serialized.encode_utf16().take(2000).collect();
        request.insert(
            "subject",
            truncated(String::from_utf16_lossy(&units), serialized.len()),
        );
        if fits(&request) {
            return Ok(request);
        }
    }
    request.insert(
        "subject",
        truncated(
            "[subject omitted: envelope size limit]".into(),
            serialized.len(),
        ),
    );
    if fits(&request) {
        return Ok(request);
    }
    Err(Error::runtime(format!(
        "Workflow input step {id} needs_input envelope exceeds {max} bytes even after subject truncation"
    )))
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

async fn prompt_input(prompt: &str, schema: &Value, id: &str, ctx: &Ctx) -> Result<Value> {
    ctx.stdout
        .write(&format!("{prompt}\nEnter JSON response: "));
    let line = read_line().await?;
    let value = Value::from_json(line.trim())
        .map_err(|_| Error::runtime("Input response must be valid JSON"))?;
    let compiled = crate::schema::Schema::compile(schema).map_err(Error::runtime)?;
    compiled.validate(&value).map_err(|e| {
        Error::runtime(format!(
            "Workflow input step {id} response failed schema validation at {}: {}",
            e.path, e.message
        ))
    })?;
    Ok(value)
}

/// Lobster's retry line on stderr, word for word.
#[expect(clippy::print_stderr, reason = "Lobster prints this line to stderr")]
fn say_retry(step: &str, attempt: u32, max: u32, message: &str, delay: f64) {
    eprintln!(
        "[RETRY] Step '{step}' failed (attempt {attempt}/{max}): {message}. Retrying in {}ms...",
        crate::value::format_number(delay)
    );
}
