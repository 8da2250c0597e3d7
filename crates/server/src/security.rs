//! Request guard: loopback `Host` (DNS rebinding), bearer token, no
//! cross-site writes, and JSON bodies within the size limit.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use clawdis_browser::settings::is_loopback_host;

use crate::{AppState, MAX_BODY_BYTES, json_error};

/// The host of URL `value`.
pub(crate) fn host_of_url(value: &str) -> Option<String> {
    url::Url::parse(value)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
}

/// `Host: name[:port]` → name.
pub(crate) fn host_header(headers: &HeaderMap) -> Option<String> {
    let raw = headers.get(header::HOST)?.to_str().ok()?;
    if raw.starts_with('[') {
        raw.split(']').next().map(|h| format!("{h}]"))
    } else {
        raw.split(':').next().map(str::to_string)
    }
}

fn cross_site(headers: &HeaderMap) -> bool {
    let get = |h: &str| headers.get(h).and_then(|v| v.to_str().ok());
    if get("sec-fetch-site").is_some_and(|v| v.eq_ignore_ascii_case("cross-site")) {
        return true;
    }
    [get("origin"), get("referer")]
        .into_iter()
        .flatten()
        // An opaque origin (`null`: sandboxed frames, data: and file: pages) is not loopback either.
        .any(|v| host_of_url(v).is_none_or(|h| !is_loopback_host(&h)))
}

/// The secret a request presents, the ways OpenClaw accepts it:
/// `Authorization: Bearer <token>`, `x-openclaw-password: <token>`, or
/// HTTP Basic with the token as the password.
fn presented(headers: &HeaderMap) -> Option<String> {
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &header::HeaderValue| v.to_str().ok())
    };
    if let Some(auth) = text(header::AUTHORIZATION.as_str()) {
        if let Some(bearer) = auth.strip_prefix("Bearer ") {
            return Some(bearer.trim().to_string());
        }
        if let Some(basic) = auth.strip_prefix("Basic ") {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(basic.trim())
                .ok()?;
            let pair = String::from_utf8(decoded).ok()?;
            return pair
                .split_once(':')
                .map(|(_, password)| password.to_string());
        }
    }
    text("x-openclaw-password").map(|p| p.trim().to_string())
}

/// Whether `a` and `b` are equal, in time that depends on their lengths only.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Applies the guard to every request.
pub async fn guard(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    if host_header(request.headers()).is_none_or(|h| !is_loopback_host(&h)) {
        return json_error(StatusCode::FORBIDDEN, "Host must be a loopback address");
    }
    // The caller is whoever the credential names (the owner or a named
    // token); routes read it from the request, never from its body.
    let principal = match presented(request.headers()) {
        Some(secret) => match state.principal_for(&secret).await {
            Ok(found) => found,
            Err(e) => return e.into_response(),
        },
        None => None,
    };
    let Some(principal) = principal else {
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    };
    request.extensions_mut().insert(principal);
    let headers = request.headers();
    let writes = matches!(
        *request.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    if writes && cross_site(headers) {
        return json_error(StatusCode::FORBIDDEN, "cross-site requests are refused");
    }
    if !writes {
        return next.run(request).await;
    }
    // Bodies: at most 1 MiB (refused from Content-Length before reading), and JSON when present.
    let too_large = format!("request body exceeds {MAX_BODY_BYTES} bytes");
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return json_error(StatusCode::PAYLOAD_TOO_LARGE, too_large);
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_BODY_BYTES).await else {
        return json_error(StatusCode::PAYLOAD_TOO_LARGE, too_large);
    };
    if !bytes.iter().all(u8::is_ascii_whitespace)
        && serde_json::from_slice::<serde_json::Value>(&bytes).is_err()
    {
        return json_error(StatusCode::BAD_REQUEST, "request body is not valid JSON");
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
