//! `/inbox`: what waits for a person, for a paired device. A passkey
//! sign-in opens it (a session cookie kept in this process's memory only,
//! 10 minutes); each approval there takes an assertion of its own, bound
//! to the gate, the decision and the digest the page showed, as a link's
//! page does. Denying needs the signed-in device only.
//!
//! What a shell asks of the person (an approver token, a pairing once a
//! device is paired) waits here too: confirming it takes an assertion bound
//! to the request, refusing it the signed-in device.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use clawdis_approvals::{ApprovalState, ApprovalsError, Choice, Decider};
use serde_json::json;
use tokio::time::Instant;

use crate::AppState;
use crate::api::{ApiError, ApiResult, Body, ok};
use crate::devices::{Bound, begin, finish};
use crate::requests::{Confirmer, NotWaiting, Verdict};

/// How long a sign-in lasts.
const SESSION_TTL: Duration = Duration::from_secs(600);
/// The session cookie's name.
const COOKIE: &str = "clawdis_inbox";

/// The signed-in devices: a session's digest, its device, until when.
#[derive(Default)]
pub struct Sessions(Mutex<HashMap<String, (String, Instant)>>);

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

impl Sessions {
    fn open(&self, device: &str) -> String {
        let secret = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        if let Ok(mut sessions) = self.0.lock() {
            sessions.retain(|_, (_, until)| *until > Instant::now());
            sessions.insert(
                crate::principal::digest(&secret),
                (device.to_string(), Instant::now() + SESSION_TTL),
            );
        }
        secret
    }

    /// The device signed in with the session cookie of `headers` (the
    /// inbox's, and a hand-off's live view opened from afar).
    pub(crate) fn device(&self, headers: &HeaderMap) -> Result<String, ApiError> {
        let secret = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == COOKIE)
            .map(|(_, value)| value.to_string());
        let signed_in = secret.and_then(|secret| {
            let sessions = self.0.lock().ok()?;
            sessions
                .get(&crate::principal::digest(&secret))
                .filter(|(_, until)| *until > Instant::now())
                .map(|(device, _)| device.clone())
        });
        signed_in.ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "sign in with a paired device's passkey first",
            )
        })
    }
}

/// `GET /inbox`: the page; it signs in with the device's passkey.
#[utoipa::path(
    get,
    path = "/inbox",
    operation_id = "get_inbox",
    tag = "links",
    security(()),
    responses((status = 200, description = "The inbox page", content_type = "text/html", body = String), (status = 403, description = "A foreign Host", content_type = "text/html", body = String))
)]
pub async fn page() -> Response {
    crate::links::page_with_passkeys(
        StatusCode::OK,
        "Inbox",
        "<h1>What waits for you</h1>\
         <p><button type=button data-passkey=signin>Sign in with this device's passkey</button></p>\
         <p id=said role=status></p><div id=requests></div><div id=inbox></div>",
    )
}

/// `POST /inbox/signin/challenge`: a sign-in ceremony.
#[utoipa::path(
    post,
    path = "/inbox/signin/challenge",
    operation_id = "post_inbox_signin_challenge",
    tag = "links",
    security(()),
    responses((status = 200, description = "`{ceremony, publicKey}`: WebAuthn request options", body = Object), (status = 404, description = "No paired device", body = crate::openapi::ErrorBody))
)]
pub async fn signin_challenge(State(state): State<Arc<AppState>>) -> ApiResult {
    ok(begin(&state, Bound::SignIn).await?)
}

