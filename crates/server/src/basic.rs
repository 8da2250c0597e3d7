//! `GET /`, `POST /start`, `POST /stop`, `GET /profiles`.

use std::sync::Arc;

use axum::extract::{Query as Q, State};
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{ApiResult, Body, Query, flag, ok, profile};

/// Status with the ports and OpenClaw's keys.
#[utoipa::path(
    get,
    path = "/",
    operation_id = "get_status",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn status(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    let mut v = serde_json::to_value(state.manager.status()).unwrap_or_else(|_| json!({}));
    v["ports"] = json!({ "control": state.control_port, "cdp": v["cdpPort"] });
    v["url"] = json!(format!("http://127.0.0.1:{}", state.control_port));
    v["version"] = json!(env!("CARGO_PKG_VERSION"));
    ok(v)
}

/// `GET /doctor` → `{ok, profile, status, checks}`.
#[utoipa::path(
    get,
    path = "/doctor",
    operation_id = "get_doctor",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn doctor(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    let checks = clawdis_browser::doctor::run(&state.manager);
    let healthy = checks.iter().all(|c| c.status != "fail");
    let mut status = serde_json::to_value(state.manager.status()).unwrap_or_else(|_| json!({}));
    status["ports"] = json!({ "control": state.control_port, "cdp": status["cdpPort"] });
    ok(
        json!({ "ok": healthy, "profile": clawdis_browser::manager::PROFILE, "status": status, "checks": checks }),
    )
}

/// Starts the browser (`?headless=true` for a one-shot headless launch).
#[utoipa::path(
    post,
    path = "/start",
    operation_id = "post_start",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn start(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let headless = (flag(&q, "headless") || body.bool("headless") == Some(true)).then_some(true);
    state.manager.start(headless).await?;
    let mut v = serde_json::to_value(state.manager.status()).unwrap_or_else(|_| json!({}));
    v["ok"] = Value::Bool(true);
    ok(v)
}

/// Stops the browser.
#[utoipa::path(
    post,
    path = "/stop",
    operation_id = "post_stop",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn stop(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let stopped = state.manager.stop().await?;
    ok(json!({ "ok": true, "stopped": stopped, "profile": clawdis_browser::manager::PROFILE }))
}

/// The one managed profile.
#[utoipa::path(
    get,
    path = "/profiles",
    operation_id = "get_profiles",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn profiles(State(state): State<Arc<AppState>>) -> ApiResult {
    let s = state.manager.status();
    let tabs = state
        .manager
        .tabs()
        .await
        .ok()
        .flatten()
        .map_or(0, |t| t.len());
    ok(json!({ "profiles": [{
        "name": s.profile,
        "transport": s.transport,
        "cdpPort": s.cdp_port,
        "cdpUrl": s.cdp_url,
        "color": s.color,
        "driver": s.driver,
        "running": s.running,
        "tabCount": tabs,
        "isDefault": true,
        "isRemote": false,
    }]}))
}

/// `POST /reset-profile` → `{ok, profile, moved, from, to?}`.
#[utoipa::path(
    post,
    path = "/reset-profile",
    operation_id = "post_reset_profile",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn reset_profile(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let (moved, from, to) = state.manager.reset_profile().await?;
    let mut v = json!({ "ok": true, "profile": clawdis_browser::manager::PROFILE, "moved": moved, "from": from.display().to_string() });
    if let Some(to) = to {
        v["to"] = json!(to.display().to_string());
    }
    ok(v)
}
