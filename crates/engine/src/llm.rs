//! The LLM the host configured (`llm: {baseUrl, model}` in settings, the
//! key in the keychain): an OpenAI-compatible chat endpoint that pipeline
//! `prompt` steps ask.

use std::sync::Arc;

use crate::commands::http::post_json;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::value::{Object, Value};

/// The keychain name of the LLM's key (`clawdis secrets set llm-api-key`).
pub const KEY_SECRET: &str = "llm-api-key";

/// The settings' `llm: {baseUrl, model}`: an OpenAI-compatible endpoint,
/// whose key is the keychain's [`KEY_SECRET`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmSettings {
    /// The API's base URL, up to its version (`https://api.openai.com/v1`).
    pub base_url: String,
    /// The model asked.
    pub model: String,
}

impl LlmSettings {
    /// The engine's view of these settings, its key read from `key`.
    pub fn config(&self, key: KeySource) -> LlmConfig {
        LlmConfig {
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            key,
        }
    }

    /// The `llm` of `<home>/settings.json`, if it has one.
    pub fn in_home(home: &std::path::Path) -> std::result::Result<Option<LlmSettings>, String> {
        #[derive(serde::Deserialize)]
        struct File {
            llm: Option<LlmSettings>,
        }
        let path = home.join("settings.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str::<File>(&text)
                .map(|f| f.llm)
                .map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }
}

/// Where the endpoint's key comes from, read at each call (from the
/// keychain, in the backend), so a key set later is used without a
/// restart. `None`: the endpoint takes no key.
pub type KeySource = Arc<dyn Fn() -> std::result::Result<Option<String>, String> + Send + Sync>;

/// An OpenAI-compatible endpoint and model.
#[derive(Clone)]
pub struct LlmConfig {
    /// The API's base URL, up to and including its version (`…/v1`).
    pub base_url: String,
    /// The model asked.
    pub model: String,
    /// The bearer key's source.
    pub key: KeySource,
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

/// Longest piece of an error answer quoted in a message.
const QUOTED: usize = 300;

/// Asks the configured model `prompt` as one user message; its answer.
pub async fn chat(prompt: &str, ctx: &Ctx) -> Result<String> {
    let messages = vec![message("user", prompt)];
    let answer = complete(&messages, &Object::new(), ctx).await?;
    Ok(text_of(&answer).unwrap_or_default())
}

/// A chat message.
pub(crate) fn message(role: &str, content: &str) -> Value {
    Value::Object(Object::from_iter([
        ("role", Value::from(role)),
        ("content", Value::from(content)),
    ]))
}

/// The first choice's text of a chat completion.
pub(crate) fn text_of(completion: &Value) -> Option<String> {
    completion
        .get_key("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get_key("message"))
        .and_then(|m| m.get_key("content"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The configured LLM, or the error that says how to configure one.
pub(crate) fn configured(ctx: &Ctx) -> Result<&LlmConfig> {
    ctx.services.llm().ok_or_else(|| {
        Error::runtime(
            "no LLM is configured: set llm {baseUrl, model} in settings.json and its key with \
             `clawdis secrets set llm-api-key`",
        )
    })
}

/// POSTs a chat completion of `messages` (plus `extra` request fields:
/// `model`, `temperature`, `max_tokens`) to the configured endpoint; the
/// whole answer, which has `choices[0].message.content`.
pub(crate) async fn complete(messages: &[Value], extra: &Object, ctx: &Ctx) -> Result<Value> {
    let llm = configured(ctx)?;
    let url = format!("{}/chat/completions", llm.base_url.trim_end_matches('/'));
    let source = Arc::clone(&llm.key);
    let key = tokio::task::spawn_blocking(move || source())
        .await
        .map_err(|e| Error::runtime(e.to_string()))?
        .map_err(|e| Error::runtime(format!("reading the LLM key: {e}")))?;
    let mut body = Object::from_iter([
        ("model", Value::from(llm.model.as_str())),
        ("messages", Value::Array(messages.to_vec())),
    ]);
    for (k, v) in extra.iter() {
        body.insert(k, v.clone());
    }
    let answer = post_json(url.clone(), key, Value::Object(body).to_json()).await?;
    if !(200..300).contains(&answer.status) {
        let quoted: String = answer.body.chars().take(QUOTED).collect();
        return Err(Error::runtime(format!(
            "the LLM at {url} answered {} {}: {quoted}",
            answer.status, answer.reason
        )));
    }
    let parsed = Value::from_json(&answer.body)
        .map_err(|e| Error::runtime(format!("the LLM at {url} answered with no JSON: {e}")))?;
    if text_of(&parsed).is_none() {
        return Err(Error::runtime(format!(
            "the LLM at {url} answered without choices[0].message.content"
        )));
    }
    Ok(parsed)
}

/// `llm.invoke`'s request (`prompt`, `artifacts`, `outputSchema`, `model`,
/// `temperature`, `maxOutputTokens`, `retryContext`) asked of the
/// configured LLM, answered as an `llm.invoke` adapter answers:
/// `{ok, result: {output: {format, text, data}, model, usage}}`.
pub(crate) async fn invoke_envelope(request: &Object, ctx: &Ctx) -> Result<Value> {
    let schema = request.get("outputSchema").filter(|s| **s != Value::Null);
    let mut system = Vec::new();
    if let Some(schema) = schema {
        system.push(format!(
            "Answer with one JSON value and nothing else. It must match this JSON Schema: {}",
            schema.to_json()
        ));
    }
    if let Some(errors) = request
        .get("retryContext")
        .and_then(|r| r.get_key("validationErrors"))
    {
        system.push(format!(
            "Your previous answer did not match the schema: {}",
            errors.to_json()
        ));
    }
    let mut user = request
        .get("prompt")
        .map(Value::to_js_string)
        .unwrap_or_default();
    if let Some(Value::Array(artifacts)) = request.get("artifacts")
        && !artifacts.is_empty()
    {
        user.push_str("\n\nArtifacts (JSON, one per line):");
        for artifact in artifacts {
            user.push('\n');
            user.push_str(&artifact.to_json());
        }
    }
    let mut messages = Vec::new();
    if !system.is_empty() {
        messages.push(message("system", &system.join("\n")));
    }
    messages.push(message("user", &user));
    let mut extra = Object::new();
    for (from, to) in [
        ("model", "model"),
        ("temperature", "temperature"),
        ("maxOutputTokens", "max_tokens"),
    ] {
        if let Some(v) = request.get(from).filter(|v| **v != Value::Null) {
            extra.insert(to, v.clone());
        }
    }
    let answer = complete(&messages, &extra, ctx).await?;
    let text = text_of(&answer).unwrap_or_default();
    let data = schema.and_then(|_| json_in(&text));
    let output = Object::from_iter([
        (
            "format",
            Value::from(if data.is_some() { "json" } else { "text" }),
        ),
        ("text", Value::from(text.as_str())),
        ("data", data.unwrap_or_default()),
    ]);
    let mut result = Object::from_iter([("output", Value::Object(output))]);
    for key in ["model", "usage"] {
        if let Some(v) = answer.get_key(key) {
            result.insert(key, v.clone());
        }
    }
    Ok(Value::Object(Object::from_iter([
        ("ok", Value::Bool(true)),
        ("result", Value::Object(result)),
    ])))
}

/// The JSON value an answer holds: the whole text, or inside a ``` fence.
fn json_in(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(v) = Value::from_json(trimmed) {
        return Some(v);
    }
    let inner = trimmed.strip_prefix("```")?;
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    Value::from_json(inner.strip_suffix("```")?.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_answer_is_read_bare_or_fenced() {
        assert_eq!(json_in(" {\"a\": 1} "), Value::from_json("{\"a\":1}").ok());
        assert_eq!(
            json_in("```json\n[1, 2]\n```"),
            Value::from_json("[1,2]").ok()
        );
        assert_eq!(json_in("no json here"), None);
    }
}
