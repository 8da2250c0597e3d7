//! The workflow tools: `lobster_run` (OpenClaw's lobster tool, run by the
//! engine in this process or by a `lobster` executable), `lobster_resume`,
//! `runs_list`, `run_status`, `approvals_list`, and the exposed workflows.
//! They call what the runs and approvals routes call.

use std::time::Duration;

use clawdis_approvals::{Channel, Choice, Decider, HistoryStatus, RunQuery, RunRequest, What};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use super::Mcp;
use super::answer::{answer, failure};
use super::exposed::Exposed;
use crate::Principal;
use crate::api::Body;

/// `timeout_ms` when not given.
const DEFAULT_TIMEOUT_MS: u64 = 20_000;
/// `max_stdout_bytes` when not given.
const DEFAULT_MAX_BYTES: u64 = 512_000;

fn text<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Lobster's error envelope with `message`.
fn error_envelope(message: impl Into<String>) -> Value {
    clawdis_engine::Envelope::from(clawdis_engine::Error::runtime(message))
        .to_value()
        .to_serde()
}

/// A short account of an envelope for the answer's text.
fn summary(envelope: &Value) -> String {
    let run = envelope
        .get("runId")
        .and_then(Value::as_str)
        .map(|id| format!(" (runId {id})"))
        .unwrap_or_default();
    if envelope.get("ok") == Some(&Value::Bool(false)) {
        let message = envelope
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("the run failed");
        return format!("error: {message}{run}");
    }
    match envelope.get("status").and_then(Value::as_str) {
        Some("needs_approval") => {
            let gate = envelope
                .get("requiresApproval")
                .cloned()
                .unwrap_or_default();
            let prompt = gate.get("prompt").and_then(Value::as_str).unwrap_or("");
            let how = match gate.get("approvalId").and_then(Value::as_str) {
                Some(id) => {
                    format!("lobster_resume {{\"approvalId\": \"{id}\", \"approve\": true|false}}")
                }
                None => "lobster_resume with requiresApproval.resumeToken".to_string(),
            };
            format!(
                "needs_approval: {prompt}{run}. It waits for a decision; if the gate lets agents decide, resume it with {how}, else a person decides it in Clawdis."
            )
        }
        Some("needs_input") => {
            let gate = envelope.get("requiresInput").cloned().unwrap_or_default();
            let prompt = gate.get("prompt").and_then(Value::as_str).unwrap_or("");
            format!(
                "needs_input: {prompt}{run}. Answer with lobster_resume {{token: requiresInput.resumeToken, response}}."
            )
        }
        Some(status) => {
            let output = envelope.get("output").cloned().unwrap_or(json!([]));
            let count = output.as_array().map_or(0, Vec::len);
            let shown = output.to_string();
            let shown = if shown.chars().count() > 2000 {
                "(see the structured content)".to_string()
            } else {
                shown
            };
            format!("{status}{run}: {count} output item(s): {shown}")
        }
        None => format!("answered{run}"),
    }
}

/// The account of run `run_id`'s envelope at a pause, which says who
/// decides its gate and how: a task's status message and elicitation.
pub(crate) fn waiting_summary(envelope: &Value, run_id: &str) -> String {
    summary(&with_run_id(envelope.clone(), Some(run_id)))
}

/// The answer of a run's envelope; a failed run is an error answer.
fn envelope_answer(envelope: Value) -> CallToolResult {
    let failed = envelope.get("ok") == Some(&Value::Bool(false));
    let text = summary(&envelope);
    answer(envelope, text, failed)
}

fn with_run_id(mut envelope: Value, run_id: Option<&str>) -> Value {
    if let (Some(fields), Some(id)) = (envelope.as_object_mut(), run_id) {
        fields.insert("runId".into(), json!(id));
    }
    envelope
}

/// What a workflow tool answered, and the run it left paused at a gate.
pub(crate) struct Ran {
    /// The answer.
    pub answer: CallToolResult,
    /// The run, when it waits at a gate (it ran in this process).
    pub paused: Option<Paused>,
}

impl From<CallToolResult> for Ran {
    fn from(answer: CallToolResult) -> Ran {
        Ran {
            answer,
            paused: None,
        }
    }
}

