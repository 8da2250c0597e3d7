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

/// An error answer: its status, the message, and a stable machine-readable
/// code where there is one. This is the one place errors from the browser,
/// the approvals and the engine become HTTP statuses.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    code: Option<&'static str>,
}

impl ApiError {
    /// An answer with `status`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            code: None,
        }
    }

    /// 400: the request is wrong.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// 403: refused by policy.
    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, message)
    }

    /// 404: no such thing.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// 409: it conflicts with the current state.
    pub fn conflict(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::CONFLICT, message)
    }

    /// 501: this server does not do that.
    pub fn not_implemented(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_IMPLEMENTED, message)
    }

    /// 500: it failed on our side.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// The same answer with a stable `code`.
    pub fn with_code(self, code: &'static str) -> Self {
        ApiError {
            code: Some(code),
            ..self
        }
    }

    /// The status answered.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What went wrong, as the answer says it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The stable code, where there is one.
    pub fn code(&self) -> Option<&'static str> {
        self.code
    }
}

impl From<BrowserError> for ApiError {
    fn from(e: BrowserError) -> Self {
        let status = match &e {
            BrowserError::Config(_) | BrowserError::Invalid { .. } => StatusCode::BAD_REQUEST,
            BrowserError::Forbidden { .. } => StatusCode::FORBIDDEN,
            BrowserError::Missing(_) => StatusCode::NOT_FOUND,
            BrowserError::PortInUse(_)
            | BrowserError::Conflict(_)
            | BrowserError::StaleRef(_)
            | BrowserError::DialogOpen(_)
            | BrowserError::HandedOff(_) => StatusCode::CONFLICT,
            BrowserError::Unsupported(_) => StatusCode::NOT_IMPLEMENTED,
            BrowserError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            BrowserError::Unreachable(_) => StatusCode::BAD_GATEWAY,
            BrowserError::NotFound(_) | BrowserError::Io(_) | BrowserError::Cdp(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        ApiError {
            status,
            code: e.code(),
            message: e.to_string(),
        }
    }
}

impl From<clawdis_engine::Error> for ApiError {
    fn from(e: clawdis_engine::Error) -> Self {
        match e.kind {
            clawdis_engine::ErrorKind::ParseError => ApiError::bad_request(e.message),
            clawdis_engine::ErrorKind::RuntimeError => ApiError::internal(e.message),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::warn!(error = %self.message, "request failed");
        }
        let mut body = json!({ "error": self.message });
        if let Some(code) = self.code {
            body["code"] = json!(code);
        }
        (self.status, Json(body)).into_response()
    }
}

/// A route's result.
pub type ApiResult = Result<Response, ApiError>;

/// `Json(value)` as a 200.
pub fn ok(value: Value) -> ApiResult {
    Ok(Json(value).into_response())
}

/// `{"ok": true, ...fields}` as a 200: the success answer of the browser
/// routes, built from what the browser crate returned.
pub fn ok_with(fields: impl serde::Serialize) -> ApiResult {
    let mut body = Map::new();
    body.insert("ok".into(), Value::Bool(true));
    match serde_json::to_value(fields) {
        Ok(Value::Object(fields)) => body.extend(fields),
        Ok(other) => return Err(ApiError::internal(format!("not an object: {other}"))),
        Err(e) => return Err(ApiError::internal(e.to_string())),
    }
    ok(Value::Object(body))
}

/// A JSON object body; an empty body, or JSON `null`, is `{}` (OpenClaw's
/// client sends `POST /start` with none).
#[derive(Debug, Default)]
pub struct Body(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Body::default());
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(Body(map)),
            Ok(Value::Null) => Ok(Body::default()),
            Ok(_) => Err(ApiError::bad_request("request body must be a JSON object")),
            Err(e) => Err(ApiError::bad_request(format!(
                "request body is not valid JSON: {e}"
            ))),
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

    /// An optional string field that, when given, must be a non-blank
    /// string (anything else is a 400; see [`NON_BLANK`]).
    pub fn text(&self, key: &str) -> Result<Option<String>, ApiError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !blank(s) => Ok(Some(s.clone())),
            Some(_) => Err(ApiError::bad_request(format!(
                "{key} must be a non-empty string"
            ))),
        }
    }

    /// An optional free-text field (a comment, a reason): a string or
    /// null; a blank one is none, anything else a 400.
    pub fn note(&self, key: &str) -> Result<Option<String>, ApiError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok((!blank(s)).then(|| s.clone())),
            Some(_) => Err(ApiError::bad_request(format!("{key} must be a string"))),
        }
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

/// The document's pattern of a string that is not blank: one character
/// besides ASCII white space, which is all [`blank`] strips (a pattern's
/// `\s` differs between regular-expression engines).
pub const NON_BLANK: &str = "[^ \\t\\n\\r\\f\\v]";

/// Whether `text` is empty or only ASCII white space.
pub fn blank(text: &str) -> bool {
    text.bytes()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
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
        Some(v) => v
            .parse::<usize>()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("{key} must be a non-negative integer"))),
    }
}

/// A query parameter that, when given, is a whole number from 1 to `max`
/// in plain digits; anything else is a 400.
pub fn count(q: &Query, key: &str, max: u32) -> Result<Option<u32>, ApiError> {
    let Some(text) = q.get(key) else {
        return Ok(None);
    };
    text.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| text.parse::<u32>().ok())
        .flatten()
        .filter(|n| (1..=max).contains(n))
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_request(format!("{key} must be a whole number from 1 to {max}"))
        })
}

/// Checks `?profile=` (query wins over the body's `profile`).
pub fn profile(q: &Query, body: Option<&Body>) -> Result<(), ApiError> {
    let name = q
        .get("profile")
        .map(String::as_str)
        .or_else(|| body.and_then(|b| b.str("profile")));
    Manager::check_profile(name).map_err(ApiError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_errors_map_to_their_statuses_and_codes() {
        let cases = [
            (BrowserError::Config("c".into()), 400),
            (BrowserError::invalid_code("ACT_INVALID_REQUEST", "i"), 400),
            (
                BrowserError::Forbidden {
                    message: "f".into(),
                    code: Some("ACT_EVALUATE_DISABLED"),
                },
                403,
            ),
            (BrowserError::Missing("m".into()), 404),
            (BrowserError::PortInUse("p".into()), 409),
            (BrowserError::Conflict("c".into()), 409),
            (BrowserError::StaleRef("s".into()), 409),
            (BrowserError::DialogOpen("d".into()), 409),
            (BrowserError::Unsupported("u".into()), 501),
            (BrowserError::Timeout("t".into()), 504),
            (BrowserError::Unreachable("u".into()), 502),
            (BrowserError::NotFound("n".into()), 500),
            (BrowserError::Io("io".into()), 500),
            (BrowserError::Cdp("cdp".into()), 500),
        ];
        for (error, status) in cases {
            let code = error.code();
            let api = ApiError::from(error);
            assert_eq!(api.status().as_u16(), status, "{api:?}");
            assert_eq!(api.code, code, "{api:?}");
        }
    }

    #[test]
    fn engine_errors_are_the_callers_or_ours_by_kind() {
        let parse = ApiError::from(clawdis_engine::Error::parse("bad pipeline"));
        assert_eq!(parse.status(), StatusCode::BAD_REQUEST);
        assert_eq!(parse.message, "bad pipeline");
        let runtime = ApiError::from(clawdis_engine::Error::runtime("it broke"));
        assert_eq!(runtime.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
