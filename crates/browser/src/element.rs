//! Finding the element an action names (a snapshot ref or a CSS selector)
//! and working with it through its DOM backend node id.

use std::time::Duration;

use chromiumoxide::Page;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::cdp::{Dom, page_call};
use crate::inspect::exception_message;
use crate::{BrowserError, Result};

/// How often a condition on the page is re-checked while waiting.
pub const POLL: Duration = Duration::from_millis(50);

/// Where an action points.
#[derive(Clone, Debug, PartialEq)]
pub enum Locator {
    /// A snapshot ref (`e12`, `ax12`, `12`).
    Ref(String),
    /// A CSS selector.
    Selector(String),
}

impl std::fmt::Display for Locator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Locator::Ref(r) => write!(f, "ref {r}"),
            Locator::Selector(s) => write!(f, "selector {s}"),
        }
    }
}

/// The backend node id of the first element matching selector `s`,
/// waited for until `timeout`.
pub async fn wait_for_selector(page: &Page, s: &str, timeout: Duration) -> Result<i64> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(id) = query_selector(page, s).await? {
            return Ok(id);
        }
        if Instant::now() >= deadline {
            return Err(BrowserError::Missing(format!(
                "no element matches selector {s} (waited {} ms)",
                timeout.as_millis()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The first element matching `selector` now, if any; a bad selector is a request error.
pub async fn query_selector(page: &Page, selector: &str) -> Result<Option<i64>> {
    let found = page_call(
        page,
        "Runtime.evaluate",
        json!({ "expression": format!("document.querySelector({})", json!(selector)) }),
    )
    .await?;
    if let Some(details) = found.get("exceptionDetails") {
        return Err(BrowserError::invalid(format!(
            "invalid selector {selector}: {}",
            exception_message(details)
        )));
    }
    let Some(object_id) = found.pointer("/result/objectId").and_then(Value::as_str) else {
        return Ok(None);
    };
    let node = page_call(page, "DOM.describeNode", json!({ "objectId": object_id })).await?;
    Ok(node.pointer("/node/backendNodeId").and_then(Value::as_i64))
}

/// A JS object handle for the element; a node that no longer exists is a
/// stale ref.
pub async fn object_id<'a>(dom: impl Into<Dom<'a>>, backend: i64) -> Result<String> {
    let resolved = dom
        .into()
        .call("DOM.resolveNode", json!({ "backendNodeId": backend }))
        .await
        .map_err(|_| gone())?;
    resolved
        .pointer("/object/objectId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(gone)
}

fn gone() -> BrowserError {
    BrowserError::StaleRef(
        "the element is no longer in the page. Re-snapshot and use a ref from the new snapshot."
            .into(),
    )
}

/// Calls `function` with `this` bound to the element and JSON `args`;
/// awaits a returned promise and returns the value. A thrown error is
/// [`BrowserError::Invalid`].
pub async fn call_on<'a>(
    dom: impl Into<Dom<'a>>,
    backend: i64,
    function: &str,
    args: &[Value],
) -> Result<Value> {
    let dom = dom.into();
    let object = object_id(dom, backend).await?;
    let args: Vec<Value> = args.iter().map(|a| json!({ "value": a })).collect();
    let result = dom
        .call(
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": function,
                "objectId": object,
                "arguments": args,
                "awaitPromise": true,
                "returnByValue": true,
                "userGesture": true,
            }),
        )
        .await?;
    if let Some(details) = result.get("exceptionDetails") {
        return Err(BrowserError::invalid_code(
            "ACT_INVALID_REQUEST",
            exception_message(details),
        ));
    }
    Ok(result
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Null))
}

/// Scrolls the element into view.
pub async fn scroll_into_view<'a>(dom: impl Into<Dom<'a>>, backend: i64) -> Result<()> {
    dom.into()
        .call(
            "DOM.scrollIntoViewIfNeeded",
            json!({ "backendNodeId": backend }),
        )
        .await
        .map(drop)
        .map_err(|e| match e {
            BrowserError::Cdp(m) if m.contains("No node") => gone(),
            BrowserError::Cdp(m) => BrowserError::invalid_code(
                "ACT_INVALID_REQUEST",
                format!("cannot scroll to the element: {m}"),
            ),
            other => other,
        })
}

