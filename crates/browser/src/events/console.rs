//! Console messages and uncaught page errors, buffered per tab.

use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
use serde::Serialize;
use serde_json::{Value, json};

use super::TabEvents;
use super::now_ms;

/// How many console messages a tab keeps.
const CONSOLE: usize = 500;
/// How many page errors a tab keeps.
const ERRORS: usize = 100;

/// A console message or an uncaught page error.
#[derive(Clone, Debug, Serialize)]
pub struct ConsoleMessage {
    /// `log`, `info`, `warning`, `error`, `debug`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// The message text.
    pub text: String,
    /// When it was logged (ms since the epoch).
    pub timestamp: u64,
    /// `{url, lineNumber, columnNumber}` where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Value>,
}

/// Severity order for `?level=` filters.
fn severity(kind: &str) -> u8 {
    match kind {
        "debug" | "verbose" => 0,
        "warning" | "warn" => 2,
        "error" | "assert" => 3,
        _ => 1,
    }
}

/// One console argument as text: strings as they are, other values as JSON.
fn arg_text(arg: &Value) -> String {
    match arg.get("value") {
        Some(Value::String(s)) => s.clone(),
        Some(v) if !v.is_null() => v.to_string(),
        _ => arg
            .get("unserializableValue")
            .or_else(|| arg.get("description"))
            .and_then(Value::as_str)
            .map_or_else(
                || {
                    arg.get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("undefined")
                        .to_string()
                },
                str::to_string,
            ),
    }
}

fn location(frame: Option<&Value>) -> Option<Value> {
    let f = frame?;
    Some(
        json!({ "url": f.get("url")?, "lineNumber": f.get("lineNumber")?, "columnNumber": f.get("columnNumber")? }),
    )
}

impl ConsoleMessage {
    pub(super) fn from_console(e: &EventConsoleApiCalled) -> ConsoleMessage {
        let v = serde_json::to_value(e).unwrap_or_default();
        let text = v
            .get("args")
            .and_then(Value::as_array)
            .map(|args| args.iter().map(arg_text).collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        ConsoleMessage {
            kind: v
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("log")
                .to_string(),
            text,
            timestamp: v
                .get("timestamp")
                .and_then(Value::as_f64)
                .map_or_else(now_ms, |t| t as u64),
            location: location(v.pointer("/stackTrace/callFrames/0")),
        }
    }

    pub(super) fn from_exception(e: &EventExceptionThrown) -> ConsoleMessage {
        let v = serde_json::to_value(&e.exception_details).unwrap_or_default();
        let text = v
            .pointer("/exception/description")
            .or_else(|| v.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("uncaught exception")
            .to_string();
        ConsoleMessage {
            kind: "error".into(),
            text,
            timestamp: v
                .get("timestamp")
                .and_then(Value::as_f64)
                .map_or_else(now_ms, |t| t as u64),
            location: location(v.pointer("/stackTrace/callFrames/0"))
                .or_else(|| location(Some(&v))),
        }
    }
}

impl TabEvents {
    pub(super) fn log(&self, message: ConsoleMessage, error: bool) {
        let mut s = self.state();
        if error {
            s.errors.push_back(message.clone());
            if s.errors.len() > ERRORS {
                s.errors.pop_front();
            }
        }
        s.console.push_back(message);
        if s.console.len() > CONSOLE {
            s.console.pop_front();
        }
    }

    /// Buffered console messages at or above `min_level`, oldest first.
    pub fn console(&self, min_level: Option<&str>) -> Vec<ConsoleMessage> {
        let floor = min_level.map_or(0, severity);
        self.state()
            .console
            .iter()
            .filter(|m| severity(&m.kind) >= floor)
            .cloned()
            .collect()
    }

    /// Uncaught page errors, oldest first; `clear` empties the buffer.
    pub fn errors(&self, clear: bool) -> Vec<ConsoleMessage> {
        let mut s = self.state();
        let errors = s.errors.iter().cloned().collect();
        if clear {
            s.errors.clear();
        }
        errors
    }
}
