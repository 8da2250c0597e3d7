//! Reading pages: navigate, snapshot, screenshot, PDF, and the spec's
//! eval / query / dom plus OpenClaw's text.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query as Q, State};
use chromiumoxide::Page;
use clawdis_browser::cdp::page_url;
use clawdis_browser::element;
use clawdis_browser::inspect::{self, ImageType, ShotArea};
use clawdis_browser::manager::NAVIGATE_TIMEOUT;
use clawdis_browser::snapshot::{self, SnapshotOptions};
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{ApiError, ApiResult, Body, Query, flag, number, ok, profile};

async fn url_of(page: &Page) -> String {
    page_url(page).await.unwrap_or_default()
}

/// `{url, targetId?, timeoutMs?}`.
#[utoipa::path(
    post,
    path = "/navigate",
    operation_id = "post_navigate",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn navigate(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let url = body
        .str("url")
        .ok_or_else(|| ApiError::bad_request("url is required"))?;
    let timeout = body.uint("timeoutMs").map_or(NAVIGATE_TIMEOUT, |ms| {
        Duration::from_millis(ms.clamp(100, 120_000))
    });
    let (target_id, url) = state
        .manager
        .navigate(body.str("targetId"), url, timeout)
        .await?;
    ok(json!({ "ok": true, "targetId": target_id, "url": url }))
}

/// `GET /snapshot?format=ai|aria|domSnapshot&...`.
#[utoipa::path(
    get,
    path = "/snapshot",
    operation_id = "get_snapshot",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn snapshot(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    let format = q
        .get("format")
        .map(String::as_str)
        .filter(|f| !f.is_empty())
        .unwrap_or("ai");
    let efficient = q.get("mode").is_some_and(|m| m == "efficient");
    if !matches!(format, "ai" | "aria" | "domSnapshot") {
        return Err(ApiError::bad_request(format!(
            "format must be ai, aria or domSnapshot, not {format}"
        )));
    }
    if format != "ai" && (flag(&q, "labels") || efficient) {
        return Err(ApiError::bad_request(
            "labels/mode=efficient require format=ai",
        ));
    }
    if flag(&q, "labels") {
        return Err(ApiError::not_implemented(
            "snapshot labels are not supported",
        ));
    }
    let mut opts = SnapshotOptions {
        limit: number(&q, "limit")?,
        max_chars: number(&q, "maxChars")?,
        interactive: flag(&q, "interactive"),
        compact: flag(&q, "compact"),
        depth: number(&q, "depth")?,
        // `frame` (a selector for an <iframe>) scopes like `selector`: the scope follows into frames.
        selector: ["selector", "frame"]
            .iter()
            .find_map(|k| q.get(*k).cloned().filter(|s| !s.trim().is_empty())),
        urls: flag(&q, "urls"),
    };
    if efficient {
        opts.max_chars = Some(opts.max_chars.unwrap_or(8000));
        opts.depth = Some(opts.depth.unwrap_or(6));
    }
    let m = &state.manager;
    let (target_id, page) = match q.get("sessionId").filter(|s| !s.is_empty()) {
        // The session holds its page: no need to look it up among the tabs.
        Some(session) => {
            let (target_id, page) = state.sessions().await?.page_of(session).await?;
            m.no_dialog(&target_id, &page).await?;
            (target_id, page)
        }
        None => m.page_ready(q.get("targetId").map(String::as_str)).await?,
    };
    match format {
        "domSnapshot" => {
            let nodes = snapshot::dom_snapshot(&page, &opts).await?;
            ok(
                json!({ "ok": true, "format": format, "targetId": target_id, "url": url_of(&page).await, "nodes": nodes }),
            )
        }
        "aria" => {
            let capture = snapshot::capture(&page, opts.selector.as_deref()).await?;
            let nodes = m.with_refs(&target_id, |t| capture.aria(t, &opts));
            ok(
                json!({ "ok": true, "format": format, "targetId": target_id, "url": capture.url, "nodes": nodes }),
            )
        }
        _ => {
            let events = m.events(&target_id, &page).await?;
            let cdp = m.connected()?;
            let capture =
                snapshot::capture_rendered(&page, &events, &cdp, opts.selector.as_deref()).await?;
            let snap = m.with_refs(&target_id, |t| capture.ai(t, &opts));
            let mut v =
                json!({ "ok": true, "format": "ai", "targetId": target_id, "url": capture.url });
            let Value::Object(extra) = serde_json::to_value(snap).unwrap_or_default() else {
                unreachable!("struct serialises to an object")
            };
            if let Some(o) = v.as_object_mut() {
                o.extend(extra);
            }
            ok(v)
        }
    }
}

