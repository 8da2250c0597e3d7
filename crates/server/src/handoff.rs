//! Hand-offs: an agent asks the person to take over a browser session's
//! page (`POST /sessions/{id}/handoff`, MCP `browser_handoff`) where only a
//! person can go on (a second factor, a CAPTCHA, a payment), and waits
//! until they hand it back.
//!
//! The request reaches the person the way a gate does (it is one: the
//! workflow [`clawdis_approvals::BROWSER_HANDOFF`], whose approval is the
//! person's Done and whose denial their Decline): a notification, a card
//! in the Approvals window, the webhook `handoff.requested` with a signed
//! link. While it waits, the agent's actions on the page answer 409
//! `handed_off`; reading it still works.
//!
//! The link opens the live view, `/handoff/{signed}`: the page's frames
//! from Chromium's screencast, the person's mouse, wheel, keys, taps and
//! pastes sent back as trusted input, and Done and Decline. On this machine
//! the link is the credential; from afar (the host of `publicBaseUrl`) the
//! view also needs a paired device signed in with its passkey: a hand-off
//! hands over a logged-in browser. What the person types is never logged.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use clawdis_approvals::{Approval, ApprovalState};
use clawdis_browser::input::PersonInput;
use clawdis_browser::screencast::Options;
use clawdis_store::NewAction;
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{ApiError, ApiResult, Body, ok};
use crate::links::escape;
use crate::sessions::{Asked, Builtin, ask};

/// The longest reason an agent may give (as OpenClaw's `handoff` action).
const MAX_REASON: usize = 240;
/// How long a hand-off waits by default: ten minutes.
const DEFAULT_WAIT_MS: u64 = 600_000;
/// The longest wait an agent may ask for: an hour.
pub(crate) const MAX_WAIT_MS: u64 = 3_600_000;
/// The shortest.
pub(crate) const MIN_WAIT_MS: u64 = 1_000;
/// The largest message a live view sends (an input event, a paste).
const MAX_VIEW_MESSAGE: usize = 64 * 1024;

/// The hand-off's workflow: one gate only a person decides, which
/// expires (cancelled) a minute after the longest wait ([`MAX_WAIT_MS`]):
/// a hand-off whose backend died with its caller ends by itself.
const HANDOFF_WORKFLOW: &str = r#"name: browser-handoff
type: pipeline
description: A browser session hands its page to a person
inputs:
  reason: The agent needs you
  session: ""
  url: ""
  title: ""
  actions: ""
  screenshot: ""
steps:
  - id: handoff
    approval:
      required: true
      message: "The agent needs you: ${{ inputs.reason }}"
      approvers: human
      expires_in: 61m
    exec: "true"
"#;

const HANDOFF: Builtin = Builtin {
    name: clawdis_approvals::BROWSER_HANDOFF,
    text: HANDOFF_WORKFLOW,
};

/// `POST /sessions/{id}/handoff {reason, timeout_ms?}` → `{done: true,
/// url, title}` once the person hands the page back, or `{done: false,
/// reason: "declined" | "timeout" | "cancelled"}`. Waits up to
/// `timeout_ms` (default 10 minutes).
#[utoipa::path(
    post,
    path = "/sessions/{id}/handoff",
    operation_id = "post_sessions_id_handoff",
    tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, description = "How the hand-off ended", body = crate::openapi::Handoff), crate::openapi::SessionErrors)
)]
pub async fn request(
    State(state): State<Arc<AppState>>,
    axum::Extension(principal): axum::Extension<crate::Principal>,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult {
    let reason = body
        .str("reason")
        .ok_or_else(|| ApiError::bad_request("reason is required"))?
        .to_string();
    let wait = match body.0.get("timeout_ms") {
        None | Some(Value::Null) => DEFAULT_WAIT_MS,
        Some(v) => v
            .as_u64()
            .filter(|ms| (MIN_WAIT_MS..=MAX_WAIT_MS).contains(ms))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "timeout_ms is {MIN_WAIT_MS} to {MAX_WAIT_MS} milliseconds"
                ))
            })?,
    };
    ok(hand_off(
        &state,
        &principal,
        &id,
        &reason,
        Duration::from_millis(wait),
        |_| {},
    )
    .await?)
}

