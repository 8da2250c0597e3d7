//! Running one step of each kind: shell commands, pipelines (which may ask
//! for input mid-way), sub-workflows, parallel branches and for_each loops,
//! and the result objects they leave.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::context::{Ctx, Sink};
use crate::error::{Error, Failure, Result};
use crate::exec::login_env::LoginSession;
use crate::exec::process::ChildIo;
use crate::items::Items;
use crate::pipeline::parse::parse_pipeline;
use crate::pipeline::run_pipeline;
use crate::value::{Object, Value, is_js_space};

use super::args::resolve_workflow_args;
use super::condition;
use super::file::{self, Branch, Exec, ForEach, Parallel, Step};
use super::gates::{Gate, PipelineInput, serialize_for_stdout};
use super::state::{Attempt, BoxFuture, Outcome, Prepared, Run, result};
use super::template::resolve;

/// `JSON.parse(stdout.trim())`, or `None` when it is not JSON.
pub(super) fn parse_json_stdout(stdout: &str) -> Option<Value> {
    let t = stdout.trim_matches(is_js_space);
    if t.is_empty() {
        None
    } else {
        Value::from_json(t).ok()
    }
}

/// Bytes for a shell command's stdin: strings verbatim, other values as JSON.
pub(super) fn shell_input(value: Option<&Value>) -> Option<Vec<u8>> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone().into_bytes()),
        Some(v) => Some(v.to_json().into_bytes()),
    }
}

/// Items for a pipeline step: arrays are spread, null means none.
pub(super) fn pipeline_items(value: Option<&Value>) -> Vec<Value> {
    match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(v) => vec![v.clone()],
    }
}

/// A result built from a step's input alone (approval-only and no-op steps).
pub(super) fn synthetic_result(id: &str, value: Option<Value>) -> Object {
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

/// Lexically normalises `a/./b/../c` (no symlink resolution).
pub(super) fn normalize(path: &Path) -> PathBuf {
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

/// Runs a shell step through the run's login session (see [`crate::exec::login_env`]).
pub(super) async fn run_shell_step(
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
        return Err(Error::runtime(format!(
            "workflow command failed ({}): {}",
            out.code_text(),
            out.failure_detail(command)
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
pub(super) fn serialize_items(items: &[Value]) -> String {
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
pub(super) async fn run_pipeline_step(
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
pub(super) fn stage_from_record(r: &Value) -> crate::pipeline::parse::Stage {
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
pub(super) async fn run_stages(
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

impl Run<'_> {
    /// One attempt of a step.
    pub(super) fn execute<'s>(
        &'s self,
        step: &'s Step,
        ctx: &'s Ctx,
    ) -> BoxFuture<'s, Result<Attempt>> {
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
                Exec::Gobby(action) => self.run_pipeline_step(step, action, ctx).await,
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
            // The journal records the run's own steps, not a sub-workflow's.
            journal: None,
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
