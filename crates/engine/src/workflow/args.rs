//! A workflow's args: defaults merged with what the caller gave, and the
//! `LOBSTER_ARG_*` names steps see them under.

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
