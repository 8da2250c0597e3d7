//! `lobster run --dry-run` for workflow files: evaluate conditions (gates
//! assumed granted), validate pipelines and strict references, and describe
//! the plan without running anything.

use crate::error::{Error, Result};
use crate::parser::parse_pipeline;
use crate::value::{Object, Value, format_number};

use super::condition;
use super::file::{Exec, OnError, Workflow};
use super::run::resolve_workflow_args;
use super::template::{resolve_args, whole_ref};

/// The plan text written to stderr.
pub fn plan(workflow: &Workflow, provided: &Value) -> Result<String> {
    let args = resolve_workflow_args(workflow, provided);
    let mut results = Object::new();
    let n = workflow.steps.len();
    let mut lines = vec![format!("[DRY RUN] Would execute {n} step{}:", if n == 1 { "" } else { "s" }), String::new()];
    for (i, step) in workflow.steps.iter().enumerate() {
        let num = i + 1;
        let mut r = Object::from_iter([("id", Value::from(step.id.as_str()))]);
        if !condition::evaluate(step.when.as_ref(), &results)? {
            lines.push(format!("  {num}. {}  [skipped — condition: false]", step.id));
            r.insert("skipped", Value::Bool(true));
            results.insert(step.id.clone(), Value::Object(r));
            continue;
        }
        let kind = if step.input.is_some() { "input" } else { step.exec.kind() };
        lines.push(format!("  {num}. {}  [{kind}]", step.id));
        let detail = |label: &str, text: &str| format!("     {label}: {text}");
        match &step.exec {
            Exec::Shell(cmd) => lines.push(detail("run", &resolve_args(cmd, &args))),
            Exec::Pipeline(text) => {
                let text = resolve_args(text, &args);
                let stages = parse_pipeline(&text)
                    .map_err(|e| Error::runtime(format!("Workflow step {} pipeline parse failed: {}", step.id, e.message)))?;
                if let Some(bad) = stages.iter().find(|s| !crate::commands::exists(&s.name)) {
                    return Err(Error::runtime(format!("Workflow step {} pipeline references unknown command: {}", step.id, bad.name)));
                }
                lines.push(detail("pipeline", &text));
            }
            Exec::Workflow { path, .. } => lines.push(detail("workflow", &resolve_args(path, &args))),
            Exec::Parallel(p) => {
                let ids: Vec<&str> = p.branches.iter().map(|b| b.id.as_str()).collect();
                lines.push(detail("branches", &format!("{} (wait: {})", ids.join(", "), if p.wait_any { "any" } else { "all" })));
            }
            Exec::ForEach(fe) => {
                let over = match &fe.over {
                    Value::String(s) => s.clone(),
                    other => other.to_json(),
                };
                lines.push(detail("for_each", &over));
            }
            Exec::None => {}
        }
        if let Some(input) = &step.input {
            lines.push(detail("input", &input.prompt));
        }
        match &step.stdin {
            None => {}
            Some(Value::String(s)) => match whole_ref(s) {
                Some((id, path)) => {
                    if !results.contains_key(&id) {
                        return Err(Error::runtime(format!("Workflow step {} stdin: Unknown step reference: {id}.{path}", step.id)));
                    }
                    lines.push(format!("     stdin: {}  [output unknown at plan time]", s.trim()));
                }
                None => lines.push(detail("stdin", &resolve_args(s, &args))),
            },
            Some(other) => lines.push(detail("stdin", &other.to_json())),
        }
        if let Some(ms) = step.timeout_ms {
            lines.push(format!("     timeout: {ms}ms"));
        }
        if let Some(retry) = &step.retry {
            lines.push(format!(
                "     retry: up to {} attempts, {} backoff (base: {}ms{})",
                retry.max,
                if retry.exponential { "exponential" } else { "fixed" },
                format_number(retry.delay_ms),
                if retry.jitter { ", jitter" } else { "" }
            ));
        }
        match step.on_error {
            OnError::Stop => {}
            OnError::Continue => lines.push("     on_error: continue".into()),
            OnError::SkipRest => lines.push("     on_error: skip_rest".into()),
        }
        if step.approval.is_some() {
            lines.push("     [approval required]".into());
            r.insert("approved", Value::Bool(true));
        }
        if step.input.is_some() {
            r.insert("response", Value::Object(Object::from_iter([("pending", Value::Bool(true))])));
        }
        results.insert(step.id.clone(), Value::Object(r));
    }
    Ok(lines.join("\n") + "\n")
}
