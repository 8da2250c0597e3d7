//! Browser sessions over HTTP: `POST /sessions`, `GET /sessions`,
//! `GET|DELETE /sessions/{id}`, `POST /sessions/{id}/restore`, the verified
//! actions `POST /sessions/{id}/{action}`, and the action log
//! `GET /sessions/{id}/trace`. The work is
//! [`clawdis_browser::session::Sessions`]'; this maps it to statuses.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use clawdis_browser::action;
use clawdis_browser::events::DialogPolicy;
use clawdis_browser::session::NewSession;
use serde_json::{Value, json};

use crate::AppState;
use crate::api::{self, ApiError, ApiResult, Body, ok};

/// `POST /sessions {profile?, url?, dialogs?}` → 201 with the session.
#[utoipa::path(
    post,
    path = "/sessions",
    operation_id = "post_sessions",
    tag = "sessions",
    responses((status = 201, description = "The session", body = crate::openapi::Session), crate::openapi::SessionErrors)
)]
pub async fn create(State(state): State<Arc<AppState>>, body: Body) -> ApiResult {
    let dialogs = match body.0.get("dialogs") {
        None | Some(Value::Null) => DialogPolicy::default(),
        Some(Value::String(p)) => DialogPolicy::parse(p).ok_or_else(|| {
            ApiError::bad_request(format!(
                "dialogs must be default, accept, dismiss or ask, not {p}"
            ))
        })?,
        Some(_) => return Err(ApiError::bad_request("dialogs must be a string")),
    };
    let text = |key: &str| body.text(key).map(|t| t.map(|t| t.trim().to_string()));
    let new = NewSession {
        profile: text("profile")?,
        url: text("url")?,
        dialogs,
    };
    let session = state.sessions().await?.create(new).await?;
    Ok((StatusCode::CREATED, Json(json!(session))).into_response())
}

/// `GET /sessions` → `{sessions}`.
#[utoipa::path(
    get,
    path = "/sessions",
    operation_id = "get_sessions",
    tag = "sessions",
    responses((status = 200, description = "OK", body = crate::openapi::SessionList), crate::openapi::SessionErrors)
)]
pub async fn list(State(state): State<Arc<AppState>>) -> ApiResult {
    ok(json!({ "sessions": state.sessions().await?.list().await }))
}

/// `GET /sessions/{id}` → the session with its page's state.
#[utoipa::path(
    get,
    path = "/sessions/{id}",
    operation_id = "get_sessions_id",
    tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, description = "OK", body = crate::openapi::Session), crate::openapi::SessionErrors)
)]
pub async fn get_one(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    ok(json!(state.sessions().await?.get(&id).await?))
}

/// `DELETE /sessions/{id}` → `{ok}`: its context is closed.
#[utoipa::path(
    delete,
    path = "/sessions/{id}",
    operation_id = "delete_sessions_id",
    tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, description = "OK", body = crate::openapi::Done), crate::openapi::SessionErrors)
)]
pub async fn delete(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    state.sessions().await?.delete(&id).await?;
    ok(json!({ "ok": true }))
}

/// `POST /sessions/{id}/restore` → the session, recreated from its last
/// snapshot.
#[utoipa::path(
    post,
    path = "/sessions/{id}/restore",
    operation_id = "post_sessions_id_restore",
    tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, description = "OK", body = crate::openapi::Session), crate::openapi::SessionErrors)
)]
pub async fn restore(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    ok(json!(state.sessions().await?.restore(&id).await?))
}

/// `GET /sessions/{id}/trace?after=&limit=` → `{actions}`: the session's
/// action timeline, oldest first.
#[utoipa::path(
    get,
    path = "/sessions/{id}/trace",
    operation_id = "get_sessions_id_trace",
    tag = "sessions",
    params(
        ("id" = String, Path, description = "The session id"),
        ("after" = Option<i64>, Query, description = "Only actions after this seq"),
        ("limit" = Option<u32>, Query, description = "At most this many (default 100, at most 1000)")
    ),
    responses((status = 200, description = "OK", body = crate::openapi::Trace), crate::openapi::SessionErrors)
)]
pub async fn trace(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(query): Query<api::Query>,
) -> ApiResult {
    let after = api::number(&query, "after")?.unwrap_or(0);
    let after = i64::try_from(after)
        .map_err(|_| ApiError::bad_request(format!("after is at most {}", i64::MAX)))?;
    let limit = api::count(&query, "limit", crate::bodies::MAX_TRACE)?.unwrap_or(100);
    let actions = state.sessions().await?.trace(&id, after, limit).await?;
    let actions: Vec<Value> = actions
        .into_iter()
        .map(|a| {
            let parse = |t: &Option<String>| {
                t.as_deref()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
            };
            json!({
                "seq": a.seq,
                "action": a.action,
                "target": a.target,
                "input": parse(&a.input),
                "ok": a.ok,
                "code": a.code,
                "result": serde_json::from_str::<Value>(&a.result).unwrap_or_default(),
                "durationMs": a.duration_ms,
                "retries": a.retries,
                "screenshot": a.screenshot,
                "at": a.at,
            })
        })
        .collect();
    ok(json!({ "actions": actions }))
}