/// A run of this process paused at a gate, which an MCP task may follow.
pub(crate) struct Paused {
    /// The run.
    pub run_id: String,
    /// Its envelope at the pause.
    pub envelope: Value,
    /// The caller's `max_stdout_bytes`.
    max_bytes: u64,
}

/// The answer of a followed run's last envelope, as its call would have
/// answered it.
pub(crate) fn follow_answer(envelope: Value, paused: &Paused) -> CallToolResult {
    envelope_answer(bounded(
        with_run_id(envelope, Some(&paused.run_id)),
        paused.max_bytes,
    ))
}

/// What `lobster_run` and the exposed workflows run, and how.
struct Ask {
    request: RunRequest,
    timeout: Duration,
    max_bytes: u64,
}

/// `lobster_run {pipeline | workflow, args?, cwd?, timeout_ms?,
/// max_stdout_bytes?, lobster_path?}`: the run `POST /runs` takes, with
/// OpenClaw's limits.
pub(crate) async fn run(mcp: &Mcp, principal: &Principal, args: Map<String, Value>) -> Ran {
    let lobster_path = text(&args, "lobster_path").map(str::to_string);
    let timeout = Duration::from_millis(
        args.get("timeout_ms")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_TIMEOUT_MS),
    );
    let max_bytes = args
        .get("max_stdout_bytes")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_BYTES);
    let request = match crate::runs::run_request(&Body(args), principal) {
        Ok(request) => request,
        Err(e) => return failure(e.message()).into(),
    };
    let ask = Ask {
        request,
        timeout,
        max_bytes,
    };
    match lobster_path {
        Some(path) => spawned::run(mcp, &path, ask).await.into(),
        None => in_process(mcp, ask).await,
    }
}

/// `workflow.<name> {args...}`: the exposed workflow, as `lobster_run`
/// runs it with its defaults.
pub(crate) async fn run_exposed(
    mcp: &Mcp,
    principal: &Principal,
    exposed: &Exposed,
    args: Map<String, Value>,
) -> Ran {
    let ask = Ask {
        request: RunRequest {
            what: What::Workflow(exposed.path.display().to_string()),
            args: Value::Object(args),
            cwd: None,
            started_by: principal.label(),
        },
        timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
        max_bytes: DEFAULT_MAX_BYTES,
    };
    in_process(mcp, ask).await
}

/// Runs `ask` in the engine of this process, as `POST /runs` does; a run
/// still executing after the timeout is cancelled (its commands killed).
async fn in_process(mcp: &Mcp, ask: Ask) -> Ran {
    let runs = match mcp.state.runs().await {
        Ok(runs) => runs,
        Err(e) => return failure(e.message()).into(),
    };
    let started = match runs.start(ask.request).await {
        Ok(started) => started,
        Err(e) => return failure(e.to_string()).into(),
    };
    let run_id = started.run_id.clone();
    let mut abandoned = crate::runs::CancelOnDrop::new(
        runs.clone(),
        &run_id,
        Channel::Mcp,
        "the caller went away while the run executed",
    );
    let envelope = match tokio::time::timeout(ask.timeout, started.envelope()).await {
        Ok(envelope) => envelope,
        Err(_) => {
            let ms = ask.timeout.as_millis();
            let decider = Decider {
                by: Some("timeout".into()),
                via: Channel::Mcp,
                presence: None,
                seen: None,
                comment: Some(format!("timeout_ms {ms} passed")),
            };
            if let Err(e) = runs.cancel(&run_id, decider).await {
                tracing::warn!(%run_id, error = %e, "cancelling a run that timed out");
            }
            error_envelope(format!("lobster run timed out after {ms} ms"))
        }
    };
    abandoned.disarm();
    let paused = matches!(
        envelope.get("status").and_then(Value::as_str),
        Some("needs_approval" | "needs_input")
    )
    .then(|| Paused {
        run_id: run_id.clone(),
        envelope: envelope.clone(),
        max_bytes: ask.max_bytes,
    });
    Ran {
        answer: envelope_answer(bounded(with_run_id(envelope, Some(&run_id)), ask.max_bytes)),
        paused,
    }
}

