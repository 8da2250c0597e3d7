//! Asking the home's backend (the app or `clawdis serve`) through its
//! control API, with the home's own token: for what only the process
//! executing a run can do, such as stopping it.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use clawdis_browser::settings::{Settings, parse_control_url};
use clawdis_server::control_token;

/// How long a call may take: the backend answers at once, except that
/// stopping a run waits for its commands to be killed.
const TIMEOUT: Duration = Duration::from_secs(30);

/// What the backend answered: its status and JSON body.
pub(crate) struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body (`{error}` on a 4xx).
    pub body: serde_json::Value,
}

/// `POST path` to the backend of `home`; `None` when nothing listens on
/// its control port.
pub(crate) fn post(home: &Path, path: &str) -> Result<Option<Answer>> {
    let settings = Settings::load(home)?;
    let (_, port) = parse_control_url(&settings.control_url)?;
    let token = control_token(home)
        .with_context(|| format!("reading the control token in {}", home.display()))?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(TIMEOUT))
        .build()
        .into();
    let url = format!("http://127.0.0.1:{port}{path}");
    let response = match agent
        .post(&url)
        .header("authorization", &format!("Bearer {token}"))
        .send_empty()
    {
        Ok(response) => response,
        Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Ok(None);
        }
        Err(e) => return Err(e).with_context(|| format!("asking the backend: POST {url}")),
    };
    let status = response.status().as_u16();
    let text = response
        .into_body()
        .read_to_string()
        .with_context(|| format!("reading the backend's answer to POST {url}"))?;
    let body = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
    Ok(Some(Answer { status, body }))
}
