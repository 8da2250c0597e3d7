//! The browser tools: sessions and their verified actions, dispatched to
//! the session and tab routes of the control API with the caller's
//! principal. Each takes a `sessionId`; without one, the caller's own
//! default session (the last it opened, or one opened on first use).

use axum::http::{Method, StatusCode};
use base64::Engine as _;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam};
use rmcp::service::RequestContext;
use serde_json::{Map, Value, json};

use super::answer::{MAX_CHARS, answer, cut_text, failure, text_answer};
use super::{Mcp, encode};
use crate::Principal;

/// Tools that are a session action of the same effect: `tool → action`.
const ACTIONS: &[(&str, &str)] = &[
    ("browser_navigate", "navigate"),
    ("browser_click", "click"),
    ("browser_type", "type"),
    ("browser_select", "select"),
    ("browser_fill_form", "fill"),
    ("browser_hover", "hover"),
    ("browser_scroll", "scroll"),
    ("browser_wait", "wait"),
    ("browser_extract_text", "extract_text"),
    ("browser_extract_all", "extract_all"),
    ("browser_get_content", "content"),
    ("browser_screenshot", "screenshot"),
    ("browser_upload_file", "upload"),
    ("browser_evaluate", "evaluate"),
];

/// A route's JSON body when it succeeded, else its `{error}` as the tool's
/// error answer.
fn succeeded((status, body): (StatusCode, Value)) -> Result<Value, CallToolResult> {
    if status.is_success() {
        return Ok(body);
    }
    let message = body
        .get("error")
        .and_then(Value::as_str)
        .map_or_else(|| body.to_string(), str::to_string);
    let code = body
        .get("code")
        .and_then(Value::as_str)
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    Err(failure(format!("{message}{code}")))
}

/// Whose default session a call uses, and what happens to the sessions
/// it opens.
pub(crate) enum Owner<'a> {
    /// An MCP connection: its own default; what it opens is closed with it.
    Connection(&'a super::Connection),
    /// A caller without a connection (stateless HTTP): its principal's
    /// default; what it opens stays until closed.
    Principal(String),
}

impl Owner<'_> {
    fn default(&self, mcp: &Mcp) -> Option<String> {
        match self {
            Owner::Connection(c) => c.default.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            Owner::Principal(label) => mcp
                .defaults
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(label)
                .cloned(),
        }
    }

    /// Session `id`, just opened, becomes the default.
    fn opened(&self, mcp: &Mcp, id: &str) {
        match self {
            Owner::Connection(c) => {
                *c.default.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.to_string());
                c.opened
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(id.to_string());
            }
            Owner::Principal(label) => {
                mcp.defaults
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(label.clone(), id.to_string());
            }
        }
    }

    /// Session `id` was closed.
    fn closed(&self, mcp: &Mcp, id: &str) {
        if let Owner::Connection(c) = self {
            let mut default = c.default.lock().unwrap_or_else(|e| e.into_inner());
            if default.as_deref() == Some(id) {
                *default = None;
            }
            c.opened
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|o| o != id);
        }
        mcp.defaults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, default| default != id);
    }
}

/// The session a call names, or the caller's default one (opened when it
/// has none).
async fn session(
    mcp: &Mcp,
    principal: &Principal,
    owner: &Owner<'_>,
    args: &mut Map<String, Value>,
) -> Result<String, CallToolResult> {
    let sessions = mcp
        .state
        .sessions()
        .await
        .map_err(|e| failure(e.message()))?;
    if let Some(given) = args.remove("sessionId") {
        let id = given.as_str().unwrap_or_default().to_string();
        if !sessions.exists(&id) {
            return Err(failure(format!(
                "no session {id}; browser_list shows the sessions, browser_open opens one"
            )));
        }
        return Ok(id);
    }
    if let Some(id) = owner.default(mcp).filter(|id| sessions.exists(id)) {
        return Ok(id);
    }
    let opened = succeeded(
        mcp.route(principal, Method::POST, "/sessions", Some(json!({})))
            .await,
    )?;
    let id = opened
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    owner.opened(mcp, &id);
    Ok(id)
}

