//! Tabs: list, open, focus, close, and OpenClaw's index-based `/tabs/action`.

use std::sync::Arc;

use axum::extract::{Path, Query as Q, State};
use serde_json::json;

use crate::AppState;
use crate::api::{ApiError, ApiResult, Body, Query, ok, profile};

/// `{running, tabs}`.
#[utoipa::path(
    get,
    path = "/tabs",
    operation_id = "get_tabs",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn list(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    match state.manager.tabs().await? {
        Some(tabs) => ok(json!({ "running": true, "tabs": tabs })),
        None => ok(json!({ "running": false, "tabs": [] })),
    }
}

/// Opens `{url, newTab?}` (default a new tab); answers the tab itself.
#[utoipa::path(
    post,
    path = "/tabs/open",
    operation_id = "post_tabs_open",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn open(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let url = body
        .str("url")
        .ok_or_else(|| ApiError::bad_request("url is required"))?;
    let tab = state
        .manager
        .open(url, body.bool("newTab").unwrap_or(true))
        .await?;
    ok(serde_json::to_value(tab).unwrap_or_default())
}

/// Focuses `{targetId}` (id or unique prefix).
#[utoipa::path(
    post,
    path = "/tabs/focus",
    operation_id = "post_tabs_focus",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn focus(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let wanted = body
        .str("targetId")
        .ok_or_else(|| ApiError::bad_request("targetId is required"))?;
    let target_id = state.manager.focus(wanted).await?;
    ok(json!({ "ok": true, "targetId": target_id }))
}

/// Closes a tab; `?targetIdMode=raw` demands an exact id.
#[utoipa::path(
    delete,
    path = "/tabs/{target_id}",
    operation_id = "delete_tabs_target_id",
    tag = "browser",
    params(crate::openapi::BrowserQuery, ("target_id" = String, Path, description = "The tab")),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn close(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    Path(id): Path<String>,
) -> ApiResult {
    profile(&q, None)?;
    let exact = q.get("targetIdMode").is_some_and(|m| m == "raw");
    let target_id = state.manager.close(&id, exact).await?;
    ok(json!({ "ok": true, "targetId": target_id }))
}

/// `{action: list|new|close|select, index?}`.
#[utoipa::path(
    post,
    path = "/tabs/action",
    operation_id = "post_tabs_action",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn action(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let m = &state.manager;
    let action = body.str("action").unwrap_or("list");
    let by_index = || async {
        let tabs = m
            .tabs()
            .await?
            .ok_or_else(|| ApiError::conflict("browser not running"))?;
        let index = match body.uint("index") {
            Some(i) => i as usize,
            None => tabs.iter().position(|t| t.is_active).unwrap_or(0),
        };
        tabs.get(index)
            .map(|t| t.target_id.clone())
            .ok_or_else(|| ApiError::not_found(format!("no tab at index {index}")))
    };
    match action {
        "list" => {
            let tabs = m.tabs().await?.unwrap_or_default();
            ok(json!({ "ok": true, "tabs": tabs }))
        }
        "new" => {
            let tab = m
                .open(body.str("url").unwrap_or("about:blank"), true)
                .await?;
            ok(json!({ "ok": true, "tab": tab }))
        }
        "close" => {
            let id = by_index().await?;
            m.close(&id, true).await?;
            ok(json!({ "ok": true, "targetId": id }))
        }
        "select" => {
            let id = by_index().await?;
            m.focus(&id).await?;
            ok(json!({ "ok": true, "targetId": id }))
        }
        other => Err(ApiError::bad_request(format!(
            "unknown tab action: {other}"
        ))),
    }
}
