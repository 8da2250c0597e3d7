//! Out-of-process frames: a frame from another site runs in a renderer of
//! its own (site isolation), so the tab's page session sees only its
//! `<iframe>` element. Acting inside it means talking to the frame's own
//! target: [`FrameSession`] attaches to it over the browser connection and
//! carries DOM and Runtime commands there, while input still goes to the
//! page (Chromium routes it into the frame) at page coordinates, which
//! [`FrameSession::offset`] converts to.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::target::EventReceivedMessageFromTarget;
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::cdp::{CALL_TIMEOUT, Cdp, page_call};
use crate::{BrowserError, Result};

type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// A session attached to one out-of-process frame of a tab.
///
/// chromiumoxide's flattened sessions are private to its handler, so this
/// one is a classic (non-flattened) session: commands go through
/// `Target.sendMessageToTarget` and answers come back as
/// `Target.receivedMessageFromTarget` events on the browser connection.
/// Detached when dropped.
pub struct FrameSession {
    cdp: Arc<Cdp>,
    session: String,
    frame_id: String,
    url: String,
    page: Page,
    parent: Option<Arc<FrameSession>>,
    waiting: Waiting,
    next: AtomicU64,
    reader: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for FrameSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameSession")
            .field("frame_id", &self.frame_id)
            .field("url", &self.url)
            .finish()
    }
}

/// An out-of-process frame of a tab, as `Target.getTargets` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteFrame {
    /// Its target id, which is also its frame id.
    pub target_id: String,
    /// Its URL.
    pub url: String,
    /// Its ancestors' out-of-process frames, outermost first.
    pub chain: Vec<(String, String)>,
}

/// The out-of-process frames under the page target `page_target`, at any
/// depth.
pub async fn remote_frames(cdp: &Cdp, page_target: &str) -> Result<Vec<RemoteFrame>> {
    let listed = cdp.call("Target.getTargets", json!({})).await?;
    let infos: Vec<&Value> = listed
        .get("targetInfos")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let field = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let frames: HashMap<String, (String, String)> = infos
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("iframe"))
        .map(|i| {
            (
                field(i, "targetId"),
                (field(i, "url"), field(i, "parentId")),
            )
        })
        .collect();
    let mut found = Vec::new();
    for (id, (url, _)) in &frames {
        // Up through the parents to the page; a frame of another tab ends
        // elsewhere. Depth is bounded in case of a cycle.
        let mut chain = Vec::new();
        let mut parent = frames[id].1.clone();
        let mut depth = 0;
        while parent != page_target && depth < 16 {
            let Some((parent_url, grand)) = frames.get(&parent) else {
                break;
            };
            chain.push((parent.clone(), parent_url.clone()));
            parent = grand.clone();
            depth += 1;
        }
        if parent == page_target {
            chain.reverse();
            found.push(RemoteFrame {
                target_id: id.clone(),
                url: url.clone(),
                chain,
            });
        }
    }
    found.sort_by(|a, b| a.url.cmp(&b.url).then(a.target_id.cmp(&b.target_id)));
    Ok(found)
}

/// Attaches to `frame` and its out-of-process ancestors.
pub async fn enter(cdp: &Arc<Cdp>, page: &Page, frame: &RemoteFrame) -> Result<Arc<FrameSession>> {
    let mut parent = None;
    for (id, url) in frame.chain.iter().chain(std::iter::once(&(
        frame.target_id.clone(),
        frame.url.clone(),
    ))) {
        parent = Some(Arc::new(
            FrameSession::attach(cdp.clone(), page.clone(), id, url, parent).await?,
        ));
    }
    parent.ok_or_else(|| BrowserError::Missing("no frame to enter".into()))
}

