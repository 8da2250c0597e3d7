//! A workflow file's `webhooks:` block: which receiver hears each of its
//! events (`on_approval_pending`, `on_approval_decided`, `on_complete`,
//! `on_failure`, each `{url}`). The backend delivers them; the engine only
//! reads and checks the block.

use crate::error::{Error, Result};
use crate::value::Value;

/// The keys of `webhooks:` and the event type each one receives.
pub const WEBHOOK_KEYS: [(&str, &str); 4] = [
    ("on_approval_pending", "approval.pending"),
    ("on_approval_decided", "approval.decided"),
    ("on_complete", "run.completed"),
    ("on_failure", "run.failed"),
];

/// Where a workflow's events are sent: one receiver URL per event type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Webhooks {
    /// `(event type, url)` pairs, in [`WEBHOOK_KEYS`]'s order.
    receivers: Vec<(&'static str, String)>,
}

impl Webhooks {
    /// Reads a `webhooks:` value; `None` means the file has no block.
    pub fn parse(value: Option<&Value>) -> Result<Webhooks> {
        let obj = match value {
            None | Some(Value::Null) => return Ok(Webhooks::default()),
            Some(Value::Object(obj)) => obj,
            Some(_) => {
                return Err(Error::runtime(
                    "webhooks must be an object of on_approval_pending, on_approval_decided, \
                     on_complete and on_failure, each {url}",
                ));
            }
        };
        for (key, _) in obj.iter() {
            if !WEBHOOK_KEYS.iter().any(|(k, _)| *k == key) {
                return Err(Error::runtime(format!(
                    "webhooks.{key}: unknown event (on_approval_pending, on_approval_decided, \
                     on_complete or on_failure)"
                )));
            }
        }
        let mut receivers = Vec::new();
        for (key, event) in WEBHOOK_KEYS {
            let Some(entry) = obj.get(key) else { continue };
            let url = entry
                .as_object()
                .and_then(|e| e.get("url"))
                .and_then(Value::as_str)
                .ok_or_else(|| Error::runtime(format!("webhooks.{key} must be {{url}}")))?;
            check_url(url).map_err(|e| Error::runtime(format!("webhooks.{key}.url: {e}")))?;
            receivers.push((event, url.to_string()));
        }
        Ok(Webhooks { receivers })
    }

    /// Reads the `webhooks:` block of a workflow file's text (YAML or JSON),
    /// as a run kept it.
    pub fn in_text(text: &str) -> Result<Webhooks> {
        match super::file::parse_yaml(text)? {
            Value::Object(obj) => Webhooks::parse(obj.get("webhooks")),
            _ => Ok(Webhooks::default()),
        }
    }

    /// The receiver of event type `event`, if the workflow names one.
    pub fn url_for(&self, event: &str) -> Option<&str> {
        self.receivers
            .iter()
            .find(|(e, _)| *e == event)
            .map(|(_, url)| url.as_str())
    }

    /// Whether the block names no receiver.
    pub fn is_empty(&self) -> bool {
        self.receivers.is_empty()
    }
}

/// An absolute `http` or `https` URL with a host: what a receiver can be.
pub fn check_url(url: &str) -> std::result::Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!("{url:?} must be an http or https URL"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<Webhooks> {
        Webhooks::in_text(yaml)
    }

    #[test]
    fn each_key_names_its_event_type() {
        let hooks = parse(
            "webhooks:\n  on_approval_pending: {url: 'http://127.0.0.1:9/p'}\n  \
             on_failure: {url: 'https://example.com/f'}\nsteps: []\n",
        )
        .unwrap();
        assert_eq!(
            hooks.url_for("approval.pending"),
            Some("http://127.0.0.1:9/p")
        );
        assert_eq!(hooks.url_for("run.failed"), Some("https://example.com/f"));
        assert_eq!(hooks.url_for("run.completed"), None);
        assert!(parse("steps: []\n").unwrap().is_empty());
    }

    #[test]
    fn a_bad_block_is_an_error_naming_the_field() {
        for (yaml, needle) in [
            ("webhooks: http://x\n", "webhooks must be an object"),
            (
                "webhooks: {on_done: {url: 'http://x'}}\n",
                "webhooks.on_done",
            ),
            (
                "webhooks: {on_complete: 'http://x'}\n",
                "webhooks.on_complete must be",
            ),
            (
                "webhooks: {on_complete: {url: 'file:///etc'}}\n",
                "on_complete.url",
            ),
            ("webhooks: {on_complete: {url: 'nope'}}\n", "not a URL"),
        ] {
            let err = parse(yaml).unwrap_err().message;
            assert!(err.contains(needle), "{yaml}: {err}");
        }
    }
}
