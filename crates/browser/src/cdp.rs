//! The CDP transport: chromiumoxide carries raw commands whose results stay
//! `serde_json::Value`, so newer Chromium enums never break parsing. Every
//! call has a timeout; the Handler is polled in its own task and its end
//! marks the connection dead.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::{Browser, Page};
use futures::StreamExt;
use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::json;

use crate::{BrowserError, Result};

/// Default limit for one CDP round trip.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// Any CDP method with JSON params and a JSON result.
#[derive(Debug, Clone)]
pub struct Raw {
    method: String,
    params: Value,
}

impl Serialize for Raw {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl chromiumoxide::Method for Raw {
    fn identifier(&self) -> chromiumoxide::types::MethodId {
        Cow::Owned(self.method.clone())
    }
}

impl chromiumoxide::Command for Raw {
    type Response = Value;
}

/// A live CDP connection to one browser.
#[derive(Debug)]
pub struct Cdp {
    browser: Browser,
    alive: Arc<AtomicBool>,
    handler: tokio::task::JoinHandle<()>,
}

fn cdp_error(method: &str, e: chromiumoxide::error::CdpError) -> BrowserError {
    BrowserError::Cdp(format!("{method}: {e}"))
}

impl Cdp {
    /// Connects to a browser-level DevTools WebSocket URL.
    pub async fn connect(ws_url: &str) -> Result<Cdp> {
        let config = HandlerConfig {
            viewport: None,
            request_timeout: CALL_TIMEOUT,
            ..HandlerConfig::default()
        };
        let (browser, mut handler) = tokio::time::timeout(
            CALL_TIMEOUT,
            Browser::connect_with_config(ws_url.to_string(), config),
        )
        .await
        .map_err(|_| BrowserError::Cdp(format!("connecting to {ws_url} timed out")))?
        .map_err(|e| BrowserError::Cdp(format!("connecting to {ws_url}: {e}")))?;
        let alive = Arc::new(AtomicBool::new(true));
        let flag = alive.clone();
        let handler = tokio::spawn(async move {
            // A broken WebSocket (the browser killed) ends the connection at
            // once: the handler would otherwise keep polling it, and every
            // call would wait out its timeout.
            while let Some(event) = handler.next().await {
                match event {
                    Err(chromiumoxide::error::CdpError::Ws(e)) => {
                        tracing::warn!(error = %e, "the CDP connection broke");
                        break;
                    }
                    Err(e) => tracing::debug!(error = %e, "cdp handler"),
                    Ok(()) => {}
                }
            }
            flag.store(false, Ordering::SeqCst);
            tracing::info!("cdp connection closed");
        });
        Ok(Cdp {
            browser,
            alive,
            handler,
        })
    }

    /// Whether the connection is still up.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst) && !self.handler.is_finished()
    }

    /// A browser-level command.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value> {
        let cmd = Raw {
            method: method.into(),
            params,
        };
        match tokio::time::timeout(CALL_TIMEOUT, self.browser.execute(cmd)).await {
            Ok(Ok(resp)) => Ok(resp.result),
            Ok(Err(e)) => Err(cdp_error(method, e)),
            Err(_) => Err(BrowserError::Timeout(format!("{method} timed out"))),
        }
    }

    /// A stream of one kind of browser-level event (`Browser.download*`).
    pub async fn listen<T: chromiumoxide::cdp::IntoEventKind>(
        &self,
    ) -> Result<chromiumoxide::listeners::EventStream<T>> {
        self.browser
            .event_listener::<T>()
            .await
            .map_err(|e| BrowserError::Cdp(e.to_string()))
    }

    /// The attached page session for a target, waiting briefly for the
    /// handler to finish attaching a target that was just created.
    pub async fn page(&self, target_id: &str) -> Result<Page> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let found = tokio::time::timeout(
                CALL_TIMEOUT,
                self.browser.get_page(target_id.to_string().into()),
            )
            .await;
            match found {
                Ok(Ok(page)) => return Ok(page),
                Ok(Err(_)) if tokio::time::Instant::now() < deadline && self.is_alive() => {
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                Ok(Err(_)) => return Err(BrowserError::Missing("tab not found".into())),
                Err(_) => {
                    return Err(BrowserError::Timeout(
                        "attaching to the tab timed out".into(),
                    ));
                }
            }
        }
    }

    /// Closes the browser through CDP (`Browser.close`).
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(3), self.browser.close()).await;
        self.handler.abort();
    }
}

impl Drop for Cdp {
    fn drop(&mut self) {
        self.handler.abort();
    }
}

/// A stream of one kind of page event.
pub async fn page_events<T: chromiumoxide::cdp::IntoEventKind>(
    page: &Page,
) -> Result<chromiumoxide::listeners::EventStream<T>> {
    page.event_listener::<T>()
        .await
        .map_err(|e| BrowserError::Cdp(e.to_string()))
}

/// A page-level command with the default timeout.
pub async fn page_call(page: &Page, method: &str, params: Value) -> Result<Value> {
    page_call_with(page, method, params, CALL_TIMEOUT).await
}

/// A page-level command with an explicit timeout.
pub async fn page_call_with(
    page: &Page,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<Value> {
    let cmd = Raw {
        method: method.into(),
        params,
    };
    match tokio::time::timeout(timeout, page.execute(cmd)).await {
        Ok(Ok(resp)) => Ok(resp.result),
        Ok(Err(e)) => Err(cdp_error(method, e)),
        Err(_) => Err(BrowserError::Timeout(format!(
            "{method} timed out after {} ms",
            timeout.as_millis()
        ))),
    }
}

/// The page's current URL.
pub async fn page_url(page: &Page) -> Result<String> {
    let v = page_call(
        page,
        "Runtime.evaluate",
        json!({ "expression": "location.href", "returnByValue": true }),
    )
    .await?;
    Ok(v.pointer("/result/value")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string())
}

/// Where an element's DOM lives: the tab's page session, or the session
/// of an out-of-process frame ([`crate::frames::FrameSession`]). DOM,
/// Runtime and Accessibility commands about an element go to its `Dom`;
/// input and page-wide commands always go to the page.
#[derive(Clone, Copy, Debug)]
pub enum Dom<'a> {
    /// The tab's page (and its in-process frames).
    Page(&'a Page),
    /// An out-of-process frame.
    Frame(&'a crate::frames::FrameSession),
}

impl<'a> From<&'a Page> for Dom<'a> {
    fn from(page: &'a Page) -> Dom<'a> {
        Dom::Page(page)
    }
}

impl Dom<'_> {
    /// One command in this session, with the default timeout.
    pub async fn call(self, method: &str, params: Value) -> Result<Value> {
        match self {
            Dom::Page(page) => page_call(page, method, params).await,
            Dom::Frame(frame) => frame.call(method, params).await,
        }
    }
}