/// `POST /sessions/{id}/{action}` → the action's result `{ok, data?,
/// error?, retries, durationMs, screenshot?, handled?}`: 200 for every
/// action attempted, whether it succeeded or not.
#[utoipa::path(
    post,
    path = "/sessions/{id}/{action}",
    operation_id = "post_sessions_id_action",
    tag = "sessions",
    params(
        ("id" = String, Path, description = "The session id"),
        ("action" = String, Path, description = "navigate, reload, back, forward, click, type, fill, select, check, uncheck, hover, drag, upload, scroll, wait, extract_text, extract_all, content, screenshot, pdf or evaluate")
    ),
    responses((status = 200, description = "The action's result", body = crate::openapi::ActionResult), crate::openapi::SessionErrors)
)]
pub async fn act(
    State(state): State<Arc<AppState>>,
    Path((id, name)): Path<(String, String)>,
    body: Body,
) -> ApiResult {
    let body = Value::Object(body.0);
    let request = action::parse(&name, &body)?;
    if request.verb.evaluates() && !state.manager.settings().evaluate_enabled {
        return Err(ApiError::forbidden(
            "evaluate is disabled in settings (evaluateEnabled: false)",
        ));
    }
    let outcome = state.sessions().await?.act(&id, &request, &body).await?;
    ok(json!(outcome))
}

/// `GET /metrics`: the browser's counters in the Prometheus text format
/// (`actions_total`, `retries_total`, `sessions_total`,
/// `action_duration_seconds`), of session actions and `/act` alike.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "get_metrics",
    tag = "sessions",
    responses(
        (status = 200, description = "The Prometheus text format (version 0.0.4)", content_type = "text/plain", body = String),
        (status = 401, description = "No or a wrong bearer token", content_type = "text/plain", body = String)
    )
)]
pub async fn metrics(State(state): State<Arc<AppState>>) -> ApiResult {
    let text = state.manager.metrics().render();
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response())
}

/// The workflow behind `POST /sessions/{id}/approval`: one gate that only
/// a person may decide, so the request reaches people the way every
/// workflow's approval does (the app, its notification, the approvals
/// list and routes, webhooks).
/// Its name is [`clawdis_approvals::BROWSER_APPROVAL`]. Its caller waits
/// at most an hour ([`MAX_APPROVAL_WAIT`]) and cancels the gate then; the
/// gate's own expiry, a minute later, cancels it when the caller died
/// with its backend, so no request outlives its asker by much.
const APPROVAL_WORKFLOW: &str = r#"name: browser-approval
type: pipeline
description: A browser session asks a person to decide
inputs:
  message: A browser session asks for approval
  session: ""
  url: ""
  title: ""
  actions: ""
  screenshot: ""
steps:
  - id: decide
    approval:
      required: true
      message: ${{ inputs.message }}
      approvers: human
      expires_in: 61m
    exec: "true"
"#;

/// Longest wait `POST /sessions/{id}/approval` may ask for.
pub(crate) const MAX_APPROVAL_WAIT: u64 = 3600;

