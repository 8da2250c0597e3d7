//! Integrations with OpenClaw: `openclaw.invoke` (alias `clawd.invoke`),
//! `openclaw.agent`, and the `gog` mail commands.

use super::Output;
use super::http::post_json;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::exec::process::{ChildIo, run_process};
use crate::items::Items;
use crate::pipeline::parse::Args;
use crate::value::{Object, Value};

/// Whether a URL points at this machine (tokens from the environment are
/// only ever sent there).
fn is_local(url: &url::Url) -> bool {
    matches!(
        url.host_str().map(str::to_ascii_lowercase).as_deref(),
        Some("localhost" | "127.0.0.1" | "::1" | "[::1]")
    )
}

pub async fn invoke(name: &str, args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let each = args.truthy("each");
    let item_key = args
        .get("itemKey")
        .or_else(|| args.get("item-key"))
        .map_or_else(|| "item".to_string(), Value::to_js_string);
    let url = args
        .get("url")
        .map(Value::to_js_string)
        .or_else(|| ctx.env.get("OPENCLAW_URL").cloned())
        .or_else(|| ctx.env.get("CLAWD_URL").cloned())
        .unwrap_or_default();
    let url = url.trim();
    if url.is_empty() {
        return Err(Error::runtime(format!(
            "{name} requires --url or OPENCLAW_URL"
        )));
    }
    let (tool, action) = (
        args.get("tool").filter(|v| v.truthy()),
        args.get("action").filter(|v| v.truthy()),
    );
    let (Some(tool), Some(action)) = (tool, action) else {
        return Err(Error::runtime(format!(
            "{name} requires --tool and --action"
        )));
    };
    let explicit_token = args.get("token");
    let token = match explicit_token {
        Some(t) => t.to_js_string(),
        None => ctx
            .env
            .get("OPENCLAW_TOKEN")
            .or_else(|| ctx.env.get("CLAWD_TOKEN"))
            .cloned()
            .unwrap_or_default(),
    };
    let token = token.trim().to_string();
    let tool_args = match args.get("args-json").filter(|v| v.truthy()) {
        None => Value::Object(Object::new()),
        Some(raw) => Value::from_json(&raw.to_js_string())
            .map_err(|_| Error::runtime(format!("{name} --args-json must be valid JSON")))?,
    };
    if each && !matches!(tool_args, Value::Object(_)) {
        return Err(Error::runtime(format!(
            "{name} --each requires --args-json to be an object"
        )));
    }
    let endpoint = url::Url::parse(url)
        .and_then(|u| u.join("/tools/invoke"))
        .map_err(|_| Error::runtime("Invalid URL"))?;
    if !matches!(endpoint.scheme(), "http" | "https") {
        return Err(Error::runtime(format!("{name} requires an http(s) --url")));
    }
    if !token.is_empty() && explicit_token.is_none() && !is_local(&endpoint) {
        return Err(Error::runtime(format!(
            "{name} refuses to send OPENCLAW_TOKEN/CLAWD_TOKEN to non-local --url; pass --token explicitly for remote endpoints"
        )));
    }
    let session_key = args
        .get("sessionKey")
        .or_else(|| args.get("session-key"))
        .filter(|v| v.truthy())
        .map(Value::to_js_string);
    let dry_run = args
        .get("dryRun")
        .or_else(|| args.get("dry-run"))
        .filter(|v| !matches!(v, Value::Null))
        .map(Value::truthy);

    let call = |call_args: Value| {
        let mut body = Object::new();
        body.insert("tool", Value::from(tool.to_js_string()));
        body.insert("action", Value::from(action.to_js_string()));
        body.insert("args", call_args);
        if let Some(k) = &session_key {
            body.insert("sessionKey", Value::from(k.as_str()));
        }
        if let Some(d) = dry_run {
            body.insert("dryRun", Value::Bool(d));
        }
        let token = (!token.is_empty()).then(|| token.clone());
        let endpoint = endpoint.to_string();
        async move {
            let resp = post_json(endpoint, token, Value::Object(body).to_json()).await?;
            if !(200..300).contains(&resp.status) {
                let head: String = resp.body.chars().take(400).collect();
                return Err(Error::runtime(format!(
                    "{name} failed ({}): {head}",
                    resp.status
                )));
            }
            let parsed = if resp.body.is_empty() {
                Value::Null
            } else {
                Value::from_json(&resp.body)
                    .map_err(|_| Error::runtime(format!("{name} expected JSON response")))?
            };
            let result = match parsed {
                Value::Object(o) if o.contains_key("ok") => {
                    if o.get("ok") != Some(&Value::Bool(true)) {
                        let msg = o
                            .get("error")
                            .and_then(|e| e.get_key("message"))
                            .filter(|m| !matches!(m, Value::Null))
                            .map_or_else(|| "Unknown error".to_string(), Value::to_js_string);
                        return Err(Error::runtime(format!("{name} tool error: {msg}")));
                    }
                    o.get("result").cloned().unwrap_or(Value::Null)
                }
                other => other,
            };
            Ok(match result {
                Value::Array(items) => items,
                other => vec![other],
            })
        }
    };

    if !each {
        input.drain()?;
        return Ok(Output::items(call(tool_args).await?));
    }
    let mut out = Vec::new();
    for item in input.into_iter() {
        let mut call_args = tool_args.as_object().cloned().unwrap_or_default();
        call_args.insert(item_key.clone(), item?);
        out.extend(call(Value::Object(call_args)).await?);
    }
    Ok(Output::items(out))
}

