//! Pointer actions: click, hover and drag, with trusted input only. A click
//! is sent once the element passes its checks, is watched at the element's
//! window as it arrives, and counts only when it reached the element.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::input::EventDragIntercepted;
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameNavigated, EventFrameRequestedNavigation,
};
use chromiumoxide::cdp::browser_protocol::target::EventTargetCreated;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::checks::{Delivered, Needs, delivered, intercept, prepare};
use super::request::Click;
use super::target::Aim;
use super::{Attempt, Code, Step, Tab, fail};
use crate::cdp::{page_call, page_events};
use crate::input;

/// The events a click's interceptor watches.
const CLICK_EVENTS: &[&str] = &[
    "pointerdown",
    "mousedown",
    "pointerup",
    "mouseup",
    "click",
    "dblclick",
    "auxclick",
    "contextmenu",
];

/// The longest the round trip after a click may take.
const AFTERMATH: Duration = Duration::from_secs(2);
/// The longest wait for a navigation a click started to commit.
const COMMIT: Duration = Duration::from_secs(15);

/// Clicks the element once it is actionable; reports a tab the click
/// opened (`newTab`) and a navigation it started (`navigated`).
pub(crate) async fn click(
    tab: &Tab<'_>,
    click: &Click,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    let cdp = tab.manager.connected()?;
    let mut created = cdp.listen::<EventTargetCreated>().await?;
    let mut requested = page_events::<EventFrameRequestedNavigation>(tab.page).await?;
    let mut committed = page_events::<EventFrameNavigated>(tab.page).await?;
    press(tab, click, deadline, attempt).await?;
    // What the click set off: a round trip to the page comes back after
    // every event its handlers caused (a navigation request), and one to
    // the browser after every tab it opened; no fixed wait.
    let _ = crate::cdp::page_call_with(
        tab.page,
        "Runtime.evaluate",
        json!({ "expression": "0" }),
        AFTERMATH,
    )
    .await;
    let _ = cdp.call("Target.getTargets", json!({})).await;
    let mut data = serde_json::Map::new();
    if let Some(opened) = opened_tab(tab, &mut created).await {
        // The new tab took the front; a page behind it draws no frames.
        let _ = page_call(tab.page, "Page.bringToFront", json!({})).await;
        attempt.handled.push(super::Handled {
            kind: "popup",
            detail: format!(
                "the click opened a new tab: {}",
                opened["url"].as_str().unwrap_or_default()
            ),
            ..super::Handled::default()
        });
        data.insert("newTab".into(), opened);
    }
    let main = main_frame(tab).await;
    let mut navigation = None;
    while let Some(Some(e)) = requested.next().now_or_never() {
        if Some(e.frame_id.inner()) == main.as_ref() {
            navigation = Some(e.url.clone());
        }
    }
    if let Some(url) = navigation {
        let landed = tokio::time::timeout(COMMIT, async {
            while let Some(e) = committed.next().await {
                if e.frame.parent_id.is_none() {
                    return Some(e.frame.url.clone());
                }
            }
            None
        })
        .await
        .ok()
        .flatten();
        match landed {
            Some(now) => {
                data.insert("navigated".into(), json!(now));
            }
            None => {
                return Err(fail(
                    Code::Navigation,
                    format!(
                        "the click started a navigation to {url} that did not commit within {} s",
                        COMMIT.as_secs()
                    ),
                ));
            }
        }
    }
    Ok((!data.is_empty()).then_some(Value::Object(data)))
}

