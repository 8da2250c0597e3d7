//! Approvals over HTTP, for `clawdis serve` where no app or notification
//! reaches a person: list the paused runs of the home, follow pauses and
//! decisions as server-sent events, and decide (recorded as `http`).

use std::sync::Arc;

use axum::Extension;
use axum::Json;
use axum::extract::{Path, Query as Q, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use clawdis_approvals::{ApprovalsError, Channel, Choice, Decider};
use serde_json::json;

use crate::api::{ApiError, ApiResult, Body, Query, ok};
use crate::{AppState, Principal};

impl From<ApprovalsError> for ApiError {
    fn from(e: ApprovalsError) -> Self {
        match e {
            ApprovalsError::NotFound(_) => ApiError::not_found(e.to_string()),
            ApprovalsError::AlreadyDecided(_)
            | ApprovalsError::Elsewhere(_)
            | ApprovalsError::Mismatch(_)
            | ApprovalsError::Stale(_) => ApiError::conflict(e.to_string()),
            ApprovalsError::Invalid(_) => ApiError::bad_request(e.to_string()),
            ApprovalsError::Parse(_) => {
                ApiError::bad_request(e.to_string()).with_code("parse_error")
            }
            ApprovalsError::Forbidden(_) => ApiError::forbidden(e.to_string()),
            ApprovalsError::Gone(_) => ApiError::new(StatusCode::GONE, e.to_string()),
            ApprovalsError::Store(_) => ApiError::internal(e.to_string()),
        }
    }
}

/// `GET /approvals?status=pending|decided|expired`: pending gates (oldest
/// first), then recent decisions; `status` keeps those in that state.
#[utoipa::path(
    get,
    path = "/approvals",
    operation_id = "get_approvals",
    tag = "approvals",
    params(crate::openapi::ApprovalsQuery),
    responses((status = 200, description = "OK", body = crate::openapi::ApprovalList), crate::openapi::ServiceErrors)
)]
pub async fn list(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    let approvals = state.approvals().await?;
    let listed = approvals
        .list_in(q.get("status").map(String::as_str))
        .await?;
    ok(json!({ "approvals": listed }))
}

/// `GET /approvals/{id}`: one run, by its id or its 8-hex approval id.
#[utoipa::path(
    get,
    path = "/approvals/{id}",
    operation_id = "get_approvals_id",
    tag = "approvals",
    params(("id" = String, Path, description = "The run id, or the gate's 8-hex approval id")),
    responses((status = 200, description = "OK", body = crate::openapi::ApprovalAnswer), crate::openapi::ServiceErrors)
)]
pub async fn get_one(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    let approvals = state.approvals().await?;
    ok(json!({ "approval": approvals.get(&id).await? }))
}

