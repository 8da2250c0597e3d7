//! OpenClaw's live view of a tab: `POST /screencast` mints a one-use
//! ticket, and the WebSocket at `/browser/screencast?token=` streams the
//! tab's frames in OpenClaw's wire format (a 4-byte big-endian header
//! length, a JSON header, the JPEG) with `ready` and `meta` text messages.
//! It is view-only: a binary message from the viewer closes it (1003
//! `view_only`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query as Q, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use clawdis_browser::screencast::{Options, Update, Viewer};
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{ApiResult, Body, Query, ok, profile};

/// How long a ticket may wait for its viewer.
const TICKET_TTL: Duration = Duration::from_secs(60);

/// The largest message a viewer may send (it sends nothing that matters).
const MAX_VIEWER_MESSAGE: usize = 16 * 1024;

/// What a ticket lets its viewer watch.
#[derive(Clone, Debug)]
struct Ticket {
    target: String,
    options: Options,
    expires: std::time::Instant,
}

/// The tickets minted and not yet used.
#[derive(Debug, Default)]
pub struct Tickets(Mutex<HashMap<String, Ticket>>);

impl Tickets {
    fn mint(&self, target: &str, options: Options) -> (String, u64) {
        let token = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        )[..48]
            .to_string();
        let now = std::time::Instant::now();
        let mut tickets = self.0.lock().unwrap_or_else(|e| e.into_inner());
        tickets.retain(|_, t| t.expires > now);
        tickets.insert(
            token.clone(),
            Ticket {
                target: target.to_string(),
                options,
                expires: now + TICKET_TTL,
            },
        );
        let expires_at_ms = SystemTime::now()
            .checked_add(TICKET_TTL)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        (token, expires_at_ms)
    }

    /// Whether `token` names a ticket still good.
    fn holds(&self, token: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .is_some_and(|t| t.expires > std::time::Instant::now())
    }

    /// The ticket `token` names, used up; none when it is unknown, used or
    /// expired.
    fn take(&self, token: &str) -> Option<Ticket> {
        let ticket = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(token)?;
        (ticket.expires > std::time::Instant::now()).then_some(ticket)
    }
}

/// An option as OpenClaw reads it: a finite number floored and clamped to
/// `min..=max`, else the default.
fn clamp(value: Option<&Value>, min: u32, max: u32, default: u32) -> u32 {
    match value.and_then(Value::as_f64).filter(|v| v.is_finite()) {
        Some(v) => v.floor().clamp(f64::from(min), f64::from(max)) as u32,
        None => default,
    }
}

/// `POST /screencast {targetId?, maxWidth?, maxHeight?, quality?}` →
/// `{token, wsPath, expiresAtMs, targetId, url}`: a ticket, good once and
/// for a minute, to watch the tab at `wsPath`.
#[utoipa::path(
    post,
    path = "/screencast",
    operation_id = "post_screencast",
    tag = "browser",
    params(crate::openapi::BrowserQuery),
    responses(crate::openapi::BrowserAnswers)
)]
pub async fn ticket(State(state): State<Arc<AppState>>, Q(q): Q<Query>, body: Body) -> ApiResult {
    profile(&q, Some(&body))?;
    let (target, _page) = state.manager.page_for(body.str("targetId")).await?;
    let options = Options {
        max_width: clamp(body.0.get("maxWidth"), 320, 2000, 1280),
        max_height: clamp(body.0.get("maxHeight"), 320, 2000, 1280),
        quality: clamp(body.0.get("quality"), 30, 90, 70),
    };
    let url = state.manager.target_url(&target).await?;
    let (token, expires_at_ms) = state.screencasts.mint(&target, options);
    ok(json!({
        "token": token,
        "wsPath": format!("/browser/screencast?token={token}"),
        "expiresAtMs": expires_at_ms,
        "targetId": target,
        "url": url,
    }))
}

/// `GET /browser/screencast?token=`: the WebSocket a ticket opens. A
/// plain request is told to upgrade (426); an unknown, used or expired
/// ticket is 401.
#[utoipa::path(
    get,
    path = "/browser/screencast",
    operation_id = "get_browser_screencast",
    tag = "browser",
    security(()),
    params(("token" = String, Query, description = "The ticket `POST /screencast` minted", min_length = 1)),
    responses(
        (status = 101, description = "The WebSocket: `ready` and `meta` text messages, binary frames"),
        (status = 400, description = "No ticket", content_type = "text/plain", body = String),
        (status = 401, description = "An unknown, used or expired ticket", content_type = "text/plain", body = String),
        (status = 403, description = "Not a loopback Host", content_type = "text/plain", body = String),
        (status = 426, description = "Not a WebSocket request", content_type = "text/plain", body = String)
    )
)]
pub async fn stream(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Q(q): Q<Query>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let loopback = crate::security::host_header(&headers)
        .is_some_and(|h| clawdis_browser::settings::is_loopback_host(&h));
    if !loopback {
        return (StatusCode::FORBIDDEN, "Forbidden").into_response();
    }
    let token = q.get("token").map(String::as_str).unwrap_or_default();
    if token.is_empty() {
        return (StatusCode::BAD_REQUEST, "token is required").into_response();
    }
    // A ticket is used up by the upgrade it opens, not by a plain request.
    if !state.screencasts.holds(token) {
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    }
    let Ok(upgrade) = upgrade else {
        return (
            StatusCode::UPGRADE_REQUIRED,
            "Upgrade Required: connect the browser screencast over WebSocket.",
        )
            .into_response();
    };
    let Some(ticket) = state.screencasts.take(token) else {
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    };
    upgrade
        .max_message_size(MAX_VIEWER_MESSAGE)
        .on_upgrade(move |socket| watch(state, ticket, socket))
}