impl FrameSession {
    async fn attach(
        cdp: Arc<Cdp>,
        page: Page,
        target_id: &str,
        url: &str,
        parent: Option<Arc<FrameSession>>,
    ) -> Result<FrameSession> {
        let mut answers = cdp.listen::<EventReceivedMessageFromTarget>().await?;
        let attached = cdp
            .call(
                "Target.attachToTarget",
                json!({ "targetId": target_id, "flatten": false }),
            )
            .await?;
        let session = attached
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| BrowserError::Cdp("Target.attachToTarget: no session".into()))?
            .to_string();
        let waiting: Waiting = Arc::default();
        let reader = {
            let (waiting, session) = (waiting.clone(), session.clone());
            tokio::spawn(async move {
                while let Some(event) = answers.next().await {
                    if event.session_id.as_ref() != session.as_str() {
                        continue;
                    }
                    let Ok(message) = serde_json::from_str::<Value>(&event.message) else {
                        continue;
                    };
                    let Some(id) = message.get("id").and_then(Value::as_u64) else {
                        continue;
                    };
                    let sender = waiting.lock().expect("frame session waiters").remove(&id);
                    if let Some(sender) = sender {
                        let _ = sender.send(message);
                    }
                }
            })
        };
        tracing::debug!(
            frame = target_id,
            url,
            "attached to an out-of-process frame"
        );
        Ok(FrameSession {
            cdp,
            session,
            frame_id: target_id.to_string(),
            url: url.to_string(),
            page,
            parent,
            waiting,
            next: AtomicU64::new(1),
            reader,
        })
    }

    /// One command in the frame.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiting
            .lock()
            .expect("frame session waiters")
            .insert(id, tx);
        let message = json!({ "id": id, "method": method, "params": params }).to_string();
        let sent = self
            .cdp
            .call(
                "Target.sendMessageToTarget",
                json!({ "sessionId": self.session, "message": message }),
            )
            .await;
        let answer = match sent {
            Ok(_) => tokio::time::timeout(CALL_TIMEOUT, rx).await,
            Err(e) => {
                self.waiting
                    .lock()
                    .expect("frame session waiters")
                    .remove(&id);
                return Err(e);
            }
        };
        let answer = match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => return Err(BrowserError::Cdp(format!("{method}: the frame is gone"))),
            Err(_) => {
                self.waiting
                    .lock()
                    .expect("frame session waiters")
                    .remove(&id);
                return Err(BrowserError::Timeout(format!(
                    "{method} timed out after {} ms",
                    CALL_TIMEOUT.as_millis()
                )));
            }
        };
        if let Some(error) = answer.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("failed");
            return Err(BrowserError::Cdp(format!("{method}: {message}")));
        }
        Ok(answer.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Where the session its `<iframe>` element lives in: the parent
    /// frame's, or the tab's page.
    pub fn parent(&self) -> crate::cdp::Dom<'_> {
        match &self.parent {
            Some(parent) => crate::cdp::Dom::Frame(parent),
            None => crate::cdp::Dom::Page(&self.page),
        }
    }

    /// The frame's `<iframe>` element, in its parent's session.
    pub async fn owner(&self) -> Result<i64> {
        let owner = self
            .parent()
            .call("DOM.getFrameOwner", json!({ "frameId": self.frame_id }))
            .await?;
        owner
            .get("backendNodeId")
            .and_then(Value::as_i64)
            .ok_or_else(|| BrowserError::StaleRef("the frame's element is gone".into()))
    }

    /// Where the frame's viewport starts on the page (the top-left of its
    /// `<iframe>`'s content box, inside border and padding), in the tab's
    /// viewport coordinates.
    pub fn offset(&self) -> BoxFuture<'_, Result<(f64, f64)>> {
        Box::pin(async move {
            let owner = self.owner().await?;
            let model = self
                .parent()
                .call("DOM.getBoxModel", json!({ "backendNodeId": owner }))
                .await?;
            let content: Vec<f64> = model
                .pointer("/model/content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64)
                .collect();
            let (x, y) = match content.as_slice() {
                [x, y, ..] => (*x, *y),
                _ => return Err(BrowserError::StaleRef("the frame has no box".into())),
            };
            let (px, py) = match &self.parent {
                Some(parent) => parent.offset().await?,
                None => (0.0, 0.0),
            };
            Ok((x + px, y + py))
        })
    }
}

impl Drop for FrameSession {
    fn drop(&mut self) {
        self.reader.abort();
        let (cdp, session) = (self.cdp.clone(), self.session.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = tokio::time::timeout(
                    Duration::from_secs(2),
                    cdp.call("Target.detachFromTarget", json!({ "sessionId": session })),
                )
                .await;
            });
        }
    }
}

/// The frame a `<iframe>` element of `page` shows, when it runs out of
/// process: its frame id (also its target id). `None` for an in-process
/// frame, whose document the page session reaches itself.
pub async fn remote_frame_of(page: &Page, owner: i64) -> Result<Option<String>> {
    let node = page_call(
        page,
        "DOM.describeNode",
        json!({ "backendNodeId": owner, "depth": 0, "pierce": false }),
    )
    .await?;
    if node.pointer("/node/contentDocument").is_some() {
        return Ok(None);
    }
    Ok(node
        .pointer("/node/frameId")
        .and_then(Value::as_str)
        .map(str::to_string))
}