/// `envelope`, or an error envelope when it serialises to more than `max`
/// bytes.
fn bounded(envelope: Value, max: u64) -> Value {
    let size = envelope.to_string().len() as u64;
    if size <= max {
        return envelope;
    }
    let run_id = envelope
        .get("runId")
        .and_then(Value::as_str)
        .map(str::to_string);
    with_run_id(
        error_envelope(format!(
            "lobster output exceeded max_stdout_bytes ({size} bytes, at most {max})"
        )),
        run_id.as_deref(),
    )
}

/// `lobster_resume {token | approvalId, approve, response?}`: decides the
/// gate as the caller, through the same policy as every channel: a gate
/// that needs a person refuses an agent.
pub(crate) async fn resume(
    mcp: &Mcp,
    principal: &Principal,
    args: Map<String, Value>,
) -> CallToolResult {
    let given = [
        text(&args, "token"),
        text(&args, "approvalId"),
        text(&args, "runId"),
    ];
    let id = match given {
        [Some(token), None, None] => match clawdis_engine::token::decode(token) {
            Ok(clawdis_engine::token::Token::State { state_key, .. }) => state_key,
            Ok(_) => return failure("this token carries its whole state; resume it with lobster"),
            Err(e) => return failure(format!("token: {}", e.message)),
        },
        [None, Some(id), None] | [None, None, Some(id)] => id.to_string(),
        [None, None, None] => return failure("token, approvalId or runId is required"),
        _ => return failure("give one of token, approvalId and runId"),
    };
    let choice = match (args.get("response"), args.get("approve")) {
        (Some(response), _) if !response.is_null() => Choice::Respond(response.clone()),
        (_, Some(Value::Bool(true))) => Choice::Approve,
        (_, Some(Value::Bool(false))) => Choice::Deny,
        _ => {
            return failure("approve (true or false) is required, or response for an input gate");
        }
    };
    let approvals = match mcp.state.approvals().await {
        Ok(approvals) => approvals,
        Err(e) => return failure(e.message()),
    };
    let decider = Decider {
        by: Some(principal.label()),
        via: Channel::Mcp,
        presence: principal.presence(),
        seen: None,
        comment: None,
    };
    let run_id = approvals.get(&id).await.ok().map(|a| a.run_id);
    match approvals.decide(&id, choice, decider).await {
        Ok(envelope) => envelope_answer(with_run_id(envelope, run_id.as_deref())),
        Err(e) => failure(e.to_string()),
    }
}

/// `runs_list {status?, workflow?, limit?, cursor?}` → `{runs, next}`.
pub(crate) async fn list(mcp: &Mcp, args: Map<String, Value>) -> CallToolResult {
    let query = RunQuery {
        status: text(&args, "status").and_then(HistoryStatus::parse),
        workflow: text(&args, "workflow").map(str::to_string),
        limit: args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
        cursor: text(&args, "cursor").map(str::to_string),
    };
    let page = match mcp.state.runs().await {
        Ok(runs) => runs.list(&query).await.map_err(|e| e.to_string()),
        Err(e) => Err(e.message().to_string()),
    };
    match page {
        Ok(page) => {
            let page = json!(page);
            let count = page["runs"].as_array().map_or(0, Vec::len);
            let text = format!("{count} run(s); the structured content lists them")
                + &if page["next"].is_string() {
                    ", more with cursor = next".to_string()
                } else {
                    String::new()
                };
            answer(page, text, false)
        }
        Err(e) => failure(e),
    }
}

/// `run_status {runId}` → the run with its steps and decisions.
pub(crate) async fn status(mcp: &Mcp, args: Map<String, Value>) -> CallToolResult {
    let Some(id) = text(&args, "runId") else {
        return failure("runId is required");
    };
    let run = match mcp.state.runs().await {
        Ok(runs) => runs.get(id).await.map_err(|e| e.to_string()),
        Err(e) => Err(e.message().to_string()),
    };
    match run {
        Ok(run) => {
            let run = json!(run);
            let text = format!(
                "run {id}: {}",
                run.get("status")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
            );
            answer(run, text, false)
        }
        Err(e) => failure(e),
    }
}

