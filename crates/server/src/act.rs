//! Acting on pages: OpenClaw's `/act`, the dialog and file-chooser hooks,
//! `/dialogs`, downloads, and the console and error buffers.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query as Q, State};
use clawdis_browser::act;
use clawdis_browser::element::Locator;
use clawdis_browser::events::DialogReply;
use clawdis_browser::hooks::{self, Upload};
use clawdis_browser::{element, emulation, logs};
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{ApiError, ApiResult, Body, Query, flag, ok, ok_with, profile};

fn timeout(body: &Body) -> Option<Duration> {
    body.uint("timeoutMs")
        .map(|ms| Duration::from_millis(ms.clamp(1, 600_000)))
}

/// `POST /act {kind, targetId?, ...}`.
#[utoipa::path(
    post,
    path = "/act",
    operation_id = "post_act",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn act(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let mut body = body;
    let session = match body.0.remove("sessionId") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(id)) if !crate::api::blank(&id) => Some(id),
        Some(_) => {
            return Err(ApiError::bad_request(
                "sessionId must be a session's id (from POST /sessions), or left out",
            ));
        }
    };
    let mut action = act::parse(&body.0, false)?;
    if let Some(id) = session {
        // The session's page is the tab acted on.
        action.target = Some(state.sessions().await?.target_of(&id).await?);
    }
    ok_with(act::act(&state.manager, &action).await?)
}

/// `GET /dialogs?targetId` → `{ok, targetId, browserState}`.
#[utoipa::path(
    get,
    path = "/dialogs",
    operation_id = "get_dialogs",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn dialogs(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    let (target_id, browser_state) =
        hooks::dialogs(&state.manager, q.get("targetId").map(String::as_str)).await?;
    ok_with(json!({ "targetId": target_id, "browserState": browser_state }))
}

/// `GET /console?targetId&level` → `{ok, targetId, url, messages}`.
#[utoipa::path(
    get,
    path = "/console",
    operation_id = "get_console",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn console(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    let level = q.get("level").map(String::as_str).filter(|l| !l.is_empty());
    let (tab, messages) =
        logs::console(&state.manager, q.get("targetId").map(String::as_str), level).await?;
    ok_with(json!({ "targetId": tab.target_id, "url": tab.url, "messages": messages }))
}

/// `GET /errors?targetId&clear` → `{ok, targetId, url, errors}`.
#[utoipa::path(
    get,
    path = "/errors",
    operation_id = "get_errors",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn errors(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    let (tab, errors) = logs::errors(
        &state.manager,
        q.get("targetId").map(String::as_str),
        flag(&q, "clear"),
    )
    .await?;
    ok_with(json!({ "targetId": tab.target_id, "url": tab.url, "errors": errors }))
}

/// `GET /requests?targetId&filter&clear` → `{ok, targetId, url, requests}`.
#[utoipa::path(
    get,
    path = "/requests",
    operation_id = "get_requests",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn requests(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    let filter = q
        .get("filter")
        .map(String::as_str)
        .filter(|f| !f.is_empty());
    let (tab, requests) = logs::requests(
        &state.manager,
        q.get("targetId").map(String::as_str),
        filter,
        flag(&q, "clear"),
    )
    .await?;
    ok_with(json!({ "targetId": tab.target_id, "url": tab.url, "requests": requests }))
}

/// `POST /response/body {url, targetId?, timeoutMs?, maxChars?}` → `{ok, targetId, url, response}`.
#[utoipa::path(
    post,
    path = "/response/body",
    operation_id = "post_response_body",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn response_body(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let pattern = body
        .str("url")
        .ok_or_else(|| ApiError::bad_request("url is required"))?;
    let wait = timeout(&body).unwrap_or(hooks::DOWNLOAD_TIMEOUT);
    let max = body.uint("maxChars").map(|n| n as usize);
    let (tab, response) =
        logs::response_body(&state.manager, body.str("targetId"), pattern, wait, max).await?;
    ok_with(json!({ "targetId": tab.target_id, "url": tab.url, "response": response }))
}

