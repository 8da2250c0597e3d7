//! A session's storage state (cookies and localStorage per origin), as
//! Playwright's `storageState` spells it: read from a browser context,
//! and written back into a fresh one.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::cdp::{Cdp, page_call, page_events};
use crate::{BrowserError, Result};

/// Cookies and localStorage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StorageState {
    /// Cookies as `Storage.getCookies` reports them.
    #[serde(default)]
    pub cookies: Vec<Value>,
    /// localStorage by origin.
    #[serde(default)]
    pub origins: Vec<OriginStorage>,
}

/// One origin's localStorage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OriginStorage {
    /// `https://example.com`.
    pub origin: String,
    /// Its items.
    pub local_storage: Vec<Item>,
}

/// One localStorage item.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// The key.
    pub name: String,
    /// The value.
    pub value: String,
}

impl StorageState {
    /// Parses stored JSON; anything unreadable is an empty state.
    pub fn parse(text: &str) -> StorageState {
        serde_json::from_str(text).unwrap_or_default()
    }

    /// The state as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }
}

/// Reads the context's cookies and the page's localStorage, merged into
/// `previous` (other origins' storage is kept as it was).
pub async fn capture(
    cdp: &Cdp,
    context: &str,
    page: &Page,
    previous: &StorageState,
) -> Result<StorageState> {
    let cookies = cdp
        .call("Storage.getCookies", json!({ "browserContextId": context }))
        .await?
        .get("cookies")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut origins: BTreeMap<String, Vec<Item>> = previous
        .origins
        .iter()
        .map(|o| (o.origin.clone(), o.local_storage.clone()))
        .collect();
    let here = crate::cdp::page_call_with(
        page,
        "Runtime.evaluate",
        json!({
            "expression": "(() => { try { return { origin: location.origin, items: Object.entries(localStorage) }; } catch (e) { return null; } })()",
            "returnByValue": true,
        }),
        Duration::from_secs(2),
    )
    .await
    .ok()
    .and_then(|r| r.pointer("/result/value").cloned())
    .filter(|v| v.is_object());
    if let Some(here) = here {
        let origin = here
            .get("origin")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if origin.starts_with("http") {
            let items: Vec<Item> = here
                .get("items")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|pair| {
                    Some(Item {
                        name: pair.get(0)?.as_str()?.to_string(),
                        value: pair.get(1)?.as_str()?.to_string(),
                    })
                })
                .collect();
            if items.is_empty() {
                origins.remove(origin);
            } else {
                origins.insert(origin.to_string(), items);
            }
        }
    }
    Ok(StorageState {
        cookies,
        origins: origins
            .into_iter()
            .map(|(origin, local_storage)| OriginStorage {
                origin,
                local_storage,
            })
            .collect(),
    })
}

/// Fields `Storage.setCookies` takes of a cookie `getCookies` reported; a
/// session cookie's `expires` (-1) is left out, as CDP reads 0 or less as
/// already expired.
fn settable(cookie: &Value) -> Option<Value> {
    let mut out = serde_json::Map::new();
    for key in [
        "name",
        "value",
        "domain",
        "path",
        "secure",
        "httpOnly",
        "sameSite",
        "priority",
        "sourceScheme",
        "sourcePort",
        "partitionKey",
    ] {
        if let Some(v) = cookie.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(expires) = cookie
        .get("expires")
        .and_then(Value::as_f64)
        .filter(|e| *e > 0.0)
    {
        out.insert("expires".into(), json!(expires));
    }
    (out.contains_key("name") && out.contains_key("domain")).then_some(Value::Object(out))
}

/// Writes `state` into the context: its cookies at once, and each origin's
/// localStorage by loading the origin in `page` with its document replaced
/// by an empty one (no page script runs), so nothing the page would do on
/// load overwrites it. Leaves `page` on about:blank.
pub async fn restore(cdp: &Cdp, context: &str, page: &Page, state: &StorageState) -> Result<()> {
    let cookies: Vec<Value> = state.cookies.iter().filter_map(settable).collect();
    if !cookies.is_empty() {
        cdp.call(
            "Storage.setCookies",
            json!({ "cookies": cookies, "browserContextId": context }),
        )
        .await?;
    }
    if state.origins.is_empty() {
        return Ok(());
    }
    let mut paused = page_events::<EventRequestPaused>(page).await?;
    page_call(
        page,
        "Fetch.enable",
        json!({ "patterns": [{ "urlPattern": "*", "resourceType": "Document", "requestStage": "Request" }] }),
    )
    .await?;
    let result = async {
        for origin in &state.origins {
            let url = format!("{}/", origin.origin);
            let navigate = page_call(page, "Page.navigate", json!({ "url": url }));
            let fulfil = async {
                let e = tokio::time::timeout(Duration::from_secs(5), paused.next())
                    .await
                    .map_err(|_| BrowserError::Timeout(format!("restoring storage of {}: no request", origin.origin)))?
                    .ok_or_else(|| BrowserError::Cdp("the page closed".into()))?;
                page_call(
                    page,
                    "Fetch.fulfillRequest",
                    json!({
                        "requestId": e.request_id.inner(),
                        "responseCode": 200,
                        "responseHeaders": [{ "name": "Content-Type", "value": "text/html" }],
                        "body": base64::engine::general_purpose::STANDARD.encode("<!doctype html><title></title>"),
                    }),
                )
                .await
            };
            let (navigated, fulfilled) = tokio::join!(navigate, fulfil);
            navigated?;
            fulfilled?;
            let items: Vec<(&str, &str)> = origin
                .local_storage
                .iter()
                .map(|i| (i.name.as_str(), i.value.as_str()))
                .collect();
            let expression = format!(
                "(async () => {{ for (let i = 0; i < 100 && location.origin !== {origin}; i++) await new Promise((r) => setTimeout(r, 10)); for (const [k, v] of {items}) localStorage.setItem(k, v); return location.origin; }})()",
                origin = json!(origin.origin),
                items = json!(items),
            );
            let set = page_call(
                page,
                "Runtime.evaluate",
                json!({ "expression": expression, "awaitPromise": true, "returnByValue": true }),
            )
            .await?;
            if set.pointer("/result/value").and_then(Value::as_str) != Some(origin.origin.as_str()) {
                tracing::warn!(origin = %origin.origin, "could not restore localStorage");
            }
        }
        Ok::<_, BrowserError>(())
    }
    .await;
    let _ = page_call(page, "Fetch.disable", json!({})).await;
    let _ = page_call(page, "Page.navigate", json!({ "url": "about:blank" })).await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_cookies_lose_their_expiry() {
        let session = json!({ "name": "sid", "value": "1", "domain": "127.0.0.1", "path": "/", "expires": -1, "size": 4, "session": true });
        let kept = settable(&session).unwrap();
        assert!(
            kept.get("expires").is_none() && kept.get("size").is_none(),
            "{kept}"
        );
        let lasting = json!({ "name": "a", "value": "b", "domain": "x", "expires": 2e9 });
        assert_eq!(settable(&lasting).unwrap()["expires"], json!(2e9));
        assert!(settable(&json!({ "value": "b" })).is_none());
    }

    #[test]
    fn unreadable_state_is_empty() {
        assert_eq!(StorageState::parse("nope"), StorageState::default());
        let s = StorageState {
            cookies: vec![json!({ "name": "a" })],
            origins: vec![OriginStorage {
                origin: "http://x".into(),
                local_storage: vec![Item {
                    name: "k".into(),
                    value: "v".into(),
                }],
            }],
        };
        assert_eq!(StorageState::parse(&s.to_json()), s);
    }
}
