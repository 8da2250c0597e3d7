//! Page-level actions: navigate, reload, back, forward, scroll and wait,
//! each verified by the state it promises (the new document loaded, the
//! history moved, the page scrolled, the condition held).

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::{
    EventLoadEventFired, EventNavigatedWithinDocument,
};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::checks::{Needs, prepare};
use super::request::{Condition, Direction};
use super::target::{Aim, Strategy, Target, all};
use super::{Attempt, Code, Step, Stop, Tab, fail};
use crate::cdp::{page_call, page_events};

/// How often `wait` looks again.
const POLL: Duration = Duration::from_millis(50);
/// Quiet time that counts as network idle.
const IDLE: Duration = Duration::from_millis(500);

fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// Loads `url` and waits for its load event.
pub(crate) async fn to(tab: &Tab<'_>, url: &str, deadline: Instant) -> Step<Option<Value>> {
    let url = crate::policy::check_url(url, &tab.manager.settings())?;
    let mut loads = page_events::<EventLoadEventFired>(tab.page).await?;
    let nav = crate::cdp::page_call_with(
        tab.page,
        "Page.navigate",
        json!({ "url": url }),
        left(deadline),
    )
    .await?;
    if let Some(error) = nav
        .get("errorText")
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())
    {
        return Err(fail(
            Code::Navigation,
            format!("loading {url} failed: {error}"),
        ));
    }
    if nav.get("loaderId").is_some() {
        loaded(&mut loads, deadline, &url).await?;
    }
    landed(tab).await
}

async fn loaded(
    loads: &mut chromiumoxide::listeners::EventStream<EventLoadEventFired>,
    deadline: Instant,
    what: &str,
) -> Step<()> {
    match tokio::time::timeout(left(deadline), loads.next()).await {
        Ok(Some(_)) => Ok(()),
        _ => Err(fail(
            Code::Timeout,
            format!("{what} did not finish loading in time"),
        )),
    }
}

/// `{url, title}` of the page now.
async fn landed(tab: &Tab<'_>) -> Step<Option<Value>> {
    let info = tab
        .manager
        .connected()?
        .call("Target.getTargetInfo", json!({ "targetId": tab.target_id }))
        .await?;
    Ok(Some(json!({
        "url": info.pointer("/targetInfo/url").cloned().unwrap_or_default(),
        "title": info.pointer("/targetInfo/title").cloned().unwrap_or_default(),
    })))
}

/// Reloads and waits for the new document's load event.
pub(crate) async fn reload(tab: &Tab<'_>, deadline: Instant) -> Step<Option<Value>> {
    let mut loads = page_events::<EventLoadEventFired>(tab.page).await?;
    page_call(tab.page, "Page.reload", json!({})).await?;
    loaded(&mut loads, deadline, "the reloaded page").await?;
    landed(tab).await
}

