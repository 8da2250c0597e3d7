//! The state of one workflow run, shared by the run loop ([`super::run`])
//! and the steps ([`super::steps`]): step results by id, args, the login
//! session, and what one step or a whole run came to.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use crate::context::{Ctx, Env};
use crate::error::Result;
use crate::exec::login_env::LoginSession;
use crate::value::{Object, Value};

use super::args::arg_env_key;
use super::file::Workflow;
use super::gates::{Gate, PipelineInput, PipelineResume};
use super::template::{resolve, resolve_args, strict_lookup, whole_ref};

/// A boxed future (for recursion through sub-workflows and loops).
pub(super) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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
    /// The login-shell environment, once captured (see `crate::exec::login_env`).
    pub login: Arc<LoginSession>,
}

/// One attempt of a step: a result, or a pipeline that stopped to ask.
pub(super) enum Attempt {
    Done(Object),
    Asked {
        request: Object,
        input: PipelineInput,
    },
}

/// The step environment and working directory, resolved.
pub(super) struct Prepared {
    pub(super) env: Arc<Env>,
    pub(super) cwd: PathBuf,
}

/// Stores a step result; a parallel step's branch results are stored
/// under their own ids too.
pub(super) fn store_result(results: &mut Object, id: &str, mut r: Object) {
    if let Some(Value::Object(branches)) = r.remove("branches") {
        for (bid, br) in branches {
            results.insert(bid, br);
        }
    }
    results.insert(id, Value::Object(r));
}

impl Run<'_> {
    pub(super) fn env_for(
        &self,
        base: &Env,
        layers: &[Option<&Object>],
        results: &Object,
    ) -> Arc<Env> {
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

    pub(super) fn cwd_for(&self, ctx: &Ctx, cwds: &[Option<&str>]) -> PathBuf {
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
    pub(super) fn input_value(
        &self,
        stdin: Option<&Value>,
        results: &Object,
    ) -> Result<Option<Value>> {
        match stdin {
            None | Some(Value::Null) => Ok(Some(Value::Null)),
            Some(Value::String(s)) => match whole_ref(s) {
                Some((id, path)) => strict_lookup(results, &id, &path),
                None => Ok(Some(Value::String(resolve(s, &self.args, results)))),
            },
            Some(other) => Ok(Some(other.clone())),
        }
    }

    pub(super) fn prepare(&self, ctx: &Ctx, env: Option<&Object>, cwd: Option<&str>) -> Prepared {
        Prepared {
            env: self.env_for(&ctx.env, &[self.workflow.env.as_ref(), env], &self.results),
            cwd: self.cwd_for(ctx, &[cwd]),
        }
    }
}

/// A step's result object: `{id, ...fields}`.
pub(super) fn result(id: &str) -> Object {
    Object::from_iter([("id", Value::from(id))])
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