/// `POST /sessions/{id}/approval {message, timeout?}` → `{approved,
/// runId, timedOut?, reason?, decidedBy?, comment?}` once a person decides
/// (or after `timeout` seconds, 300 by default: then not approved, and the
/// request is cancelled). Agent tokens cannot answer it.
#[utoipa::path(
    post,
    path = "/sessions/{id}/approval",
    operation_id = "post_sessions_id_approval",
    tag = "sessions",
    params(("id" = String, Path, description = "The session id")),
    responses((status = 200, description = "The decision", body = crate::openapi::SessionApproval), crate::openapi::SessionErrors)
)]
pub async fn approval(
    State(state): State<Arc<AppState>>,
    axum::Extension(principal): axum::Extension<crate::Principal>,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult {
    let message = body
        .str("message")
        .ok_or_else(|| ApiError::bad_request("message is required"))?
        .to_string();
    let wait = match body.0.get("timeout") {
        None | Some(Value::Null) => 300,
        Some(v) => v
            .as_u64()
            .filter(|s| (1..=MAX_APPROVAL_WAIT).contains(s))
            .ok_or_else(|| {
                ApiError::bad_request(format!("timeout is 1 to {MAX_APPROVAL_WAIT} seconds"))
            })?,
    };
    let wait = std::time::Duration::from_secs(wait);
    ok(ask_person(&state, &principal, &id, &message, wait, |_| {}).await?)
}

/// How often a caller waiting on [`ask_person`] hears that it still waits.
pub(crate) const STILL_WAITING: std::time::Duration = std::time::Duration::from_secs(5);

/// What the person sees of session `id` as it asks: its last 10 actions,
/// one a line (never what was typed: the log keeps only its length), and a
/// JPEG of its page as a data URL. Either is empty when it cannot be had
/// (the page is gone); asking goes on without it.
async fn page_as_asked(state: &AppState, id: &str) -> (String, String) {
    let Ok(sessions) = state.sessions().await else {
        return (String::new(), String::new());
    };
    let actions = sessions
        .last_actions(id, 10)
        .await
        .unwrap_or_default()
        .iter()
        .map(|a| {
            format!(
                "{} {}{} → {}",
                a.action,
                a.target.as_deref().unwrap_or(""),
                a.input
                    .as_deref()
                    .map(|i| format!(" {i}"))
                    .unwrap_or_default(),
                if a.ok {
                    "ok".to_string()
                } else {
                    a.code.clone().unwrap_or_else(|| "failed".into())
                }
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let shot = async {
        let (_, page) = sessions.page_of(id).await.ok()?;
        let dir = sessions.artifacts(id);
        let path = clawdis_browser::inspect::screenshot(
            &page,
            &dir,
            clawdis_browser::inspect::ShotArea::Viewport,
            clawdis_browser::inspect::ImageType::Jpeg,
        )
        .await
        .ok()?;
        let bytes = std::fs::read(&path).ok()?;
        let _ = std::fs::remove_file(&path);
        use base64::Engine as _;
        Some(format!(
            "data:image/jpeg;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        ))
    };
    (actions, shot.await.unwrap_or_default())
}

/// A workflow of the backend's own, kept in the state directory's
/// `builtin/` as `<name>.yaml`.
pub(crate) struct Builtin {
    /// Its name (the file's stem).
    pub name: &'static str,
    /// Its text.
    pub text: &'static str,
}

/// The browser approval's workflow.
const APPROVAL: Builtin = Builtin {
    name: clawdis_approvals::BROWSER_APPROVAL,
    text: APPROVAL_WORKFLOW,
};

/// How asking a person for session `id` ended: decided (the run as it
/// ended), or not within the wait (then cancelled).
pub(crate) enum Asked {
    /// Decided: the run's record.
    Decided(Box<clawdis_approvals::RunView>),
    /// Nobody decided in time; the run was cancelled.
    TimedOut(String),
}

/// Asks a person to decide `message` for session `id` through the approval
/// gate every workflow uses, and waits up to `wait` for the decision;
/// `waiting` is called with the time waited every [`STILL_WAITING`]. A
/// request abandoned before its decision (the caller went away) is
/// cancelled, so no gate waits for nobody.
pub(crate) async fn ask_person(
    state: &AppState,
    principal: &crate::Principal,
    id: &str,
    message: &str,
    wait: std::time::Duration,
    waiting: impl FnMut(std::time::Duration),
) -> Result<Value, ApiError> {
    let args = json!({ "message": message });
    let run = match ask(state, principal, id, &APPROVAL, args, wait, waiting).await? {
        Asked::TimedOut(run_id) => {
            return Ok(json!({
                "approved": false,
                "timedOut": true,
                "reason": "timeout",
                "runId": run_id,
            }));
        }
        Asked::Decided(run) => run,
    };
    let last = run.decisions.last();
    Ok(json!({
        "approved": run.status == clawdis_store::HistoryStatus::Ok,
        "runId": run.run_id,
        "decidedBy": last.map(|d| json!(d).get("by").cloned().unwrap_or_default()),
        "comment": last.map(|d| json!(d).get("comment").cloned().unwrap_or_default()),
    }))
}

/// Starts `workflow` for session `id` with `args` and what the person sees
/// of the page (its URL, title, last actions and picture), and waits up to
/// `wait` for its gate to be decided; `waiting` hears every
/// [`STILL_WAITING`]. A run not decided in time is cancelled (by
/// `timeout`), as is one whose caller goes away.
pub(crate) async fn ask(
    state: &AppState,
    principal: &crate::Principal,
    id: &str,
    workflow: &Builtin,
    mut args: Value,
    wait: std::time::Duration,
    mut waiting: impl FnMut(std::time::Duration),
) -> Result<Asked, ApiError> {
    let session = state.sessions().await?.get(id).await?;
    let file = state
        .state_dir()
        .join("builtin")
        .join(format!("{}.yaml", workflow.name));
    if std::fs::read_to_string(&file).ok().as_deref() != Some(workflow.text) {
        std::fs::create_dir_all(file.parent().unwrap_or(&file))
            .and_then(|()| std::fs::write(&file, workflow.text))
            .map_err(|e| ApiError::internal(format!("writing {}: {e}", file.display())))?;
    }
    let (actions, screenshot) = page_as_asked(state, id).await;
    args["session"] = json!(id);
    args["url"] = json!(session.url);
    args["title"] = json!(session.title.clone().unwrap_or_default());
    args["actions"] = json!(actions);
    args["screenshot"] = json!(screenshot);
    let runs = state.runs().await?;
    let mut changes = runs.changes();
    let mut decisions = state.approvals().await?.subscribe();
    let started = runs
        .start(clawdis_approvals::RunRequest {
            what: clawdis_approvals::What::Workflow(file.display().to_string()),
            args,
            cwd: None,
            started_by: principal.label(),
        })
        .await?;
    let run_id = started.run_id.clone();
    let mut abandoned = crate::runs::CancelOnDrop::new(
        runs.clone(),
        &run_id,
        clawdis_store::Channel::Http,
        "the caller stopped waiting for the decision",
    );
    // Paused at its gate (or ended, should the gate not hold).
    started.envelope().await;
    let began = tokio::time::Instant::now();
    let mut tick = tokio::time::interval_at(began + STILL_WAITING, STILL_WAITING);
    let decided = tokio::time::timeout(wait, async {
        loop {
            let run = runs.get(&run_id).await?;
            match run.status {
                clawdis_store::HistoryStatus::NeedsApproval
                | clawdis_store::HistoryStatus::Running => {}
                _ => return Ok::<_, ApiError>(run),
            }
            // A decision shows as a change of the run (resumed here) or an
            // approvals event (decided anywhere); the look every second
            // covers a decision by another process.
            tokio::select! {
                _ = changes.changed() => {}
                _ = decisions.recv() => {}
                _ = tick.tick() => waiting(began.elapsed()),
                _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
            }
        }
    })
    .await;
    abandoned.disarm();
    match decided {
        Ok(run) => Ok(Asked::Decided(Box::new(run?))),
        Err(_) => {
            let decider = clawdis_approvals::Decider {
                by: Some("timeout".into()),
                via: clawdis_store::Channel::Http,
                presence: None,
                seen: None,
                comment: Some(format!("no decision within {} s", wait.as_secs())),
            };
            runs.cancel(&run_id, decider).await?;
            Ok(Asked::TimedOut(run_id))
        }
    }
}

/// `GET /sessions/profiles` → `{profiles: [{name, path, cookies, origins}]}`:
/// the named persistent profiles sessions may use.
#[utoipa::path(
    get,
    path = "/sessions/profiles",
    operation_id = "get_sessions_profiles",
    tag = "sessions",
    responses((status = 200, description = "OK", body = crate::openapi::ProfileList), crate::openapi::SessionErrors)
)]
pub async fn profiles(State(state): State<Arc<AppState>>) -> ApiResult {
    ok(json!({ "profiles": state.sessions().await?.profiles()? }))
}

/// `POST /sessions/profiles {name}` → 201 with the new, empty profile.
#[utoipa::path(
    post,
    path = "/sessions/profiles",
    operation_id = "post_sessions_profiles",
    tag = "sessions",
    responses((status = 201, description = "The profile", body = crate::openapi::SessionProfile), crate::openapi::SessionErrors)
)]
pub async fn create_profile(State(state): State<Arc<AppState>>, body: Body) -> ApiResult {
    let name = body
        .str("name")
        .ok_or_else(|| ApiError::bad_request("name is required"))?;
    let profile = state.sessions().await?.create_profile(name)?;
    Ok((StatusCode::CREATED, Json(json!(profile))).into_response())
}

/// `DELETE /sessions/profiles/{name}` → `{ok}`: the profile and every login
/// it kept are gone. A profile a session uses is 409.
#[utoipa::path(
    delete,
    path = "/sessions/profiles/{name}",
    operation_id = "delete_sessions_profiles_name",
    tag = "sessions",
    params(("name" = String, Path, description = "The profile's name")),
    responses((status = 200, description = "OK", body = crate::openapi::Done), crate::openapi::SessionErrors)
)]
pub async fn delete_profile(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> ApiResult {
    state.sessions().await?.delete_profile(&name).await?;
    ok(json!({ "ok": true }))
}

/// `GET /sessions/profiles/{name}/export` → the profile's storage state
/// (`{cookies, origins}`, as Playwright's `storageState`).
#[utoipa::path(
    get,
    path = "/sessions/profiles/{name}/export",
    operation_id = "get_sessions_profiles_name_export",
    tag = "sessions",
    params(("name" = String, Path, description = "The profile's name")),
    responses((status = 200, description = "OK", body = crate::openapi::StorageStateBody), crate::openapi::SessionErrors)
)]
pub async fn export_profile(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> ApiResult {
    ok(json!(state.sessions().await?.export_profile(&name)?))
}
