//! The runs API: start a workflow or pipeline (`POST /runs`), page through
//! the history (`GET /runs`), read, cancel and export one run. The work is
//! [`clawdis_approvals::Runs`]'; this maps HTTP onto it.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Extension;
use axum::Json;
use axum::extract::{Path, Query as Q, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use clawdis_approvals::{Channel, Decider, HistoryStatus, MAX_PAGE, RunQuery, RunRequest, What};
use serde_json::json;

use crate::api::{ApiError, ApiResult, Body, Query, ok};
use crate::{AppState, Principal};

/// `POST /runs {pipeline} | {workflow, args?, cwd?}, wait?`: answers the
/// run's tool envelope plus `runId` (200) once it ends or pauses; with
/// `wait: false`, `{status: "running", runId}` at once (202). A pipeline
/// that does not parse, or args the workflow does not take, are a 400
/// with code `parse_error` naming the field.
#[utoipa::path(
    post,
    path = "/runs",
    operation_id = "post_runs",
    tag = "runs",
    request_body(content = crate::openapi::RunRequest, content_type = "application/json"),
    responses((status = 200, description = "The run ended or paused: its envelope and runId", body = crate::openapi::Envelope), (status = 202, description = "wait: false: the run goes on", body = crate::openapi::Envelope), crate::openapi::ServiceErrors)
)]
pub async fn start(
    State(state): State<Arc<AppState>>,
    Extension(principal): Extension<Principal>,
    body: Body,
) -> ApiResult {
    let request = run_request(&body, &principal)?;
    let wait = match body.0.get("wait") {
        None | Some(serde_json::Value::Null) => true,
        Some(serde_json::Value::Bool(wait)) => *wait,
        Some(_) => return Err(ApiError::bad_request("wait must be true or false")),
    };
    let runs = state.runs().await?;
    // What does not parse, or does not fit the workflow's args, is a 400
    // naming the field (`parse_error`, as Lobster calls it): nothing runs,
    // and nothing is recorded.
    let started = runs.start(request).await?;
    let run_id = started.run_id.clone();
    if !wait {
        let answer = json!({
            "protocolVersion": 1,
            "ok": true,
            "status": "running",
            "output": [],
            "requiresApproval": null,
            "requiresInput": null,
            "runId": run_id,
        });
        return Ok((StatusCode::ACCEPTED, Json(answer)).into_response());
    }
    let mut envelope = started.envelope().await;
    if let Some(fields) = envelope.as_object_mut() {
        fields.insert("runId".into(), json!(run_id));
    }
    ok(envelope)
}

/// The run a `POST /runs` body asks for, started by `principal`.
pub(crate) fn run_request(body: &Body, principal: &Principal) -> Result<RunRequest, ApiError> {
    let text = |key: &str| body.text(key);
    let what = match (text("pipeline")?, text("workflow")?) {
        (Some(pipeline), None) => What::Pipeline(pipeline),
        (None, Some(workflow)) => What::Workflow(workflow),
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "give either pipeline or workflow, not both",
            ));
        }
        (None, None) => {
            return Err(ApiError::bad_request(
                "pipeline or workflow is required: {\"pipeline\": \"...\"} or {\"workflow\": \"name\", \"args\": {...}}",
            ));
        }
    };
    let args = match body.0.get("args") {
        None | Some(serde_json::Value::Null) => json!({}),
        Some(args @ serde_json::Value::Object(_)) => args.clone(),
        Some(_) => return Err(ApiError::bad_request("args must be an object")),
    };
    Ok(RunRequest {
        what,
        args,
        cwd: text("cwd")?.map(PathBuf::from),
        started_by: principal.label(),
    })
}