/// The centre of the element in viewport coordinates, after scrolling it
/// into view; waits until `timeout` for it to have a box (be visible).
pub async fn point(page: &Page, backend: i64, timeout: Duration) -> Result<(f64, f64)> {
    let deadline = Instant::now() + timeout;
    loop {
        scroll_into_view(page, backend).await?;
        let quads = page_call(
            page,
            "DOM.getContentQuads",
            json!({ "backendNodeId": backend }),
        )
        .await;
        if let Some(centre) = quads.ok().as_ref().and_then(centre) {
            return Ok(centre);
        }
        if Instant::now() >= deadline {
            return Err(BrowserError::invalid_code(
                "ACT_INVALID_REQUEST",
                "the element is not visible (it has no box on the page)",
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// What would take a click at `at` (viewport coordinates) instead of the
/// element, or `None` when the element would get it: the topmost node
/// there, as Chromium's own hit test finds it (through shadow roots and
/// into frames, skipping `pointer-events: none`), must be the element or
/// inside it (or inside the button or link the element is part of).
/// Otherwise the click would land on whatever covers it (a cookie banner,
/// a modal's backdrop), which the answer names.
pub fn hit_target<'a>(
    dom: impl Into<Dom<'a>>,
    backend: i64,
    at: (f64, f64),
) -> BoxFuture<'a, Result<Option<String>>> {
    let dom = dom.into();
    Box::pin(async move {
        match dom {
            Dom::Page(_) => hit_in(dom, backend, at).await,
            // An element of an out-of-process frame: its `<iframe>` must
            // take the point in the parent, then the element inside the
            // frame, at the frame's own coordinates.
            Dom::Frame(frame) => {
                let owner = frame.owner().await?;
                if let Some(covering) = hit_target(frame.parent(), owner, at).await? {
                    return Ok(Some(covering));
                }
                let (dx, dy) = frame.offset().await?;
                hit_in(dom, backend, (at.0 - dx, at.1 - dy)).await
            }
        }
    })
}

/// [`hit_target`] within one session's document.
async fn hit_in(dom: Dom<'_>, backend: i64, at: (f64, f64)) -> Result<Option<String>> {
    let (x, y) = (at.0.floor() as i64, at.1.floor() as i64);
    // The hit test takes document coordinates; the click, viewport ones.
    let metrics = dom.call("Page.getLayoutMetrics", json!({})).await?;
    let scrolled = |axis: &str| {
        metrics
            .pointer(&format!("/cssVisualViewport/{axis}"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    };
    let (page_x, page_y) = (
        (at.0 + scrolled("pageX")).floor() as i64,
        (at.1 + scrolled("pageY")).floor() as i64,
    );
    let found = dom
        .call(
            "DOM.getNodeForLocation",
            json!({ "x": page_x, "y": page_y, "includeUserAgentShadowDOM": false }),
        )
        .await;
    let Some(hit) = found
        .ok()
        .and_then(|v| v.get("backendNodeId").and_then(Value::as_i64))
    else {
        return Ok(Some(format!("nothing is at ({x}, {y}) to click")));
    };
    if hit == backend {
        return Ok(None);
    }
    let target = object_id(dom, backend).await?;
    // A hit on a pseudo-element (an `::after` drawn as the control) is no
    // DOM node to compare: what the page finds at the point decides.
    let Ok(hit_object) = object_id(dom, hit).await else {
        return at_point(dom, &target, at).await;
    };
    let call = |function: &str, args: Value| {
        dom.call(
            "Runtime.callFunctionOn",
            json!({ "functionDeclaration": function, "objectId": hit_object, "arguments": args, "returnByValue": true }),
        )
    };
    // A hit in another frame than the element's cannot be compared in one
    // script (CDP refuses the argument): it is not inside the element.
    let checked = call(INSIDE, json!([{ "objectId": target }]))
        .await
        .ok()
        .filter(|r| r.get("exceptionDetails").is_none());
    let covering = match checked {
        Some(r) => match r.pointer("/result/value") {
            Some(Value::String(what)) => what.clone(),
            Some(Value::Bool(false)) => return at_point(dom, &target, at).await,
            _ => return Ok(None),
        },
        None => match call(DESCRIBE, json!([]))
            .await?
            .pointer("/result/value")
            .and_then(Value::as_str)
        {
            Some(what) => what.to_string(),
            None => return at_point(dom, &target, at).await,
        },
    };
    Ok(Some(format!(
        "{covering} intercepts pointer events at ({x}, {y}): the click would not reach the element"
    )))
}

/// [`hit_target`] by the page's own `elementFromPoint` at viewport point
/// `at` (which never answers a pseudo-element, but its element).
async fn at_point(dom: Dom<'_>, target: &str, at: (f64, f64)) -> Result<Option<String>> {
    let found = dom
        .call(
            "Runtime.callFunctionOn",
            json!({ "functionDeclaration": AT_POINT, "objectId": target, "arguments": [{ "value": at.0 }, { "value": at.1 }], "returnByValue": true }),
        )
        .await?;
    Ok(found
        .pointer("/result/value")
        .and_then(Value::as_str)
        .map(|covering| {
            format!(
                "{covering} intercepts pointer events at ({}, {}): the click would not reach the element",
                at.0.floor(),
                at.1.floor()
            )
        }))
}

/// A page-side `describe(node)`: the element as a short tag with its id,
/// class and the start of its text, `<div id="banner">We use…</div>`.
macro_rules! describe_js {
    () => {
        include_str!("describe.js")
    };
}

/// With `this` the hit node: `null` when it is `target` or inside it, or
/// inside the button or link `target` is part of (through slots and shadow
/// hosts), `false` when it is no DOM node (a pseudo-element), else a
/// description of what was hit.
const INSIDE: &str = concat!(
    "function (target) {\n",
    describe_js!(),
    "\nif (!this || !this.nodeType) return false;",
    "\nconst whole = (target.closest && target.closest('button, [role=button], a, [role=link]')) || target;",
    "\nfor (let n = this; n; n = n.assignedSlot || n.parentNode || n.host) { if (n === target || n === whole) return null; }\nreturn describe(this);\n}"
);

/// With `this` the target: `null` when what the page finds at viewport
/// point (x, y) is the target or inside it (as [`INSIDE`] says), else a
/// description of it.
const AT_POINT: &str = concat!(
    "function (x, y) {\n",
    describe_js!(),
    "\nlet hit = this.ownerDocument.elementFromPoint(x, y);",
    "\nwhile (hit && hit.shadowRoot) { const inner = hit.shadowRoot.elementFromPoint(x, y); if (!inner || inner === hit) break; hit = inner; }",
    "\nif (!hit) return 'nothing';",
    "\nconst whole = (this.closest && this.closest('button, [role=button], a, [role=link]')) || this;",
    "\nfor (let n = hit; n; n = n.assignedSlot || n.parentNode || n.host) { if (n === this || n === whole) return null; }\nreturn describe(hit);\n}"
);

/// Describes `this`.
pub(crate) const DESCRIBE: &str = concat!(
    "function () {\n",
    describe_js!(),
    "\nreturn describe(this);\n}"
);

/// The centre of the first quad with an area.
pub(crate) fn centre(quads: &Value) -> Option<(f64, f64)> {
    quads.get("quads")?.as_array()?.iter().find_map(|q| {
        let p: Vec<f64> = q.as_array()?.iter().filter_map(Value::as_f64).collect();
        if p.len() != 8 {
            return None;
        }
        let area = ((p[0] * p[3] - p[2] * p[1])
            + (p[2] * p[5] - p[4] * p[3])
            + (p[4] * p[7] - p[6] * p[5])
            + (p[6] * p[1] - p[0] * p[7]))
            .abs()
            / 2.0;
        (area > 0.5).then(|| {
            (
                (p[0] + p[2] + p[4] + p[6]) / 4.0,
                (p[1] + p[3] + p[5] + p[7]) / 4.0,
            )
        })
    })
}

/// Outlines element `backend` in `color` for two seconds.
pub async fn highlight(page: &chromiumoxide::Page, backend: i64, color: &str) -> Result<()> {
    scroll_into_view(page, backend).await?;
    let js = "function(color) { const before = this.style.outline; \
              this.style.outline = `3px solid ${color}`; \
              setTimeout(() => { this.style.outline = before; }, 2000); }";
    call_on(page, backend, js, &[json!(color)]).await.map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centre_skips_empty_quads() {
        let q = json!({ "quads": [[5, 5, 5, 5, 5, 5, 5, 5], [10, 20, 30, 20, 30, 40, 10, 40]] });
        assert_eq!(centre(&q), Some((20.0, 30.0)));
        assert_eq!(centre(&json!({ "quads": [] })), None);
    }
}