/// `POST /inbox/signin {ceremony, credential}`: signs the device in (a
/// session cookie).
#[utoipa::path(
    post,
    path = "/inbox/signin",
    operation_id = "post_inbox_signin",
    tag = "links",
    security(()),
    request_body(content = crate::openapi::PasskeyAssertion, content_type = "application/json"),
    responses((status = 200, description = "Signed in: `{device}`, and the session cookie", body = Object), (status = 400, description = "Not a ceremony and an assertion", body = crate::openapi::ErrorBody), (status = 403, description = "The assertion does not verify, or its device is revoked", body = crate::openapi::ErrorBody), (status = 404, description = "No such ceremony (used or expired)", body = crate::openapi::ErrorBody))
)]
pub async fn signin(State(state): State<Arc<AppState>>, body: Body) -> Result<Response, ApiError> {
    let (device, _) = finish(&state, body, |b| matches!(b, Bound::SignIn)).await?;
    let secret = state.inbox.open(&device);
    let cookie = format!(
        "{COOKIE}={secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}",
        SESSION_TTL.as_secs()
    );
    let mut response = ok(json!({ "device": device }))?;
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(|e| ApiError::internal(e.to_string()))?,
    );
    Ok(response)
}

/// `GET /inbox/approvals`: the gates waiting, for the signed-in device.
#[utoipa::path(
    get,
    path = "/inbox/approvals",
    operation_id = "get_inbox_approvals",
    tag = "links",
    security(()),
    responses((status = 200, description = "`{device, approvals}`: what waits", body = Object), (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody))
)]
pub async fn approvals(State(state): State<Arc<AppState>>, headers: HeaderMap) -> ApiResult {
    let device = state.inbox.device(&headers)?;
    let approvals = state.approvals().await?;
    let waiting: Vec<serde_json::Value> = approvals
        .list()
        .await?
        .into_iter()
        .filter(|a| {
            a.state == ApprovalState::Pending && a.gate == clawdis_approvals::Gate::Approval
        })
        .map(|a| {
            json!({
                "id": a.approval_id.clone().unwrap_or_else(|| a.run_id.clone()),
                "workflow": a.workflow,
                "prompt": a.prompt,
                "items": a.items,
                "itemCount": a.item_count,
                "policy": a.policy,
                "fileChanged": a.file_changed,
                "digest": a.digest,
                "readable": a.readable(),
                "context": a.context,
            })
        })
        .collect();
    ok(json!({ "device": device, "approvals": waiting }))
}

/// `POST /inbox/{id}/challenge {digest}`: a ceremony bound to approving
/// gate `id` as shown with `digest`.
#[utoipa::path(
    post,
    path = "/inbox/{id}/challenge",
    operation_id = "post_inbox_id_challenge",
    tag = "links",
    security(()),
    params(("id" = String, Path, description = "The gate's approval id")),
    request_body(content = crate::openapi::PasskeyChallenge, content_type = "application/json"),
    responses((status = 200, description = "`{ceremony, publicKey}`", body = Object), (status = 400, description = "No digest", body = crate::openapi::ErrorBody), (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody), (status = 404, description = "No such gate waits", body = crate::openapi::ErrorBody), (status = 409, description = "The gate changed since the page showed it", body = crate::openapi::ErrorBody))
)]
pub async fn challenge(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    state.inbox.device(&headers)?;
    let digest = body
        .text("digest")?
        .ok_or_else(|| ApiError::bad_request("digest is required"))?;
    let gate = state.approvals().await?.get(&id).await?;
    if gate.state != ApprovalState::Pending {
        return Err(ApiError::not_found(format!("gate {id} waits no more")));
    }
    if gate.digest != digest {
        return Err(ApprovalsError::Stale(
            "this approval changed since the page showed it: look again".into(),
        )
        .into());
    }
    ok(begin(
        &state,
        Bound::Gate {
            state_key: gate.state_key,
            digest,
        },
    )
    .await?)
}

