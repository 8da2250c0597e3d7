//! The named workflows: `GET /workflows`.

use std::sync::Arc;

use axum::extract::State;
use clawdis_engine::workflow::library;
use serde_json::json;

use crate::AppState;
use crate::api::{ApiResult, ok};

/// `GET /workflows` → `{workflows: [{name, path, description, exposeAsTool,
/// argsSchema}], broken: [{path, error}]}`: the workflow files of
/// `<home>/workflows` and the settings' `workflowDirs`.
#[utoipa::path(
    get,
    path = "/workflows",
    operation_id = "get_workflows",
    tag = "workflows",
    responses((status = 200, description = "OK", body = crate::openapi::WorkflowList), crate::openapi::ServiceErrors)
)]
pub async fn list(State(state): State<Arc<AppState>>) -> ApiResult {
    let dirs = state.manager.settings().workflow_dirs(state.manager.home());
    let found = tokio::task::spawn_blocking(move || library::discover(&dirs))
        .await
        .map_err(|e| crate::api::ApiError::internal(e.to_string()))?;
    ok(json!(found))
}