/// Moves `delta` steps in the tab's history, verified by the history's
/// current entry.
pub(crate) async fn history(tab: &Tab<'_>, delta: i64, deadline: Instant) -> Step<Option<Value>> {
    let entries = page_call(tab.page, "Page.getNavigationHistory", json!({})).await?;
    let current = entries
        .get("currentIndex")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let list = entries
        .get("entries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let wanted = current + delta;
    let Some(entry) = usize::try_from(wanted).ok().and_then(|i| list.get(i)) else {
        return Err(fail(
            Code::VerifyFailed,
            format!(
                "there is no page to go {}",
                if delta < 0 { "back to" } else { "forward to" }
            ),
        ));
    };
    let mut loads = page_events::<EventLoadEventFired>(tab.page).await?;
    let mut within = page_events::<EventNavigatedWithinDocument>(tab.page).await?;
    page_call(
        tab.page,
        "Page.navigateToHistoryEntry",
        json!({ "entryId": entry.get("id").cloned().unwrap_or_default() }),
    )
    .await?;
    // A new document loads; an entry of the same document (pushState) only
    // moves within it.
    let moved = tokio::time::timeout(left(deadline), async {
        tokio::select! {
            _ = loads.next() => {}
            _ = within.next() => {}
        }
    })
    .await;
    if moved.is_err() {
        return Err(fail(
            Code::Timeout,
            "the history entry did not load in time",
        ));
    }
    let now = page_call(tab.page, "Page.getNavigationHistory", json!({})).await?;
    if now.get("currentIndex").and_then(Value::as_i64) != Some(wanted) {
        return Err(fail(
            Code::VerifyFailed,
            "the page did not move in its history",
        ));
    }
    landed(tab).await
}

/// Scrolls the page, or the element's scroll container, verified by the
/// position having moved.
pub(crate) async fn scroll(
    tab: &Tab<'_>,
    aim: Option<&Aim>,
    direction: Direction,
    amount: Option<f64>,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    const SCROLL: &str = r#"function(dir, amount) {
  const doc = this.ownerDocument || this;
  const page = doc.scrollingElement || doc.documentElement;
  let box = this.nodeType === 9 ? page : this;
  const scrollable = (e) => e === page || (e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1) && /(auto|scroll|overlay)/.test(getComputedStyle(e).overflow + getComputedStyle(e).overflowX + getComputedStyle(e).overflowY);
  while (box && !scrollable(box)) box = box.parentElement || page;
  const vertical = dir === 'up' || dir === 'down';
  const view = box === page ? (vertical ? doc.defaultView.innerHeight : doc.defaultView.innerWidth) : (vertical ? box.clientHeight : box.clientWidth);
  const by = (amount || view * 0.9) * (dir === 'up' || dir === 'left' ? -1 : 1);
  const before = [box.scrollLeft, box.scrollTop];
  box.scrollBy({ left: vertical ? 0 : by, top: vertical ? by : 0, behavior: 'instant' });
  return { x: box.scrollLeft - before[0], y: box.scrollTop - before[1], left: box.scrollLeft, top: box.scrollTop };
}"#;
    let dir = match direction {
        Direction::Up => "up",
        Direction::Down => "down",
        Direction::Left => "left",
        Direction::Right => "right",
    };
    let moved = match aim {
        Some(aim) => {
            let ready = prepare(tab, aim, Needs::Attached, deadline, attempt).await?;
            crate::element::call_on(tab.dom, ready.backend, SCROLL, &[json!(dir), json!(amount)])
                .await?
        }
        None => {
            let doc = page_call(tab.page, "Runtime.evaluate",
                json!({ "expression": format!("({SCROLL}).call(document, {}, {})", json!(dir), json!(amount)), "returnByValue": true }),
            )
            .await?;
            doc.pointer("/result/value").cloned().unwrap_or_default()
        }
    };
    let delta = |k: &str| moved.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    if delta("x").abs() < 0.5 && delta("y").abs() < 0.5 {
        return Err(fail(
            Code::VerifyFailed,
            format!("nothing scrolled: already at the {dir} end"),
        ));
    }
    Ok(Some(json!({
        "scrolledBy": { "x": delta("x"), "y": delta("y") },
        "position": { "x": delta("left"), "y": delta("top") },
    })))
}

