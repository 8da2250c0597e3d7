//! Before acting: find the element afresh, then wait until it passes the
//! checks Playwright runs for the action (attached, visible, stable,
//! enabled, editable) and, for pointer actions, until the pointer would
//! reach it (the hit-target check, through shadow roots and frames).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::target::{Aim, resolve};
use super::{Attempt, Code, Failure, Step, Stop, Tab, fail, retry};
use crate::cdp::page_call;
use crate::element;

const CHECKS: &str = include_str!("checks.js");
const INTERCEPT: &str = concat!(
    "function (types) {\n",
    include_str!("../describe.js"),
    "\n",
    include_str!("intercept.js"),
    "\n}"
);
const READ_INTERCEPT: &str = "function () { const w = this.ownerDocument.defaultView; const f = w[Symbol.for('clawd.intercept')]; return f ? f() : null; }";

/// What the stability check says of a page that draws no frames (one
/// behind another tab).
const NO_FRAMES: &str = "the page draws no animation frames";
/// What the visibility check says of a hidden element.
const NOT_VISIBLE: &str = "the element is not visible";

/// The label that stands for a checkbox or radio button the pointer cannot
/// reach (visually hidden, drawn by its label): its first label with a box.
const LABEL_OF: &str = r#"function() {
  if (this.localName !== 'input' || !['checkbox', 'radio'].includes(this.type)) return null;
  return Array.from(this.labels || []).find((l) => { const r = l.getBoundingClientRect(); return r.width > 1 && r.height > 1; }) || null;
}"#;

/// How long a ref's element may stay gone (and unmatched by role and
/// name) before the ref counts as detached.
const DETACHED_GRACE: Duration = Duration::from_millis(1000);

/// The checks an action needs before it acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Needs {
    /// Click, check: visible, enabled, stable, and the pointer reaches it.
    Click,
    /// Hover, drag: visible, stable, and the pointer reaches it.
    Point,
    /// Fill and type: visible, enabled, editable.
    Edit,
    /// Select: visible and enabled.
    Choose,
    /// Reading, scrolling, uploads: attached only (it may be hidden).
    Attached,
}

impl Needs {
    fn states(self) -> &'static [&'static str] {
        match self {
            Needs::Click => &["visible", "enabled", "stable"],
            Needs::Point => &["visible", "stable"],
            Needs::Edit => &["visible", "editable"],
            Needs::Choose => &["visible", "enabled"],
            Needs::Attached => &[],
        }
    }

    fn pointer(self) -> bool {
        matches!(self, Needs::Click | Needs::Point)
    }
}

/// An element ready to act on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ready {
    /// Its DOM node.
    pub backend: i64,
    /// Where the pointer reaches it (pointer actions only).
    pub point: (f64, f64),
}