/// `POST /inbox/{id}/passkey {ceremony, credential}`: approves gate `id`
/// as the device whose assertion finishes the ceremony.
#[utoipa::path(
    post,
    path = "/inbox/{id}/passkey",
    operation_id = "post_inbox_id_passkey",
    tag = "links",
    security(()),
    params(("id" = String, Path, description = "The gate's approval id")),
    request_body(content = crate::openapi::PasskeyAssertion, content_type = "application/json"),
    responses((status = 200, description = "Approved: the resumed run's envelope", body = Object), (status = 400, description = "Not a ceremony and an assertion", body = crate::openapi::ErrorBody), (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody), (status = 403, description = "The assertion does not verify", body = crate::openapi::ErrorBody), (status = 404, description = "No such ceremony", body = crate::openapi::ErrorBody), (status = 409, description = "Decided already, or changed since shown", body = crate::openapi::ErrorBody))
)]
pub async fn approve(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    state.inbox.device(&headers)?;
    let approvals = state.approvals().await?;
    let gate = approvals.get(&id).await?;
    let (device, bound) = finish(
        &state,
        body,
        |b| matches!(b, Bound::Gate { state_key, .. } if *state_key == gate.state_key),
    )
    .await?;
    let Bound::Gate { state_key, digest } = bound else {
        return Err(ApiError::internal("a ceremony bound to another gate"));
    };
    let decider = Decider::device(&device, Some(digest), None);
    let result = approvals
        .decide(&state_key, Choice::Approve, decider)
        .await?;
    ok(json!({ "ok": true, "device": device, "result": result }))
}

/// `POST /inbox/{id}/deny {reason?}`: denies gate `id` as the signed-in
/// device.
#[utoipa::path(
    post,
    path = "/inbox/{id}/deny",
    operation_id = "post_inbox_id_deny",
    tag = "links",
    security(()),
    params(("id" = String, Path, description = "The gate's approval id")),
    request_body(content = Option<crate::openapi::DenyRequest>, content_type = "application/json"),
    responses((status = 200, description = "Denied: the run's envelope", body = Object), (status = 400, description = "Not a JSON object", body = crate::openapi::ErrorBody), (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody), (status = 404, description = "No such gate", body = crate::openapi::ErrorBody), (status = 409, description = "Decided already", body = crate::openapi::ErrorBody))
)]
pub async fn deny(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    let device = state.inbox.device(&headers)?;
    let decider = Decider::device(&device, None, body.note("reason")?);
    let result = state
        .approvals()
        .await?
        .decide(&id, Choice::Deny, decider)
        .await?;
    ok(json!({ "ok": true, "device": device, "result": result }))
}

/// `GET /inbox/requests`: what processes ask of the person (approver
/// tokens, pairings), with the asking process, for the signed-in device.
#[utoipa::path(
    get,
    path = "/inbox/requests",
    operation_id = "get_inbox_requests",
    tag = "links",
    security(()),
    responses((status = 200, description = "`{device, requests}`: what waits for a confirmation", body = Object), (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody))
)]
pub async fn requests(State(state): State<Arc<AppState>>, headers: HeaderMap) -> ApiResult {
    let device = state.inbox.device(&headers)?;
    let requests: Vec<serde_json::Value> = state
        .requests
        .list()
        .iter()
        .map(crate::requests::Request::for_a_person)
        .collect();
    ok(json!({ "device": device, "requests": requests }))
}