/// Sends a press at the element, retrying while an interceptor stopped it:
/// nothing reached the page, or only the press did (the element moved or
/// was replaced before the click), so a retry cannot repeat a click.
async fn press(tab: &Tab<'_>, c: &Click, deadline: Instant, attempt: &mut Attempt) -> Step<()> {
    loop {
        let ready = prepare(tab, &c.aim, Needs::Click, deadline, attempt).await?;
        intercept(tab, ready.backend, CLICK_EVENTS).await?;
        input::click(
            tab.page,
            ready.point,
            c.button,
            c.double,
            c.modifiers,
            c.delay,
        )
        .await?;
        match delivered(tab, ready.backend).await {
            Delivered::Reached | Delivered::Unknown => return Ok(()),
            Delivered::Blocked { hit, pressed } if Instant::now() >= deadline => {
                return Err(if pressed {
                    fail(
                        Code::VerifyFailed,
                        format!(
                            "{}: the page replaced or moved the element between the press and the click, and the click would have reached {hit}: it was stopped, so nothing was clicked",
                            c.aim
                        ),
                    )
                } else {
                    fail(
                        Code::Covered,
                        format!(
                            "{hit} intercepts pointer events: the click was stopped before the page saw it"
                        ),
                    )
                });
            }
            Delivered::Blocked { hit, pressed } => {
                tracing::info!(%hit, pressed, "the element moved or was replaced under the pointer; retrying");
                attempt.retries += 1;
            }
            Delivered::Elsewhere => {
                return Err(fail(
                    Code::Covered,
                    "the click went to another frame than the element's: something in another frame covers it",
                ));
            }
        }
    }
}