/// What an action's outcome says, in a line or the text it read.
fn account(outcome: &Value) -> String {
    if outcome.get("ok") != Some(&Value::Bool(true)) {
        let code = outcome
            .pointer("/error/code")
            .and_then(Value::as_str)
            .unwrap_or("failed");
        let message = outcome
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        return format!("failed ({code}): {message}");
    }
    let mut text = match outcome.get("data") {
        None | Some(Value::Null) => "ok".to_string(),
        Some(Value::Object(fields)) if fields.len() == 1 => match fields.values().next() {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => "ok".to_string(),
        },
        Some(data) => data.to_string(),
    };
    for key in ["handled", "notices"] {
        if let Some(items) = outcome
            .get(key)
            .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
        {
            text.push_str(&format!("\n{key}: {items}"));
        }
    }
    text
}

/// Runs browser tool `name` for `principal`.
pub(crate) async fn call(
    mcp: &Mcp,
    principal: &Principal,
    owner: &Owner<'_>,
    name: &str,
    mut args: Map<String, Value>,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    match name {
        "browser_open" => return open(mcp, principal, owner, args).await,
        "browser_list" => {
            return match succeeded(mcp.route(principal, Method::GET, "/sessions", None).await) {
                Ok(body) => {
                    let count = body["sessions"].as_array().map_or(0, Vec::len);
                    answer(body, format!("{count} session(s)"), false)
                }
                Err(e) => e,
            };
        }
        _ => {}
    }
    let id = match session(mcp, principal, owner, &mut args).await {
        Ok(id) => id,
        Err(e) => return e,
    };
    let sid = encode(&id);
    if let Some((_, action)) = ACTIONS.iter().find(|(tool, _)| *tool == name) {
        let path = format!("/sessions/{sid}/{action}");
        let outcome = match succeeded(
            mcp.route(principal, Method::POST, &path, Some(Value::Object(args)))
                .await,
        ) {
            Ok(outcome) => outcome,
            Err(e) => return e,
        };
        if *action == "screenshot" {
            return screenshot(outcome).await;
        }
        let failed = outcome.get("ok") != Some(&Value::Bool(true));
        let text = match (*action, outcome.get("data")) {
            ("content", Some(data)) if !failed => format!(
                "{}\n{}\n\n{}",
                data["title"].as_str().unwrap_or_default(),
                data["url"].as_str().unwrap_or_default(),
                data["content"].as_str().unwrap_or_default()
            ),
            _ => account(&outcome),
        };
        return answer(outcome, text, failed);
    }
    let routed = match name {
        "browser_close" => {
            let closed = mcp
                .route(principal, Method::DELETE, &format!("/sessions/{sid}"), None)
                .await;
            if closed.0.is_success() {
                owner.closed(mcp, &id);
            }
            closed
        }
        "browser_restore" => {
            mcp.route(
                principal,
                Method::POST,
                &format!("/sessions/{sid}/restore"),
                None,
            )
            .await
        }
        "browser_state" | "browser_tabs" => {
            mcp.route(principal, Method::GET, &format!("/sessions/{sid}"), None)
                .await
        }
        "browser_snapshot" => return snapshot(mcp, principal, &sid, &args).await,
        "browser_press_key" => {
            let body = json!({ "kind": "press", "key": args.get("key"), "sessionId": id });
            mcp.route(principal, Method::POST, "/act", Some(body)).await
        }
        "browser_handle_dialog" | "browser_console" | "browser_network" => {
            let target = match mcp.state.sessions().await {
                Ok(sessions) => match sessions.target_of(&id).await {
                    Ok(target) => target,
                    Err(e) => return failure(e.to_string()),
                },
                Err(e) => return failure(e.message()),
            };
            tab_route(mcp, principal, name, &target, &args).await
        }
        "browser_request_approval" => return approval(mcp, principal, &id, &args, ctx).await,
        "browser_handoff" => return handoff(mcp, principal, &id, &args, ctx).await,
        other => return failure(format!("no tool {other}")),
    };
    match succeeded(routed) {
        Ok(body) => {
            let text = match name {
                "browser_close" => format!("session {id} closed"),
                "browser_tabs" => {
                    let page = json!({
                        "sessionId": id,
                        "url": body.get("url"),
                        "title": body.get("title"),
                        "targetId": body.get("targetId"),
                    });
                    return answer(json!({ "tabs": [page] }), page.to_string(), false);
                }
                _ => body.to_string(),
            };
            answer(body, text, false)
        }
        Err(e) => e,
    }
}