/// `POST /inbox/requests/{id}/challenge`: a ceremony bound to confirming
/// request `id`.
#[utoipa::path(
    post,
    path = "/inbox/requests/{id}/challenge",
    operation_id = "post_inbox_requests_id_challenge",
    tag = "links",
    security(()),
    params(("id" = String, Path, description = "The request's id", pattern = "^[0-9a-f]{8}$")),
    responses((status = 200, description = "`{ceremony, publicKey}`", body = Object), (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody), (status = 404, description = "No such request waits", body = crate::openapi::ErrorBody))
)]
pub async fn request_challenge(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult {
    state.inbox.device(&headers)?;
    if !state.requests.list().iter().any(|r| r.id == id) {
        return Err(not_waiting(NotWaiting(id)));
    }
    ok(begin(&state, Bound::Request { id }).await?)
}

/// `POST /inbox/requests/{id}/passkey {ceremony, credential}`: confirms
/// request `id` as the device whose assertion finishes the ceremony.
#[utoipa::path(
    post,
    path = "/inbox/requests/{id}/passkey",
    operation_id = "post_inbox_requests_id_passkey",
    tag = "links",
    security(()),
    params(("id" = String, Path, description = "The request's id", pattern = "^[0-9a-f]{8}$")),
    request_body(content = crate::openapi::PasskeyAssertion, content_type = "application/json"),
    responses((status = 200, description = "Confirmed: `{ok, device, id}`; the asking process receives what it asked for", body = Object), (status = 400, description = "Not a ceremony and an assertion", body = crate::openapi::ErrorBody), (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody), (status = 403, description = "The assertion does not verify", body = crate::openapi::ErrorBody), (status = 404, description = "No such ceremony, or the request waits no more", body = crate::openapi::ErrorBody))
)]
pub async fn confirm_request(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    state.inbox.device(&headers)?;
    let (device, _) = finish(
        &state,
        body,
        |b| matches!(b, Bound::Request { id: bound } if *bound == id),
    )
    .await?;
    tracing::info!(%id, %device, "a request is confirmed from a paired device");
    state
        .requests
        .answer(&id, Verdict::Confirmed(Confirmer::device(&device)))
        .map_err(not_waiting)?;
    ok(json!({ "ok": true, "device": device, "id": id }))
}

/// `POST /inbox/requests/{id}/refuse`: refuses request `id` as the
/// signed-in device.
#[utoipa::path(
    post,
    path = "/inbox/requests/{id}/refuse",
    operation_id = "post_inbox_requests_id_refuse",
    tag = "links",
    security(()),
    params(("id" = String, Path, description = "The request's id", pattern = "^[0-9a-f]{8}$")),
    responses((status = 200, description = "Refused: `{ok, device, id}`", body = Object), (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody), (status = 404, description = "The request waits no more", body = crate::openapi::ErrorBody))
)]
pub async fn refuse_request(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult {
    let device = state.inbox.device(&headers)?;
    state
        .requests
        .answer(&id, Verdict::Refused(Confirmer::device(&device)))
        .map_err(not_waiting)?;
    ok(json!({ "ok": true, "device": device, "id": id }))
}

fn not_waiting(e: NotWaiting) -> ApiError {
    ApiError::not_found(e.to_string())
}

/// `GET /inbox/events`: an SSE event `changed` (its data says nothing more:
/// a browser drops an event without data) whenever what
/// waits changes (a gate paused or decided anywhere, a request asked or
/// answered), for the signed-in device; the page then fetches the lists
/// again with its session.
#[utoipa::path(
    get,
    path = "/inbox/events",
    operation_id = "get_inbox_events",
    tag = "links",
    security(()),
    responses((status = 200, description = "Server-sent events `changed`", content_type = "text/event-stream", body = String), (status = 401, description = "Not signed in", body = crate::openapi::ErrorBody))
)]
pub async fn events(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
    use futures::StreamExt;
    use tokio::sync::broadcast::error::RecvError;
    state.inbox.device(&headers)?;
    let gates = futures::stream::unfold(state.approvals().await?.subscribe(), |mut rx| async {
        match rx.recv().await {
            Ok(_) | Err(RecvError::Lagged(_)) => Some(((), rx)),
            Err(RecvError::Closed) => None,
        }
    });
    let requests = futures::stream::unfold(state.requests.subscribe(), |mut rx| async {
        rx.changed().await.ok().map(|()| ((), rx))
    });
    let changed = futures::stream::select(gates, requests).map(|()| {
        Ok::<_, std::convert::Infallible>(SseEvent::default().event("changed").data("changed"))
    });
    let closed = async move { state.closed().await };
    Ok(Sse::new(changed.take_until(closed)).keep_alive(KeepAlive::default()))
}
