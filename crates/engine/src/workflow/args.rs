//! A workflow's args: defaults merged with what the caller gave, and the
//! `LOBSTER_ARG_*` names steps see them under.

use crate::schema::Schema;
use crate::value::{Object, Value, is_js_space};

use super::file::Workflow;

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

/// Checks args a caller of the workflow service gives against the
/// workflow's declared args: an object, no name it does not declare (when
/// it declares any), and each value as its schema says (a required arg
/// present, of its type). The error names the field.
pub fn check_args(workflow: &Workflow, provided: &Value) -> Result<(), String> {
    let Value::Object(given) = provided else {
        return Err("args must be an object".into());
    };
    if !workflow.args.is_empty()
        && let Some((unknown, _)) = given
            .iter()
            .find(|(k, _)| !workflow.args.iter().any(|(name, _)| name == k))
    {
        let names: Vec<&str> = workflow.args.iter().map(|(n, _)| n.as_str()).collect();
        return Err(format!(
            "args: unknown arg '{unknown}'; the workflow takes {}",
            names.join(", ")
        ));
    }
    let schema = Schema::compile(&workflow.args_schema)?;
    schema
        .validate(provided)
        .map_err(|e| format!("args{}: {}", e.path.trim_end_matches('/'), e.message))
}

/// `LOBSTER_ARG_<NAME>`: upper-cased, runs of non-`[A-Z0-9]` become `_`.
pub(super) fn arg_env_key(key: &str) -> Option<String> {
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
