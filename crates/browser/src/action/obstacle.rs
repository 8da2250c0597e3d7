//! The popup watchdog's second half (autoconsent's rules are the first,
//! see [`crate::consent`]): when the hit test finds a newsletter modal, a
//! chat widget or a cookie banner over the target, the modal is closed
//! with its own close control (or Escape, for a real dialog), the chat
//! widget is hidden, and a cookie banner the rules left alone is declined
//! with its own control (reject, decline, only the necessary purposes, or
//! save with every optional purpose off), each pressed with trusted input,
//! checked gone, and reported under `handled`. A banner's accepting or
//! subscribing controls are never pressed. Anything else that covers the
//! target is left alone and reported as `covered`: nothing is clicked
//! through.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Attempt, GROUP, Handled, Step, Tab};
use crate::cdp::{page_call, page_call_with};
use crate::input;

const OBSTACLE: &str = include_str!("obstacle.js");
/// Waits for what pressing a banner's control did (`settle.js`).
const SETTLE: &str = include_str!("settle.js");
/// How many popups one action deals with at most.
const MOST: u32 = 3;
/// How many controls of cookie banners one action presses at most (a
/// way to the purposes, their switches, the control that saves).
const MOST_PRESSES: u32 = 8;
/// How long a popup has to go away once answered.
const GONE_WITHIN: Duration = Duration::from_millis(1500);
/// How long a cookie banner has to go once declined (some slide out).
const BANNER_GONE_WITHIN: Duration = Duration::from_secs(3);
/// How long a cookie banner is left to autoconsent's rules before the
/// fallback declines it.
const RULES_FIRST: Duration = Duration::from_secs(1);

const GONE: &str = "function () { if (!this.isConnected) return true; const r = this.getBoundingClientRect(); const s = getComputedStyle(this); return r.width === 0 || r.height === 0 || s.visibility === 'hidden' || s.display === 'none' || s.opacity === '0'; }";
const HIDE: &str = "function () { this.style.setProperty('display', 'none', 'important'); }";

async fn call(tab: &Tab<'_>, object: &str, function: &str) -> Step<Value> {
    let r = page_call(
        tab.page,
        "Runtime.callFunctionOn",
        json!({ "functionDeclaration": function, "objectId": object, "returnByValue": true }),
    )
    .await?;
    Ok(r.pointer("/result/value").cloned().unwrap_or(Value::Null))
}

/// What covers a point, when it is a popup the watchdog knows: what
/// `obstacle.js` says of it, its root and the control to press.
struct Found {
    info: Value,
    root: String,
    control: Option<String>,
}

impl Found {
    fn text(&self, key: &str) -> String {
        self.info
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }
}