/// Waits for a condition, looking again every 50 ms, until the deadline.
pub(crate) async fn wait(
    tab: &Tab<'_>,
    condition: &Condition,
    deadline: Instant,
) -> Step<Option<Value>> {
    let started = Instant::now();
    if *condition == Condition::NetworkIdle {
        return network_idle(tab, deadline).await;
    }
    loop {
        if holds(tab, condition).await? {
            return Ok(Some(
                json!({ "waitedMs": started.elapsed().as_millis() as u64 }),
            ));
        }
        if Instant::now() + POLL >= deadline {
            return Err(fail(
                Code::Timeout,
                format!(
                    "waited {} ms for {}",
                    started.elapsed().as_millis(),
                    describe(condition)
                ),
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

fn describe(c: &Condition) -> String {
    match c {
        Condition::Element(aim, state) => format!("{aim} to be {state}"),
        Condition::Text(t) => format!("text \"{t}\" to appear"),
        Condition::TextGone(t) => format!("text \"{t}\" to disappear"),
        Condition::Url(u) => format!("the URL to match {u}"),
        Condition::Js(js) => format!("`{js}` to be true"),
        Condition::NetworkIdle => "the network to be idle".into(),
    }
}

async fn holds(tab: &Tab<'_>, c: &Condition) -> Step<bool> {
    let text_present = |t: &str| {
        let aim = Aim {
            target: Target::Selector(vec![Strategy::Text {
                text: t.to_string(),
                exact: false,
            }]),
            nth: None,
            frame: None,
        };
        async move { Ok::<_, Stop>(!all(tab, &aim, 1).await?.is_empty()) }
    };
    Ok(match c {
        Condition::Element(aim, state) => {
            // Strict as actions are: one match, or the nth.
            // An nth past every element is not found, never an overflow
            // (schemathesis sent u64::MAX; the debug build panicked).
            let wanted = aim.nth.map_or(2, |n| n.saturating_add(1));
            let found = match all(tab, aim, wanted).await {
                Err(Stop::Fail(f)) if matches!(f.code, Code::Detached | Code::NotFound) => {
                    Vec::new()
                }
                other => other?,
            };
            let found = match aim.nth {
                Some(n) => found.get(n).copied(),
                None if found.len() > 1 => {
                    return Err(fail(
                        Code::Ambiguous,
                        format!("{aim} matches more than one element; give nth"),
                    ));
                }
                None => found.first().copied(),
            };
            let visible = match found {
                Some(id) => crate::element::call_on(tab.dom, id, super::target::VISIBLE, &[])
                    .await
                    .ok()
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false),
                None => false,
            };
            match state.as_str() {
                "visible" => visible,
                "hidden" => !visible,
                "attached" => found.is_some(),
                _ => found.is_none(),
            }
        }
        Condition::Text(t) => text_present(t).await?,
        Condition::TextGone(t) => !text_present(t).await?,
        Condition::Url(pattern) => {
            let url = tab.manager.target_url(tab.target_id).await?;
            url_matches(tab, pattern, &url).await?
        }
        Condition::Js(js) => {
            let v = crate::act::evaluate(tab.page, js, None)
                .await
                .map_err(|e| match e {
                    crate::BrowserError::Invalid { message, .. } => {
                        fail(Code::VerifyFailed, message)
                    }
                    other => other.into(),
                })?;
            !matches!(v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("")
        }
        Condition::NetworkIdle => unreachable!("handled by network_idle"),
    })
}

/// A glob (`*` within a path segment, `**` across), a `/regex/` (as
/// JavaScript reads it), or a substring.
async fn url_matches(tab: &Tab<'_>, pattern: &str, url: &str) -> Step<bool> {
    let Some(re) = pattern
        .strip_prefix('/')
        .and_then(|p| p.strip_suffix('/'))
        .filter(|p| !p.is_empty())
    else {
        return Ok(crate::wait::url_matches(pattern, url));
    };
    let tested = page_call(tab.page, "Runtime.evaluate",
        json!({ "expression": format!("new RegExp({}).test({})", json!(re), json!(url)), "returnByValue": true }),
    )
    .await?;
    if let Some(details) = tested.get("exceptionDetails") {
        return Err(Stop::Request(super::request::bad(format!(
            "url {pattern} is not a valid regular expression: {}",
            crate::inspect::exception_message(details)
        ))));
    }
    Ok(tested.pointer("/result/value") == Some(&json!(true)))
}

/// No request in flight, and none started, for 500 ms.
async fn network_idle(tab: &Tab<'_>, deadline: Instant) -> Step<Option<Value>> {
    let started = Instant::now();
    let mut quiet_since = Instant::now();
    let mut newest = None;
    loop {
        let requests = tab.events.requests(None, false);
        let counted = requests.iter().filter(|r| {
            !r.url.ends_with("/favicon.ico")
                && !matches!(
                    r.resource_type.as_deref(),
                    Some("EventSource" | "WebSocket")
                )
        });
        let latest = counted.clone().map(|r| (r.timestamp, r.id.clone())).max();
        let busy = counted.clone().any(|r| !r.finished) || latest != newest;
        newest = latest;
        if busy {
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() >= IDLE {
            return Ok(Some(
                json!({ "waitedMs": started.elapsed().as_millis() as u64 }),
            ));
        }
        if Instant::now() + POLL >= deadline {
            return Err(fail(
                Code::Timeout,
                format!(
                    "waited {} ms for the network to be idle",
                    started.elapsed().as_millis()
                ),
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}
