//! Running a pipeline step: the scope its expressions see, and `exec`,
//! `prompt` and `invoke_pipeline`.

use std::path::PathBuf;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::exec::process::{ChildIo, run_process};
use crate::value::{Object, Value};
use crate::workflow::file::{self, Step};
use crate::workflow::library;
use crate::workflow::resolve_workflow_args;
use crate::workflow::state::{BoxFuture, Outcome, Run, result};

use super::Action;
use super::expr;

/// Parts of an environment variable's name that mark it secret: such
/// variables are not offered to expressions as `env.*` (as in Gobby).
const SECRET_PARTS: [&str; 9] = [
    "AUTH",
    "CREDENTIAL",
    "CREDENTIALS",
    "KEY",
    "OAUTH",
    "PASSWORD",
    "PAT",
    "SECRET",
    "TOKEN",
];

fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper == "DATABASE_URL" || upper.split('_').any(|part| SECRET_PARTS.contains(&part))
}

/// A step's output as the pipeline sees it (`steps.<id>.output`).
pub(crate) fn output_of(result: &Value) -> Value {
    result.get_key("output").cloned().unwrap_or(Value::Null)
}

impl Run<'_> {
    /// What `${{ … }}` sees now: the inputs, each step's output (none for
    /// a skipped one), and the environment without its secrets.
    pub(crate) fn pipeline_scope(&self, ctx: &Ctx) -> Value {
        let steps: Object = self
            .results
            .iter()
            .map(|(id, r)| {
                (
                    id.to_string(),
                    Value::Object(Object::from_iter([("output", output_of(r))])),
                )
            })
            .collect();
        let env: Object = ctx
            .env
            .iter()
            .filter(|(name, _)| !is_secret(name))
            .map(|(name, value)| (name.clone(), Value::from(value.as_str())))
            .collect();
        expr::scope(&self.args, &steps, &env)
    }

    /// Whether step `step`'s `condition` holds. A condition that does not
    /// evaluate skips the step (fail-closed, as Gobby does).
    pub(crate) fn pipeline_condition(&self, step: &Step, ctx: &Ctx) -> bool {
        let text = match &step.when {
            None => return true,
            Some(Value::Bool(b)) => return *b,
            Some(Value::String(text)) => text,
            Some(other) => return expr::truthy(other),
        };
        let inner = expr::pure(text).unwrap_or(text.trim());
        match expr::evaluate(inner, &self.pipeline_scope(ctx)) {
            Ok(value) => expr::truthy(&value),
            Err(e) => {
                tracing::warn!(step = %step.id, error = %e, "a pipeline condition did not evaluate; the step is skipped");
                false
            }
        }
    }

    /// A step's gate with its `message` rendered (a message that does not
    /// render is shown as written).
    pub(crate) fn pipeline_gate(&self, gate: &file::Approval, ctx: &Ctx) -> file::Approval {
        let mut gate = gate.clone();
        if let Some(message) = &gate.prompt
            && let Ok(rendered) = expr::render(message, &self.pipeline_scope(ctx))
        {
            gate.prompt = Some(rendered);
        }
        gate
    }

    /// The run's `outputs`, evaluated after its last step.
    pub(crate) fn pipeline_outputs(&self, outputs: &Object, ctx: &Ctx) -> Result<Value> {
        let scope = self.pipeline_scope(ctx);
        let mut done = Object::new();
        for (name, spec) in outputs.iter() {
            let value = match spec {
                Value::String(text) if text.contains("${{") => match expr::pure(text) {
                    Some(inner) => coerce(expr::evaluate(inner, &scope)),
                    None => expr::render(text, &scope).and_then(|t| coerce(Ok(Value::String(t)))),
                }
                .map_err(|e| Error::runtime(format!("Pipeline outputs.{name}: {e}")))?,
                Value::String(text) if text.starts_with('$') => reference(text, &self.results),
                other => other.clone(),
            };
            done.insert(name, value);
        }
        Ok(Value::Object(done))
    }

    /// One attempt of pipeline step `step`.
    pub(crate) fn run_pipeline_step<'s>(
        &'s self,
        step: &'s Step,
        action: &'s Action,
        ctx: &'s Ctx,
    ) -> BoxFuture<'s, Result<Object>> {
        Box::pin(async move {
            let scope = self.pipeline_scope(ctx);
            let fail = |e: String| Error::runtime(format!("Step '{}' failed: {e}", step.id));
            let output = match action {
                Action::Exec(line) => {
                    let line = expr::render(line, &scope).map_err(fail)?;
                    self.exec(&step.id, &line, ctx).await?
                }
                Action::Prompt(text) => {
                    let prompt = expr::render(text, &scope).map_err(fail)?;
                    let response = crate::llm::chat(&prompt, ctx).await.map_err(|e| {
                        Error::runtime(format!("Step '{}' failed: {}", step.id, e.message))
                    })?;
                    Value::Object(Object::from_iter([("response", Value::from(response))]))
                }
                Action::Invoke { name, arguments } => {
                    let name = expr::render(name, &scope).map_err(fail)?;
                    let inputs = match arguments {
                        Some(arguments) => argument_values(arguments, &scope).map_err(fail)?,
                        None => self.args.clone(),
                    };
                    self.invoke(step, &name, inputs, ctx).await?
                }
            };
            let mut r = result(&step.id);
            r.insert("output", output);
            Ok(r)
        })
    }

    /// `exec`: `line` split as a POSIX shell would and run without one.
    async fn exec(&self, id: &str, line: &str, ctx: &Ctx) -> Result<Value> {
        let argv = shlex::split(line).ok_or_else(|| {
            Error::runtime(format!(
                "Step '{id}' failed: its command has an unclosed quote: {line}"
            ))
        })?;
        let Some((program, args)) = argv.split_first() else {
            return Err(Error::runtime(format!(
                "Step '{id}' failed with exit code 1: Empty command"
            )));
        };
        let p = self.prepare(ctx, None, None);
        let out = run_process(program, args, &p.env, &p.cwd, ChildIo::stdin(None))
            .await
            .map_err(|e| {
                Error::runtime(format!(
                    "Step '{id}' failed with exit code 1: {program}: {e}"
                ))
            })?;
        let code = out.code.unwrap_or(-1);
        if code != 0 {
            let detail = [out.stderr.trim(), out.stdout.trim()]
                .into_iter()
                .find(|s| !s.is_empty())
                .unwrap_or("Unknown error");
            return Err(Error::runtime(format!(
                "Step '{id}' failed with exit code {code}: {detail}"
            )));
        }
        let parsed = Value::from_json(out.stdout.trim()).ok();
        let mut output = Object::from_iter([
            ("stdout", Value::from(out.stdout)),
            ("stderr", Value::from(out.stderr)),
            ("exit_code", Value::from(f64::from(code))),
        ]);
        if let Some(Value::Object(fields)) = parsed {
            for (key, value) in fields.iter() {
                output.insert(key, value.clone());
            }
        }
        Ok(Value::Object(output))
    }

    /// `invoke_pipeline`: workflow `name` of the library (this file's
    /// directory first), run to its end with `inputs`; its outputs are
    /// this step's `output.output`.
    async fn invoke(&self, step: &Step, name: &str, inputs: Object, ctx: &Ctx) -> Result<Value> {
        let id = &step.id;
        let mut dirs: Vec<PathBuf> = self
            .workflow
            .path
            .parent()
            .map(PathBuf::from)
            .into_iter()
            .collect();
        dirs.extend(ctx.services.library.iter().cloned());
        let found = tokio::task::spawn_blocking(move || library::discover(&dirs))
            .await
            .map_err(|e| Error::runtime(e.to_string()))?;
        let entry = found
            .workflows
            .into_iter()
            .find(|w| w.name == name)
            .ok_or_else(|| {
                Error::runtime(format!("Step '{id}' failed: pipeline {name:?} not found"))
            })?;
        let canonical = std::fs::canonicalize(&entry.path).unwrap_or(entry.path.clone());
        if self.stack.contains(&canonical) {
            return Err(Error::runtime(format!(
                "Step '{id}' failed: pipeline {name:?} is already running in this run (a cycle)"
            )));
        }
        let child = file::load(&entry.path)?;
        if child.pipeline.as_ref().is_some_and(|p| !p.enabled) {
            return Err(Error::runtime(format!(
                "Step '{id}' failed: pipeline {name:?} is disabled"
            )));
        }
        let mut stack = self.stack.clone();
        stack.push(canonical);
        let sub_ctx = Ctx {
            cwd: child
                .path
                .parent()
                .map_or_else(|| ctx.cwd.clone(), PathBuf::from),
            // The journal records this run's own steps.
            journal: None,
            ..ctx.clone()
        };
        let mut sub = Run {
            workflow: &child,
            args: resolve_workflow_args(&child, &Value::Object(inputs)),
            results: Object::new(),
            last: None,
            stack,
            pipeline_resume: None,
            login: self.login.clone(),
        };
        let items = match sub.run_from(0, &sub_ctx).await? {
            Outcome::Done(items) => items,
            Outcome::Paused { .. } => {
                return Err(Error::runtime(format!(
                    "Step '{id}' failed: pipeline {name:?} stopped at a gate; a gate inside an \
                     invoked pipeline is not supported (put it in this pipeline)"
                )));
            }
        };
        let output = match <[Value; 1]>::try_from(items) {
            Ok([one]) => one,
            Err(items) => Value::Array(items),
        };
        Ok(Value::Object(Object::from_iter([
            ("pipeline", Value::from(name)),
            ("status", Value::from("completed")),
            ("output", output),
        ])))
    }
}