/// The main frame's id.
async fn main_frame(tab: &Tab<'_>) -> Option<String> {
    let tree = page_call(tab.page, "Page.getFrameTree", json!({}))
        .await
        .ok()?;
    tree.pointer("/frameTree/frame/id")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A tab opened by this one during the action: `{targetId, url}`, with the
/// URL it loads (waited for briefly while it is still `about:blank`).
async fn opened_tab(
    tab: &Tab<'_>,
    created: &mut chromiumoxide::listeners::EventStream<EventTargetCreated>,
) -> Option<Value> {
    // Only what has arrived: the round trips before made sure it has.
    let mut found = None;
    while let Some(Some(e)) = created.next().now_or_never() {
        let info = &e.target_info;
        if info.r#type == "page"
            && info.opener_id.as_ref().map(|o| o.inner().as_str()) == Some(tab.target_id)
        {
            found = Some(info.target_id.inner().clone());
        }
    }
    let found = found?;
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut url = String::new();
    while Instant::now() < deadline {
        url = tab.manager.target_url(&found).await.unwrap_or_default();
        if !url.is_empty() && url != "about:blank" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Some(json!({ "targetId": found, "url": url }))
}

/// Moves the pointer over the element and checks that it is hovered (or
/// that the page replaced it in answer to the hover).
pub(crate) async fn hover(
    tab: &Tab<'_>,
    aim: &Aim,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    let ready = prepare(tab, aim, Needs::Point, deadline, attempt).await?;
    input::move_to(tab.page, ready.point).await?;
    let hovered = crate::element::call_on(
        tab.dom,
        ready.backend,
        "function() { return !this.isConnected || this.matches(':hover'); }",
        &[],
    )
    .await;
    match hovered {
        Ok(Value::Bool(true)) | Err(crate::BrowserError::StaleRef(_)) => Ok(None),
        Ok(_) => Err(fail(
            Code::VerifyFailed,
            format!(
                "{aim}: the pointer is over the element's place but the element is not hovered"
            ),
        )),
        Err(e) => Err(e.into()),
    }
}

/// Records whether a drop, or the release of a pointer drag over it,
/// reached the target element.
const WATCH_DROP: &str = r#"function () {
  const el = this;
  const w = el.ownerDocument.defaultView;
  const state = { drop: false, release: false };
  const on = (e) => {
    if (!e.isTrusted) return;
    if (e.type === 'drop') { if (e.composedPath().includes(el)) state.drop = true; return; }
    const r = el.getBoundingClientRect();
    if (e.composedPath().includes(el) || (e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom)) state.release = true;
  };
  const types = ['drop', 'pointerup', 'mouseup'];
  for (const t of types) w.addEventListener(t, on, { capture: true });
  w[Symbol.for('clawd.drop')] = () => { for (const t of types) w.removeEventListener(t, on, { capture: true }); return state; };
}"#;
const READ_DROP: &str = "function () { const f = this.ownerDocument.defaultView[Symbol.for('clawd.drop')]; return f ? f() : null; }";

/// Drags `from` onto `to`: HTML5 drag and drop through Chromium's drag
/// interception, else a pointer drag in small steps. Verified by the drop
/// (or the release) arriving at the target.
pub(crate) async fn drag(
    tab: &Tab<'_>,
    from: &Aim,
    to: &Aim,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    let source = prepare(tab, from, Needs::Point, deadline, attempt).await?;
    let target = prepare(tab, to, Needs::Point, deadline, attempt).await?;
    crate::element::call_on(tab.dom, target.backend, WATCH_DROP, &[]).await?;
    let mut intercepted = page_events::<EventDragIntercepted>(tab.page).await?;
    page_call(
        tab.page,
        "Input.setInterceptDrags",
        json!({ "enabled": true }),
    )
    .await?;
    let result = drag_steps(tab, source.point, target.point, &mut intercepted).await;
    let _ = page_call(
        tab.page,
        "Input.setInterceptDrags",
        json!({ "enabled": false }),
    )
    .await;
    let html5 = result?;
    let seen = crate::element::call_on(tab.dom, target.backend, READ_DROP, &[]).await;
    let arrived = match &seen {
        Ok(Value::Object(state)) => {
            let flag = |k: &str| state.get(k).and_then(Value::as_bool) == Some(true);
            if html5 {
                flag("drop")
            } else {
                flag("release") || flag("drop")
            }
        }
        // The target left the page in answer to the drop: it arrived.
        _ => true,
    };
    if !arrived {
        return Err(fail(
            Code::VerifyFailed,
            if html5 {
                format!(
                    "the drag ended but {to} did not accept the drop (its dragover handler did not call preventDefault)"
                )
            } else {
                format!("the drag ended but the release did not reach {to}")
            },
        ));
    }
    Ok(Some(json!({ "html5": html5 })))
}

/// Press at `a`, move towards `b` in steps; when Chromium reports an HTML5
/// drag, finish it with drag events at `b`; else release at `b`. True for
/// an HTML5 drag.
async fn drag_steps(
    tab: &Tab<'_>,
    a: (f64, f64),
    b: (f64, f64),
    intercepted: &mut chromiumoxide::listeners::EventStream<EventDragIntercepted>,
) -> Step<bool> {
    const STEPS: u32 = 10;
    let mouse = |kind: &'static str, p: (f64, f64), buttons: u32| {
        page_call(
            tab.page,
            "Input.dispatchMouseEvent",
            json!({ "type": kind, "x": p.0, "y": p.1, "button": "left", "buttons": buttons, "clickCount": 1 }),
        )
    };
    mouse("mouseMoved", a, 0).await?;
    mouse("mousePressed", a, 1).await?;
    let mut data = None;
    for i in 1..=STEPS {
        let t = f64::from(i) / f64::from(STEPS);
        let p = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
        mouse("mouseMoved", p, 1).await?;
        if let Ok(Some(e)) =
            tokio::time::timeout(Duration::from_millis(20), intercepted.next()).await
        {
            data = Some(serde_json::to_value(&e.data).unwrap_or_default());
            break;
        }
    }
    let Some(data) = data else {
        mouse("mouseReleased", b, 0).await?;
        return Ok(false);
    };
    for kind in ["dragEnter", "dragOver", "drop"] {
        page_call(
            tab.page,
            "Input.dispatchDragEvent",
            json!({ "type": kind, "x": b.0, "y": b.1, "data": data }),
        )
        .await?;
    }
    mouse("mouseReleased", b, 0).await?;
    Ok(true)
}
