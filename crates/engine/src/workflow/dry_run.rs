//! `lobster run --dry-run` for workflow files: evaluate conditions (gates
//! assumed granted, inputs pending), validate pipelines and strict stdin
//! references, and describe the plan without running anything.

use crate::error::{Error, Result};
use crate::pipeline::parse::parse_pipeline;
use crate::value::{Object, Value, format_number};

use super::args::resolve_workflow_args;
use super::condition;
use super::file::{Exec, OnError, Retry, Step, Workflow};
use super::template::{resolve_args, strict_lookup, whole_ref};

const DEFERRED_NOTE: &str = "[contains step output refs — unknown at plan time]";

/// Rewrites each match of Lobster's plan-time pattern
/// `\$([A-Za-z0-9_-]+)\.(stdout|json|approved)` with `render(id, field)`
/// (`None` keeps it). The field is a prefix of the path: `$a.approvedBy`
/// matches as `$a.approved` followed by `By`.
fn replace_plan_refs(text: &str, mut render: impl FnMut(&str, &str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let body = &rest[at + 1..];
        let id_len = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(body.len());
        let field = (id_len > 0)
            .then(|| body[id_len..].strip_prefix('.'))
            .flatten()
            .and_then(|after| {
                ["stdout", "json", "approved"]
                    .into_iter()
                    .find(|f| after.starts_with(f))
            });
        match field {
            Some(field) => {
                let len = 1 + id_len + 1 + field.len();
                out.push_str(
                    &render(&body[..id_len], field)
                        .unwrap_or_else(|| rest[at..at + len].to_string()),
                );
                rest = &rest[at + len..];
            }
            None => {
                out.push('$');
                rest = body;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether `text` mentions `$id.stdout` or `$id.json` (as a prefix, like Lobster's pattern).
fn has_output_ref(text: &str) -> bool {
    let mut found = false;
    replace_plan_refs(text, |_, field| {
        found |= field != "approved";
        None
    });
    found
}

/// `text` plus the deferred-output note when it needs one.
fn noted(text: &str) -> String {
    if has_output_ref(text) {
        format!("{text}  {DEFERRED_NOTE}")
    } else {
        text.to_string()
    }
}

/// Args substituted; `$id.approved` resolved for steps already planned.
fn plan_template(input: &str, args: &Object, results: &Object) -> String {
    replace_plan_refs(&resolve_args(input, args), |id, field| {
        let result = results.get(id).filter(|_| field == "approved")?;
        Some(
            if result.get_key("approved") == Some(&Value::Bool(true)) {
                "true"
            } else {
                "false"
            }
            .to_string(),
        )
    })
}

/// Checks every stage of a pipeline exists (stage names that depend on step
/// output are deferred); `Ok(true)` when some were deferred.
fn check_stages(text: &str, unknown: impl Fn(&str) -> String) -> Result<bool> {
    let stages = parse_pipeline(text)?;
    let mut deferred = false;
    for stage in &stages {
        if has_output_ref(&stage.name) {
            deferred = true;
        } else if !crate::commands::exists(&stage.name) {
            return Err(Error::runtime(unknown(&stage.name)));
        }
    }
    Ok(deferred)
}

/// The stdin line: only step-output references are noted.
fn stdin_note(stdin: Option<&Value>) -> Option<String> {
    let Some(Value::String(s)) = stdin else {
        return None;
    };
    let trimmed = s.trim();
    if whole_ref(trimmed).is_some_and(|(_, path)| path == "stdout" || path == "json") {
        Some(format!("{trimmed}  [output unknown at plan time]"))
    } else if has_output_ref(trimmed) {
        Some(format!("{trimmed}  {DEFERRED_NOTE}"))
    } else {
        None
    }
}

/// Lobster's `resolveInputValue` in strict mode, for validation only.
fn check_input(stdin: Option<&Value>, results: &Object) -> Result<()> {
    if let Some(Value::String(s)) = stdin
        && let Some((id, path)) = whole_ref(s)
    {
        strict_lookup(results, &id, &path)?;
    }
    Ok(())
}

fn policy_lines(step: &Step, lines: &mut Vec<String>) {
    if let Some(ms) = step.timeout_ms {
        lines.push(format!("     timeout: {ms}ms"));
    }
    match step.on_error {
        OnError::Stop => {}
        OnError::Continue => lines.push("     on_error: continue".into()),
        OnError::SkipRest => lines.push("     on_error: skip_rest".into()),
    }
    if let Some(Retry {
        max,
        exponential,
        delay_ms,
        jitter,
        ..
    }) = &step.retry
        && *max > 1
    {
        lines.push(format!(
            "     retry: up to {max} attempts, {} backoff (base: {}ms{})",
            if *exponential { "exponential" } else { "fixed" },
            format_number(*delay_ms),
            if *jitter { ", jitter" } else { "" }
        ));
    }
}

/// The plan text written to stderr.
pub fn plan(workflow: &Workflow, provided: &Value) -> Result<String> {
    let args = resolve_workflow_args(workflow, provided);
    let mut results = Object::new();
    let n = workflow.steps.len();
    let mut lines = vec![format!(
        "[DRY RUN] Would execute {n} step{}:\n",
        if n == 1 { "" } else { "s" }
    )];
    for (i, step) in workflow.steps.iter().enumerate() {
        let num = i + 1;
        let id = step.id.as_str();
        let mut r = Object::from_iter([("id", Value::from(id))]);
        if let Exec::Gobby(action) = &step.exec {
            // A pipeline step: its `${{ … }}` need the run's outputs.
            lines.push(format!("  {num}. {id}  [{}]", action.kind()));
            lines.push(format!("     {}", noted(&action.describe())));
            if let Some(condition) = &step.when {
                lines.push(format!("     condition: {}", condition.to_js_string()));
            }
            if step.approval.is_some() {
                lines.push("     [approval required before this step]".into());
            }
            results.insert(id, Value::Object(r));
            continue;
        }
        if !condition::evaluate(step.when.as_ref(), &results)? {
            lines.push(format!("  {num}. {id}  [skipped — condition: false]"));
            r.insert("skipped", Value::Bool(true));
            results.insert(id, Value::Object(r));
            continue;
        }
        if let Some(input) = &step.input {
            lines.push(format!("  {num}. {id}  [input]"));
            lines.push(format!("     prompt: {}", input.prompt));
            lines.push("     [input required]".into());
            r.insert(
                "response",
                Value::Object(Object::from_iter([("pending", Value::Bool(true))])),
            );
            results.insert(id, Value::Object(r));
            continue;
        }
        if let Exec::ForEach(fe) = &step.exec {
            let over = fe.over.as_str().unwrap_or_default();
            lines.push(format!("  {num}. {id}  [for_each]"));
            lines.push(format!("     for_each: {}", noted(over)));
            if over.trim().starts_with('$') {
                check_input(Some(&fe.over), &results).map_err(|e| {
                    Error::runtime(format!("Workflow step {id} for_each: {}", e.message))
                })?;
            }
            lines.push(format!(
                "     item_var: {}, index_var: {}",
                fe.item_var, fe.index_var
            ));
            if let Some(b) = fe.batch_size {
                lines.push(format!("     batch_size: {b}"));
            }
            if let Some(p) = fe.pause_ms.filter(|p| *p > 0) {
                lines.push(format!("     pause_ms: {p}"));
            }
            lines.push(format!("     sub-steps: {}", fe.steps.len()));
            let mut scoped = results.clone();
            scoped.insert(
                fe.item_var.as_str(),
                crate::jv!(r#"{"id":"item","json":{"_placeholder":true}}"#),
            );
            scoped.insert(
                fe.index_var.as_str(),
                crate::jv!(r#"{"id":"index","json":0}"#),
            );
            for (j, sub) in fe.steps.iter().enumerate() {
                let sn = j + 1;
                if !condition::evaluate(sub.when.as_ref(), &scoped)? {
                    lines.push(format!(
                        "       {sn}. {}  [skipped — condition: false]",
                        sub.id
                    ));
                    scoped.insert(sub.id.as_str(), crate::jv!(r#"{"skipped":true}"#));
                    continue;
                }
                check_input(sub.stdin.as_ref(), &scoped).map_err(|e| {
                    Error::runtime(format!(
                        "Workflow step {id} for_each sub-step {} stdin: {}",
                        sub.id, e.message
                    ))
                })?;
                match &sub.exec {
                    Exec::Shell(cmd) => {
                        lines.push(format!(
                            "       {sn}. {}  [shell] run: {}",
                            sub.id,
                            plan_template(cmd, &args, &scoped)
                        ));
                    }
                    Exec::Pipeline(text) => {
                        let text = plan_template(text, &args, &scoped);
                        check_stages(&text, |name| {
                            format!(
                                "Workflow step {id} for_each sub-step {} pipeline: unknown command: {name}",
                                sub.id
                            )
                        })?;
                        lines.push(format!(
                            "       {sn}. {}  [pipeline] pipeline: {text}",
                            sub.id
                        ));
                    }
                    _ => lines.push(format!("       {sn}. {}  [no-op]", sub.id)),
                }
                scoped.insert(
                    sub.id.as_str(),
                    Value::Object(Object::from_iter([("id", Value::from(sub.id.as_str()))])),
                );
            }
            policy_lines(step, &mut lines);
            results.insert(id, Value::Object(r));
            continue;
        }
        check_input(step.stdin.as_ref(), &results)
            .map_err(|e| Error::runtime(format!("Workflow step {id} stdin: {}", e.message)))?;
        match &step.exec {
            Exec::Parallel(p) => {
                lines.push(format!("  {num}. {id}  [parallel]"));
                lines.push(format!(
                    "     wait: {}",
                    if p.wait_any { "any" } else { "all" }
                ));
                if let Some(ms) = p.timeout_ms {
                    lines.push(format!("     timeout: {ms}ms"));
                }
                for b in &p.branches {
                    match &b.exec {
                        Exec::Pipeline(text) => {
                            let text = plan_template(text, &args, &results);
                            check_stages(&text, |name| {
                                format!(
                                    "Parallel branch {} pipeline references unknown command: {name}",
                                    b.id
                                )
                            })?;
                            lines.push(format!(
                                "     branch {}: [pipeline] {}",
                                b.id,
                                noted(&text)
                            ));
                        }
                        Exec::Shell(cmd) => {
                            lines.push(format!(
                                "     branch {}: [shell] {}",
                                b.id,
                                noted(&plan_template(cmd, &args, &results))
                            ));
                        }
                        _ => lines.push(format!("     branch {}: [no-op]", b.id)),
                    }
                    results.insert(
                        b.id.as_str(),
                        Value::Object(Object::from_iter([("id", Value::from(b.id.as_str()))])),
                    );
                }
            }
            Exec::Workflow {
                path,
                args: wf_args,
            } => {
                lines.push(format!("  {num}. {id}  [workflow]"));
                lines.push(format!(
                    "     workflow: {}",
                    noted(&plan_template(path, &args, &results))
                ));
                if let Some(Value::Object(a)) = wf_args
                    && !a.is_empty()
                {
                    lines.push(format!(
                        "     args: {}",
                        a.keys().collect::<Vec<_>>().join(", ")
                    ));
                }
            }
            Exec::Shell(cmd) => {
                lines.push(format!("  {num}. {id}  [shell]"));
                lines.push(format!(
                    "     run: {}",
                    noted(&plan_template(cmd, &args, &results))
                ));
            }
            Exec::Pipeline(text) => {
                let text = plan_template(text, &args, &results);
                let deferred = check_stages(&text, |name| {
                    format!("Workflow step {id} pipeline references unknown command: {name}")
                })?;
                lines.push(format!("  {num}. {id}  [pipeline]"));
                lines.push(format!("     pipeline: {}", noted(&text)));
                if deferred {
                    lines.push(
                        "     [command validation deferred — stage name depends on step output]"
                            .into(),
                    );
                }
            }
            _ => lines.push(format!("  {num}. {id}  [no-op]")),
        }
        if let Some(note) = stdin_note(step.stdin.as_ref()) {
            lines.push(format!("     stdin: {note}"));
        }
        policy_lines(step, &mut lines);
        if step.approval.is_some() {
            // In Lobster's order a step's command runs first, then its gate
            // stops what follows (issue 44: a plan that said only "approval
            // required" of a deploy step read as asking before it ran).
            lines.push(if matches!(step.exec, Exec::None) {
                "     [approval required]".into()
            } else {
                "     [runs, then asks: approval required before the next step]".into()
            });
            r.insert("approved", Value::Bool(true));
        }
        results.insert(id, Value::Object(r));
    }
    lines.push(String::new());
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: Lobster's plan-time pattern matches `$id.approved` as a
    /// prefix, so `$gate.approvedBy` plans as `trueBy`.
    #[test]
    fn plan_refs_match_lobster_prefixes() {
        let results = Object::from_iter([(
            "gate",
            Value::from_json(r#"{"id":"gate","approved":true}"#).unwrap(),
        )]);
        let args = Object::new();
        assert_eq!(
            plan_template(
                "by=$gate.approvedBy $gate.approved $nope.approved $gate.json",
                &args,
                &results
            ),
            "by=trueBy true $nope.approved $gate.json"
        );
        assert!(has_output_ref("x $a.jsonish"));
        assert!(!has_output_ref("x $a.approved $ a.json"));
    }

    /// Issue 44: a step with both `run:` and `approval:` runs, then asks;
    /// the plan says so, and an approval-only step keeps Lobster's words.
    #[test]
    fn a_step_that_runs_and_asks_says_it_runs_first() {
        let text = "name: ship\nsteps:\n  - id: deploy\n    run: ./deploy.sh\n    approval: required\n  - id: gate\n    approval: required\n  - id: announce\n    run: echo done\n";
        let workflow = crate::workflow::file::parse(text, std::path::Path::new("ship.lobster"))
            .expect("the workflow parses");
        let plan = plan(&workflow, &Value::Object(Object::new())).expect("a plan");
        let deploy = plan.find("1. deploy").expect("deploy is planned");
        let gate = plan.find("2. gate").expect("the gate is planned");
        assert!(
            plan[deploy..gate]
                .contains("[runs, then asks: approval required before the next step]"),
            "{plan}"
        );
        assert!(
            plan[gate..].contains("     [approval required]\n"),
            "{plan}"
        );
    }
}
