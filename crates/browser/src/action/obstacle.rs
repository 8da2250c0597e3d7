//! The popup watchdog's second half (cookie banners are the first, see
//! [`crate::consent`]): when the hit test finds a newsletter modal or a
//! chat widget over the target, the modal is closed with its own close
//! control (or Escape, for a real dialog) and the chat widget is hidden,
//! each reported under `handled`. Anything else that covers the target is
//! left alone and reported as `covered`: nothing is clicked through.

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
/// watchdog knows; true when it went away.
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
            "arguments": [{ "value": at.0 }, { "value": at.1 }],
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
    let close = part("2")
        .get("objectId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let info = call(tab, &info, "function () { return this; }").await?;
    let what = call(tab, &root, crate::element::DESCRIBE).await?;
    let what = what.as_str().unwrap_or("a popup");
    attempt.popups += 1;
    match info.get("kind").and_then(Value::as_str) {
        Some("chat") => {
            call(tab, &root, HIDE).await?;
            attempt.handled.push(Handled {
                kind: "chat",
                detail: format!("hid the chat widget {what}, which covered the target"),
                name: Some(what.to_string()),
                ..Handled::default()
            });
            tracing::info!(%what, "hid a chat widget");
            Ok(true)
        }
        Some("modal") => {
            let clicked;
            let how = match &close {
                Some(close) => {
                    let label = call(tab, close, "function () { return (this.getAttribute('aria-label') || this.textContent || '').trim(); }").await?;
                    let node =
                        page_call(tab.page, "DOM.describeNode", json!({ "objectId": close }))
                            .await?;
                    let Some(backend) = node.pointer("/node/backendNodeId").and_then(Value::as_i64)
                    else {
                        return Ok(false);
                    };
                    let quads = page_call(
                        tab.page,
                        "DOM.getContentQuads",
                        json!({ "backendNodeId": backend }),
                    )
                    .await;
                    let Some(point) = quads.ok().as_ref().and_then(crate::element::centre) else {
                        return Ok(false);
                    };
                    // The close control must itself be reachable.
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
                    let label = label.as_str().unwrap_or("close").to_string();
                    let how = format!("with its \"{label}\" button");
                    clicked = Some(label);
                    how
                }
                None if info.get("dialog") == Some(&json!(true)) => {
                    input::press(tab.page, "Escape", Duration::ZERO).await?;
                    clicked = Some("Escape".to_string());
                    "with Escape".to_string()
                }
                None => return Ok(false),
            };
            let deadline = Instant::now() + GONE_WITHIN;
            while Instant::now() < deadline {
                if call(tab, &root, GONE).await.ok() == Some(json!(true)) {
                    attempt.handled.push(Handled {
                        kind: "modal",
                        detail: format!("closed {what} {how}: it covered the target"),
                        name: Some(what.to_string()),
                        clicked: clicked.clone(),
                        ..Handled::default()
                    });
                    tracing::info!(%what, %how, "closed a modal");
                    return Ok(true);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(false)
        }
        _ => Ok(false),
    }
}
