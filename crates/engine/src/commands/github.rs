//! The built-in named workflows `github.pr.monitor` and
//! `github.pr.monitor.notify`: fetch a PR with `gh`, diff it against the
//! last stored snapshot, and report changes.

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::exec::process::{ChildIo, run_process};
use crate::value::{Object, Value, stable_stringify};

const PR_FIELDS: &str = "number,title,url,state,isDraft,mergeable,reviewDecision,author,baseRefName,headRefName,updatedAt";
const SUBSET: [&str; 10] = [
    "number",
    "title",
    "url",
    "state",
    "isDraft",
    "mergeable",
    "reviewDecision",
    "updatedAt",
    "baseRefName",
    "headRefName",
];

async fn fetch_pr(repo: &str, pr: &str, ctx: &Ctx) -> Result<Value> {
    let argv: Vec<String> = ["pr", "view", pr, "--repo", repo, "--json", PR_FIELDS]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let out = run_process("gh", &argv, &ctx.env, &ctx.cwd, ChildIo::default())
        .await
        .map_err(|e| {
            Error::io(
                if e.kind() == std::io::ErrorKind::NotFound {
                    "gh not found on PATH (install GitHub CLI)".to_string()
                } else {
                    e.to_string()
                },
                e,
            )
        })?;
    if out.code != Some(0) {
        let detail = if out.stderr.trim().is_empty() {
            out.stdout.trim()
        } else {
            out.stderr.trim()
        };
        return Err(Error::runtime(format!(
            "gh failed ({}): {detail}",
            out.code_text()
        )));
    }
    Value::from_json(out.stdout.trim()).map_err(|_| Error::runtime("gh returned non-JSON output"))
}

/// The compared fields (absent ones stay `None`, as JavaScript `undefined`).
fn subset(snapshot: &Value) -> Option<Vec<(&'static str, Option<Value>)>> {
    matches!(snapshot, Value::Object(_) | Value::Array(_)).then(|| {
        SUBSET
            .iter()
            .map(|k| (*k, snapshot.get_key(k).cloned()))
            .collect()
    })
}

/// `{changedFields, changes: {field: {from, to}}}` between two snapshots.
fn change_summary(before: Option<&Value>, after: &Value) -> Value {
    let Some(a) = subset(after) else {
        return crate::jv!(r#"{"changedFields":[],"changes":{}}"#);
    };
    let b = before.and_then(subset);
    let mut fields = Vec::new();
    let mut changes = Object::new();
    for (key, to) in &a {
        let from = b.as_ref().map(|b| {
            b.iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.clone())
        });
        let changed = match &from {
            None => true,
            Some(f) => f.as_ref().map(Value::to_json) != to.as_ref().map(Value::to_json),
        };
        if changed {
            fields.push(Value::from(*key));
            let mut c = Object::new();
            match from {
                None => c.insert("from", Value::Null),
                Some(Some(f)) => c.insert("from", f),
                Some(None) => {}
            }
            if let Some(t) = to {
                c.insert("to", t.clone());
            }
            changes.insert(*key, Value::Object(c));
        }
    }
    Value::Object(Object::from_iter([
        ("changedFields", Value::Array(fields)),
        ("changes", Value::Object(changes)),
    ]))
}

/// Runs `github.pr.monitor` with `{repo, pr, key?, changesOnly?, summaryOnly?}`.
pub async fn pr_monitor(args: &Value, ctx: &Ctx) -> Result<Value> {
    let repo = args.get_key("repo").filter(|v| v.truthy());
    let pr = args.get_key("pr").filter(|v| v.truthy());
    let (Some(repo), Some(pr)) = (repo, pr) else {
        return Err(Error::runtime(
            "github.pr.monitor requires args.repo and args.pr",
        ));
    };
    let (repo_s, pr_s) = (repo.to_js_string(), pr.to_js_string());
    let key = args
        .get_key("key")
        .filter(|v| !matches!(v, Value::Null))
        .map_or_else(|| format!("github.pr:{repo_s}#{pr_s}"), Value::to_js_string);
    let current = fetch_pr(&repo_s, &pr_s, ctx).await?;
    let before = super::state::read_value(ctx, &key).await?;
    let changed = before
        .as_ref()
        .is_none_or(|b| stable_stringify(b) != stable_stringify(&current));
    super::state::write_value(ctx, &key, &current).await?;
    let mut out = Object::new();
    out.insert("kind", Value::from("github.pr.monitor"));
    out.insert("repo", repo.clone());
    out.insert("prNumber", Value::Number(pr.to_number()));
    out.insert("key", Value::from(key));
    if args.get_key("changesOnly").is_some_and(Value::truthy) && !changed {
        out.insert("changed", Value::Bool(false));
        out.insert("suppressed", Value::Bool(true));
        return Ok(Value::Object(out));
    }
    out.insert("changed", Value::Bool(changed));
    out.insert("summary", change_summary(before.as_ref(), &current));
    if args.get_key("summaryOnly").is_some_and(Value::truthy) {
        let pr_info: Object = ["number", "title", "url", "state", "updatedAt"]
            .iter()
            .filter_map(|k| Some((*k, current.get_key(k)?.clone())))
            .collect();
        out.insert("pr", Value::Object(pr_info));
    } else {
        out.insert("prSnapshot", current);
    }
    Ok(Value::Object(out))
}

/// Runs `github.pr.monitor.notify`: one human-friendly message per change.
pub async fn pr_monitor_notify(args: &Value, ctx: &Ctx) -> Result<Value> {
    let mut base_args = args.as_object().cloned().unwrap_or_default();
    base_args.insert("changesOnly", Value::Bool(true));
    base_args.insert("summaryOnly", Value::Bool(true));
    let base = pr_monitor(&Value::Object(base_args), ctx).await?;
    if base.get_key("suppressed").is_some_and(Value::truthy) {
        return Ok(crate::jv!(
            r#"{"kind":"github.pr.monitor.notify","suppressed":true}"#
        ));
    }
    let fields: Vec<String> = base
        .get_key("summary")
        .and_then(|s| s.get_key("changedFields"))
        .and_then(Value::as_array)
        .map(|f| f.iter().map(Value::to_js_string).collect())
        .unwrap_or_default();
    let info = base
        .get_key("pr")
        .cloned()
        .unwrap_or_else(|| Value::Object(Object::new()));
    let repo = args
        .get_key("repo")
        .map(Value::to_js_string)
        .unwrap_or_default();
    let pr = args.get_key("pr").map_or(f64::NAN, Value::to_number);
    let title = info
        .get_key("title")
        .filter(|t| t.truthy())
        .map(|t| format!(": {}", t.to_js_string()))
        .unwrap_or_default();
    let url = info
        .get_key("url")
        .filter(|u| u.truthy())
        .map(|u| format!(" {}", u.to_js_string()))
        .unwrap_or_default();
    let list = if fields.is_empty() {
        String::new()
    } else {
        format!(" ({})", fields.join(", "))
    };
    let raw = format!(
        "PR updated: {repo}#{}{title}{list}.{url}",
        crate::value::format_number(pr)
    );
    let message = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Object::new();
    out.insert("kind", Value::from("github.pr.monitor.notify"));
    out.insert(
        "changed",
        Value::Bool(base.get_key("changed").is_some_and(Value::truthy)),
    );
    out.insert("repo", args.get_key("repo").cloned().unwrap_or_default());
    out.insert("prNumber", Value::Number(pr));
    out.insert("message", Value::from(message));
    out.insert("pr", info);
    out.insert(
        "summary",
        base.get_key("summary").cloned().unwrap_or_default(),
    );
    Ok(Value::Object(out))
}