/// Looks at what covers viewport point `at` (`obstacle.js`).
async fn scan(tab: &Tab<'_>, at: (f64, f64), tried: &[String]) -> Step<Option<Found>> {
    let document = page_call(
        tab.page,
        "Runtime.evaluate",
        json!({ "expression": "document", "objectGroup": GROUP }),
    )
    .await?;
    let Some(document) = document.pointer("/result/objectId").and_then(Value::as_str) else {
        return Ok(None);
    };
    let found = page_call(
        tab.page,
        "Runtime.callFunctionOn",
        json!({
            "functionDeclaration": OBSTACLE,
            "objectId": document,
            "arguments": [{ "value": at.0 }, { "value": at.1 }, { "value": tried }],
            "objectGroup": GROUP,
        }),
    )
    .await?;
    let Some(list) = found.pointer("/result/objectId").and_then(Value::as_str) else {
        return Ok(None);
    };
    let parts = page_call(
        tab.page,
        "Runtime.getProperties",
        json!({ "objectId": list, "ownProperties": true }),
    )
    .await?;
    let part = |i: &str| {
        parts
            .get("result")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("name").and_then(Value::as_str) == Some(i))
            .and_then(|p| p.pointer("/value/objectId"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (Some(info), Some(root)) = (part("0"), part("1")) else {
        return Ok(None);
    };
    Ok(Some(Found {
        info: call(tab, &info, "function () { return this; }").await?,
        root,
        control: part("2"),
    }))
}

/// Deals with the popup covering viewport point `at`, if it is one the
/// watchdog knows; true when it went away, or when a banner's control was
/// pressed and the target is worth looking at again.
pub(crate) async fn clear(tab: &Tab<'_>, at: (f64, f64), attempt: &mut Attempt) -> Step<bool> {
    if attempt.popups >= MOST {
        return Ok(false);
    }
    let Some(found) = scan(tab, at, &attempt.tried).await? else {
        return Ok(false);
    };
    let what = call(tab, &found.root, crate::element::DESCRIBE).await?;
    let what = what.as_str().unwrap_or("a popup").to_string();
    let kind = found.text("kind");
    match kind.as_str() {
        "chat" => {
            attempt.popups += 1;
            call(tab, &found.root, HIDE).await?;
            attempt.handled.push(Handled {
                kind: "chat",
                detail: format!("hid the chat widget {what}, which covered the target"),
                name: Some(what.clone()),
                ..Handled::default()
            });
            tracing::info!(%what, "hid a chat widget");
            Ok(true)
        }
        "modal" => {
            let how = match &found.control {
                Some(close) => {
                    let label = call(tab, close, "function () { return (this.getAttribute('aria-label') || this.textContent || '').trim(); }").await?;
                    let label = label.as_str().unwrap_or("close").to_string();
                    attempt.popups += 1;
                    if !press(tab, close).await? {
                        return Ok(false);
                    }
                    label
                }
                None if found.info.get("dialog") == Some(&json!(true)) => {
                    attempt.popups += 1;
                    input::press(tab.page, "Escape", Duration::ZERO).await?;
                    "Escape".to_string()
                }
                None => return Ok(false),
            };
            if !gone(tab, &found.root, GONE_WITHIN).await {
                return Ok(false);
            }
            let with = if how == "Escape" {
                "with Escape".to_string()
            } else {
                format!("with its \"{how}\" button")
            };
            attempt.handled.push(Handled {
                kind: "modal",
                detail: format!("closed {what} {with}: it covered the target"),
                name: Some(what.clone()),
                clicked: Some(how),
                ..Handled::default()
            });
            tracing::info!(%what, %with, "closed a modal");
            Ok(true)
        }
        "consent" if found.control.is_some() => {
            // The rules go first: a banner they are answering, or one that
            // appeared a moment ago, is theirs.
            let since = *attempt.banner_since.get_or_insert_with(Instant::now);
            if tab.consent.is_some_and(|c| !c.idle()) || since.elapsed() < RULES_FIRST {
                return Ok(false);
            }
            decline(tab, at, found, what, attempt).await
        }
        _ => Ok(false),
    }
}

/// Declines the cookie banner `found`: presses its control, and while the
/// banner stays and changed (a "disable all", a purpose's switch, the way
/// to the purposes), the next one, until a control that declines closes
/// it; the banner is checked gone before the action goes on.
async fn decline(
    tab: &Tab<'_>,
    at: (f64, f64),
    mut found: Found,
    what: String,
    attempt: &mut Attempt,
) -> Step<bool> {
    let cmp = found.text("name");
    let root = found.root.clone();
    loop {
        let Some(control) = found.control.take() else {
            return Ok(false);
        };
        if attempt.presses >= MOST_PRESSES {
            return Ok(false);
        }
        let (label, step) = (found.text("label"), found.text("choice"));
        attempt.presses += 1;
        if !press(tab, &control).await? {
            return Ok(false);
        }
        tracing::info!(%cmp, %label, %step, "pressed a control of a cookie banner");
        // A switch is pressed again only if it turned back on; any other
        // control that left the banner up is not pressed again.
        if step != "toggle" {
            attempt.tried.push(label.clone());
        }
        attempt.pressed.push(label);
        if matches!(step.as_str(), "reject" | "necessary" | "save") {
            attempt.choice = Some(step.clone());
        }
        match settle(tab, &found.root, BANNER_GONE_WITHIN).await?.as_str() {
            "gone" => return Ok(declined(attempt, &cmp, &what)),
            // Nothing happened: the target is looked at again, and the
            // next attempt finds another control.
            "same" => return Ok(true),
            _ => {}
        }
        match scan(tab, at, &attempt.tried).await? {
            Some(next)
                if next.info.get("kind").and_then(Value::as_str) == Some("consent")
                    && next.control.is_some() =>
            {
                found = next;
            }
            // The banner no longer covers the target, or offers nothing
            // more: declined only once it is gone.
            _ => {
                return Ok(
                    gone(tab, &root, BANNER_GONE_WITHIN).await && declined(attempt, &cmp, &what)
                );
            }
        }
    }
}

/// Reports the banner the fallback declined; true.
fn declined(attempt: &mut Attempt, cmp: &str, what: &str) -> bool {
    let choice = match attempt.choice.as_deref() {
        Some("necessary") => "necessary",
        Some("save") => "save",
        _ => "reject",
    };
    let pressed = attempt.pressed.join("\", then \"");
    tracing::info!(%cmp, %pressed, choice, "declined a cookie banner the rules left up");
    attempt.handled.push(Handled {
        kind: "consent",
        detail: format!("declined the {cmp} cookie banner {what} with \"{pressed}\" ({choice})"),
        name: Some(what.to_string()),
        cmp: Some(cmp.to_string()),
        choice: Some(choice),
        clicked: attempt.pressed.last().cloned(),
        by: Some("fallback"),
    });
    attempt.pressed.clear();
    attempt.choice = None;
    true
}

/// Waits (at most `limit`) for what pressing a control of the banner
/// `root` did: `gone`, `changed` (and still again), or `same`.
async fn settle(tab: &Tab<'_>, root: &str, limit: Duration) -> Step<String> {
    let r = page_call_with(
        tab.page,
        "Runtime.callFunctionOn",
        json!({
            "functionDeclaration": SETTLE,
            "objectId": root,
            "arguments": [{ "value": limit.as_millis() as u64 }],
            "awaitPromise": true,
            "returnByValue": true,
        }),
        limit + Duration::from_secs(2),
    )
    .await?;
    Ok(r.pointer("/result/value")
        .and_then(Value::as_str)
        .unwrap_or("same")
        .to_string())
}

/// Clicks the control with trusted input at its centre, if the pointer
/// reaches it there; false when it cannot be reached.
async fn press(tab: &Tab<'_>, control: &str) -> Step<bool> {
    let node = page_call(tab.page, "DOM.describeNode", json!({ "objectId": control })).await?;
    let Some(backend) = node.pointer("/node/backendNodeId").and_then(Value::as_i64) else {
        return Ok(false);
    };
    let _ = crate::element::scroll_into_view(tab.page, backend).await;
    let quads = page_call(
        tab.page,
        "DOM.getContentQuads",
        json!({ "backendNodeId": backend }),
    )
    .await;
    let Some(point) = quads.ok().as_ref().and_then(crate::element::centre) else {
        return Ok(false);
    };
    if crate::element::hit_target(tab.page, backend, point)
        .await?
        .is_some()
    {
        return Ok(false);
    }
    input::click(
        tab.page,
        point,
        input::Button::Left,
        false,
        0,
        Duration::ZERO,
    )
    .await?;
    Ok(true)
}

/// Whether the popup went away within `limit`.
async fn gone(tab: &Tab<'_>, root: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if call(tab, root, GONE).await.ok() == Some(json!(true)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
