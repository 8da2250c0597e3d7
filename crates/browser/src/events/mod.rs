//! What happens on a tab between calls: JavaScript dialogs, file choosers,
//! console messages, page errors, network requests and the snapshot
//! walker's isolated worlds. Each tab Clawdis touches gets a
//! watcher task that answers an armed dialog or chooser at once, keeps
//! unanswered dialogs as pending (so an action that opens one reports
//! `blockedByDialog` instead of hanging) and buffers the console.

mod console;
mod dialogs;
mod network;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFileChooserOpened, EventJavascriptDialogClosed, EventJavascriptDialogOpening,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    EventConsoleApiCalled, EventExceptionThrown, EventExecutionContextCreated,
    EventExecutionContextDestroyed,
};
use futures::StreamExt;
use serde_json::json;
use tokio::sync::watch;

pub use console::ConsoleMessage;
pub use dialogs::{DialogInfo, DialogPolicy, DialogReply};
pub use network::RequestEntry;

use crate::Result;
use crate::cdp::{page_call, page_events};

#[derive(Default)]
struct State {
    armed: Option<(DialogReply, Instant)>,
    /// A session's standing answer to dialogs; `None`: keep them pending.
    policy: Option<DialogPolicy>,
    /// Dialogs the policy answered since the last `take_handled`.
    handled: Vec<DialogInfo>,
    pending: Option<DialogInfo>,
    recent: VecDeque<DialogInfo>,
    next_id: u64,
    chooser: Option<(Vec<String>, Instant)>,
    console: VecDeque<ConsoleMessage>,
    errors: VecDeque<ConsoleMessage>,
    requests: VecDeque<RequestEntry>,
    /// The walker's isolated world per frame: frame id → (execution
    /// context id, its unique id). A navigation's new world replaces the
    /// old one; `executionContextsCleared` is not used, as its stream may
    /// be read after the new world's creation.
    worlds: HashMap<String, (i64, String)>,
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

impl TabEvents {
    /// Starts watching `page`; the watcher ends with the tab.
    pub async fn watch(page: Page) -> Result<Arc<TabEvents>> {
        let mut opening = page_events::<EventJavascriptDialogOpening>(&page).await?;
        let mut closed = page_events::<EventJavascriptDialogClosed>(&page).await?;
        let mut choosers = page_events::<EventFileChooserOpened>(&page).await?;
        let mut console = page_events::<EventConsoleApiCalled>(&page).await?;
        let mut exceptions = page_events::<EventExceptionThrown>(&page).await?;
        let mut created = page_events::<EventExecutionContextCreated>(&page).await?;
        let mut destroyed = page_events::<EventExecutionContextDestroyed>(&page).await?;
        // Every new document gets the snapshot walker's world as it is made,
        // so a snapshot finds it ready (its context arrives as an event).
        page_call(
            &page,
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": "", "worldName": crate::snapshot::WORLD }),
        )
        .await?;
        let mut sent = page_events::<EventRequestWillBeSent>(&page).await?;
        let mut answered = page_events::<EventResponseReceived>(&page).await?;
        let mut failed = page_events::<EventLoadingFailed>(&page).await?;
        let mut finished = page_events::<EventLoadingFinished>(&page).await?;
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
                    Some(e) = created.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        let frame = e.context.aux_data.as_ref().and_then(|d| d.get("frameId")).and_then(|f| f.as_str());
                        if let (true, Some(frame)) = (e.context.name == crate::snapshot::WORLD, frame) {
                            events.state().worlds.insert(frame.to_string(), (*e.context.id.inner(), e.context.unique_id.clone()));
                        }
                    }
                    Some(e) = destroyed.next() => {
                        let Some(events) = weak.upgrade() else { break };
                        events.state().worlds.retain(|_, (_, unique)| *unique != e.execution_context_unique_id);
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

    /// The snapshot walker's isolated world in `frame`, when the page has
    /// reported one (it may have been destroyed since, by a navigation).
    pub fn world(&self, frame: &str) -> Option<i64> {
        self.state().worlds.get(frame).map(|(id, _)| *id)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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
        self.disarm_chooser(page).await;
        self.chooser_done.send_modify(|n| *n += 1);
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

    /// Drops armed files and stops intercepting file choosers.
    pub async fn disarm_chooser(&self, page: &Page) {
        self.state().chooser = None;
        let _ = page_call(
            page,
            "Page.setInterceptFileChooserDialog",
            json!({ "enabled": false }),
        )
        .await;
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

/// Milliseconds since the Unix epoch: the time events are stamped with.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