/// `{targetId?, fullPage?, ref?, element?, type?}` → `{ok, path, targetId, url}`.
#[utoipa::path(
    post,
    path = "/screenshot",
    operation_id = "post_screenshot",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn screenshot(
    State(state): State<Arc<AppState>>,
    Q(q): Q<Query>,
    body: Body,
) -> ApiResult {
    profile(&q, Some(&body))?;
    let full_page = body.bool("fullPage").unwrap_or(false);
    let (reference, element) = (body.str("ref"), body.str("element"));
    if full_page && (reference.is_some() || element.is_some()) {
        return Err(ApiError::bad_request(
            "fullPage is not supported for element screenshots",
        ));
    }
    let kind = ImageType::parse(body.str("type"))?;
    let m = &state.manager;
    let (target_id, page) = m.page_ready(body.str("targetId")).await?;
    let area = if let Some(r) = reference {
        ShotArea::Element(m.element(&target_id, &page, r).await?)
    } else if let Some(selector) = element {
        ShotArea::Element(
            element::query_selector(&page, selector)
                .await?
                .ok_or_else(|| ApiError::not_found(format!("no element matches {selector}")))?,
        )
    } else if full_page {
        ShotArea::FullPage
    } else {
        ShotArea::Viewport
    };
    let path = inspect::screenshot(
        &page,
        &inspect::media_dir(m.home(), "screenshots"),
        area,
        kind,
    )
    .await?;
    ok(
        json!({ "ok": true, "path": path.display().to_string(), "targetId": target_id, "url": url_of(&page).await }),
    )
}

/// `{targetId?}` → `{ok, path, targetId, url}`.
#[utoipa::path(
    post,
    path = "/pdf",
    operation_id = "post_pdf",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn pdf(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let (target_id, page) = state.manager.page_ready(body.str("targetId")).await?;
    let path = inspect::pdf(&page, &inspect::media_dir(state.manager.home(), "pdf")).await?;
    ok(
        json!({ "ok": true, "path": path.display().to_string(), "targetId": target_id, "url": url_of(&page).await }),
    )
}

/// The spec's `{js, targetId?, await?}` → `{ok, targetId, url, result}`.
#[utoipa::path(
    post,
    path = "/eval",
    operation_id = "post_eval",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn eval(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    if !state.manager.settings().evaluate_enabled {
        return Err(ApiError::forbidden("evaluate is disabled in settings")
            .with_code("ACT_EVALUATE_DISABLED"));
    }
    let js = body
        .str("js")
        .ok_or_else(|| ApiError::bad_request("js is required"))?;
    let (target_id, page) = state.manager.page_to_change(body.str("targetId")).await?;
    let result = inspect::eval(&page, js, body.bool("await").unwrap_or(false)).await?;
    ok(json!({ "ok": true, "targetId": target_id, "url": url_of(&page).await, "result": result }))
}

/// The spec's `{selector, limit?, targetId?}` → `{ok, targetId, url, matches}`.
#[utoipa::path(
    post,
    path = "/query",
    operation_id = "post_query",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn query(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let selector = body
        .str("selector")
        .ok_or_else(|| ApiError::bad_request("selector is required"))?;
    let (target_id, page) = state.manager.page_ready(body.str("targetId")).await?;
    let matches = inspect::query(&page, selector, body.uint("limit").map(|n| n as usize)).await?;
    ok(json!({ "ok": true, "targetId": target_id, "url": url_of(&page).await, "matches": matches }))
}

/// The spec's `{format: html|text, selector?, maxChars?, targetId?}`.
#[utoipa::path(
    post,
    path = "/dom",
    operation_id = "post_dom",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn dom(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let format = body.str("format").unwrap_or("html");
    let (target_id, page) = state.manager.page_ready(body.str("targetId")).await?;
    let (content, truncated) = inspect::dom(
        &page,
        format,
        body.str("selector"),
        body.uint("maxChars").map(|n| n as usize),
    )
    .await?;
    let mut v = json!({ "ok": true, "targetId": target_id, "url": url_of(&page).await, "format": format, "truncated": truncated });
    v[format] = json!(content);
    ok(v)
}

/// OpenClaw's `GET /text?targetId&selector&maxChars`.
#[utoipa::path(
    get,
    path = "/text",
    operation_id = "get_text",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn text(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    profile(&q, None)?;
    let (target_id, page) = state
        .manager
        .page_ready(q.get("targetId").map(String::as_str))
        .await?;
    let (text, truncated) = inspect::text(
        &page,
        q.get("selector")
            .map(String::as_str)
            .filter(|s| !s.is_empty()),
        number(&q, "maxChars")?,
    )
    .await?;
    ok(
        json!({ "ok": true, "targetId": target_id, "url": url_of(&page).await, "text": text, "truncated": truncated }),
    )
}