/// `browser_open {url?, profile?, dialogs?}`: a new session, now the
/// caller's default.
async fn open(
    mcp: &Mcp,
    principal: &Principal,
    owner: &Owner<'_>,
    args: Map<String, Value>,
) -> CallToolResult {
    let opened = mcp
        .route(
            principal,
            Method::POST,
            "/sessions",
            Some(Value::Object(args)),
        )
        .await;
    match succeeded(opened) {
        Ok(session) => {
            if let Some(id) = session.get("sessionId").and_then(Value::as_str) {
                owner.opened(mcp, id);
            }
            let text = format!(
                "session {} opened at {}",
                session["sessionId"].as_str().unwrap_or("?"),
                session["url"].as_str().unwrap_or("about:blank")
            );
            answer(session, text, false)
        }
        Err(e) => e,
    }
}

/// `browser_snapshot {maxChars?, interactive?, selector?}`: the snapshot
/// as text under a line naming the page, and nothing else: the snapshot is
/// what the agent reads, and every character of it costs tokens.
async fn snapshot(
    mcp: &Mcp,
    principal: &Principal,
    sid: &str,
    args: &Map<String, Value>,
) -> CallToolResult {
    let mut path = format!("/snapshot?format=ai&sessionId={sid}");
    if let Some(max) = args.get("maxChars").and_then(Value::as_u64) {
        path.push_str(&format!("&maxChars={max}"));
    }
    if args.get("interactive") == Some(&Value::Bool(true)) {
        path.push_str("&interactive=true");
    }
    if let Some(selector) = args.get("selector").and_then(Value::as_str) {
        path.push_str(&format!("&selector={}", encode(selector)));
    }
    match succeeded(mcp.route(principal, Method::GET, &path, None).await) {
        Ok(body) => {
            let text = body
                .get("snapshot")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let url = body.get("url").and_then(Value::as_str).unwrap_or_default();
            text_answer(&format!("Page: {url}\n{text}"))
        }
        Err(e) => e,
    }
}

/// The tab routes a session's page answers: dialogs, console, network.
async fn tab_route(
    mcp: &Mcp,
    principal: &Principal,
    name: &str,
    target: &str,
    args: &Map<String, Value>,
) -> (StatusCode, Value) {
    let target = encode(target);
    match name {
        "browser_handle_dialog" => {
            let mut body = args.clone();
            body.insert("targetId".into(), json!(target));
            mcp.route(
                principal,
                Method::POST,
                "/hooks/dialog",
                Some(Value::Object(body)),
            )
            .await
        }
        "browser_console" => {
            let mut path = format!("/console?targetId={target}");
            if let Some(level) = args.get("level").and_then(Value::as_str) {
                path.push_str(&format!("&level={}", encode(level)));
            }
            mcp.route(principal, Method::GET, &path, None).await
        }
        _ => {
            let mut path = format!("/requests?targetId={target}");
            if let Some(filter) = args.get("filter").and_then(Value::as_str) {
                path.push_str(&format!("&filter={}", encode(filter)));
            }
            mcp.route(principal, Method::GET, &path, None).await
        }
    }
}

/// A screenshot action's outcome, with the picture as an image block.
async fn screenshot(outcome: Value) -> CallToolResult {
    let Some(path) = outcome.pointer("/data/path").and_then(Value::as_str) else {
        let text = account(&outcome);
        return answer(outcome, text, true);
    };
    let bytes = match tokio::fs::read(path).await {
        Ok(bytes) => bytes,
        Err(e) => return failure(format!("reading the screenshot {path}: {e}")),
    };
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut result = answer(
        outcome.clone(),
        format!("screenshot saved at {path}"),
        false,
    );
    result.content.push(ContentBlock::image(data, "image/png"));
    result
}