/// `POST /approvals/{id}` with `{decision: approve|deny|cancel|respond,
/// response?, comment?}`: the one-route form of the four below.
#[utoipa::path(
    post,
    path = "/approvals/{id}",
    operation_id = "post_approvals_id",
    tag = "approvals",
    params(("id" = String, Path, description = "The run id, or the gate's 8-hex approval id")),
    request_body(content = crate::openapi::DecideRequest, content_type = "application/json"),
    responses(crate::openapi::DecisionAnswers)
)]
pub async fn decide(
    State(state): State<Arc<AppState>>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult {
    let choice = Choice::parse(
        body.str("decision").unwrap_or_default(),
        body.0.get("response").cloned(),
    )?;
    decide_as(
        &state,
        &principal,
        &id,
        choice,
        body.note("comment")?.as_deref(),
        seen(&body)?,
    )
    .await
}

/// `POST /approvals/{id}/approve {comment?}`.
#[utoipa::path(
    post,
    path = "/approvals/{id}/approve",
    operation_id = "post_approvals_id_approve",
    tag = "approvals",
    params(("id" = String, Path, description = "The run id, or the gate's 8-hex approval id")),
    request_body(content = Option<crate::openapi::ApproveRequest>, content_type = "application/json"),
    responses(crate::openapi::DecisionAnswers)
)]
pub async fn approve(
    State(state): State<Arc<AppState>>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult {
    decide_as(
        &state,
        &principal,
        &id,
        Choice::Approve,
        body.note("comment")?.as_deref(),
        seen(&body)?,
    )
    .await
}

/// `POST /approvals/{id}/deny {reason?}`; the reason is kept as the
/// decision's comment.
#[utoipa::path(
    post,
    path = "/approvals/{id}/deny",
    operation_id = "post_approvals_id_deny",
    tag = "approvals",
    params(("id" = String, Path, description = "The run id, or the gate's 8-hex approval id")),
    request_body(content = Option<crate::openapi::DenyRequest>, content_type = "application/json"),
    responses(crate::openapi::DecisionAnswers)
)]
pub async fn deny(
    State(state): State<Arc<AppState>>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult {
    decide_as(
        &state,
        &principal,
        &id,
        Choice::Deny,
        body.note("reason")?.as_deref(),
        None,
    )
    .await
}

/// `POST /approvals/{id}/respond {response}`, checked against the input
/// gate's schema.
#[utoipa::path(
    post,
    path = "/approvals/{id}/respond",
    operation_id = "post_approvals_id_respond",
    tag = "approvals",
    params(("id" = String, Path, description = "The run id, or the gate's 8-hex approval id")),
    request_body(content = crate::openapi::RespondRequest, content_type = "application/json"),
    responses(crate::openapi::DecisionAnswers)
)]
pub async fn respond(
    State(state): State<Arc<AppState>>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult {
    let choice = Choice::parse("respond", body.0.get("response").cloned())?;
    decide_as(
        &state,
        &principal,
        &id,
        choice,
        body.note("comment")?.as_deref(),
        seen(&body)?,
    )
    .await
}

/// `POST /approvals/{id}/cancel`.
#[utoipa::path(
    post,
    path = "/approvals/{id}/cancel",
    operation_id = "post_approvals_id_cancel",
    tag = "approvals",
    params(("id" = String, Path, description = "The run id, or the gate's 8-hex approval id")),
    request_body(content = Option<crate::openapi::CancelRequest>, content_type = "application/json"),
    responses(crate::openapi::DecisionAnswers)
)]
pub async fn cancel(
    State(state): State<Arc<AppState>>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult {
    decide_as(
        &state,
        &principal,
        &id,
        Choice::Cancel,
        body.note("comment")?.as_deref(),
        None,
    )
    .await
}

/// The `digest` a decision names (what its decider was shown), if any.
fn seen(body: &Body) -> Result<Option<String>, ApiError> {
    match body.0.get("digest") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(d))
            if d.len() == 64 && d.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
        {
            Ok(Some(d.clone()))
        }
        Some(other) => Err(ApiError::bad_request(format!(
            "digest: the approval's digest is 64 lowercase hex digits, not {other}"
        ))),
    }
}

/// Resumes run `id` with `choice` in this process, exactly once, decided by
/// `principal` (a `by` in a body is not evidence of anything: an agent
/// could name anyone); answers with the resume's tool envelope. A run
/// decided already answers 409 with that first decision and its outcome.
async fn decide_as(
    state: &AppState,
    principal: &Principal,
    id: &str,
    choice: Choice,
    comment: Option<&str>,
    seen: Option<String>,
) -> ApiResult {
    let decider = Decider {
        by: Some(principal.label()),
        via: Channel::Http,
        presence: principal.presence(),
        seen,
        comment: comment.map(str::to_string),
    };
    let approvals = state.approvals().await?;
    match approvals.decide(id, choice, decider).await {
        Ok(result) => ok(json!({ "ok": true, "result": result })),
        Err(e @ ApprovalsError::AlreadyDecided(_)) => {
            let first = approvals.get(id).await?;
            Ok((
                StatusCode::CONFLICT,
                Json(json!({ "error": e.to_string(), "approval": first })),
            )
                .into_response())
        }
        Err(e) => Err(e.into()),
    }
}