/// Closes `socket` with `code` and `reason`.
pub(crate) async fn close(socket: &mut WebSocket, code: u16, reason: &'static str) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await;
}

/// Sends `update` as OpenClaw's screencast does: a frame in its wire
/// format, a page change as a `meta` text message.
pub(crate) async fn send_update(
    socket: &mut WebSocket,
    update: &Update,
) -> Result<(), axum::Error> {
    match update {
        Update::Frame(frame) => socket.send(Message::Binary(frame.wire().into())).await,
        Update::Meta(meta) => {
            let said = json!({ "type": "meta", "url": meta.url, "title": meta.title });
            socket.send(Message::Text(said.to_string().into())).await
        }
    }
}

/// Streams the ticket's tab to `socket` until either side ends.
async fn watch(state: Arc<AppState>, ticket: Ticket, mut socket: WebSocket) {
    let viewer = async {
        let (target, page) = state.manager.page_for(Some(&ticket.target)).await?;
        if target != ticket.target {
            return Err(clawdis_browser::BrowserError::Missing(
                "the tab closed".into(),
            ));
        }
        state
            .manager
            .screencast(&target, &page, ticket.options)
            .await
    };
    let mut viewer = match viewer.await {
        Ok(viewer) => viewer,
        Err(e) => {
            tracing::debug!(error = %e, "a screencast's tab");
            return close(&mut socket, 4004, "target_closed").await;
        }
    };
    let settings = state.manager.settings();
    // The navigation policy's hosts: a web page it blocks is not shown
    // (the browser's own pages, `about:` or an error page, are).
    let allowed = |url: &str| {
        url::Url::parse(url).map_or(true, |u| {
            !matches!(u.scheme(), "http" | "https")
                || clawdis_browser::policy::check_url(url, &settings).is_ok()
        })
    };
    let meta = viewer.meta();
    if !allowed(&meta.url) {
        return close(&mut socket, 4003, "navigation_blocked").await;
    }
    let ready =
        json!({ "type": "ready", "targetId": ticket.target, "url": meta.url, "title": meta.title });
    if socket
        .send(Message::Text(ready.to_string().into()))
        .await
        .is_err()
    {
        return;
    }
    if let Some((code, reason)) = relay(&mut viewer, &mut socket, allowed).await {
        close(&mut socket, code, reason).await;
    }
}

/// Sends frames and page changes until the viewer leaves (nothing more to
/// say) or the cast must end (the close code and reason to send).
async fn relay(
    viewer: &mut Viewer,
    socket: &mut WebSocket,
    allowed: impl Fn(&str) -> bool,
) -> Option<(u16, &'static str)> {
    loop {
        tokio::select! {
            update = viewer.next() => {
                let Some(update) = update else { return Some((4004, "target_closed")) };
                let url = match &update {
                    Update::Frame(frame) => &frame.url,
                    Update::Meta(meta) => &meta.url,
                };
                if !allowed(url) {
                    return Some((4003, "navigation_blocked"));
                }
                if send_update(socket, &update).await.is_err() {
                    return None;
                }
            }
            message = socket.recv() => match message {
                Some(Ok(Message::Binary(_))) => return Some((1003, "view_only")),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
                Some(Ok(_)) => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_clamped_as_openclaw_clamps_them() {
        assert_eq!(clamp(None, 320, 2000, 1280), 1280);
        assert_eq!(clamp(Some(&json!("800")), 320, 2000, 1280), 1280);
        assert_eq!(clamp(Some(&json!(10)), 320, 2000, 1280), 320);
        assert_eq!(clamp(Some(&json!(5000)), 320, 2000, 1280), 2000);
        assert_eq!(clamp(Some(&json!(799.9)), 320, 2000, 1280), 799);
        assert_eq!(clamp(Some(&json!(95)), 30, 90, 70), 90);
    }

    #[test]
    fn a_ticket_is_good_once() {
        let tickets = Tickets::default();
        let (token, _) = tickets.mint("T1", Options::default());
        assert_eq!(token.len(), 48);
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(tickets.take(&token).map(|t| t.target), Some("T1".into()));
        assert!(tickets.take(&token).is_none());
        assert!(tickets.take("nope").is_none());
    }
}
