//! `GET /`, `POST /start`, `POST /stop`, `GET /profiles`, and OpenClaw's
//! system-profile import routes, which import nothing here.

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

/// Why `POST /profiles/import` is refused: the clawd browser's profile is
/// its own, by its spec.
const NO_IMPORT: &str = "the clawd browser never copies your own browser's profile (its cookies, \
     logins or history): sign in inside the clawd browser, or give it cookies with POST \
     /cookies/set-many";

/// `GET /system-profiles` → `{systemProfiles: []}`: OpenClaw lists the
/// person's own browser profiles to import; the clawd browser imports none.
#[utoipa::path(
    get,
    path = "/system-profiles",
    operation_id = "get_system_profiles",
    tag = "browser",
    params(crate::openapi::BrowserQuery, ("browser" = Option<String>, Query, description = "OpenClaw's browser family filter (nothing is listed either way)")),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn system_profiles() -> ApiResult {
    ok(json!({ "systemProfiles": [] }))
}

/// `GET /system-profile-import/status` → `{enabled: false, systemProfiles:
/// [], state: null, suggestedTarget: null}`: nothing to import, and no
/// prompt to show.
#[utoipa::path(
    get,
    path = "/system-profile-import/status",
    operation_id = "get_system_profile_import_status",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn import_status() -> ApiResult {
    ok(json!({
        "enabled": false,
        "systemProfiles": [],
        "state": null,
        "suggestedTarget": null,
    }))
}

/// `POST /system-profile-import/dismiss` → `{ok: true}`: there is no
/// import prompt, so dismissing it changes nothing.
#[utoipa::path(
    post,
    path = "/system-profile-import/dismiss",
    operation_id = "post_system_profile_import_dismiss",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn import_dismiss() -> ApiResult {
    ok(json!({ "ok": true }))
}

/// `POST /profiles/import` → 403 `{error, code}`: the clawd browser never
/// copies the person's own profile.
#[utoipa::path(
    post,
    path = "/profiles/import",
    operation_id = "post_profiles_import",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn import_profile() -> ApiResult {
    Err(crate::api::ApiError::forbidden(NO_IMPORT).with_code("SYSTEM_PROFILE_IMPORT_REFUSED"))
}