/// Hands session `id`'s page to a person for `reason` and waits up to
/// `wait` for them to hand it back; `waiting` hears every few seconds. The
/// hand-off goes into the session's action log with its outcome and how
/// long it took.
pub(crate) async fn hand_off(
    state: &AppState,
    principal: &crate::Principal,
    id: &str,
    reason: &str,
    wait: Duration,
    waiting: impl FnMut(Duration),
) -> Result<Value, ApiError> {
    if reason.chars().count() > MAX_REASON {
        return Err(ApiError::bad_request(format!(
            "reason is at most {MAX_REASON} characters"
        )));
    }
    let sessions = state.sessions().await?;
    let (target, _) = sessions.page_of(id).await?;
    let taken = state.manager.hand_off(&target)?;
    let began = Instant::now();
    let asked = ask(
        state,
        principal,
        id,
        &HANDOFF,
        json!({ "reason": reason }),
        wait,
        waiting,
    )
    .await;
    drop(taken);
    let outcome = match asked? {
        Asked::TimedOut(_) => "timeout",
        Asked::Decided(run) => match run.decisions.last().map(|d| d.decision) {
            Some("approve") => "done",
            Some("deny") => "declined",
            Some("expire") => "timeout",
            _ => "cancelled",
        },
    };
    let answer = if outcome == "done" {
        // The person's work (a login) is the session's from now on.
        if let Err(e) = sessions.save(id).await {
            tracing::warn!(session = id, error = %e, "saving the session after a hand-off");
        }
        let now = sessions.get(id).await?;
        json!({ "done": true, "url": now.url, "title": now.title.unwrap_or_default() })
    } else {
        json!({ "done": false, "reason": outcome })
    };
    let logged = sessions
        .log(&NewAction {
            session: id,
            action: "handoff",
            target: None,
            input: Some(json!({ "reason": reason }).to_string()),
            ok: outcome == "done",
            code: (outcome != "done").then_some(outcome),
            result: answer.to_string(),
            duration_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
            retries: 0,
            screenshot: None,
        })
        .await;
    if let Err(e) = logged {
        tracing::warn!(session = id, error = %e, "logging a hand-off");
    }
    tracing::info!(session = id, outcome, "hand-off ended");
    Ok(answer)
}

/// Whether a request came from afar: its Host is not loopback (it is the
/// host of `publicBaseUrl`; the links' guard lets no other through).
fn from_afar(headers: &HeaderMap) -> bool {
    crate::security::host_header(headers)
        .is_none_or(|h| !clawdis_browser::settings::is_loopback_host(&h))
}

/// The device that may use a live view: none needed on this machine; from
/// afar, the paired device signed in with its passkey.
fn viewer(state: &AppState, headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    if from_afar(headers) {
        state.inbox.device(headers).map(Some)
    } else {
        Ok(None)
    }
}

/// The hand-off a link opens.
async fn opened(state: &AppState, token: &str) -> Result<Approval, ApiError> {
    let claim = state.links().await?.verify(token)?;
    let approval = state.approvals().await?.get(&claim.state_key).await?;
    if !approval.is_handoff() {
        return Err(ApiError::forbidden("this link is not a hand-off's"));
    }
    Ok(approval)
}

