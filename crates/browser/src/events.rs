//! What happens on a tab between calls: JavaScript dialogs, file choosers,
//! console messages, page errors and network requests. Each tab Clawdis touches gets a
//! watcher task that answers an armed dialog or chooser at once, keeps
//! unanswered dialogs as pending (so an action that opens one reports
//! `blockedByDialog` instead of hanging) and buffers the console.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFileChooserOpened, EventJavascriptDialogClosed, EventJavascriptDialogOpening,
};
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::cdp::page_call;
use crate::manager::now_ms;
use crate::{BrowserError, Result};

/// How many answered dialogs a tab remembers.
const RECENT: usize = 10;
/// How many console messages a tab keeps.
const CONSOLE: usize = 500;
/// How many page errors a tab keeps.
const ERRORS: usize = 100;
/// How many network requests a tab keeps.
const REQUESTS: usize = 500;

/// One network request of the tab, updated as its response arrives.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestEntry {
    /// Chromium's request id (redirects share it).
    pub id: String,
    /// When it was sent (ms since the epoch).
    pub timestamp: u64,
    /// HTTP method.
    pub method: String,
    /// Request URL.
    pub url: String,
    /// `Document`, `Script`, `Fetch`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    /// HTTP status, once a response arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Whether it succeeded (a status below 400), once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// Why it failed, for failed requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_text: Option<String>,
    /// Whether its body has fully arrived.
    #[serde(skip)]
    pub finished: bool,
}

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
    fn from_console(e: &EventConsoleApiCalled) -> ConsoleMessage {
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

    fn from_exception(e: &EventExceptionThrown) -> ConsoleMessage {
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

/// The answer for the next dialog.
#[derive(Clone, Debug)]
pub struct DialogReply {
    /// Accept (OK) or dismiss (Cancel).
    pub accept: bool,
    /// Text typed into a `prompt()`.
    pub prompt_text: Option<String>,
}

/// A dialog as clients see it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DialogInfo {
    /// Id to answer it by (`/hooks/dialog {dialogId}`).
    pub dialog_id: String,
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The dialog's message.
    pub message: String,
    /// A prompt's default text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_prompt: Option<String>,
    /// The frame URL that opened it.
    pub url: String,
    /// When it opened (ms since the epoch).
    pub opened_at: u64,
    /// How it was answered, once it was: `accepted` or `dismissed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<&'static str>,
    /// Who answered: `hook` (armed in advance or answered by id) or `page`
    /// (closed some other way).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handled_by: Option<&'static str>,
}

#[derive(Default)]
struct State {
    armed: Option<(DialogReply, Instant)>,
    pending: Option<DialogInfo>,
    recent: VecDeque<DialogInfo>,
    next_id: u64,
    chooser: Option<(Vec<String>, Instant)>,
    console: VecDeque<ConsoleMessage>,
    errors: VecDeque<ConsoleMessage>,
    requests: VecDeque<RequestEntry>,
}

/// The event state of one tab.
pub struct TabEvents {
    state: Mutex<State>,
    opened: watch::Sender<u64>,
    chooser_done: watch::Sender<u64>,
    loaded: watch::Sender<u64>,
    barrier: tokio::sync::mpsc::UnboundedSender<tokio::sync::oneshot::Sender<()>>,
}

impl std::fmt::Debug for TabEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TabEvents").finish_non_exhaustive()
    }
}

fn outcome(accept: bool) -> &'static str {
    if accept { "accepted" } else { "dismissed" }
}

