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
use crate::cdp::page_call;
use crate::input;

const OBSTACLE: &str = include_str!("obstacle.js");
/// How many popups one action deals with at most.
const MOST: u32 = 3;
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

/// Deals with the popup covering viewport point `at`, if it is one the
/// watchdog knows; true when it went away, or when a banner's control was
/// pressed and the target is worth looking at again.
pub(crate) async fn clear(tab: &Tab<'_>, at: (f64, f64), attempt: &mut Attempt) -> Step<bool> {
    if attempt.popups >= MOST {
        return Ok(false);
    }
    let document = page_call(
        tab.page,
        "Runtime.evaluate",
        json!({ "expression": "document", "objectGroup": GROUP }),
    )
    .await?;
    let Some(document) = document.pointer("/result/objectId").and_then(Value::as_str) else {
        return Ok(false);
    };
    let found = page_call(
        tab.page,
        "Runtime.callFunctionOn",
        json!({
            "functionDeclaration": OBSTACLE,
            "objectId": document,
            "arguments": [{ "value": at.0 }, { "value": at.1 }, { "value": attempt.pressed }],
            "objectGroup": GROUP,
        }),
    )
    .await?;
    let Some(list) = found.pointer("/result/objectId").and_then(Value::as_str) else {
        return Ok(false);
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
            .and_then(|p| p.get("value"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let (Some(info), Some(root)) = (
        part("0")
            .get("objectId")
            .and_then(Value::as_str)
            .map(str::to_string),
        part("1")
            .get("objectId")
            .and_then(Value::as_str)
            .map(str::to_string),
    ) else {
        return Ok(false);
    };
    let control = part("2")
        .get("objectId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let info = call(tab, &info, "function () { return this; }").await?;
    let what = call(tab, &root, crate::element::DESCRIBE).await?;
    let what = what.as_str().unwrap_or("a popup").to_string();
    match info.get("kind").and_then(Value::as_str) {
        Some("chat") => {
            attempt.popups += 1;
            call(tab, &root, HIDE).await?;
            attempt.handled.push(Handled {
                kind: "chat",
                detail: format!("hid the chat widget {what}, which covered the target"),
                name: Some(what.clone()),
                ..Handled::default()
            });
            tracing::info!(%what, "hid a chat widget");
            Ok(true)
        }
        Some("modal") => {
            let how = match &control {
                Some(close) => {
                    let label = call(tab, close, "function () { return (this.getAttribute('aria-label') || this.textContent || '').trim(); }").await?;
                    let label = label.as_str().unwrap_or("close").to_string();
                    attempt.popups += 1;
                    if !press(tab, close).await? {
                        return Ok(false);
                    }
                    label
                }
                None if info.get("dialog") == Some(&json!(true)) => {
                    attempt.popups += 1;
                    input::press(tab.page, "Escape", Duration::ZERO).await?;
                    "Escape".to_string()
                }
                None => return Ok(false),
            };
            if !gone(tab, &root, GONE_WITHIN).await {
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
        Some("consent") => {
            let Some(control) = control else {
                return Ok(false);
            };
            // The rules go first: a banner they are answering, or one that
            // appeared a moment ago, is theirs.
            let since = *attempt.banner_since.get_or_insert_with(Instant::now);
            if tab.consent.is_some_and(|c| !c.idle()) || since.elapsed() < RULES_FIRST {
                return Ok(false);
            }
            let text = |k: &str| {
                info.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let (label, cmp) = (text("label"), text("name"));
            let choice = match text("choice").as_str() {
                "reject" => "reject",
                "necessary" => "necessary",
                "save" => "save",
                _ => return Ok(false),
            };
            attempt.popups += 1;
            if !press(tab, &control).await? {
                return Ok(false);
            }
            // A control that left the banner up (a "decline all" that
            // only turns the purposes off) is not pressed again: the next
            // attempt looks for another (their "save").
            attempt.pressed.push(label.clone());
            if !gone(tab, &root, BANNER_GONE_WITHIN).await {
                tracing::info!(%cmp, %label, "the banner stayed after its control was pressed");
                return Ok(true);
            }
            tracing::info!(%cmp, %label, choice, "declined a cookie banner the rules left up");
            let pressed = attempt.pressed.join("\", then \"");
            attempt.handled.push(Handled {
                kind: "consent",
                detail: format!(
                    "declined the {cmp} cookie banner {what} with \"{pressed}\" ({choice})"
                ),
                name: Some(what.clone()),
                cmp: Some(cmp),
                choice: Some(choice),
                clicked: Some(label),
                by: Some("fallback"),
            });
            Ok(true)
        }
        _ => Ok(false),
    }
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
