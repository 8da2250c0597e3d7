//! Approvals over HTTP, for `clawdis serve` where no app or notification
//! reaches a person: list the paused runs of the home, follow pauses and
//! decisions as server-sent events, and decide (recorded as `http`).

use std::convert::Infallible;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use clawdis_approvals::{Approvals, ApprovalsError, Channel, Choice, Decider};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::api::{ApiError, ApiResult, Body, ok};
use crate::{AppState, Principal};

impl From<ApprovalsError> for ApiError {
    fn from(e: ApprovalsError) -> Self {
        match e {
            ApprovalsError::NotFound(_) => ApiError::not_found(e.to_string()),
            ApprovalsError::AlreadyDecided(_) => ApiError::conflict(e.to_string()),
            ApprovalsError::Invalid(_) => ApiError::bad_request(e.to_string()),
            ApprovalsError::Forbidden(_) => ApiError::forbidden(e.to_string()),
            ApprovalsError::Store(_) => ApiError::internal(e.to_string()),
        }
    }
}

/// `GET /approvals`: pending runs (oldest first), then recent decisions.
pub async fn list(State(state): State<Arc<AppState>>) -> ApiResult {
    let approvals = state.approvals().await?;
    ok(json!({ "approvals": approvals.list().await? }))
}

/// `POST /approvals/{id}` with `{decision: approve|deny|cancel|respond,
/// response?}`: resumes the run in this process, exactly once, decided by
/// the caller's principal; answers with the resume's tool envelope.
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
    // Who decides is who presented the credential; a `by` in the body is
    // not evidence of anything (an agent could name anyone).
    let decider = Decider {
        by: Some(principal.label()),
        via: Channel::Http,
        human: principal.is_person(),
    };
    let approvals = state.approvals().await?;
    let result = approvals.decide(&id, choice, decider).await?;
    ok(json!({ "ok": true, "result": result }))
}

/// `GET /approvals/events`: every later pause and change as an SSE event
/// (`paused` or `changed`, data: the approval as JSON).
pub async fn events(State(state): State<Arc<AppState>>) -> Result<impl IntoResponse, ApiError> {
    let approvals: Arc<Approvals> = state.approvals().await?;
    let rx = approvals.subscribe();
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(event) => {
                    let name = match &event {
                        clawdis_approvals::Event::Paused { .. } => "paused",
                        clawdis_approvals::Event::Changed { .. } => "changed",
                    };
                    let sse = SseEvent::default()
                        .event(name)
                        .json_data(&event)
                        .unwrap_or_default();
                    return Some((Ok::<_, Infallible>(sse), rx));
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    });
    let closed = async move { state.closed().await };
    Ok(Sse::new(futures::StreamExt::take_until(stream, closed)).keep_alive(KeepAlive::default()))
}