/// `browser_request_approval {message, timeout_ms?}`: waits for a person,
/// telling the client it still waits, and answers `{approved}`.
async fn approval(
    mcp: &Mcp,
    principal: &Principal,
    id: &str,
    args: &Map<String, Value>,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let message = args
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let wait = wait_of(args);
    let note = format!("waiting for a person to decide: {}", cut_text(message, 200));
    let decided = with_progress(ctx, wait, &note, |tick| {
        crate::sessions::ask_person(&mcp.state, principal, id, message, wait, tick)
    })
    .await;
    match decided {
        Ok(decision) => {
            let text = match decision.get("approved") {
                Some(Value::Bool(true)) => "approved".to_string(),
                _ if decision.get("timedOut") == Some(&Value::Bool(true)) => {
                    "not approved: no decision before the timeout".to_string()
                }
                _ => "not approved".to_string(),
            };
            answer(decision, text, false)
        }
        Err(e) => failure(cut_text(e.message(), MAX_CHARS)),
    }
}

/// `browser_handoff {reason, timeout_ms?}`: hands the session's page to a
/// person and waits, telling the client it still waits, until they hand
/// it back: `{done: true, url, title}` or `{done: false, reason}`.
async fn handoff(
    mcp: &Mcp,
    principal: &Principal,
    id: &str,
    args: &Map<String, Value>,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let reason = args
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if reason.trim().is_empty() {
        return failure("reason is required");
    }
    let wait = wait_of(args);
    let note = format!(
        "waiting for a person to take over and hand back: {}",
        cut_text(reason, 200)
    );
    let ended = with_progress(ctx, wait, &note, |tick| {
        crate::handoff::hand_off(&mcp.state, principal, id, reason, wait, tick)
    })
    .await;
    match ended {
        Ok(ended) => {
            let text = match ended.get("done") {
                Some(Value::Bool(true)) => format!(
                    "the person handed the page back: {}",
                    ended["url"].as_str().unwrap_or_default()
                ),
                _ => format!(
                    "not handed back: {}",
                    ended["reason"].as_str().unwrap_or_default()
                ),
            };
            answer(ended, text, false)
        }
        Err(e) => failure(cut_text(e.message(), MAX_CHARS)),
    }
}

/// What waiting tool `name` asks a person, as a task tells it.
pub(crate) fn asked_of(name: &str, args: &Map<String, Value>) -> String {
    let said = |key| {
        cut_text(
            args.get(key).and_then(Value::as_str).unwrap_or_default(),
            2000,
        )
    };
    match name {
        "browser_handoff" => format!(
            "The agent needs a person to take over its browser page: {}",
            said("reason")
        ),
        _ => format!("The agent asks a person to decide: {}", said("message")),
    }
}

/// A waiting tool's `timeout_ms` (default ten minutes; the schema bounds it).
pub(crate) fn wait_of(args: &Map<String, Value>) -> std::time::Duration {
    std::time::Duration::from_millis(
        args.get("timeout_ms")
            .and_then(Value::as_u64)
            .unwrap_or(600_000),
    )
}

/// Runs the wait `start` makes (handed a tick to call as time passes) and
/// sends the client a progress notification, saying `note`, at each tick.
async fn with_progress<T, F>(
    ctx: &RequestContext<RoleServer>,
    wait: std::time::Duration,
    note: &str,
    start: impl FnOnce(Box<dyn FnMut(std::time::Duration) + Send>) -> F,
) -> T
where
    F: std::future::Future<Output = T>,
{
    let (tick, mut ticks) = tokio::sync::mpsc::unbounded_channel();
    let waited = start(Box::new(move |e| {
        let _ = tick.send(e);
    }));
    tokio::pin!(waited);
    let progress_token = ctx.meta.get_progress_token();
    loop {
        tokio::select! {
            done = &mut waited => return done,
            Some(elapsed) = ticks.recv() => {
                if let Some(token) = progress_token.clone() {
                    let progress = ProgressNotificationParam::new(token, elapsed.as_secs_f64())
                        .with_total(wait.as_secs_f64())
                        .with_message(note.to_string());
                    if let Err(e) = ctx.peer.notify_progress(progress).await {
                        tracing::debug!(error = %e, "sending progress");
                    }
                }
            }
        }
    }
}
