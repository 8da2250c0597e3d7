//! A small blocking HTTP client for the integration commands (run off the
//! async runtime).

use std::time::Duration;

use crate::error::{Error, Result};

/// Largest HTTP response body read.
const HTTP_RESPONSE_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// An HTTP response: status, reason phrase and body text.
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Canonical reason phrase (`Internal Server Error`).
    pub reason: String,
    /// Body (lossy UTF-8).
    pub body: String,
}

/// POSTs JSON with an optional bearer token.
pub async fn post_json(url: String, token: Option<String>, body: String) -> Result<HttpResponse> {
    tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(300)))
            .build()
            .into();
        let mut req = agent.post(&url).header("content-type", "application/json");
        if let Some(t) = &token {
            req = req.header("authorization", &format!("Bearer {t}"));
        }
        let mut resp = req
            .send(body.as_bytes())
            .map_err(|e| Error::runtime(format!("fetch failed: {e}")))?;
        let status = resp.status();
        let body = resp
            .body_mut()
            .with_config()
            .limit(HTTP_RESPONSE_MAX_BYTES)
            .lossy_utf8(true)
            .read_to_string()
            .map_err(|e| Error::runtime(format!("fetch failed: {e}")))?;
        Ok(HttpResponse {
            status: status.as_u16(),
            reason: status.canonical_reason().unwrap_or_default().to_string(),
            body,
        })
    })
    .await
    .map_err(|e| Error::runtime(e.to_string()))?
}