/// `GET /handoff/{signed}`: the live view of the page a hand-off hands
/// over, with Done and Decline. From afar it first asks for a paired
/// device's passkey.
#[utoipa::path(
    get,
    path = "/handoff/{signed}",
    operation_id = "get_handoff_signed",
    tag = "links",
    security(()),
    params(("signed" = String, Path, description = "The hand-off's signed link")),
    responses((status = 200, description = "The live view (or, from afar, a passkey sign-in)", content_type = "text/html", body = String), (status = 403, description = "A forged link, or not a hand-off's", content_type = "text/html", body = String), (status = 410, description = "Used or expired", content_type = "text/html", body = String))
)]
pub async fn page(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Response {
    let approval = match opened(&state, &token).await {
        Ok(approval) => approval,
        Err(e) => return crate::links::error_page(e.status(), e.message()),
    };
    if viewer(&state, &headers).is_err() {
        return crate::links::page_with_passkeys(
            StatusCode::OK,
            "Hand-off",
            "<h1>The agent needs you</h1><p>This hands over a logged-in browser: sign in with a \
             paired device's passkey to see it.</p><p><button type=button data-passkey=signin \
             data-then=reload>Sign in with this device's passkey</button></p><p id=said \
             role=status></p>",
        );
    }
    let shown = approval.readable();
    // The live view is wider than a form.
    let mut html = String::from("<style>body{max-width:80em}</style>");
    html.push_str(&crate::links::warnings_html(&shown.prompt));
    html.push_str(&format!("<h1>{}</h1>", escape(&shown.prompt.text)));
    if let Some(page) = &shown.browser {
        html.push_str(&crate::links::warnings_html(page));
        html.push_str(&format!("<p class=wf id=where>{}</p>", escape(&page.text)));
    }
    if approval.state != ApprovalState::Pending {
        html.push_str("<p>This hand-off has ended.</p>");
        return crate::links::page_with_scripts(StatusCode::OK, "Hand-off", &html, &[]);
    }
    html.push_str(
        "<p><canvas id=screen tabindex=0 width=0 height=0 role=img \
         aria-label=\"The page, live: click, scroll and type here\"></canvas></p>\
         <p><input id=keys autocomplete=off autocapitalize=off spellcheck=false \
         aria-label=\"Type into the page\" placeholder=\"Type into the page (a phone's keyboard)\"></p>\
         <p><button type=button id=done>Done — continue the agent</button> \
         <button type=button id=decline class=deny>Decline</button></p>\
         <p id=said role=status></p>",
    );
    crate::links::page_with_scripts(StatusCode::OK, "Hand-off", &html, &["/handoff.js"])
}

/// `POST /handoff/{signed}/end {done}`: the person hands the page back
/// (`done: true`) or declines (`false`), once.
#[utoipa::path(
    post,
    path = "/handoff/{signed}/end",
    operation_id = "post_handoff_signed_end",
    tag = "links",
    security(()),
    params(("signed" = String, Path, description = "The hand-off's signed link")),
    request_body(content = crate::openapi::HandBack, content_type = "application/json"),
    responses((status = 200, description = "`{done}`: ended", body = Object), (status = 400, description = "No `done`", body = crate::openapi::ErrorBody), (status = 401, description = "From afar, not signed in with a paired device", body = crate::openapi::ErrorBody), (status = 403, description = "A forged link, or not a hand-off's", body = crate::openapi::ErrorBody), (status = 409, description = "Ended already", body = crate::openapi::ErrorBody), (status = 410, description = "Used or expired", body = crate::openapi::ErrorBody))
)]
pub async fn end(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(token): Path<String>,
    body: Body,
) -> ApiResult {
    let done = body
        .bool("done")
        .ok_or_else(|| ApiError::bad_request("done is required (true or false)"))?;
    let device = viewer(&state, &headers)?;
    opened(&state, &token).await?;
    let approvals = state.approvals().await?;
    state
        .links()
        .await?
        .hand_back(&approvals, &token, done, device.as_deref())
        .await?;
    ok(json!({ "done": done }))
}

/// `GET /handoff.js`: the live view's script.
#[utoipa::path(
    get,
    path = "/handoff.js",
    operation_id = "get_handoff_js",
    tag = "links",
    security(()),
    responses((status = 200, description = "The live view's script (JavaScript)"))
)]
pub async fn script() -> Response {
    (
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/javascript; charset=utf-8",
            ),
            (axum::http::header::CACHE_CONTROL, "no-store"),
        ],
        include_str!("handoff.js"),
    )
        .into_response()
}

/// `GET /handoff/{signed}/live`: the live view's WebSocket: `ready` and
/// `meta` text messages, the frames (as OpenClaw's screencast sends them),
/// and `ended` when the hand-off ends; the view sends the person's input as
/// text messages.
#[utoipa::path(
    get,
    path = "/handoff/{signed}/live",
    operation_id = "get_handoff_signed_live",
    tag = "links",
    security(()),
    params(("signed" = String, Path, description = "The hand-off's signed link")),
    responses(
        (status = 101, description = "The WebSocket"),
        (status = 401, description = "From afar, not signed in with a paired device", body = crate::openapi::ErrorBody),
        (status = 403, description = "A forged link, or not a hand-off's", body = crate::openapi::ErrorBody),
        (status = 409, description = "The hand-off has ended", body = crate::openapi::ErrorBody),
        (status = 410, description = "Expired", body = crate::openapi::ErrorBody),
        (status = 426, description = "Not a WebSocket request", content_type = "text/plain", body = String)
    )
)]
pub async fn live(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(token): Path<String>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    viewer(&state, &headers)?;
    let approval = opened(&state, &token).await?;
    if approval.state != ApprovalState::Pending {
        return Err(ApiError::conflict("this hand-off has ended"));
    }
    let Ok(upgrade) = upgrade else {
        return Ok((
            StatusCode::UPGRADE_REQUIRED,
            "Upgrade Required: connect the live view over WebSocket.",
        )
            .into_response());
    };
    let session = approval
        .context
        .browser
        .map(|b| b.session)
        .unwrap_or_default();
    let (target, page) = state.sessions().await?.page_of(&session).await?;
    // The person's keys reach the page's focused field only while the page
    // has the focus (a headless page in the background has none).
    for (method, params) in [
        ("Page.bringToFront", json!({})),
        (
            "Emulation.setFocusEmulationEnabled",
            json!({ "enabled": true }),
        ),
    ] {
        clawdis_browser::cdp::page_call(&page, method, params).await?;
    }
    let viewer = state
        .manager
        .screencast(&target, &page, Options::default())
        .await?;
    let state_key = approval.state_key.clone();
    Ok(upgrade
        .max_message_size(MAX_VIEW_MESSAGE)
        .on_upgrade(move |socket| {
            watch(
                state,
                Watched {
                    state_key,
                    target,
                    page,
                    viewer,
                },
                socket,
            )
        }))
}