/// Finds `aim` and waits until it passes `needs`, re-finding it whenever
/// it leaves the document, until `deadline`. At the deadline the failure
/// names the check that failed last: `covered` with what covers it,
/// `disabled`, `not_editable`, `not_found`, `detached`, else `timeout`.
pub(crate) async fn prepare(
    tab: &Tab<'_>,
    aim: &Aim,
    needs: Needs,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Ready> {
    let started = Instant::now();
    let mut last: Option<Failure> = None;
    let give_up = |last: Option<Failure>| -> Stop {
        let waited = started.elapsed().as_millis();
        match last {
            Some(f) if f.code == Code::Timeout => fail(
                Code::Timeout,
                format!("{aim}: timed out after {waited} ms: {}", f.message),
            ),
            Some(f) => Stop::Fail(Failure {
                message: format!("{} (waited {waited} ms)", f.message),
                ..f
            }),
            None => fail(Code::Timeout, format!("{aim}: timed out after {waited} ms")),
        }
    };
    // A ref from a snapshot of another document (or no snapshot at all)
    // can never come back: say so at once.
    if let super::target::Target::Ref(r) = &aim.target {
        let document = crate::snapshot::document_id(tab.page).await?;
        if let Err(e) = tab
            .manager
            .with_refs(tab.target_id, |t| t.lookup(r, &document))
        {
            return Err(e.into());
        }
    }
    let mut outer = 0;
    let mut gone_since: Option<Instant> = None;
    loop {
        if !retry::pause(retry::RESOLVE, outer, deadline).await {
            return Err(give_up(last));
        }
        if outer > 0 {
            attempt.retries += 1;
            tab.clear_banners(deadline).await;
        }
        outer += 1;
        let found = match resolve(tab, aim).await {
            Ok(found) => {
                gone_since = None;
                found
            }
            // A re-render puts an equivalent element back within frames;
            // a ref still gone after a moment is gone for good.
            Err(Stop::Fail(f))
                if f.code == Code::Detached
                    && gone_since.get_or_insert_with(Instant::now).elapsed() >= DETACHED_GRACE =>
            {
                return Err(Stop::Fail(f));
            }
            Err(Stop::Fail(f)) if matches!(f.code, Code::NotFound | Code::Detached) => {
                last = Some(f);
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut backend = found.backend;
        // A checkbox or radio button the pointer cannot reach is clicked
        // through its label, once per resolution.
        let mut label = needs == Needs::Click;
        let mut inner = 0;
        loop {
            if inner > 0 {
                if !retry::pause(retry::RECHECK, inner, deadline).await {
                    return Err(give_up(last));
                }
                attempt.retries += 1;
            }
            match check(tab, backend, needs.states()).await? {
                Checked::Gone => {
                    last = Some(Failure {
                        code: Code::Detached,
                        message: format!("{aim}: the element left the page"),
                    });
                    break;
                }
                Checked::Final(f) => return Err(Stop::Fail(f)),
                Checked::Failed(f) if f.message == NOT_VISIBLE && label => {
                    label = false;
                    if let Some(by) = element_from(tab, backend, LABEL_OF).await? {
                        tracing::info!("the input is hidden: acting through its label");
                        backend = by;
                        continue;
                    }
                    last = Some(f);
                    inner += 1;
                    continue;
                }
                Checked::Failed(f) => {
                    if f.message == NO_FRAMES {
                        // A page behind another tab draws nothing: to the front.
                        let _ = page_call(tab.page, "Page.bringToFront", json!({})).await;
                    }
                    last = Some(f);
                    inner += 1;
                    continue;
                }
                Checked::Passed => {}
            }
            if !needs.pointer() {
                return Ok(Ready {
                    backend,
                    point: (0.0, 0.0),
                });
            }
            if let Err(e) = scroll_into_view(tab, backend, inner).await {
                last = Some(as_failure(e, aim));
                inner += 1;
                continue;
            }
            let Some(point) = point(tab, backend).await? else {
                last = Some(Failure {
                    code: Code::Timeout,
                    message: "the element is outside the viewport".into(),
                });
                inner += 1;
                continue;
            };
            match element::hit_target(tab.dom, backend, point).await {
                Ok(None) => return Ok(Ready { backend, point }),
                Ok(Some(covering)) => {
                    if super::obstacle::clear(tab, point, attempt).await? {
                        continue;
                    }
                    if label {
                        label = false;
                        if let Some(by) = element_from(tab, backend, LABEL_OF).await? {
                            tracing::info!(%covering, "the input cannot be hit: acting through its label");
                            backend = by;
                            continue;
                        }
                    }
                    last = Some(Failure {
                        code: Code::Covered,
                        message: covering,
                    });
                }
                Err(e) => last = Some(as_failure(e.into(), aim)),
            }
            inner += 1;
        }
    }
}

fn as_failure(stop: Stop, aim: &Aim) -> Failure {
    match stop {
        Stop::Fail(f) => f,
        Stop::Request(e) => Failure {
            code: Code::Timeout,
            message: format!("{aim}: {e}"),
        },
    }
}

enum Checked {
    Passed,
    /// A check failed; it may pass later.
    Failed(Failure),
    /// A check failed that waiting cannot cure (the element is of the
    /// wrong kind).
    Final(Failure),
    Gone,
}

/// Runs `states` on the element in the page.
async fn check(tab: &Tab<'_>, backend: i64, states: &[&str]) -> Step<Checked> {
    let result = match element::call_on(tab.dom, backend, CHECKS, &[json!(states)]).await {
        Ok(v) => v,
        Err(crate::BrowserError::StaleRef(_)) => return Ok(Checked::Gone),
        Err(e) => return Err(e.into()),
    };
    let Some(failed) = result.get("fail").and_then(Value::as_str) else {
        return Ok(Checked::Passed);
    };
    let message = result
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or(failed)
        .to_string();
    let code = match failed {
        "connected" => return Ok(Checked::Gone),
        "enabled" => Code::Disabled,
        "editable" => Code::NotEditable,
        _ => Code::Timeout,
    };
    let failure = Failure { code, message };
    if result.get("final").and_then(Value::as_bool) == Some(true) {
        return Ok(Checked::Final(failure));
    }
    Ok(Checked::Failed(failure))
}

/// Brings the element into view: the protocol's own scroll first, then
/// cycling the alignment (end, centre, start) to get it out from under
/// sticky headers and footers.
async fn scroll_into_view(tab: &Tab<'_>, backend: i64, retry: usize) -> Step<()> {
    let align = match retry % 4 {
        0 => return Ok(element::scroll_into_view(tab.dom, backend).await?),
        1 => "end",
        2 => "center",
        _ => "start",
    };
    element::call_on(
        tab.dom,
        backend,
        "function(a) { this.scrollIntoView({ block: a, inline: a, behavior: 'instant' }); }",
        &[json!(align)],
    )
    .await?;
    Ok(())
}

/// The middle of the element's first box, clipped to the viewport (its
/// frame's, for an out-of-process frame), in the tab's viewport
/// coordinates; `None` when no part of it is inside the viewport.
async fn point(tab: &Tab<'_>, backend: i64) -> Step<Option<(f64, f64)>> {
    let Ok(quads) = tab
        .dom
        .call("DOM.getContentQuads", json!({ "backendNodeId": backend }))
        .await
    else {
        return Ok(None);
    };
    let metrics = tab.dom.call("Page.getLayoutMetrics", json!({})).await?;
    let size = |key: &str| {
        metrics
            .pointer(&format!("/cssLayoutViewport/{key}"))
            .and_then(Value::as_f64)
            .unwrap_or(f64::MAX)
    };
    let (width, height) = (size("clientWidth"), size("clientHeight"));
    let (dx, dy) = match tab.dom {
        crate::cdp::Dom::Frame(frame) => frame.offset().await?,
        crate::cdp::Dom::Page(_) => (0.0, 0.0),
    };
    Ok(quads
        .get("quads")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|q| {
            let p: Vec<f64> = q.as_array()?.iter().filter_map(Value::as_f64).collect();
            if p.len() != 8 {
                return None;
            }
            let xs = [p[0], p[2], p[4], p[6]];
            let ys = [p[1], p[3], p[5], p[7]];
            let (left, right) = (min(&xs).max(0.0), max(&xs).min(width));
            let (top, bottom) = (min(&ys).max(0.0), max(&ys).min(height));
            ((right - left) * (bottom - top) >= 0.99 && right > left && bottom > top)
                .then(|| ((left + right) / 2.0 + dx, (top + bottom) / 2.0 + dy))
        }))
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// What the interceptor saw of the trusted input.
#[derive(Debug, PartialEq)]
pub(crate) enum Delivered {
    /// Every event reached the element (or, once the page replaced it, an
    /// equivalent one: same role, name and row).
    Reached,
    /// Something else would have got an event: it and every later one
    /// were stopped. `pressed` when earlier ones reached the element (the
    /// page saw a press, never the click).
    Blocked {
        /// What would have got it.
        hit: String,
        /// Whether the press reached the element first.
        pressed: bool,
    },
    /// No event reached the element's window (another frame took it).
    Elsewhere,
    /// The element's document is gone (the input navigated away).
    Unknown,
}

/// Watches the next trusted events of `types` at the element's window.
pub(crate) async fn intercept(tab: &Tab<'_>, backend: i64, types: &[&str]) -> Step<()> {
    element::call_on(tab.dom, backend, INTERCEPT, &[json!(types)]).await?;
    Ok(())
}

/// Stops watching and says what the events did.
pub(crate) async fn delivered(tab: &Tab<'_>, backend: i64) -> Delivered {
    let read = tokio::time::timeout(
        Duration::from_secs(2),
        element::call_on(tab.dom, backend, READ_INTERCEPT, &[]),
    )
    .await;
    let Ok(Ok(state)) = read else {
        return Delivered::Unknown;
    };
    if state.is_null() {
        return Delivered::Unknown;
    }
    match (
        state.get("seen").and_then(Value::as_bool),
        state.get("reached").and_then(Value::as_bool),
    ) {
        (Some(false), _) => Delivered::Elsewhere,
        (_, Some(false)) => Delivered::Blocked {
            hit: state
                .get("hit")
                .and_then(Value::as_str)
                .unwrap_or("another element")
                .to_string(),
            pressed: state.get("pressed").and_then(Value::as_bool) == Some(true),
        },
        _ => {
            if state.get("replaced").and_then(Value::as_bool) == Some(true) {
                tracing::info!(
                    "the page replaced the element mid-click; its equivalent got the click"
                );
            }
            Delivered::Reached
        }
    }
}

/// The element `function` (called on the element) returns, if any.
pub(crate) async fn element_from(tab: &Tab<'_>, backend: i64, function: &str) -> Step<Option<i64>> {
    let object = element::object_id(tab.dom, backend).await?;
    let r = tab.dom.call("Runtime.callFunctionOn",
        json!({ "functionDeclaration": function, "objectId": object, "objectGroup": super::GROUP }),
    )
    .await?;
    let Some(found) = r.pointer("/result/objectId").and_then(Value::as_str) else {
        return Ok(None);
    };
    let node = tab
        .dom
        .call("DOM.describeNode", json!({ "objectId": found }))
        .await?;
    Ok(node.pointer("/node/backendNodeId").and_then(Value::as_i64))
}
