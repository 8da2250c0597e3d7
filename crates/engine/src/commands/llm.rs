//! `llm.invoke` and `llm_task.invoke`: typed LLM calls through an adapter
//! (OpenClaw's `llm-task` tool, a Pi adapter, or any HTTP adapter), with a
//! response cache, run-state reuse and optional output-schema enforcement.

use sha2::{Digest, Sha256};

use super::Output;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::pipeline::parse::Args;
use crate::schema::Schema;
use crate::value::{Object, Value, stable_stringify};

use super::http::{HttpResponse, post_json};

/// An adapter endpoint.
struct Adapter {
    url: String,
    token: Option<String>,
    /// `source` of fresh items.
    source: &'static str,
    /// Wrap the payload as an OpenClaw `llm-task` tool call.
    openclaw: bool,
    /// Ask the LLM the host configured (see [`crate::llm`]) instead.
    host: bool,
}

fn first_env(ctx: &Ctx, names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| ctx.env_var(n))
        .map(|s| s.trim().to_string())
}

fn arg_text(args: &Args, key: &str) -> Option<String> {
    args.get(key)
        .map(Value::to_js_string)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Lobster's `flag()`: strings "false"/"0"/"no" are false.
fn flag(v: Option<Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "false" | "0" | "no" => false,
            "true" | "1" | "yes" => true,
            _ => !s.is_empty(),
        },
        Some(other) => other.truthy(),
    }
}

fn resolve_provider(name: &str, args: &Args, ctx: &Ctx) -> Result<String> {
    if name == "llm_task.invoke" {
        return Ok("openclaw".into());
    }
    let explicit = arg_text(args, "provider")
        .or_else(|| first_env(ctx, &["LOBSTER_LLM_PROVIDER"]))
        .map(|s| s.to_lowercase());
    if let Some(p) = explicit {
        return match p.as_str() {
            "openclaw" | "pi" | "http" | "clawdis" => Ok(p),
            _ => Err(Error::runtime(format!("Unsupported llm provider: {p}"))),
        };
    }
    if ctx.env_var("LOBSTER_PI_LLM_ADAPTER_URL").is_some() {
        Ok("pi".into())
    } else if ctx
        .env_var("OPENCLAW_URL")
        .or_else(|| ctx.env_var("CLAWD_URL"))
        .is_some()
    {
        Ok("openclaw".into())
    } else if ctx.env_var("LOBSTER_LLM_ADAPTER_URL").is_some() {
        Ok("http".into())
    } else if ctx.services.llm().is_some() {
        // The LLM of Clawdis' settings (`llm: {baseUrl, model}`).
        Ok("clawdis".into())
    } else {
        Err(Error::runtime(
            "llm.invoke could not resolve a provider. Set --provider or LOBSTER_LLM_PROVIDER",
        ))
    }
}

/// `new URL(raw)` with an empty or `/` path replaced by `/invoke`.
fn adapter_endpoint(raw: &str) -> Result<String> {
    let mut url = url::Url::parse(raw).map_err(|_| Error::runtime("Invalid URL"))?;
    if url.path() == "/" || url.path().is_empty() {
        url.set_path("/invoke");
    }
    Ok(url.to_string())
}

fn resolve_adapter(name: &str, provider: &str, args: &Args, ctx: &Ctx) -> Result<Adapter> {
    let token = |envs: &[&str]| {
        arg_text(args, "token")
            .or_else(|| first_env(ctx, envs))
            .filter(|t| !t.is_empty())
    };
    match provider {
        "openclaw" => {
            let base = first_env(ctx, &["OPENCLAW_URL", "CLAWD_URL"]).ok_or_else(|| {
                Error::runtime(format!(
                    "{name} requires OPENCLAW_URL (or CLAWD_URL) for provider=openclaw"
                ))
            })?;
            let url = url::Url::parse(&base)
                .and_then(|u| u.join("/tools/invoke"))
                .map_err(|_| Error::runtime("Invalid URL"))?;
            Ok(Adapter {
                url: url.to_string(),
                token: token(&["OPENCLAW_TOKEN", "CLAWD_TOKEN"]),
                source: if name == "llm_task.invoke" {
                    "clawd"
                } else {
                    "openclaw"
                },
                openclaw: true,
                host: false,
            })
        }
        "clawdis" => Ok(Adapter {
            url: crate::llm::configured(ctx)?.base_url.clone(),
            token: None,
            source: "clawdis",
            openclaw: false,
            host: true,
        }),
        "pi" => {
            let base = first_env(ctx, &["LOBSTER_PI_LLM_ADAPTER_URL"]).ok_or_else(|| {
                Error::runtime(format!(
                    "{name} requires LOBSTER_PI_LLM_ADAPTER_URL for provider=pi"
                ))
            })?;
            Ok(Adapter {
                url: adapter_endpoint(&base)?,
                token: token(&["LOBSTER_PI_LLM_ADAPTER_TOKEN"]),
                source: "pi",
                openclaw: false,
                host: false,
            })
        }
        _ => {
            let base = first_env(ctx, &["LOBSTER_LLM_ADAPTER_URL"]).ok_or_else(|| {
                Error::runtime(format!(
                    "{name} requires LOBSTER_LLM_ADAPTER_URL for provider=http"
                ))
            })?;
            Ok(Adapter {
                url: adapter_endpoint(&base)?,
                token: token(&["LOBSTER_LLM_ADAPTER_TOKEN"]),
                source: "http",
                openclaw: false,
                host: false,
            })
        }
    }
}

