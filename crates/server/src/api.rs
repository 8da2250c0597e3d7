//! Request and response plumbing shared by the routes: JSON bodies, the
//! `?profile=` check, and errors as `{error, code?}` with OpenClaw's status
//! codes.

use std::collections::HashMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use clawdis_browser::BrowserError;
use clawdis_browser::manager::Manager;
use serde_json::{Map, Value, json};

/// An error response.
#[derive(Debug)]
pub struct ApiError(pub BrowserError);

impl From<BrowserError> for ApiError {
    fn from(e: BrowserError) -> Self {
        ApiError(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() {
            tracing::warn!(error = %self.0, "request failed");
        }
        let mut body = json!({ "error": self.0.to_string() });
        if let Some(code) = self.0.code() {
            body["code"] = json!(code);
        }
        (status, Json(body)).into_response()
    }
}

/// A route's result.
pub type ApiResult = Result<Response, ApiError>;

/// `Json(value)` as a 200.
pub fn ok(value: Value) -> ApiResult {
    Ok(Json(value).into_response())
}

/// A JSON object body; an empty body is `{}` (OpenClaw's client sends
/// `POST /start` with none).
#[derive(Debug, Default)]
pub struct Body(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError(BrowserError::invalid(e.to_string())))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Body::default());
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(Body(map)),
            Ok(_) => Err(ApiError(BrowserError::invalid(
                "request body must be a JSON object",
            ))),
            Err(e) => Err(ApiError(BrowserError::invalid(format!(
                "request body is not valid JSON: {e}"
            )))),
        }
    }
}

impl Body {
    /// A string field (empty strings count as missing).
    pub fn str(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    }

    /// A boolean field; `"true"` strings are accepted.
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.0.get(key)? {
            Value::Bool(b) => Some(*b),
            Value::String(s) => Some(s == "true" || s == "1"),
            _ => None,
        }
    }

    /// A non-negative integer field.
    pub fn uint(&self, key: &str) -> Option<u64> {
        let v = self.0.get(key)?;
        v.as_u64()
            .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .or_else(|| v.as_str()?.parse().ok())
    }
}

/// Query parameters.
pub type Query = HashMap<String, String>;

/// A query flag: `1`, `true`, `yes` or present with no value.
pub fn flag(q: &Query, key: &str) -> bool {
    q.get(key)
        .is_some_and(|v| matches!(v.as_str(), "" | "1" | "true" | "yes"))
}

/// A numeric query parameter; junk is a 400.
pub fn number(q: &Query, key: &str) -> Result<Option<usize>, ApiError> {
    match q.get(key).map(|v| v.trim()).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v.parse::<usize>().map(Some).map_err(|_| {
            ApiError(BrowserError::invalid(format!(
                "{key} must be a non-negative integer"
            )))
        }),
    }
}

/// Checks `?profile=` (query wins over the body's `profile`).
pub fn profile(q: &Query, body: Option<&Body>) -> Result<(), ApiError> {
    let name = q
        .get("profile")
        .map(String::as_str)
        .or_else(|| body.and_then(|b| b.str("profile")));
    Manager::check_profile(name).map_err(ApiError)
}