/// Largest output accepted from `openclaw agent --json`.
const AGENT_MAX_OUTPUT_BYTES: usize = 10 * 1024 * 1024;

/// A trimmed, non-empty string form of a flag value.
fn opt_text(v: Option<&Value>) -> Option<String> {
    v.filter(|v| !matches!(v, Value::Null))
        .map(Value::to_js_string)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

pub async fn openclaw_agent(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let prompt = opt_text(args.get("prompt").or_else(|| args.get("message")))
        .unwrap_or_else(|| args.positional.join(" ").trim().to_string());
    if prompt.is_empty() {
        return Err(Error::runtime(
            "openclaw.agent requires --prompt, --message, or positional text",
        ));
    }
    let agent = opt_text(args.get("agent"));
    let session_key = opt_text(args.get("sessionKey").or_else(|| args.get("session-key")));
    let session_id = opt_text(args.get("sessionId").or_else(|| args.get("session-id")));
    if agent.is_none() && session_key.is_none() && session_id.is_none() {
        return Err(Error::runtime(
            "openclaw.agent requires --agent, --session-key, or --session-id",
        ));
    }
    let items = input.collect()?;
    let message = if items.is_empty() {
        prompt
    } else {
        let jsonl: Vec<String> = items.iter().map(Value::to_json).collect();
        format!("{prompt}\n\nPipeline input (JSONL):\n{}", jsonl.join("\n"))
    };
    let mut argv = vec![
        "agent".to_string(),
        "--json".into(),
        "--message".into(),
        message,
    ];
    let mut push = |name: &str, v: Option<String>| {
        if let Some(v) = v {
            argv.push(name.to_string());
            argv.push(v);
        }
    };
    push("--agent", agent);
    push("--model", opt_text(args.get("model")));
    push("--session-key", session_key);
    push("--session-id", session_id);
    push("--thinking", opt_text(args.get("thinking")));
    if let Some(t) = args.get("timeout").filter(|v| !matches!(v, Value::Null)) {
        let n = t.to_number();
        if n.fract() != 0.0 || n < 0.0 || !n.is_finite() {
            return Err(Error::runtime(
                "openclaw.agent --timeout must be a non-negative integer in seconds",
            ));
        }
        push("--timeout", Some(crate::value::format_number(n)));
    }
    if args.get("local") == Some(&Value::Bool(true)) {
        argv.push("--local".into());
    }
    let exe = ctx
        .env_var("LOBSTER_OPENCLAW_BIN")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "openclaw".into());
    let out = run_process(&exe, &argv, &ctx.env, &ctx.cwd, ChildIo::default())
        .await
        .map_err(|e| {
            Error::io(
                if e.kind() == std::io::ErrorKind::NotFound {
                    "openclaw.agent could not find the OpenClaw CLI".to_string()
                } else {
                    format!("openclaw.agent failed: {e}")
                },
                e,
            )
        })?;
    if out.stdout.len() > AGENT_MAX_OUTPUT_BYTES {
        return Err(Error::runtime(format!(
            "openclaw.agent output exceeded {AGENT_MAX_OUTPUT_BYTES} bytes"
        )));
    }
    if out.code != Some(0) {
        let detail = if !out.stderr.is_empty() {
            out.stderr
        } else if !out.stdout.is_empty() {
            out.stdout
        } else {
            format!("exited with code {}", out.code_text())
        };
        return Err(Error::runtime(format!(
            "openclaw.agent failed: {}",
            detail.trim()
        )));
    }
    let trimmed = out.stdout.trim();
    match Value::from_json(if trimmed.is_empty() { "null" } else { trimmed }) {
        Ok(v @ Value::Object(_)) => Ok(Output::items(vec![v])),
        _ => Err(Error::runtime(
            "openclaw.agent expected JSON output from `openclaw agent --json`",
        )),
    }
}