/// `approvals_list {status?}` → `{approvals}`.
pub(crate) async fn approvals(mcp: &Mcp, args: Map<String, Value>) -> CallToolResult {
    let listed = match mcp.state.approvals().await {
        Ok(approvals) => approvals
            .list_in(text(&args, "status"))
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.message().to_string()),
    };
    match listed {
        Ok(listed) => {
            let pending = listed
                .iter()
                .filter(|a| a.state == clawdis_approvals::ApprovalState::Pending)
                .count();
            let text = format!("{} approval(s), {pending} pending", listed.len());
            answer(json!({ "approvals": listed }), text, false)
        }
        Err(e) => failure(e),
    }
}

/// `lobster_run` with `lobster_path`: that executable runs the pipeline
/// or workflow, as OpenClaw's lobster tool spawns it.
mod spawned {
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::{Path, PathBuf};
    use std::process::Stdio;

    use clawdis_approvals::What;
    use rmcp::model::CallToolResult;
    use serde_json::Value;
    use tokio::io::AsyncReadExt as _;

    use super::{Ask, Mcp, bounded, envelope_answer, error_envelope, failure, with_run_id};

    /// The process group of a spawned `lobster`, killed when the call ends
    /// early (a timeout, too much output, the caller gone).
    struct KillOnDrop(Option<i32>);

