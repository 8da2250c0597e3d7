//! The `ai` snapshot's source: a script walks the rendered DOM inside the
//! page, in an isolated world the page's own scripts cannot reach, and
//! hands back its semantic tree in one round trip. Chromium's
//! `Accessibility.getFullAXTree` costs several times more on a real page,
//! so only the `aria` format (which reports Chromium's own tree) uses it.
//!
//! The walker numbers the elements that get refs in a registry inside that
//! world; an action looks the number up there and reads the element's
//! backend node id then ([`resolve`]), so a snapshot pays for no node ids.
//! A frame from another site (out of process) is walked through its own
//! session, so its elements get refs too.

use std::collections::HashMap;
use std::sync::Arc;

use chromiumoxide::Page;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{AxNode, Capture, Forest, INTERACTIVE_ROLES, REF_ROLES};
use crate::cdp::{Cdp, Dom, page_call};
use crate::events::TabEvents;
use crate::frames;
use crate::inspect::exception_message;
use crate::refs::PageRef;
use crate::{BrowserError, Result};

const WALKER: &str = include_str!("walker.js");

/// The isolated world the walker and its registry live in.
pub const WORLD: &str = "clawd";

/// One node as the walker reports it.
#[derive(Deserialize)]
struct Walked {
    r: String,
    #[serde(default)]
    n: String,
    v: Option<String>,
    #[serde(default)]
    p: serde_json::Map<String, Value>,
    #[serde(default)]
    c: Vec<usize>,
    e: Option<u64>,
}

#[derive(Deserialize)]
struct Walk {
    nodes: Vec<Walked>,
    /// `[node, element ref]` of iframes whose document the walk could not enter.
    foreign: Vec<(usize, u64)>,
}

/// One frame's walk: its nodes (ids prefixed) and the frames it could not enter.
struct FrameWalk {
    nodes: Vec<AxNode>,
    /// `(node id, the iframe element)`.
    foreign: Vec<(String, PageRef)>,
}

/// Creates `frame`'s isolated world (or finds the one it has) and returns
/// its execution context.
async fn create_world(dom: Dom<'_>, frame: &str) -> Result<i64> {
    let world = dom
        .call(
            "Page.createIsolatedWorld",
            json!({ "frameId": frame, "worldName": WORLD }),
        )
        .await?;
    world
        .get("executionContextId")
        .and_then(Value::as_i64)
        .ok_or_else(|| BrowserError::Cdp("Page.createIsolatedWorld returned no context".into()))
}

/// `Runtime.evaluate` in `frame`'s isolated world: the one the page
/// reported when there is one, else (or when it has gone with a
/// navigation, or the frame is out of process) the one asked for now.
async fn evaluate_in_world(
    dom: Dom<'_>,
    events: &TabEvents,
    frame: &str,
    mut params: Value,
) -> Result<Value> {
    if let (Dom::Page(page), Some(context)) = (dom, events.world(frame)) {
        params["contextId"] = json!(context);
        match page_call(page, "Runtime.evaluate", params.clone()).await {
            Ok(result) => return Ok(result),
            Err(e) => tracing::debug!(error = %e, frame, "walker world gone; making it again"),
        }
    }
    params["contextId"] = json!(create_world(dom, frame).await?);
    dom.call("Runtime.evaluate", params).await
}

/// Runs the walker in `frame`'s isolated world. `None` when `selector`
/// matches nothing.
async fn walk_frame(
    dom: Dom<'_>,
    events: &TabEvents,
    frame: &str,
    selector: Option<&str>,
    prefix: &str,
) -> Result<Option<FrameWalk>> {
    let opts = json!({
        "selector": selector,
        "refRoles": INTERACTIVE_ROLES.iter().chain(REF_ROLES).collect::<Vec<_>>(),
    });
    let result = evaluate_in_world(
        dom,
        events,
        frame,
        json!({ "expression": format!("({WALKER})({opts})"), "returnByValue": true }),
    )
    .await?;
    if let Some(details) = result.get("exceptionDetails") {
        let message = exception_message(details);
        return Err(match selector {
            Some(s)
                if message.contains("SyntaxError") || message.contains("not a valid selector") =>
            {
                BrowserError::invalid(format!("invalid selector: {s}"))
            }
            _ => BrowserError::Cdp(format!("snapshot walker failed: {message}")),
        });
    }
    let Some(text) = result.pointer("/result/value").and_then(Value::as_str) else {
        return Ok(None);
    };
    let walk: Walk = serde_json::from_str(text)
        .map_err(|e| BrowserError::Cdp(format!("snapshot walker output: {e}")))?;
    let page_ref = |id: u64| PageRef {
        frame: frame.to_string(),
        id,
    };
    let node_id = |i: usize| format!("{prefix}{i}");
    let foreign = walk
        .foreign
        .iter()
        .map(|&(node, el)| (node_id(node), page_ref(el)))
        .collect();
    let nodes = walk
        .nodes
        .into_iter()
        .enumerate()
        .map(|(i, w)| AxNode {
            id: node_id(i),
            ignored: false,
            backend: None,
            page_ref: w.e.map(page_ref),
            role: w.r,
            name: w.n,
            value: w.v.filter(|v| !v.is_empty()),
            description: None,
            props: w.p.into_iter().collect(),
            children: w.c.into_iter().map(node_id).collect(),
        })
        .collect();
    Ok(Some(FrameWalk { nodes, foreign }))
}

