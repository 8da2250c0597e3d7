//! The `ai` snapshot's source: a script walks the rendered DOM inside the
//! page, in an isolated world the page's own scripts cannot reach, and
//! hands back its semantic tree in one round trip. Chromium's
//! `Accessibility.getFullAXTree` costs several times more on a real page,
//! so only the `aria` format (which reports Chromium's own tree) uses it.
//!
//! The walker numbers the elements that get refs in a registry inside that
//! world; an action looks the number up there and reads the element's
//! backend node id then ([`resolve`]), so a snapshot pays for no node ids.

use std::collections::HashMap;

use chromiumoxide::Page;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{AxNode, Capture, Forest, INTERACTIVE_ROLES, REF_ROLES};
use crate::cdp::page_call;
use crate::events::TabEvents;
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
async fn create_world(page: &Page, frame: &str) -> Result<i64> {
    let world = page_call(
        page,
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
/// navigation) one made now.
async fn evaluate_in_world(
    page: &Page,
    events: &TabEvents,
    frame: &str,
    mut params: Value,
) -> Result<Value> {
    if let Some(context) = events.world(frame) {
        params["contextId"] = json!(context);
        match page_call(page, "Runtime.evaluate", params.clone()).await {
            Ok(result) => return Ok(result),
            Err(e) => tracing::debug!(error = %e, frame, "walker world gone; making it again"),
        }
    }
    params["contextId"] = json!(create_world(page, frame).await?);
    page_call(page, "Runtime.evaluate", params).await
}

/// Runs the walker in `frame`'s isolated world. `None` when `selector`
/// matches nothing.
async fn walk_frame(
    page: &Page,
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
        page,
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
/// the frame's world is, after a navigation).
pub async fn resolve(page: &Page, events: &TabEvents, r: &PageRef) -> Result<Option<Value>> {
    let expression = format!(
        "(() => {{ const r = globalThis.__clawdRefs && globalThis.__clawdRefs.elements.get({}); const el = r && r.deref(); return el && el.isConnected ? el : null; }})()",
        r.id
    );
    let Ok(found) =
        evaluate_in_world(page, events, &r.frame, json!({ "expression": expression })).await
    else {
        return Ok(None);
    };
    let Some(object_id) = found.pointer("/result/objectId").and_then(Value::as_str) else {
        return Ok(None);
    };
    let described = page_call(page, "DOM.describeNode", json!({ "objectId": object_id })).await;
    let release = page_call(
        page,
        "Runtime.releaseObject",
        json!({ "objectId": object_id }),
    );
    let _ = release.await;
    Ok(described?.get("node").cloned())
}

/// Reads the rendered page (scoped to the first match of `selector`) for
/// the `ai` format. Iframes the walk could not enter (other origins in the
/// same process) are walked in their own frame and grafted under their
/// `<iframe>` node.
pub async fn capture(page: &Page, events: &TabEvents, selector: Option<&str>) -> Result<Capture> {
    let main = page.target_id().inner().clone();
    let selector = selector.filter(|s| !s.trim().is_empty());
    let (tree, walk) = tokio::try_join!(
        page_call(page, "Page.getFrameTree", json!({})),
        walk_frame(page, events, &main, selector, ""),
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
            let Ok(Some(sub)) = walk_frame(page, events, frame, None, &prefix).await else {
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