impl TabEvents {
    /// Starts watching `page`; the watcher ends with the tab.
    pub async fn watch(page: Page) -> Result<Arc<TabEvents>> {
        let err = |e: chromiumoxide::error::CdpError| BrowserError::Cdp(e.to_string());
        let mut opening = page
            .event_listener::<EventJavascriptDialogOpening>()
            .await
            .map_err(err)?;
        let mut closed = page
            .event_listener::<EventJavascriptDialogClosed>()
            .await
            .map_err(err)?;
        let mut choosers = page
            .event_listener::<EventFileChooserOpened>()
            .await
            .map_err(err)?;
        let mut console = page
            .event_listener::<EventConsoleApiCalled>()
            .await
            .map_err(err)?;
        let mut exceptions = page
            .event_listener::<EventExceptionThrown>()
            .await
            .map_err(err)?;
        // Keep the renderer's accessibility tree live, so the first
        // snapshot after a navigation does not pay for building it.
        page_call(&page, "Accessibility.enable", json!({})).await?;
        let mut sent = page
            .event_listener::<EventRequestWillBeSent>()
            .await
            .map_err(err)?;
        let mut answered = page
            .event_listener::<EventResponseReceived>()
            .await
            .map_err(err)?;
        let mut failed = page
            .event_listener::<EventLoadingFailed>()
            .await
            .map_err(err)?;
        let mut finished = page
            .event_listener::<EventLoadingFinished>()
            .await
            .map_err(err)?;
        let (barrier, mut barriers) = tokio::sync::mpsc::unbounded_channel();
        let events = Arc::new(TabEvents {
            state: Mutex::new(State::default()),
            opened: watch::Sender::new(0),
            chooser_done: watch::Sender::new(0),
            loaded: watch::Sender::new(0),
            barrier,
        });
        let weak = Arc::downgrade(&events);
        tokio::spawn(async move {
            loop {
                // Events first: a barrier is answered only once every event
                // already received has been recorded.
                tokio::select! {
                    biased;
                    Some(e) = opening.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        events.on_opening(&page, &e).await;
                    }
                    Some(e) = closed.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        events.on_closed(e.result);
                    }
                    Some(e) = choosers.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        events.on_chooser(&page, e.backend_node_id.map(|id| *id.inner())).await;
                    }
                    Some(e) = console.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        events.log(ConsoleMessage::from_console(&e), false);
                    }
                    Some(e) = exceptions.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        events.log(ConsoleMessage::from_exception(&e), true);
                    }
                    Some(e) = sent.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        events.on_request(&e);
                    }
                    Some(e) = answered.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        let status = e.response.status as u16;
                        events.update_request(e.request_id.inner(), |r| {
                            r.status = Some(status);
                            r.ok = Some(status < 400);
                        });
                    }
                    Some(e) = failed.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        let text = e.error_text.clone();
                        events.update_request(e.request_id.inner(), |r| {
                            r.ok = Some(false);
                            r.failure_text = Some(text);
                        });
                    }
                    Some(e) = finished.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        events.update_request(e.request_id.inner(), |r| r.finished = true);
                        events.loaded.send_modify(|n| *n += 1);
                    }
                    Some(done) = barriers.recv() => {
                        let _ = done.send(());
                    }
                    else => break,
                }
            }
        });
        Ok(events)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn on_opening(&self, page: &Page, e: &EventJavascriptDialogOpening) {
        let (info, armed) = {
            let mut s = self.state();
            s.next_id += 1;
            let info = DialogInfo {
                dialog_id: format!("d{}", s.next_id),
                kind: e.r#type.as_ref().to_string(),
                message: e.message.clone(),
                default_prompt: e.default_prompt.clone(),
                url: e.url.clone(),
                opened_at: now_ms(),
                outcome: None,
                handled_by: None,
            };
            let armed = s.armed.take().filter(|(_, until)| Instant::now() < *until);
            if armed.is_none() {
                s.pending = Some(info.clone());
            }
            (info, armed)
        };
        tracing::info!(kind = %info.kind, armed = armed.is_some(), "dialog opened");
        match armed {
            Some((reply, _)) => {
                if let Err(e) = answer(page, &reply).await {
                    tracing::warn!(error = %e, "answering an armed dialog");
                }
                self.remember(DialogInfo {
                    outcome: Some(outcome(reply.accept)),
                    handled_by: Some("hook"),
                    ..info
                });
            }
            None => {
                self.opened.send_modify(|n| *n += 1);
            }
        }
    }

    fn on_closed(&self, accepted: bool) {
        let mut s = self.state();
        if let Some(info) = s.pending.take() {
            drop(s);
            self.remember(DialogInfo {
                outcome: Some(outcome(accepted)),
                handled_by: Some("page"),
                ..info
            });
        }
    }

    async fn on_chooser(&self, page: &Page, backend: Option<i64>) {
        let files = self
            .state()
            .chooser
            .take()
            .filter(|(_, until)| Instant::now() < *until);
        let result = match (files, backend) {
            (Some((files, _)), Some(backend)) => page_call(
                page,
                "DOM.setFileInputFiles",
                json!({ "files": files, "backendNodeId": backend }),
            )
            .await
            .map(drop),
            _ => Ok(()),
        };
        if let Err(e) = result {
            tracing::warn!(error = %e, "setting chosen files");
        }
        let _ = page_call(
            page,
            "Page.setInterceptFileChooserDialog",
            json!({ "enabled": false }),
        )
        .await;
        self.chooser_done.send_modify(|n| *n += 1);
    }

    fn log(&self, message: ConsoleMessage, error: bool) {
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

    fn on_request(&self, e: &EventRequestWillBeSent) {
        let kind = e.r#type.as_ref().map(|t| t.as_ref().to_string());
        let entry = RequestEntry {
            id: e.request_id.inner().clone(),
            timestamp: (*e.wall_time.inner() * 1000.0) as u64,
            method: e.request.method.clone(),
            url: e.request.url.clone(),
            resource_type: kind,
            status: None,
            ok: None,
            failure_text: None,
            finished: false,
        };
        let mut s = self.state();
        s.requests.push_back(entry);
        if s.requests.len() > REQUESTS {
            s.requests.pop_front();
        }
    }

    fn update_request(&self, id: &str, f: impl FnOnce(&mut RequestEntry)) {
        if let Some(r) = self.state().requests.iter_mut().rev().find(|r| r.id == id) {
            f(r);
        }
    }

    /// Network requests whose URL contains `filter`, oldest first; `clear`
    /// empties the buffer.
    pub fn requests(&self, filter: Option<&str>, clear: bool) -> Vec<RequestEntry> {
        let mut s = self.state();
        let out = s
            .requests
            .iter()
            .filter(|r| filter.is_none_or(|f| r.url.contains(f)))
            .cloned()
            .collect();
        if clear {
            s.requests.clear();
        }
        out
    }

    /// Waits until every event the page sent before this call is recorded:
    /// a round trip to the page (its answer comes after its earlier
    /// events), then a barrier through the watcher. Best effort while a
    /// dialog blocks the page.
    pub async fn settle(&self, page: &Page) {
        if self.pending().is_none() {
            let _ = crate::cdp::page_call_with(
                page,
                "Runtime.evaluate",
                json!({ "expression": "0" }),
                Duration::from_secs(1),
            )
            .await;
        }
        let (done, wait) = tokio::sync::oneshot::channel();
        if self.barrier.send(done).is_ok() {
            let _ = tokio::time::timeout(Duration::from_secs(1), wait).await;
        }
    }

    /// A receiver that changes whenever a response body has fully arrived.
    pub fn response_loaded(&self) -> watch::Receiver<u64> {
        self.loaded.subscribe()
    }

    /// The newest request whose URL `matches` and whose body has arrived.
    pub fn finished_request(&self, matches: impl Fn(&str) -> bool) -> Option<RequestEntry> {
        self.state()
            .requests
            .iter()
            .rev()
            .find(|r| r.finished && matches(&r.url))
            .cloned()
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

    fn remember(&self, info: DialogInfo) {
        let mut s = self.state();
        s.recent.push_front(info);
        s.recent.truncate(RECENT);
    }

    /// The dialog waiting for an answer, if any.
    pub fn pending(&self) -> Option<DialogInfo> {
        self.state().pending.clone()
    }

    /// `{dialogs: {pending: [...], recent: [...]}}`.
    pub fn browser_state(&self) -> Value {
        let s = self.state();
        json!({ "dialogs": { "pending": s.pending.iter().collect::<Vec<_>>(), "recent": s.recent } })
    }

    /// A receiver that changes whenever a dialog opens with no armed answer.
    pub fn dialog_opened(&self) -> watch::Receiver<u64> {
        self.opened.subscribe()
    }

    /// Answers the pending dialog now (checking `dialog_id` when given), or
    /// arms `reply` for the next one for `timeout`. True when answered now.
    pub async fn reply(
        &self,
        page: &Page,
        reply: DialogReply,
        dialog_id: Option<&str>,
        timeout: Duration,
    ) -> Result<bool> {
        let pending = self.state().pending.clone();
        match pending {
            Some(info) if dialog_id.is_none_or(|id| id == info.dialog_id) => {
                answer(page, &reply).await?;
                let mut s = self.state();
                if s.pending
                    .as_ref()
                    .is_some_and(|p| p.dialog_id == info.dialog_id)
                {
                    s.pending = None;
                }
                drop(s);
                self.remember(DialogInfo {
                    outcome: Some(outcome(reply.accept)),
                    handled_by: Some("hook"),
                    ..info
                });
                Ok(true)
            }
            _ if dialog_id.is_some() => Err(BrowserError::Missing(format!(
                "no pending dialog {}",
                dialog_id.unwrap_or_default()
            ))),
            _ => {
                self.state().armed = Some((reply, Instant::now() + timeout));
                Ok(false)
            }
        }
    }

    /// Arms `files` for the next file chooser on this tab.
    pub async fn arm_chooser(
        &self,
        page: &Page,
        files: Vec<String>,
        timeout: Duration,
    ) -> Result<watch::Receiver<u64>> {
        self.state().chooser = Some((files, Instant::now() + timeout));
        let done = self.chooser_done.subscribe();
        page_call(
            page,
            "Page.setInterceptFileChooserDialog",
            json!({ "enabled": true }),
        )
        .await?;
        Ok(done)
    }
}

async fn answer(page: &Page, reply: &DialogReply) -> Result<()> {
    let mut params = json!({ "accept": reply.accept });
    if let Some(text) = &reply.prompt_text {
        params["promptText"] = json!(text);
    }
    page_call(page, "Page.handleJavaScriptDialog", params)
        .await
        .map(drop)
}
