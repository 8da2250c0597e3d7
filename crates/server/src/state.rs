//! A tab's cookies, Web Storage and emulation overrides (`/cookies`,
//! `/storage/{kind}`, `/set/{setting}`).

use std::sync::Arc;

use axum::extract::{Path, Query as Q, State};
use clawdis_browser::emulation;
use clawdis_browser::storage::{self, Kind};
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{ApiError, ApiResult, Body, Query, ok, profile};

/// `GET /cookies?targetId` → `{ok, targetId, cookies}`.
#[utoipa::path(
    get,
    path = "/cookies",
    operation_id = "get_cookies",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn cookies(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    let (target_id, page) = state
        .manager
        .page_ready(q.get("targetId").map(String::as_str))
        .await?;
    ok(json!({ "ok": true, "targetId": target_id, "cookies": storage::cookies(&page).await? }))
}

/// `POST /cookies/set {cookie: {name, value, url?, domain?, ...}}`.
#[utoipa::path(
    post,
    path = "/cookies/set",
    operation_id = "post_cookies_set",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn set_cookie(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let cookie = body
        .0
        .get("cookie")
        .and_then(Value::as_object)
        .ok_or_else(|| ApiError::bad_request("cookie is required"))?;
    let (target_id, page) = state.manager.page_to_change(body.str("targetId")).await?;
    storage::set_cookie(&page, cookie).await?;
    ok(json!({ "ok": true, "targetId": target_id }))
}

/// `POST /cookies/set-many {cookies: [{name, value, url?, domain?, ...}]}`
/// → `{ok, targetId, added}`: a cookie the browser refuses is skipped, and
/// not counted.
#[utoipa::path(
    post,
    path = "/cookies/set-many",
    operation_id = "post_cookies_set_many",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn set_cookies(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let cookies = match body.0.get("cookies") {
        Some(Value::Array(all)) if !all.is_empty() => all
            .iter()
            .map(|c| c.as_object().cloned())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| ApiError::bad_request("cookies must contain only cookie objects"))?,
        _ => return Err(ApiError::bad_request("cookies must be a non-empty array")),
    };
    let (target_id, page) = state.manager.page_to_change(body.str("targetId")).await?;
    let added = storage::set_cookies(&page, &cookies).await?;
    ok(json!({ "ok": true, "targetId": target_id, "added": added }))
}

/// `POST /cookies/clear`.
#[utoipa::path(
    post,
    path = "/cookies/clear",
    operation_id = "post_cookies_clear",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn clear_cookies(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let (target_id, page) = state.manager.page_to_change(body.str("targetId")).await?;
    storage::clear_cookies(&page).await?;
    ok(json!({ "ok": true, "targetId": target_id }))
}

/// `GET /storage/{local|session}?key&targetId` → `{ok, targetId, kind, values}`.
#[utoipa::path(
    get,
    path = "/storage/{kind}",
    operation_id = "get_storage_kind",
    tag = "browser",
    params(crate::openapi::BrowserQuery, ("kind" = String, Path, description = "local or session")),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn read(
    State(state): State<Arc<AppState>>,
    Path(kind): Path<String>,
    Q(q): Q<Query>,
) -> ApiResult {
    profile(&q, None)?;
    let k = Kind::parse(&kind)?;
    let (target_id, page) = state
        .manager
        .page_ready(q.get("targetId").map(String::as_str))
        .await?;
    let values = storage::read(&page, k, q.get("key").map(String::as_str)).await?;
    ok(json!({ "ok": true, "targetId": target_id, "kind": kind, "values": values }))
}

/// `POST /storage/{local|session}/set {key, value}`.
#[utoipa::path(
    post,
    path = "/storage/{kind}/set",
    operation_id = "post_storage_kind_set",
    tag = "browser",
    params(crate::openapi::BrowserQuery, ("kind" = String, Path, description = "local or session")),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn write(
    State(state): State<Arc<AppState>>,
    Path(kind): Path<String>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let k = Kind::parse(&kind)?;
    let key = body
        .str("key")
        .ok_or_else(|| ApiError::bad_request("key is required"))?;
    let value = match body.0.get("value") {
        Some(Value::String(s)) => s.clone(),
        Some(v) if !v.is_null() => v.to_string(),
        _ => return Err(ApiError::bad_request("value is required")),
    };
    let (target_id, page) = state.manager.page_to_change(body.str("targetId")).await?;
    storage::write(&page, k, key, &value).await?;
    ok(json!({ "ok": true, "targetId": target_id }))
}

/// `POST /storage/{local|session}/clear`.
#[utoipa::path(
    post,
    path = "/storage/{kind}/clear",
    operation_id = "post_storage_kind_clear",
    tag = "browser",
    params(crate::openapi::BrowserQuery, ("kind" = String, Path, description = "local or session")),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn clear(
    State(state): State<Arc<AppState>>,
    Path(kind): Path<String>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let k = Kind::parse(&kind)?;
    let (target_id, page) = state.manager.page_to_change(body.str("targetId")).await?;
    storage::clear(&page, k).await?;
    ok(json!({ "ok": true, "targetId": target_id }))
}

/// `POST /set/{offline|headers|geolocation|media|timezone|locale}`.
#[utoipa::path(
    post,
    path = "/set/{setting}",
    operation_id = "post_set_setting",
    tag = "browser",
    params(crate::openapi::BrowserQuery, ("setting" = String, Path, description = "offline, headers, geolocation, media, timezone or locale")),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn set(
    State(state): State<Arc<AppState>>,
    Path(setting): Path<String>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    emulation::check(&setting)?;
    let (target_id, page) = state.manager.page_to_change(body.str("targetId")).await?;
    emulation::apply(&page, &setting, &body.0).await?;
    ok(json!({ "ok": true, "targetId": target_id }))
}
