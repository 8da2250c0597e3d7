//! Server-sent events: `GET /events` (runs and approvals) and
//! `GET /approvals/events` (approvals only), each a broadcast bus turned
//! into an SSE stream that ends when the server shuts down.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use clawdis_approvals::{Event, RunEvent};
use futures::{Stream, StreamExt};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::AppState;
use crate::api::ApiError;

/// The events of `rx` as SSE events named by `name`; a slow reader skips
/// what it missed rather than ending the stream.
fn sse<T: Clone + Send + serde::Serialize + 'static>(
    rx: broadcast::Receiver<T>,
    name: fn(&T) -> &'static str,
) -> impl Stream<Item = Result<SseEvent, Infallible>> + Send {
    futures::stream::unfold(rx, move |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(event) => {
                    let sse = SseEvent::default()
                        .event(name(&event))
                        .json_data(&event)
                        .unwrap_or_default();
                    return Some((Ok(sse), rx));
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    })
}

fn approval_name(event: &Event) -> &'static str {
    match event {
        Event::Paused { .. } => "paused",
        Event::Changed { .. } => "changed",
    }
}

fn run_name(event: &RunEvent) -> &'static str {
    match event {
        RunEvent::Started { .. } => "run.started",
        RunEvent::Changed { .. } => "run.changed",
    }
}

fn approval_event_name(event: &Event) -> &'static str {
    match event {
        Event::Paused { .. } => "approval.paused",
        Event::Changed { .. } => "approval.changed",
    }
}

/// `GET /approvals/events`: every later pause and change as an SSE event
/// (`paused` or `changed`, data: `{type, approval}`).
#[utoipa::path(
    get,
    path = "/approvals/events",
    operation_id = "get_approvals_events",
    tag = "events",
    responses((status = 200, description = "Server-sent events approval.paused and approval.changed, data {type, approval}", content_type = "text/event-stream", body = String), crate::openapi::ServiceErrors)
)]
pub async fn approvals(State(state): State<Arc<AppState>>) -> Result<impl IntoResponse, ApiError> {
    let stream = sse(state.approvals().await?.subscribe(), approval_name);
    let closed = async move { state.closed().await };
    Ok(Sse::new(stream.take_until(closed)).keep_alive(KeepAlive::default()))
}

/// `GET /events`: runs and approvals as they change: `run.started`,
/// `run.changed` (data: `{type, run}`), `approval.paused` and
/// `approval.changed` (data: `{type, approval}`).
#[utoipa::path(
    get,
    path = "/events",
    operation_id = "get_events",
    tag = "events",
    responses((status = 200, description = "Server-sent events run.started, run.changed, approval.paused and approval.changed", content_type = "text/event-stream", body = String), crate::openapi::ServiceErrors)
)]
pub async fn all(State(state): State<Arc<AppState>>) -> Result<impl IntoResponse, ApiError> {
    let runs = sse(state.runs().await?.subscribe(), run_name);
    let approvals = sse(state.approvals().await?.subscribe(), approval_event_name);
    let stream = futures::stream::select(runs, approvals);
    let closed = async move { state.closed().await };
    Ok(Sse::new(stream.take_until(closed)).keep_alive(KeepAlive::default()))
}