/// `POST /hooks/dialog {accept, promptText?, dialogId?, targetId?, timeoutMs?}`.
#[utoipa::path(
    post,
    path = "/hooks/dialog",
    operation_id = "post_hooks_dialog",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn dialog(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let accept = match body.0.get("accept") {
        Some(Value::Bool(b)) => *b,
        _ => return Err(ApiError::bad_request("accept is required")),
    };
    let reply = DialogReply {
        accept,
        prompt_text: body
            .0
            .get("promptText")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let (target_id, handled) = hooks::dialog(
        &state.manager,
        body.str("targetId"),
        reply,
        body.str("dialogId"),
        timeout(&body),
    )
    .await?;
    ok_with(json!({ "targetId": target_id, "handled": handled }))
}

/// `POST /hooks/file-chooser {paths, ref? | inputRef? | element?, targetId?, timeoutMs?}`.
#[utoipa::path(
    post,
    path = "/hooks/file-chooser",
    operation_id = "post_hooks_file_chooser",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn file_chooser(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let paths: Vec<String> = match body.0.get("paths") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .filter(|p| !p.trim().is_empty())
            .map(str::to_string)
            .collect(),
        Some(Value::String(p)) if !p.trim().is_empty() => vec![p.clone()],
        _ => Vec::new(),
    };
    if paths.is_empty() {
        return Err(ApiError::bad_request("paths are required"));
    }
    let trigger = body.str("ref");
    let input = body
        .str("inputRef")
        .map(|r| Locator::Ref(r.into()))
        .or_else(|| body.str("element").map(|s| Locator::Selector(s.into())));
    let via = match (trigger, input) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "ref cannot be combined with inputRef/element",
            ));
        }
        (Some(r), None) => Upload::Trigger(Locator::Ref(r.into())),
        (None, Some(at)) => Upload::Input(at),
        (None, None) => Upload::Next,
    };
    let target_id = hooks::upload(
        &state.manager,
        body.str("targetId"),
        &paths,
        via,
        timeout(&body),
    )
    .await?;
    ok_with(json!({ "targetId": target_id }))
}

/// `POST /download {ref, path?, targetId?, timeoutMs?}`.
#[utoipa::path(
    post,
    path = "/download",
    operation_id = "post_download",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn download(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let trigger = body
        .str("ref")
        .ok_or_else(|| ApiError::bad_request("ref is required"))?;
    let (target_id, download) = hooks::download(
        &state.manager,
        body.str("targetId"),
        Some(Locator::Ref(trigger.into())),
        body.str("path"),
        timeout(&body),
    )
    .await?;
    ok_with(json!({ "targetId": target_id, "download": download }))
}

/// `POST /wait/download {path?, targetId?, timeoutMs?}`: saves the next download.
#[utoipa::path(
    post,
    path = "/wait/download",
    operation_id = "post_wait_download",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn wait_download(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let (target_id, download) = hooks::download(
        &state.manager,
        body.str("targetId"),
        None,
        body.str("path"),
        timeout(&body),
    )
    .await?;
    ok_with(json!({ "targetId": target_id, "download": download }))
}

/// `POST /highlight {ref, targetId?}`: outlines the element for two seconds.
#[utoipa::path(
    post,
    path = "/highlight",
    operation_id = "post_highlight",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn highlight(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let reference = body
        .str("ref")
        .ok_or_else(|| ApiError::bad_request("ref is required"))?;
    let m = &state.manager;
    let (target_id, page) = m.page_to_change(body.str("targetId")).await?;
    let color = m.settings().accent_color;
    let backend = m.element(&target_id, &page, reference).await?;
    element::highlight(&page, backend, &color).await?;
    ok(
        serde_json::json!({ "ok": true, "targetId": target_id, "url": m.target_url(&target_id).await.unwrap_or_default() }),
    )
}

/// `POST /permissions/grant {permissions: [...], origin?}`.
#[utoipa::path(
    post,
    path = "/permissions/grant",
    operation_id = "post_permissions_grant",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn grant(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let permissions: Vec<String> = body
        .0
        .get("permissions")
        .and_then(Value::as_array)
        .map(|p| {
            p.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if permissions.is_empty() {
        return Err(ApiError::bad_request("permissions are required"));
    }
    let cdp = state.manager.ensure().await?;
    emulation::grant(&cdp, &permissions, body.str("origin")).await?;
    ok_with(json!({}))
}
