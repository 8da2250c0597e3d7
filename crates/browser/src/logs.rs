//! A tab's logs as clients read them: console messages, page errors,
//! network requests and response bodies.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::cdp::page_call;
use crate::events::TabEvents;
use crate::manager::Manager;
use crate::{BrowserError, Result};

/// `{ok, targetId, url, <key>: read(events)}` once the tab's events so far
/// are recorded.
async fn settled(
    manager: &Manager,
    target: Option<&str>,
    key: &str,
    read: impl FnOnce(&TabEvents) -> Value,
) -> Result<Value> {
    let (target_id, page) = manager.page_for(target).await?;
    let events = manager.events(&target_id, &page).await?;
    events.settle(&page).await;
    let url = manager.target_url(&target_id).await.unwrap_or_default();
    let mut out = json!({ "ok": true, "targetId": target_id, "url": url });
    out[key] = read(&events);
    Ok(out)
}

/// `{ok, targetId, url, messages}` for `GET /console?level=`.
pub async fn console(
    manager: &Manager,
    target: Option<&str>,
    level: Option<&str>,
) -> Result<Value> {
    settled(manager, target, "messages", |e| json!(e.console(level))).await
}

/// `{ok, targetId, url, requests}` for `GET /requests?filter=&clear=`.
pub async fn requests(
    manager: &Manager,
    target: Option<&str>,
    filter: Option<&str>,
    clear: bool,
) -> Result<Value> {
    settled(manager, target, "requests", |e| {
        json!(e.requests(filter, clear))
    })
    .await
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
) -> Result<Value> {
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
    Ok(json!({
        "ok": true,
        "targetId": target_id,
        "url": manager.target_url(&target_id).await.unwrap_or_default(),
        "response": {
            "url": entry.url,
            "status": entry.status,
            "body": body,
            "base64Encoded": base64,
            "truncated": truncated,
        }
    }))
}

/// `{ok, targetId, url, errors}` for `GET /errors?clear=`.
pub async fn errors(manager: &Manager, target: Option<&str>, clear: bool) -> Result<Value> {
    settled(manager, target, "errors", |e| json!(e.errors(clear))).await
}
