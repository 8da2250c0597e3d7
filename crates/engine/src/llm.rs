//! The LLM the host configured (`llm: {baseUrl, model}` in settings, the
//! key in the keychain): an OpenAI-compatible chat endpoint that pipeline
//! `prompt` steps ask.

use crate::commands::http::post_json;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::value::{Object, Value};

/// An OpenAI-compatible endpoint and model.
#[derive(Clone, PartialEq, Eq)]
pub struct LlmConfig {
    /// The API's base URL, up to and including its version (`…/v1`).
    pub base_url: String,
    /// The model asked.
    pub model: String,
    /// The bearer key, if the endpoint wants one.
    pub api_key: Option<String>,
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is a secret: never in logs.
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .finish()
    }
}

/// Longest piece of an error answer quoted in a message.
const QUOTED: usize = 300;

/// Asks the configured model `prompt` as one user message; its answer.
pub async fn chat(prompt: &str, ctx: &Ctx) -> Result<String> {
    let Some(llm) = ctx.services.llm.as_ref() else {
        return Err(Error::runtime(
            "a prompt needs an LLM: set llm {baseUrl, model} in settings.json and its key with \
             `clawdis secrets set llm-api-key`",
        ));
    };
    let url = format!("{}/chat/completions", llm.base_url.trim_end_matches('/'));
    let body = Value::Object(Object::from_iter([
        ("model", Value::from(llm.model.as_str())),
        (
            "messages",
            Value::Array(vec![Value::Object(Object::from_iter([
                ("role", Value::from("user")),
                ("content", Value::from(prompt)),
            ]))]),
        ),
    ]));
    let answer = post_json(url.clone(), llm.api_key.clone(), body.to_json()).await?;
    if !(200..300).contains(&answer.status) {
        let quoted: String = answer.body.chars().take(QUOTED).collect();
        return Err(Error::runtime(format!(
            "the LLM at {url} answered {} {}: {quoted}",
            answer.status, answer.reason
        )));
    }
    let parsed = Value::from_json(&answer.body)
        .map_err(|e| Error::runtime(format!("the LLM at {url} answered with no JSON: {e}")))?;
    parsed
        .get_key("choices")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .and_then(|c| c.get_key("message"))
        .and_then(|m| m.get_key("content"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            Error::runtime(format!(
                "the LLM at {url} answered without choices[0].message.content"
            ))
        })
}