/// The DOM node a walker ref names, `None` when the element is gone (or
/// the frame's world is, after a navigation). `dom` is the session of the
/// ref's frame: the page's, or an out-of-process frame's own.
pub async fn resolve(
    dom: impl Into<Dom<'_>>,
    events: &TabEvents,
    r: &PageRef,
) -> Result<Option<Value>> {
    let dom = dom.into();
    let expression = format!(
        "(() => {{ const r = globalThis.__clawdRefs && globalThis.__clawdRefs.elements.get({}); const el = r && r.deref(); return el && el.isConnected ? el : null; }})()",
        r.id
    );
    let Ok(found) =
        evaluate_in_world(dom, events, &r.frame, json!({ "expression": expression })).await
    else {
        return Ok(None);
    };
    let Some(object_id) = found.pointer("/result/objectId").and_then(Value::as_str) else {
        return Ok(None);
    };
    let described = dom
        .call("DOM.describeNode", json!({ "objectId": object_id }))
        .await;
    let _ = dom
        .call("Runtime.releaseObject", json!({ "objectId": object_id }))
        .await;
    Ok(described?.get("node").cloned())
}

/// Reads the rendered page (scoped to the first match of `selector`) for
/// the `ai` format. Iframes the walk could not enter (other origins in the
/// same process, and frames from other sites through their own session)
/// are walked in their own frame and grafted under their `<iframe>` node.
pub async fn capture(
    page: &Page,
    events: &TabEvents,
    cdp: &Arc<Cdp>,
    selector: Option<&str>,
) -> Result<Capture> {
    let main = page.target_id().inner().clone();
    let selector = selector.filter(|s| !s.trim().is_empty());
    let (tree, walk) = tokio::try_join!(
        page_call(page, "Page.getFrameTree", json!({})),
        walk_frame(page.into(), events, &main, selector, ""),
    )?;
    let Some(walk) = walk else {
        return Err(BrowserError::Missing(format!(
            "no element matches selector {}",
            selector.unwrap_or_default()
        )));
    };
    let mut nodes: HashMap<String, AxNode> =
        walk.nodes.into_iter().map(|n| (n.id.clone(), n)).collect();
    let mut grafts: HashMap<String, Vec<String>> = HashMap::new();
    let mut foreign = walk.foreign;
    // A grafted frame may hold frames of its own; follow a few levels.
    for round in 1..=4 {
        if foreign.is_empty() {
            break;
        }
        for (k, (node, owner)) in std::mem::take(&mut foreign).into_iter().enumerate() {
            let Ok(Some(described)) = resolve(page, events, &owner).await else {
                continue;
            };
            let Some(frame) = described.get("frameId").and_then(Value::as_str) else {
                continue;
            };
            let prefix = format!("f{round}.{k}:");
            let walked = match walk_frame(page.into(), events, frame, None, &prefix).await {
                Err(_) => walk_remote(page, events, cdp, frame, &prefix).await,
                walked => walked,
            };
            let Ok(Some(sub)) = walked else {
                continue;
            };
            grafts.entry(node).or_default().push(format!("{prefix}0"));
            foreign.extend(sub.foreign);
            nodes.extend(sub.nodes.into_iter().map(|n| (n.id.clone(), n)));
        }
    }
    let forest = Forest {
        nodes,
        root: Some("0".into()),
        grafts,
    };
    Ok(Capture::new(&tree, forest, None))
}

/// Walks `frame` when it runs out of process: through a session of its
/// own, attached for the walk. Frames inside it that are out of process
/// too are not followed.
async fn walk_remote(
    page: &Page,
    events: &TabEvents,
    cdp: &Arc<Cdp>,
    frame: &str,
    prefix: &str,
) -> Result<Option<FrameWalk>> {
    let remote = frames::remote_frames(cdp, page.target_id().inner()).await?;
    let Some(remote) = remote.into_iter().find(|f| f.target_id == frame) else {
        return Ok(None);
    };
    let session = frames::enter(cdp, page, &remote).await?;
    walk_frame(Dom::Frame(&session), events, frame, None, prefix).await
}
