//! The webhook outbox: `GET /webhooks/deliveries`, one delivery with its
//! attempts, and `POST /webhooks/deliveries/{id}/redeliver`. Sending is
//! [`clawdis_approvals::Webhooks`]'.

use std::sync::Arc;

use axum::extract::{Path, Query as Q, State};
use serde_json::json;

use crate::AppState;
use crate::api::{ApiResult, Query, ok};

/// How many deliveries a list answers unless `limit` says otherwise.
const DEFAULT_LIMIT: u32 = 100;
/// The most a list answers.
const MAX_LIMIT: u32 = 1_000;

/// `GET /webhooks/deliveries?limit` → `{deliveries: [{id, type, url,
/// attempts, status, lastError, nextAttemptAt, createdAt, deliveredAt}]}`,
/// newest first.
#[utoipa::path(
    get,
    path = "/webhooks/deliveries",
    operation_id = "get_webhooks_deliveries",
    tag = "webhooks",
    params(crate::openapi::DeliveriesQuery),
    responses((status = 200, description = "OK", body = crate::openapi::DeliveryList), crate::openapi::ServiceErrors)
)]
pub async fn list(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    let limit = crate::api::count(&q, "limit", MAX_LIMIT)?.unwrap_or(DEFAULT_LIMIT);
    let deliveries = state.webhooks().await?.deliveries(limit).await?;
    ok(json!({ "deliveries": deliveries }))
}

/// `GET /webhooks/deliveries/{id}` → `{delivery: {…, history: [{attempt,
/// at, statusCode, error, durationMs}]}}`.
#[utoipa::path(
    get,
    path = "/webhooks/deliveries/{id}",
    operation_id = "get_webhooks_deliveries_id",
    tag = "webhooks",
    params(("id" = String, Path, description = "The delivery id (its webhook-id)")),
    responses((status = 200, description = "OK", body = crate::openapi::DeliveryAnswer), crate::openapi::ServiceErrors)
)]
pub async fn get_one(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    let delivery = state.webhooks().await?.delivery(&id).await?;
    ok(json!({ "delivery": delivery }))
}

/// `POST /webhooks/deliveries/{id}/redeliver` → `{delivery}`: sent again
/// now with the same `webhook-id` and body, with a fresh set of attempts.
#[utoipa::path(
    post,
    path = "/webhooks/deliveries/{id}/redeliver",
    operation_id = "post_webhooks_deliveries_id_redeliver",
    tag = "webhooks",
    params(("id" = String, Path, description = "The delivery id (its webhook-id)")),
    responses((status = 200, description = "OK", body = crate::openapi::DeliveryAnswer), crate::openapi::ServiceErrors)
)]
pub async fn redeliver(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    let delivery = state.webhooks().await?.redeliver(&id).await?;
    ok(json!({ "delivery": delivery }))
}