/// What a live view shows and drives.
struct Watched {
    state_key: String,
    target: String,
    page: chromiumoxide::Page,
    viewer: clawdis_browser::screencast::Viewer,
}

/// Relays frames to the view and the person's input to the page until the
/// hand-off ends or the view goes away.
async fn watch(state: Arc<AppState>, mut watched: Watched, mut socket: WebSocket) {
    let meta = watched.viewer.meta();
    let ready = json!({ "type": "ready", "targetId": watched.target, "url": meta.url, "title": meta.title });
    if socket
        .send(Message::Text(ready.to_string().into()))
        .await
        .is_err()
    {
        return;
    }
    let Ok(approvals) = state.approvals().await else {
        return;
    };
    let mut decided = approvals.subscribe();
    let mut look = tokio::time::interval(Duration::from_secs(1));
    let why = loop {
        tokio::select! {
            update = watched.viewer.next() => {
                let Some(update) = update else { break (4004, "target_closed") };
                if crate::screencast::send_update(&mut socket, &update).await.is_err() {
                    return;
                }
            }
            message = socket.recv() => match message {
                Some(Ok(Message::Text(text))) => {
                    if let Err(e) = person(&state, &watched, &text).await {
                        let said = json!({ "type": "error", "error": e });
                        if socket.send(Message::Text(said.to_string().into())).await.is_err() {
                            return;
                        }
                    }
                }
                Some(Ok(Message::Binary(_))) => break (1003, "text messages only"),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
            // The hand-off ends when its gate is decided, wherever that
            // happened (the app, this view, the expiry).
            _ = decided.recv() => {
                if !still_waiting(&state, &watched.state_key).await {
                    break (1000, "ended");
                }
            }
            _ = look.tick() => {
                if !still_waiting(&state, &watched.state_key).await {
                    break (1000, "ended");
                }
            }
        }
    };
    if why.1 == "ended" {
        let said = json!({ "type": "ended" });
        let _ = socket.send(Message::Text(said.to_string().into())).await;
    }
    crate::screencast::close(&mut socket, why.0, why.1).await;
}

/// Whether the hand-off's gate still waits.
async fn still_waiting(state: &AppState, state_key: &str) -> bool {
    match state.approvals().await {
        Ok(approvals) => approvals
            .get(state_key)
            .await
            .is_ok_and(|a| a.state == ApprovalState::Pending),
        Err(_) => false,
    }
}

/// Does what the person did in the view to the page, while the page is
/// handed to them; never logged.
async fn person(state: &AppState, watched: &Watched, text: &str) -> Result<(), String> {
    let input: PersonInput =
        serde_json::from_str(text).map_err(|e| format!("not an input event: {e}"))?;
    if state.manager.not_handed_off(&watched.target).is_ok() {
        return Err("the page is not handed to you now".into());
    }
    clawdis_browser::input::person(&watched.page, &input)
        .await
        .map_err(|e| e.to_string())
}

/// What taking over a hand-off did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TakeOver {
    /// The browser is visible: its window came to the front on the page.
    Focused,
    /// The browser is headless: the person watches and drives the page in
    /// the live view at this local address.
    LiveView(String),
}

/// Takes over the hand-off `id` (its gate's id, its run's or its key)
/// waits at, for the person at this machine (the app's notification, its
/// Approvals window): a visible browser's window comes to the front on the
/// page; a headless one's page is watched through its live view, whose
/// local address is given.
pub async fn take_over(state: &AppState, id: &str) -> Result<TakeOver, ApiError> {
    let approval = state.approvals().await?.get(id).await?;
    let Some(page) = approval.context.browser.as_ref().filter(|b| b.handoff) else {
        return Err(ApiError::bad_request("this gate is not a hand-off"));
    };
    if approval.state != ApprovalState::Pending {
        return Err(ApiError::conflict("this hand-off has ended"));
    }
    let (target, _) = state.sessions().await?.page_of(&page.session).await?;
    if !state.manager.status().headless {
        state.manager.focus(&target).await?;
        return Ok(TakeOver::Focused);
    }
    let token = state.links().await?.sign(
        &approval.state_key,
        approval.context.policy.expires_at.as_deref(),
    );
    Ok(TakeOver::LiveView(format!(
        "http://127.0.0.1:{}/handoff/{token}",
        state.control_port()
    )))
}
