//! The ledger over HTTP: `GET /audit?limit=&cursor=` pages through it,
//! newest first, with the head every copy is checked against.

use std::sync::Arc;

use axum::extract::{Query as Q, State};
use clawdis_approvals::ApprovalsError;
use serde_json::json;

use crate::AppState;
use crate::api::{ApiError, ApiResult, Query, count, ok};

/// The most entries one page answers.
const MAX_PAGE: u32 = 500;

/// `GET /audit?limit=&cursor=` → `{entries, next, head}`.
#[utoipa::path(
    get,
    path = "/audit",
    operation_id = "get_audit",
    tag = "audit",
    params(crate::openapi::AuditQuery),
    responses((status = 200, description = "A page of the ledger, newest first", body = crate::openapi::AuditPage), crate::openapi::ServiceErrors)
)]
pub async fn list(State(state): State<Arc<AppState>>, Q(q): Q<Query>) -> ApiResult {
    let limit = count(&q, "limit", MAX_PAGE)?.unwrap_or(100);
    let cursor = match q.get("cursor") {
        None => None,
        Some(text) => Some(
            text.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| text.parse::<i64>().ok())
                .flatten()
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "cursor: {text:?} is not a cursor this server gave (pass back `next`)"
                    ))
                })?,
        ),
    };
    let store = state.approvals().await?.store().clone();
    let entries = store
        .list_audit(limit, cursor)
        .await
        .map_err(ApprovalsError::from)?;
    let next = (entries.len() == limit as usize)
        .then(|| entries.last().map(|e| e.seq.to_string()))
        .flatten()
        .filter(|seq| seq != "1");
    let head = store
        .audit_head()
        .await
        .map_err(ApprovalsError::from)?
        .map(|(seq, hash)| json!({ "seq": seq, "hash": hash }));
    ok(json!({ "entries": entries, "next": next, "head": head }))
}
