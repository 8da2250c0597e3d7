//! A tab's logs as clients read them: console messages, page errors,
//! network requests and response bodies.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::cdp::page_call;
use crate::events::{ConsoleMessage, RequestEntry, TabEvents};
use crate::manager::Manager;
use crate::{BrowserError, Result};

/// Which tab a log was read from, and its URL then.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TabAt {
    /// The tab.
    pub target_id: String,
    /// Its URL.
    pub url: String,
}

/// `read(events)` once the tab's events so far are recorded.
async fn settled<T>(
    manager: &Manager,
    target: Option<&str>,
    read: impl FnOnce(&TabEvents) -> T,
) -> Result<(TabAt, T)> {
    let (target_id, page) = manager.page_for(target).await?;
    let events = manager.events(&target_id, &page).await?;
    events.settle(&page).await;
    let url = manager.target_url(&target_id).await.unwrap_or_default();
    let read = read(&events);
    Ok((TabAt { target_id, url }, read))
}

/// The tab's console messages at `level` or above.
pub async fn console(
    manager: &Manager,
    target: Option<&str>,
    level: Option<&str>,
) -> Result<(TabAt, Vec<ConsoleMessage>)> {
    settled(manager, target, |e| e.console(level)).await
}

/// The tab's network requests matching `filter`; `clear` empties the log.
pub async fn requests(
    manager: &Manager,
    target: Option<&str>,
    filter: Option<&str>,
    clear: bool,
) -> Result<(TabAt, Vec<RequestEntry>)> {
    settled(manager, target, |e| e.requests(filter, clear)).await
}

/// A response body as read from the browser.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseBody {
    /// The response's URL.
    pub url: String,
    /// Its HTTP status, when one arrived.
    pub status: Option<u16>,
    /// The body: text, or base64 for binary bodies.
    pub body: String,
    /// Whether `body` is base64.
    pub base64_encoded: bool,
    /// Whether `body` was cut to the limit.
    pub truncated: bool,
}

/// Default limit of a response body returned as text.
pub const BODY_CHARS: usize = 200_000;

/// `POST /response/body`: the body of the newest response whose URL
/// matches `pattern` (exact, substring or glob), waiting up to `timeout`
/// for one to arrive. Binary bodies come back base64-encoded.
pub async fn response_body(
    manager: &Manager,
    target: Option<&str>,
    pattern: &str,
    timeout: Duration,
    max_chars: Option<usize>,
) -> Result<(TabAt, ResponseBody)> {
    let (target_id, page) = manager.page_for(target).await?;
    let events = manager.events(&target_id, &page).await?;
    let mut loaded = events.response_loaded();
    let matches = |url: &str| crate::wait::url_matches(pattern, url);
    let deadline = Instant::now() + timeout;
    let entry = loop {
        if let Some(entry) = events.finished_request(matches) {
            break entry;
        }
        match tokio::time::timeout_at(deadline, loaded.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(BrowserError::Missing("tab not found".into())),
            Err(_) => {
                return Err(BrowserError::Timeout(format!(
                    "no response matching {pattern} within {} ms",
                    timeout.as_millis()
                )));
            }
        }
    };
    let got = page_call(
        &page,
        "Network.getResponseBody",
        json!({ "requestId": entry.id }),
    )
    .await
    .map_err(|e| BrowserError::Missing(format!("the body of {} is gone: {e}", entry.url)))?;
    let base64 = got
        .get("base64Encoded")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let body = got.get("body").and_then(Value::as_str).unwrap_or_default();
    let (body, truncated) = crate::inspect::truncate(body, max_chars.unwrap_or(BODY_CHARS));
    let url = manager.target_url(&target_id).await.unwrap_or_default();
    Ok((
        TabAt { target_id, url },
        ResponseBody {
            url: entry.url,
            status: entry.status,
            body,
            base64_encoded: base64,
            truncated,
        },
    ))
}

/// The tab's page errors; `clear` empties the log.
pub async fn errors(
    manager: &Manager,
    target: Option<&str>,
    clear: bool,
) -> Result<(TabAt, Vec<ConsoleMessage>)> {
    settled(manager, target, |e| e.errors(clear)).await
}
