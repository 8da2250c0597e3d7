//! The workflow service's part of `<home>/settings.json`: webhooks for
//! every workflow, their retry schedule, and the public address of signed
//! approval links. The browser's settings live in the same file; each side
//! reads its own keys and keeps the other's.

use std::path::Path;

use clawdis_engine::workflow::{WEBHOOK_KEYS, check_url};
use serde::Deserialize;

use crate::ApprovalsError;

/// The service's settings.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServiceSettings {
    /// Receivers of every workflow's events.
    pub webhooks: Vec<GlobalWebhook>,
    /// How deliveries are retried.
    pub webhook_retry: WebhookRetry,
    /// Where the user's tunnel or reverse proxy reaches this backend; when
    /// set, approval payloads carry signed links under it.
    pub public_base_url: Option<String>,
    /// The LLM `prompt` steps and `llm.invoke` ask.
    pub llm: Option<LlmSettings>,
}

pub use clawdis_engine::llm::{KEY_SECRET as LLM_KEY_SECRET, LlmSettings};

/// A receiver for every workflow: `{url, events?}`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobalWebhook {
    /// Where deliveries go.
    pub url: String,
    /// The event types it receives; all of them when absent.
    pub events: Option<Vec<String>>,
}

impl GlobalWebhook {
    /// Whether it receives events of type `event`.
    pub fn wants(&self, event: &str) -> bool {
        self.events
            .as_ref()
            .is_none_or(|events| events.iter().any(|e| e == event))
    }
}

/// The retry schedule: the first retry after `firstDelayMs`, each later one
/// after twice the delay before it (with jitter), at most `maxAttempts`
/// attempts in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct WebhookRetry {
    /// The delay before the first retry.
    pub first_delay_ms: u64,
    /// How many attempts a delivery gets.
    pub max_attempts: u32,
}

impl Default for WebhookRetry {
    fn default() -> Self {
        WebhookRetry {
            first_delay_ms: 1_000,
            max_attempts: 8,
        }
    }
}

/// The event types a webhook can receive.
pub fn event_types() -> impl Iterator<Item = &'static str> {
    WEBHOOK_KEYS
        .iter()
        .map(|(_, event)| *event)
        .chain(HANDOFF_EVENTS)
}

/// A browser session's hand-off, to a global webhook: it waits for the
/// person, and it ended (handed back, declined, run out).
pub const HANDOFF_EVENTS: [&str; 2] = ["handoff.requested", "handoff.ended"];

impl ServiceSettings {
    /// Reads `<home>/settings.json` (defaults when there is none) and
    /// checks it.
    pub fn load(home: &Path) -> Result<ServiceSettings, ApprovalsError> {
        let path = home.join("settings.json");
        let settings: ServiceSettings = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| ApprovalsError::Invalid(format!("{}: {e}", path.display())))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => ServiceSettings::default(),
            Err(e) => {
                return Err(ApprovalsError::Invalid(format!("{}: {e}", path.display())));
            }
        };
        settings
            .check()
            .map_err(|e| ApprovalsError::Invalid(format!("{}: {e}", path.display())))?;
        Ok(settings)
    }

    /// The first thing wrong with the settings, naming its field.
    pub fn check(&self) -> Result<(), String> {
        for (i, hook) in self.webhooks.iter().enumerate() {
            check_url(&hook.url).map_err(|e| format!("webhooks[{i}].url: {e}"))?;
            for event in hook.events.iter().flatten() {
                if !event_types().any(|t| t == event) {
                    return Err(format!(
                        "webhooks[{i}].events: unknown event {event:?} ({})",
                        event_types().collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
        if self.webhook_retry.max_attempts == 0 {
            return Err("webhookRetry.maxAttempts must be at least 1".into());
        }
        if let Some(base) = &self.public_base_url {
            check_url(base).map_err(|e| format!("publicBaseUrl: {e}"))?;
        }
        if let Some(llm) = &self.llm {
            check_url(&llm.base_url).map_err(|e| format!("llm.baseUrl: {e}"))?;
            if llm.model.trim().is_empty() {
                return Err("llm.model must name a model".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_a_bad_field_named() {
        let dir = tempfile::tempdir().unwrap();
        let settings = ServiceSettings::load(dir.path()).unwrap();
        assert_eq!(settings.webhook_retry, WebhookRetry::default());
        for (json, needle) in [
            (r#"{"webhooks": [{"url": "ftp://x"}]}"#, "webhooks[0].url"),
            (
                r#"{"webhooks": [{"url": "http://x", "events": ["run.done"]}]}"#,
                "webhooks[0].events",
            ),
            (r#"{"webhookRetry": {"maxAttempts": 0}}"#, "maxAttempts"),
            (r#"{"webhookRetry": {"tries": 3}}"#, "tries"),
            (
                r#"{"llm": {"baseUrl": "nope", "model": "m"}}"#,
                "llm.baseUrl",
            ),
            (
                r#"{"llm": {"baseUrl": "http://x/v1", "model": " "}}"#,
                "llm.model",
            ),
            (r#"{"llm": {"baseUrl": "http://x/v1"}}"#, "model"),
        ] {
            std::fs::write(dir.path().join("settings.json"), json).unwrap();
            let err = ServiceSettings::load(dir.path()).unwrap_err().to_string();
            assert!(err.contains(needle), "{json}: {err}");
        }
        std::fs::write(
            dir.path().join("settings.json"),
            r#"{"headless": true, "webhooks": [{"url": "http://127.0.0.1:9/h", "events": ["run.failed"]}]}"#,
        )
        .unwrap();
        let settings = ServiceSettings::load(dir.path()).unwrap();
        assert!(settings.webhooks[0].wants("run.failed"));
        assert!(!settings.webhooks[0].wants("run.completed"));
    }
}