/// Input items become artifacts: objects as-is, scalars as text, others as JSON data.
fn normalize_artifact(raw: Value) -> Value {
    match raw {
        Value::Object(_) => raw,
        Value::String(s) => Value::Object(Object::from_iter([
            ("kind", Value::from("text")),
            ("text", Value::String(s)),
        ])),
        v @ (Value::Number(_) | Value::Bool(_)) => Value::Object(Object::from_iter([
            ("kind", Value::from("text")),
            ("text", Value::String(v.to_js_string())),
        ])),
        other => Value::Object(Object::from_iter([
            ("kind", Value::from("json")),
            ("data", other),
        ])),
    }
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse_json_arg(args: &Args, key: &str, label: &str, want_array: bool) -> Result<Option<Value>> {
    let Some(raw) = args.get(key).filter(|v| v.truthy()) else {
        return Ok(None);
    };
    let what = if want_array { "array" } else { "object" };
    let err = || Error::runtime(format!("{label} must be a JSON {what}"));
    let parsed = Value::from_json(&raw.to_js_string()).map_err(|_| err())?;
    match (&parsed, want_array) {
        (Value::Array(_), true) | (Value::Object(_), false) => Ok(Some(parsed)),
        _ => Err(err()),
    }
}

fn optional_number(args: &Args, key: &str) -> Option<f64> {
    args.get(key)
        .filter(|v| !matches!(v, Value::Null))
        .map(Value::to_number)
        .filter(|n| n.is_finite())
}

/// Extracts the adapter's response envelope `{ok, result?, error?}`.
fn response_envelope(name: &str, adapter: &Adapter, resp: HttpResponse) -> Result<Value> {
    if !(200..300).contains(&resp.status) {
        let head: String = resp.body.chars().take(400).collect();
        return Err(Error::runtime(format!(
            "{name} request failed: {} {}: {head}",
            resp.status, resp.reason
        )));
    }
    let parsed = if resp.body.is_empty() {
        Value::Null
    } else {
        Value::from_json(&resp.body)
            .map_err(|_| Error::runtime(format!("{name} request failed: Response was not JSON")))?
    };
    let wrap = |result: Value| {
        Value::Object(Object::from_iter([
            ("ok", Value::Bool(true)),
            ("result", result),
        ]))
    };
    match parsed {
        Value::Object(o) if o.contains_key("ok") => {
            if !adapter.openclaw {
                return Ok(Value::Object(o));
            }
            if o.get("ok") != Some(&Value::Bool(true)) {
                let msg = o
                    .get("error")
                    .and_then(|e| e.get_key("message"))
                    .map_or_else(|| "Unknown error".into(), Value::to_js_string);
                return Err(Error::runtime(format!(
                    "{name} request failed: openclaw adapter error: {msg}"
                )));
            }
            match o.get("result").cloned().unwrap_or_default() {
                Value::Object(inner) if inner.contains_key("ok") => Ok(Value::Object(inner)),
                inner => Ok(wrap(inner)),
            }
        }
        other => Ok(wrap(other)),
    }
}

fn valid_envelope(env: &Value) -> bool {
    let Some(o) = env.as_object() else {
        return false;
    };
    if !matches!(o.get("ok"), Some(Value::Bool(_))) {
        return false;
    }
    match o.get("result") {
        None | Some(Value::Null) => true,
        Some(Value::Object(r)) => match r.get("output") {
            Some(Value::Object(out)) => {
                out.get("text")
                    .is_none_or(|t| matches!(t, Value::String(_) | Value::Null))
                    && out
                        .get("format")
                        .is_none_or(|f| matches!(f, Value::String(_) | Value::Null))
            }
            _ => false,
        },
        Some(_) => false,
    }
}

fn normalize_item(
    name: &str,
    env: &Value,
    cache_key: &str,
    schema_version: &str,
    hashes: &[Value],
    source: &str,
    attempt: u32,
) -> Value {
    let result = env.get_key("result").cloned().unwrap_or_default();
    let get = |k: &str| {
        result
            .get_key(k)
            .filter(|v| !matches!(v, Value::Null))
            .cloned()
    };
    let output = get("output").unwrap_or_default();
    let out_get = |k: &str| {
        output
            .get_key(k)
            .filter(|v| !matches!(v, Value::Null))
            .cloned()
    };
    let data = out_get("data");
    let mut out = Object::new();
    out.insert(
        "format",
        out_get("format").unwrap_or_else(|| {
            Value::from(if data.as_ref().is_some_and(Value::truthy) {
                "json"
            } else {
                "text"
            })
        }),
    );
    out.insert("text", out_get("text").unwrap_or_default());
    out.insert("data", data.unwrap_or_default());
    let mut item = Object::new();
    item.insert("kind", Value::from(name));
    item.insert("runId", get("runId").unwrap_or_default());
    item.insert("prompt", get("prompt").unwrap_or_default());
    item.insert("model", get("model").unwrap_or_default());
    item.insert("schemaVersion", Value::from(schema_version));
    item.insert(
        "status",
        Value::from(get("status").map_or_else(|| "completed".to_string(), |s| s.to_js_string())),
    );
    item.insert("cacheKey", Value::from(cache_key));
    item.insert("artifactHashes", Value::Array(hashes.to_vec()));
    item.insert("output", Value::Object(out));
    item.insert("usage", get("usage").unwrap_or_default());
    item.insert("metadata", get("metadata").unwrap_or_default());
    item.insert("warnings", get("warnings").unwrap_or_default());
    item.insert("diagnostics", get("diagnostics").unwrap_or_default());
    item.insert("createdAt", Value::from(clawdis_store::now_iso()));
    item.insert("source", Value::from(source));
    item.insert("cached", Value::Bool(false));
    item.insert("attemptCount", Value::from(attempt as f64));
    Value::Object(item)
}

fn cache_path(ctx: &Ctx, namespace: &str, key: &str) -> std::path::PathBuf {
    let dir = ctx
        .env_var("LOBSTER_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| ctx.cwd.join(".lobster-cache"));
    dir.join(namespace).join(format!("{key}.json"))
}

fn replayed(items: &[Value], source: &str) -> Vec<Value> {
    items
        .iter()
        .map(|i| {
            let mut o = i.as_object().cloned().unwrap_or_default();
            o.insert("source", Value::from(source));
            o.insert("cached", Value::Bool(true));
            o.insert("replayed", Value::Bool(true));
            Value::Object(o)
        })
        .collect()
}

pub async fn invoke(name: &str, args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let provider = resolve_provider(name, args, ctx)?;
    let adapter = resolve_adapter(name, &provider, args, ctx)?;
    let prompt = match args.get("prompt").filter(|v| v.truthy()) {
        Some(p) => p.to_js_string(),
        None => args.positional.join(" "),
    };
    if prompt.is_empty() {
        return Err(Error::runtime(format!(
            "{name} requires --prompt or positional text"
        )));
    }
    let model = arg_text(args, "model")
        .or_else(|| first_env(ctx, &["LOBSTER_LLM_MODEL", "LLM_TASK_MODEL"]))
        .unwrap_or_default();
    let schema_version = arg_text(args, "schema-version")
        .or_else(|| {
            first_env(
                ctx,
                &["LOBSTER_LLM_SCHEMA_VERSION", "LLM_TASK_SCHEMA_VERSION"],
            )
        })
        .unwrap_or_else(|| "v1".into());
    let max_output_tokens = optional_number(args, "max-output-tokens");
    let temperature = optional_number(args, "temperature");
    let extra = parse_json_arg(
        args,
        "artifacts-json",
        &format!("{name} --artifacts-json"),
        true,
    )?;
    let metadata = parse_json_arg(
        args,
        "metadata-json",
        &format!("{name} --metadata-json"),
        false,
    )?;
    let output_schema = parse_json_arg(
        args,
        "output-schema",
        &format!("{name} --output-schema"),
        false,
    )?;
    let max_retries = match &output_schema {
        None => 0.0,
        Some(_) => {
            let raw = args.get("max-validation-retries").cloned().or_else(|| {
                first_env(
                    ctx,
                    &[
                        "LOBSTER_LLM_VALIDATION_RETRIES",
                        "LLM_TASK_VALIDATION_RETRIES",
                    ],
                )
                .map(Value::String)
            });
            let n = raw.map_or(f64::NAN, |v| v.to_number());
            if n.is_finite() { n.max(0.0) } else { 1.0 }
        }
    };
    let disable_cache = flag(args.get("disable-cache").cloned());
    let force_refresh = flag(args.get("refresh").cloned().or_else(|| {
        first_env(
            ctx,
            &["LOBSTER_LLM_FORCE_REFRESH", "LLM_TASK_FORCE_REFRESH"],
        )
        .map(Value::String)
    }));
    let state_key =
        arg_text(args, "state-key").or_else(|| first_env(ctx, &["LOBSTER_RUN_STATE_KEY"]));

    let mut artifacts: Vec<Value> = input.collect()?;
    if let Some(Value::Array(more)) = extra {
        artifacts.extend(more);
    }
    let artifacts: Vec<Value> = artifacts.into_iter().map(normalize_artifact).collect();
    let hashes: Vec<Value> = artifacts
        .iter()
        .map(|a| Value::String(sha256_hex(&stable_stringify(a))))
        .collect();
    let mut key_src = Object::new();
    key_src.insert("cacheKeyVersion", Value::from(2.0));
    key_src.insert("provider", Value::from(provider.as_str()));
    key_src.insert("prompt", Value::from(prompt.as_str()));
    key_src.insert(
        "model",
        Value::from(if model.is_empty() {
            format!("{provider}-default")
        } else {
            model.clone()
        }),
    );
    key_src.insert("schemaVersion", Value::from(schema_version.as_str()));
    key_src.insert("artifactHashes", Value::Array(hashes.clone()));
    key_src.insert("outputSchema", output_schema.clone().unwrap_or_default());
    key_src.insert(
        "temperature",
        temperature.map_or(Value::Null, Value::Number),
    );
    key_src.insert(
        "maxOutputTokens",
        max_output_tokens.map_or(Value::Null, Value::Number),
    );
    let cache_key = sha256_hex(&stable_stringify(&Value::Object(key_src)));

    if let (Some(sk), false) = (&state_key, force_refresh)
        && let Some(stored) = super::state::read_value(ctx, sk).await?
        && stored.get_key("type").and_then(Value::as_str) == Some(name)
        && stored.get_key("cacheKey").and_then(Value::as_str) == Some(cache_key.as_str())
        && let Some(Value::Array(items)) = stored.get_key("items")
    {
        return Ok(Output::items(replayed(items, "run_state")));
    }
    let cache_file = cache_path(ctx, name, &cache_key);
    if !disable_cache
        && !force_refresh
        && let Ok(text) = tokio::fs::read_to_string(&cache_file).await
        && let Ok(entry) = Value::from_json(&text)
        && entry.get_key("cacheKey").and_then(Value::as_str) == Some(cache_key.as_str())
        && let Some(Value::Array(items)) = entry.get_key("items")
    {
        return Ok(Output::items(replayed(items, "cache")));
    }

    let mut payload = Object::new();
    payload.insert("prompt", Value::from(prompt.as_str()));
    if !model.is_empty() {
        payload.insert("model", Value::from(model.as_str()));
    }
    payload.insert("artifacts", Value::Array(artifacts));
    payload.insert("artifactHashes", Value::Array(hashes.clone()));
    if let Some(m) = metadata {
        payload.insert("metadata", m);
    }
    if let Some(s) = &output_schema {
        payload.insert("outputSchema", s.clone());
    }
    payload.insert("schemaVersion", Value::from(schema_version.as_str()));
    if let Some(n) = max_output_tokens {
        payload.insert("maxOutputTokens", Value::Number(n));
    }
    if let Some(t) = temperature {
        payload.insert("temperature", Value::Number(t));
    }
    let validator = match &output_schema {
        Some(s) => Some(
            Schema::compile(s)
                .map_err(|e| Error::runtime(format!("{name} --output-schema is invalid: {e}")))?,
        ),
        None => None,
    };

    let mut attempt: u32 = 0;
    let mut last_errors: Vec<String> = Vec::new();
    loop {
        attempt += 1;
        if attempt > 1 {
            let mut rc = Object::new();
            rc.insert("attempt", Value::from(attempt as f64));
            if !last_errors.is_empty() {
                rc.insert(
                    "validationErrors",
                    Value::Array(
                        last_errors
                            .iter()
                            .map(|e| Value::from(e.as_str()))
                            .collect(),
                    ),
                );
            }
            payload.insert("retryContext", Value::Object(rc));
        }
        let body = if adapter.openclaw {
            Value::Object(Object::from_iter([
                ("tool", Value::from("llm-task")),
                ("action", Value::from("invoke")),
                ("args", Value::Object(payload.clone())),
            ]))
        } else {
            Value::Object(payload.clone())
        };
        let env = if adapter.host {
            crate::llm::invoke_envelope(&payload, ctx)
                .await
                .map_err(|e| Error::runtime(format!("{name} request failed: {}", e.message)))?
        } else {
            let resp = post_json(adapter.url.clone(), adapter.token.clone(), body.to_json())
                .await
                .map_err(|e| {
                    Error::runtime(format!(
                        "{name} request failed: {}",
                        e.message.trim_start_matches("fetch failed: ")
                    ))
                })?;
            response_envelope(name, &adapter, resp)?
        };
        if !valid_envelope(&env) {
            return Err(Error::runtime(format!(
                "{name} received invalid response envelope"
            )));
        }
        if env.get_key("ok") != Some(&Value::Bool(true)) {
            let msg = env
                .get_key("error")
                .and_then(|e| e.get_key("message"))
                .filter(|m| !matches!(m, Value::Null))
                .map_or_else(
                    || "llm adapter returned an error".to_string(),
                    Value::to_js_string,
                );
            return Err(Error::runtime(format!("{name} remote error: {msg}")));
        }
        let item = normalize_item(
            name,
            &env,
            &cache_key,
            &schema_version,
            &hashes,
            adapter.source,
            attempt,
        );
        let valid = match &validator {
            None => Ok(()),
            Some(v) => {
                let data = item
                    .get_key("output")
                    .and_then(|o| o.get_key("data"))
                    .cloned()
                    .unwrap_or_default();
                v.validate_all(&data)
            }
        };
        match valid {
            Ok(()) => {
                let items = vec![item];
                persist(
                    ctx,
                    name,
                    state_key.as_deref(),
                    &cache_key,
                    &items,
                    (!disable_cache).then_some(&cache_file),
                )
                .await?;
                return Ok(Output::items(items));
            }
            Err(errors) => {
                last_errors = errors;
                if f64::from(attempt) >= max_retries + 1.0 {
                    return Err(Error::runtime(format!(
                        "{name} output failed schema validation: {}",
                        last_errors.join("; ")
                    )));
                }
            }
        }
    }
}

async fn persist(
    ctx: &Ctx,
    name: &str,
    state_key: Option<&str>,
    cache_key: &str,
    items: &[Value],
    cache_file: Option<&std::path::PathBuf>,
) -> Result<()> {
    if let Some(sk) = state_key {
        let mut record = Object::new();
        record.insert("type", Value::from(name));
        record.insert("version", Value::from(1.0));
        record.insert("cacheKey", Value::from(cache_key));
        record.insert("items", Value::Array(items.to_vec()));
        record.insert("storedAt", Value::from(clawdis_store::now_iso()));
        super::state::write_value(ctx, sk, &Value::Object(record)).await?;
    }
    if let Some(path) = cache_file {
        let mut entry = Object::new();
        entry.insert("items", Value::Array(items.to_vec()));
        entry.insert("cacheKey", Value::from(cache_key));
        entry.insert("storedAt", Value::from(clawdis_store::now_iso()));
        if let Some(dir) = path.parent() {
            tokio::fs::create_dir_all(dir)
                .await
                .map_err(|e| Error::io(format!("cannot write llm cache: {e}"), e))?;
        }
        let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
        tokio::fs::write(&tmp, Value::Object(entry).to_json_pretty() + "\n")
            .await
            .map_err(|e| Error::io(format!("cannot write llm cache: {e}"), e))?;
        tokio::fs::rename(&tmp, path)
            .await
            .map_err(|e| Error::io(format!("cannot write llm cache: {e}"), e))?;
    }
    Ok(())
}