/// `GET /runs?status=&workflow=&limit=&cursor=` → `{runs, next}`.
#[utoipa::path(
    get,
    path = "/runs",
    operation_id = "get_runs",
    tag = "runs",
    params(crate::openapi::RunsQuery),
    responses((status = 200, description = "OK", body = crate::openapi::RunPage), crate::openapi::ServiceErrors)
)]
pub async fn list(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    let status = match q.get("status").map(String::as_str) {
        None => None,
        Some(word) => Some(HistoryStatus::parse(word).ok_or_else(|| {
            ApiError::bad_request(format!(
                "status must be one of running, ok, needs_approval, needs_input, cancelled, failed (got {word:?})"
            ))
        })?),
    };
    let limit = crate::api::count(&q, "limit", MAX_PAGE)?.unwrap_or(0);
    let cursor = q.get("cursor").cloned();
    if let Some(cursor) = &cursor
        && !is_cursor(cursor)
    {
        return Err(ApiError::bad_request(format!(
            "cursor: {cursor:?} is not a cursor this server gave (pass back `next`)"
        )));
    }
    let page = state
        .runs()
        .await?
        .list(&RunQuery {
            status,
            workflow: q.get("workflow").filter(|w| !w.is_empty()).cloned(),
            limit,
            cursor,
        })
        .await?;
    ok(json!(page))
}

/// Whether `text` has the shape of the `next` a page answers: a run's
/// place in the history (the document's `CURSOR` pattern).
fn is_cursor(text: &str) -> bool {
    (1..=18).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())
}

/// `GET /runs/{runId}`: the run with its steps and decisions.
#[utoipa::path(
    get,
    path = "/runs/{id}",
    operation_id = "get_runs_id",
    tag = "runs",
    params(("id" = String, Path, description = "The run id")),
    responses((status = 200, description = "OK", body = crate::openapi::Run), crate::openapi::ServiceErrors)
)]
pub async fn get_one(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    ok(json!(state.runs().await?.get(&id).await?))
}

/// `POST /runs/{runId}/cancel`: stops a run executing here, or cancels
/// the gate it waits at (recorded as decided by the caller).
#[utoipa::path(
    post,
    path = "/runs/{id}/cancel",
    operation_id = "post_runs_id_cancel",
    tag = "runs",
    params(("id" = String, Path, description = "The run id")),
    responses((status = 200, description = "OK", body = crate::openapi::Run), crate::openapi::ServiceErrors)
)]
pub async fn cancel(
    State(state): State<Arc<AppState>>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    let decider = Decider {
        by: Some(principal.label()),
        via: Channel::Http,
        presence: principal.presence(),
        seen: None,
        comment: None,
    };
    ok(json!(state.runs().await?.cancel(&id, decider).await?))
}

/// `GET /runs/{runId}/export`: the run as one self-contained document.
#[utoipa::path(
    get,
    path = "/runs/{id}/export",
    operation_id = "get_runs_id_export",
    tag = "runs",
    params(("id" = String, Path, description = "The run id")),
    responses((status = 200, description = "OK", body = crate::openapi::RunExport), crate::openapi::ServiceErrors)
)]
pub async fn export(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    ok(state.runs().await?.export(&id).await?)
}

/// Cancels a run when dropped while armed: its caller went away (a client
/// disconnected, a call was cancelled) before the run had its answer, so
/// nothing goes on waiting or executing for nobody.
pub(crate) struct CancelOnDrop {
    runs: Option<Arc<clawdis_approvals::Runs>>,
    run_id: String,
    via: Channel,
    why: &'static str,
}

impl CancelOnDrop {
    /// Armed for run `run_id`; `via` and `why` are recorded with the
    /// cancellation.
    pub(crate) fn new(
        runs: Arc<clawdis_approvals::Runs>,
        run_id: &str,
        via: Channel,
        why: &'static str,
    ) -> CancelOnDrop {
        CancelOnDrop {
            runs: Some(runs),
            run_id: run_id.to_string(),
            via,
            why,
        }
    }

    /// The caller has its answer: nothing to cancel.
    pub(crate) fn disarm(&mut self) {
        self.runs = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(runs) = self.runs.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let run_id = std::mem::take(&mut self.run_id);
        let decider = Decider {
            by: Some("abandoned".into()),
            via: self.via,
            presence: None,
            seen: None,
            comment: Some(self.why.to_string()),
        };
        runtime.spawn(async move {
            match runs.cancel(&run_id, decider).await {
                Ok(_) => tracing::info!(%run_id, "a run whose caller went away was cancelled"),
                Err(e) => {
                    tracing::debug!(%run_id, error = %e, "cancelling a run whose caller went away");
                }
            }
        });
    }
}