    impl KillOnDrop {
        fn kill(&mut self) {
            if let Some(pid) = self.0.take() {
                // SAFETY: kill(2) with a negative pid signals the process
                // group this child leads; it touches no memory of ours.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
        }
    }

    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            self.kill();
        }
    }

    /// `path` if it may be run: absolute, a regular executable file named
    /// `lobster`, and not a symlink out of its directory.
    pub(super) fn checked(path: &str) -> Result<PathBuf, String> {
        let given = Path::new(path);
        if !given.is_absolute() {
            return Err(format!("lobster_path must be absolute, not {path}"));
        }
        if given.file_name().and_then(|n| n.to_str()) != Some("lobster") {
            return Err(format!(
                "lobster_path must name a file called lobster, not {path}"
            ));
        }
        let link =
            std::fs::symlink_metadata(given).map_err(|e| format!("lobster_path {path}: {e}"))?;
        let real = std::fs::canonicalize(given).map_err(|e| format!("lobster_path {path}: {e}"))?;
        if link.file_type().is_symlink() {
            let dir = given
                .parent()
                .and_then(|d| std::fs::canonicalize(d).ok())
                .ok_or_else(|| format!("lobster_path {path}: no directory"))?;
            if real.parent() != Some(dir.as_path()) {
                return Err(format!(
                    "lobster_path {path} is a symlink out of its directory (to {})",
                    real.display()
                ));
            }
        }
        let meta = std::fs::metadata(&real).map_err(|e| format!("lobster_path {path}: {e}"))?;
        if !meta.is_file() {
            return Err(format!("lobster_path {path} is not a regular file"));
        }
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(format!("lobster_path {path} is not executable"));
        }
        Ok(given.to_path_buf())
    }

    /// The envelope in `stdout`: all of it, else its last `{…}` suffix
    /// (output a renderer printed before it is skipped).
    fn envelope_in(stdout: &str) -> Option<Value> {
        let object = |v: Value| v.get("ok").is_some_and(Value::is_boolean).then_some(v);
        if let Ok(v) = serde_json::from_str::<Value>(stdout.trim()) {
            return object(v);
        }
        stdout
            .match_indices('{')
            .find_map(|(at, _)| serde_json::from_str::<Value>(stdout[at..].trim()).ok())
            .and_then(object)
    }

    pub(super) async fn run(mcp: &Mcp, path: &str, ask: Ask) -> CallToolResult {
        let program = match checked(path) {
            Ok(p) => p,
            Err(e) => return failure(e),
        };
        let mut command = tokio::process::Command::new(&program);
        command.arg("run").arg("--mode").arg("tool");
        match &ask.request.what {
            What::Pipeline(pipeline) => {
                command.arg(pipeline);
            }
            What::Workflow(workflow) => {
                let file = if Path::new(workflow).is_absolute() {
                    PathBuf::from(workflow)
                } else {
                    let dirs = mcp
                        .state
                        .manager
                        .settings()
                        .workflow_dirs(mcp.state.manager.home());
                    let library = clawdis_engine::workflow::library::discover(&dirs);
                    match library.workflows.into_iter().find(|w| &w.name == workflow) {
                        Some(entry) => entry.path,
                        None => return failure(format!("no workflow named {workflow}")),
                    }
                };
                command
                    .arg("--file")
                    .arg(file)
                    .arg("--args-json")
                    .arg(ask.request.args.to_string());
            }
        }
        if let Some(cwd) = &ask.request.cwd {
            // The engine checks a run's cwd itself; a spawned one is checked here.
            if !(cwd.is_absolute() && cwd.is_dir()) {
                return failure(format!(
                    "cwd: {} is not an absolute path to a directory",
                    cwd.display()
                ));
            }
            command.current_dir(cwd);
        }
        command
            .env("LOBSTER_MODE", "tool")
            .env("LOBSTER_STATE_DIR", mcp.state.state_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: a timeout kills its commands too.
            .process_group(0)
            .kill_on_drop(true);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => return failure(format!("starting {}: {e}", program.display())),
        };
        let mut group = KillOnDrop(child.id().and_then(|p| i32::try_from(p).ok()));
        let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take())
        else {
            return failure("the lobster process has no output pipes");
        };
        let limit = ask.max_bytes;
        let work = async {
            let mut out = Vec::new();
            let mut err = Vec::new();
            let read_out = async {
                let mut chunk = [0u8; 16 * 1024];
                loop {
                    let n = stdout.read(&mut chunk).await?;
                    if n == 0 {
                        return Ok::<bool, std::io::Error>(true);
                    }
                    out.extend_from_slice(&chunk[..n]);
                    if out.len() as u64 > limit {
                        return Ok(false);
                    }
                }
            };
            let read_err = stderr.read_to_end(&mut err);
            let (within, _) = tokio::join!(read_out, read_err);
            (within, out, err)
        };
        let outcome = tokio::time::timeout(ask.timeout, work).await;
        let Ok((within, out, err)) = outcome else {
            group.kill();
            let _ = child.wait().await;
            return envelope_answer(error_envelope(format!(
                "lobster subprocess timed out after {} ms",
                ask.timeout.as_millis()
            )));
        };
        if !matches!(within, Ok(true)) {
            group.kill();
            let _ = child.wait().await;
            return envelope_answer(error_envelope(format!(
                "lobster output exceeded max_stdout_bytes ({limit})"
            )));
        }
        let status = child.wait().await;
        // It ended by itself: what it left running is its own business.
        group.0 = None;
        let stdout = String::from_utf8_lossy(&out);
        let Some(envelope) = envelope_in(&stdout) else {
            let code = status
                .ok()
                .and_then(|s| s.code())
                .map_or_else(|| "killed".to_string(), |c| c.to_string());
            let stderr = String::from_utf8_lossy(&err);
            let said = if stderr.trim().is_empty() {
                stdout.trim()
            } else {
                stderr.trim()
            };
            return envelope_answer(error_envelope(format!("lobster failed ({code}): {said}")));
        };
        // A paused run is recorded with its run id, found by its gate.
        let gate = [
            "/requiresApproval/resumeToken",
            "/requiresInput/resumeToken",
        ]
        .iter()
        .find_map(|p| envelope.pointer(p).and_then(Value::as_str))
        .and_then(|t| match clawdis_engine::token::decode(t) {
            Ok(clawdis_engine::token::Token::State { state_key, .. }) => Some(state_key),
            _ => None,
        });
        let run_id = match (gate, mcp.state.approvals().await) {
            (Some(gate), Ok(approvals)) => approvals.get(&gate).await.ok().map(|a| a.run_id),
            _ => None,
        };
        envelope_answer(bounded(with_run_id(envelope, run_id.as_deref()), limit))
    }
}