/// `invoke_pipeline.arguments` with their expressions evaluated: a value
/// that is one expression keeps its type; other strings are rendered.
fn argument_values(arguments: &Object, scope: &Value) -> std::result::Result<Object, String> {
    let mut done = Object::new();
    for (key, value) in arguments.iter() {
        let value = argument_value(value, scope)?;
        if value != Value::Undefined {
            done.insert(key, value);
        }
    }
    Ok(done)
}

fn argument_value(value: &Value, scope: &Value) -> std::result::Result<Value, String> {
    Ok(match value {
        Value::String(text) => match expr::pure(text) {
            Some(inner) => expr::evaluate(inner, scope)?,
            None if text.contains("${{") => Value::String(expr::render(text, scope)?),
            None => value.clone(),
        },
        Value::Object(o) => Value::Object(argument_values(o, scope)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| argument_value(v, scope))
                .collect::<std::result::Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

/// Gobby reads an output that came out as text back as the literal it
/// spells (`"true"`, `"5"`, `"None"`).
fn coerce(value: std::result::Result<Value, String>) -> std::result::Result<Value, String> {
    let value = value?;
    let Value::String(text) = &value else {
        return Ok(match value {
            Value::Undefined => Value::Null,
            other => other,
        });
    };
    let trimmed = text.trim();
    Ok(match trimmed.to_ascii_lowercase().as_str() {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "none" => Value::Null,
        _ => match trimmed.parse::<f64>() {
            Ok(n) if n.is_finite() && !trimmed.is_empty() => Value::Number(n),
            _ => value,
        },
    })
}

/// `$step.output[.field…]`: a step's output, or a field of it.
fn reference(text: &str, results: &Object) -> Value {
    let Some(rest) = text.strip_prefix('$') else {
        return Value::from(text);
    };
    let mut parts = rest.split('.');
    let (Some(id), Some("output")) = (parts.next(), parts.next()) else {
        return Value::from(text);
    };
    let mut value = results.get(id).map(output_of).unwrap_or(Value::Null);
    for part in parts {
        value = value.get_key(part).cloned().unwrap_or(Value::Null);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_kept_from_expressions() {
        for name in [
            "GITHUB_TOKEN",
            "api_key",
            "DB_PASSWORD",
            "DATABASE_URL",
            "MY_PAT",
        ] {
            assert!(is_secret(name), "{name}");
        }
        for name in ["HOME", "PATH", "KEYBOARD", "TOKENIZER_DIR"] {
            assert!(!is_secret(name), "{name}");
        }
    }

    #[test]
    fn outputs_that_come_out_as_text_read_back_as_literals() {
        assert_eq!(coerce(Ok(Value::from("5"))), Ok(Value::Number(5.0)));
        assert_eq!(coerce(Ok(Value::from("True"))), Ok(Value::Bool(true)));
        assert_eq!(coerce(Ok(Value::from("None"))), Ok(Value::Null));
        assert_eq!(coerce(Ok(Value::from("ok\n"))), Ok(Value::from("ok\n")));
        assert_eq!(coerce(Ok(Value::Undefined)), Ok(Value::Null));
    }

    #[test]
    fn references_read_a_step_output_or_a_field() {
        let results = Object::from_iter([(
            "a",
            Value::from_json(r#"{"id": "a", "output": {"stdout": "x", "n": 2}}"#).unwrap(),
        )]);
        assert_eq!(reference("$a.output.n", &results), Value::Number(2.0));
        assert_eq!(reference("$a.output.nope", &results), Value::Null);
        assert_eq!(reference("$zz.output", &results), Value::Null);
        assert_eq!(reference("$a.stdout", &results), Value::from("$a.stdout"));
    }
}
