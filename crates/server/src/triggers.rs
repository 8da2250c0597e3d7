//! The workflows' triggers: `GET /triggers`, `POST /triggers/{id}/pause`
//! and `/resume`. Firing them is [`clawdis_approvals::Triggers`]'.

use std::sync::Arc;

use axum::extract::{Path, State};
use serde_json::json;

use crate::AppState;
use crate::api::{ApiResult, ok};

/// `GET /triggers` → `{triggers: [{id, workflow, path, kind, spec, args,
/// catchup?, next, paused, lastFiredAt, error}]}`.
#[utoipa::path(
    get,
    path = "/triggers",
    operation_id = "get_triggers",
    tag = "triggers",
    responses((status = 200, description = "OK", body = crate::openapi::TriggerList), crate::openapi::ServiceErrors)
)]
pub async fn list(State(state): State<Arc<AppState>>) -> ApiResult {
    let triggers = state.triggers().await?.list().await?;
    ok(json!({ "triggers": triggers }))
}

/// `POST /triggers/{id}/pause` → `{trigger}`: it fires nothing until
/// resumed.
#[utoipa::path(
    post,
    path = "/triggers/{id}/pause",
    operation_id = "post_triggers_id_pause",
    tag = "triggers",
    params(("id" = String, Path, description = "The trigger id (GET /triggers)")),
    responses((status = 200, description = "OK", body = crate::openapi::TriggerAnswer), crate::openapi::ServiceErrors)
)]
pub async fn pause(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    let trigger = state.triggers().await?.pause(&id).await?;
    ok(json!({ "trigger": trigger }))
}

/// `POST /triggers/{id}/resume` → `{trigger}`: what it would have done
/// while paused is skipped.
#[utoipa::path(
    post,
    path = "/triggers/{id}/resume",
    operation_id = "post_triggers_id_resume",
    tag = "triggers",
    params(("id" = String, Path, description = "The trigger id (GET /triggers)")),
    responses((status = 200, description = "OK", body = crate::openapi::TriggerAnswer), crate::openapi::ServiceErrors)
)]
pub async fn resume(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    let trigger = state.triggers().await?.resume(&id).await?;
    ok(json!({ "trigger": trigger }))
}
