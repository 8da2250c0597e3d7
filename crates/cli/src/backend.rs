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

/// `method path` with JSON `body` to the backend of `home` through its
/// local socket, where the backend sees which process asks; `None` when
/// no backend listens there.
pub(crate) async fn over_socket(
    home: &Path,
    method: hyper::Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> Result<Option<Answer>> {
    use http_body_util::BodyExt;
    let socket = clawdis_server::socket_path(home);
    let stream = match tokio::net::UnixStream::connect(&socket).await {
        Ok(stream) => stream,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e).with_context(|| format!("connecting to {}", socket.display())),
    };
    let token = control_token(home)
        .with_context(|| format!("reading the control token in {}", home.display()))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .with_context(|| format!("talking to the backend on {}", socket.display()))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "the local socket's connection");
        }
    });
    let request = hyper::Request::builder()
        .method(method.clone())
        .uri(path)
        .header(hyper::header::HOST, "localhost")
        .header(hyper::header::AUTHORIZATION, format!("Bearer {token}"))
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(body.map(|b| b.to_string()).unwrap_or_default())?;
    let response = sender
        .send_request(request)
        .await
        .with_context(|| format!("asking the backend: {method} {path}"))?;
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .with_context(|| format!("reading the backend's answer to {method} {path}"))?
        .to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(&bytes).into()));
    Ok(Some(Answer { status, body }))
}

/// Asks the person, through the backend of `home`, for an approver token
/// named `name`, and waits up to `wait` seconds for their answer; the
/// token once they confirm.
pub(crate) async fn approver_token(home: &Path, name: &str, wait: u64) -> Result<String> {
    let body = serde_json::json!({ "name": name, "waitSeconds": wait });
    let granted =
        ask_the_person(home, "/tokens/requests", body, "approver token", name, wait).await?;
    granted["token"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("the backend answered without a token: {granted}"))
}

/// `POST path` with `body` to the backend of `home` over its local socket.
/// What it grants at once (201), or, when the person must confirm it first
/// (202, a request), what it grants once they do: the request's id is told
/// on stderr, and this waits up to `wait` seconds.
pub(crate) async fn ask_the_person(
    home: &Path,
    path: &str,
    body: serde_json::Value,
    what: &str,
    name: &str,
    wait: u64,
) -> Result<serde_json::Value> {
    let not_running = || {
        anyhow::anyhow!(
            "this needs a person to confirm it in the Clawdis app, and no backend of {} is \
             running: start the app (or `clawdis serve`) first",
            home.display()
        )
    };
    let asked = over_socket(home, hyper::Method::POST, path, Some(body))
        .await?
        .ok_or_else(not_running)?;
    match asked.status {
        201 => return Ok(asked.body),
        202 => {}
        _ => anyhow::bail!("{}", error_text(&asked)),
    }
    let id = asked.body["id"].as_str().unwrap_or_default().to_string();
    tell(&format!(
        "Asked for {what} {name:?} (request {id}). Confirm or refuse it in the Clawdis app or \
         in a paired device's inbox; \
         waiting up to {wait} s."
    ));
    let answer = over_socket(home, hyper::Method::GET, &format!("/requests/{id}"), None)
        .await?
        .ok_or_else(not_running)?;
    if answer.status == 201 {
        Ok(answer.body)
    } else {
        anyhow::bail!("{}", error_text(&answer))
    }
}

/// The `{error}` of an answer, else its status.
fn error_text(answer: &Answer) -> String {
    answer.body["error"].as_str().map_or_else(
        || format!("the backend answered {}", answer.status),
        str::to_string,
    )
}

/// A line for the person at the terminal, on stderr (stdout carries the
/// token alone).
#[expect(clippy::print_stderr, reason = "told to the person waiting, not a log")]
pub(crate) fn tell(line: &str) {
    eprintln!("{line}");
}
