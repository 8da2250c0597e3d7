//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663, on
//! rmcp's [`TaskManager`]): for a client that declares the extension, a
//! tool call that waits for a person answers at once with a task, which
//! the client polls with `tasks/get` and may end with `tasks/cancel`.
//!
//! - `browser_request_approval` and `browser_handoff` always become tasks;
//! - `lobster_run` and `workflow.*` run as before, and become a task only
//!   when the run pauses at a gate; the task then follows the run through
//!   every later gate to its end, and completes with its last envelope.
//!
//! While a person is to decide, the task asks the client an elicitation
//! with the gate's prompt (`input_required`), so a host can show it. The
//! answer decides nothing: whoever answers is the agent's host, and a gate
//! is decided where it always is (a person in Clawdis, or `lobster_resume`
//! through the same policy as every channel). A task is its caller's: any
//! other principal is told it does not exist.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clawdis_approvals::{Channel, Decider};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ElicitRequest, ElicitRequestParams, ElicitationSchema, GetTaskResult,
    InputRequest, InputResponses, Task,
};
use rmcp::task_manager::{TaskContext, TaskExit, TaskFuture, TaskManager, TaskOptions};
use serde_json::Value;
use tokio::task::JoinSet;

use super::Mcp;
use super::workflows::{Paused, follow_answer, waiting_summary};
use crate::Principal;

/// How long a task whose run waits at a gate is kept (a gate has no
/// deadline of its own unless its workflow gives one): a day. After it the
/// run still waits; `run_status` follows it.
const RUN_TASK_TTL: Duration = Duration::from_secs(24 * 3600);

/// How long a waiting browser tool's task outlives its own `timeout_ms`.
const PERSON_TASK_GRACE: Duration = Duration::from_secs(60);

/// How often a client should poll, in milliseconds.
const POLL_INTERVAL_MS: u64 = 1000;

/// What a tool call that may become a task waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Waits {
    /// A person, from the start: a task at once.
    Person,
    /// A run, which may pause at a gate: a task if it does.
    Run,
}

/// What tool `name` waits for, if it may become a task.
pub(crate) fn waits(name: &str) -> Option<Waits> {
    match name {
        "browser_request_approval" | "browser_handoff" => Some(Waits::Person),
        "lobster_run" => Some(Waits::Run),
        _ if name.starts_with("workflow.") => Some(Waits::Run),
        _ => None,
    }
}

/// The tasks of one backend, each with the principal it belongs to.
#[derive(Default)]
pub(crate) struct Tasks {
    manager: TaskManager,
    /// Each task's owner (a principal's label), by task id, until the
    /// manager has let the task go.
    owners: Mutex<HashMap<String, Owner>>,
}

/// Whose a task is, and until when.
struct Owner {
    label: String,
    /// When the manager has let the task go for sure: it ends by its TTL
    /// and is kept one TTL more.
    gone: Instant,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").finish_non_exhaustive()
    }
}

impl Tasks {
    /// Starts `work` as a task of `owner`, kept for `ttl`.
    fn spawn(
        &self,
        owner: &Principal,
        ttl: Duration,
        status: String,
        work: impl FnOnce(TaskContext) -> TaskFuture,
    ) -> Task {
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        let options = TaskOptions::new()
            .with_ttl_ms(ttl_ms)
            .with_poll_interval_ms(POLL_INTERVAL_MS)
            .with_status_message(status);
        let task = self.manager.spawn(options, work);
        let now = Instant::now();
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        owners.retain(|_, o| o.gone > now);
        let owner = Owner {
            label: owner.label(),
            gone: now + ttl.saturating_mul(2),
        };
        owners.insert(task.task_id.clone(), owner);
        task
    }

    /// Refuses task `id` to anyone but its owner, as if it did not exist.
    fn owned(&self, owner: &Principal, id: &str) -> Result<(), ErrorData> {
        let owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        match owners.get(id) {
            Some(o) if o.label == owner.label() => Ok(()),
            _ => Err(ErrorData::invalid_params(
                format!("unknown task: {id}"),
                None,
            )),
        }
    }

    /// `tasks/get`.
    pub(crate) fn get(&self, owner: &Principal, id: &str) -> Result<GetTaskResult, ErrorData> {
        self.owned(owner, id)?;
        Ok(GetTaskResult::new(self.manager.get_task(id)?))
    }

    /// `tasks/update`: the client's answers to the task's elicitations.
    pub(crate) fn update(
        &self,
        owner: &Principal,
        id: &str,
        responses: InputResponses,
    ) -> Result<(), ErrorData> {
        self.owned(owner, id)?;
        self.manager.update_task(id, responses)
    }

    /// `tasks/cancel`: the task stops its wait (and cancels its run).
    pub(crate) fn cancel(&self, owner: &Principal, id: &str) -> Result<(), ErrorData> {
        self.owned(owner, id)?;
        self.manager.cancel_task(id)
    }

    /// Withdraws the task's elicitation `key`, which its gate no longer
    /// needs (decided before the client answered): the manager lets a
    /// request go only with an answer, so the server gives it one.
    fn withdraw(&self, id: &str, key: &str) {
        let none = BTreeMap::from([(key.to_string(), Value::Null)]);
        if let Err(e) = self.manager.update_task(id, none) {
            tracing::debug!(task = id, error = %e, "withdrawing an elicitation");
        }
    }
}

/// The elicitation that tells the client's person what a person decides,
/// and where: a form with no field, whose answer decides nothing.
fn elicitation(message: &str) -> InputRequest {
    let shown = clawdis_approvals::legible(message).plain();
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: shown,
            requested_schema: ElicitationSchema::new(BTreeMap::new()),
        },
    ))
}

/// The one sentence every elicitation ends with.
const DECIDES_NOTHING: &str = "A person decides this in Clawdis (its window, its notification or a paired device). Answering here decides nothing.";

/// The elicitations a task asks its client, and their answers.
struct Asker {
    ctx: TaskContext,
    /// Whether the client takes them.
    on: bool,
    answers: JoinSet<Result<Value, TaskExit>>,
}

impl Asker {
    fn new(ctx: &TaskContext, on: bool) -> Asker {
        Asker {
            ctx: ctx.clone(),
            on,
            answers: JoinSet::new(),
        }
    }

    /// Asks `message` under `key`; the task is `input_required` when this
    /// returns (so the first `tasks/get` after a task is made sees it).
    fn ask(&mut self, key: &str, message: &str) {
        if !self.on {
            return;
        }
        let ctx = self.ctx.clone();
        let request = elicitation(&format!("{message}\n\n{DECIDES_NOTHING}"));
        let key = key.to_string();
        let mut answer = Box::pin(async move { ctx.request_input(key, request).await });
        // Its first poll records the request; a task then awaits the answer.
        let mut now = std::task::Context::from_waker(std::task::Waker::noop());
        match answer.as_mut().poll(&mut now) {
            std::task::Poll::Pending => {
                self.answers.spawn(answer);
            }
            std::task::Poll::Ready(Err(TaskExit::Error(e))) => {
                tracing::warn!(task = self.ctx.task_id(), error = %e, "asking a task's client");
            }
            std::task::Poll::Ready(_) => {}
        }
    }
}

/// A waiting browser tool as a task: `wait` runs it (to its answer), and
/// the task asks the client `message` meanwhile when `ask` (the client
/// takes form elicitations).
pub(crate) fn person(
    mcp: &Mcp,
    owner: &Principal,
    ttl: Duration,
    message: String,
    ask: bool,
    wait: impl std::future::Future<Output = CallToolResult> + Send + 'static,
) -> Task {
    let status = format!("waiting for a person: {message}");
    mcp.tasks
        .spawn(owner, ttl + PERSON_TASK_GRACE, status, move |ctx| {
            let mut asker = Asker::new(&ctx, ask);
            asker.ask("person", &message);
            Box::pin(async move {
                tokio::pin!(wait);
                loop {
                    tokio::select! {
                        answer = &mut wait => {
                            ctx.set_status_message(ended(&answer));
                            return Ok(answer);
                        }
                        // Dropping the wait ends it as a caller that went
                        // away does: its request is cancelled.
                        () = ctx.cancelled() => return Err(TaskExit::Cancelled),
                        Some(answered) = asker.answers.join_next() => heard(ctx.task_id(), answered),
                    }
                }
            })
        })
}

/// A finished wait's status message: its answer's text.
fn ended(answer: &CallToolResult) -> String {
    let text = answer
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default();
    format!("ended: {text}")
}

/// Logs the client's answer to an elicitation: it decides nothing.
fn heard(task: &str, answered: Result<Result<Value, TaskExit>, tokio::task::JoinError>) {
    if let Ok(Ok(answer)) = answered {
        let action = answer
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("none");
        tracing::info!(
            task,
            action,
            "the client answered a task's elicitation; a person decides"
        );
    }
}

/// A run paused at a gate, as a task that follows it to its end: each
/// gate it waits at is asked of the client (when `ask`), and the task
/// completes with the run's last envelope. `tasks/cancel` cancels the run.
pub(crate) fn run(mcp: &Arc<Mcp>, owner: &Principal, paused: Paused, ask: bool) -> Task {
    let status = waiting_summary(&paused.envelope, &paused.run_id);
    let mcp2 = mcp.clone();
    let by = owner.label();
    mcp.tasks
        .spawn(owner, RUN_TASK_TTL, status.clone(), move |ctx| {
            let mut asker = Asker::new(&ctx, ask);
            let first = gate_identity(&paused.envelope).map(|identity| {
                asker.ask("gate-1", &status);
                (identity, "gate-1".to_string())
            });
            Box::pin(follow(mcp2, ctx, by, paused, asker, first))
        })
}

/// Follows `paused` to its end for task `ctx`; `gate` is the gate it
/// paused at, asked already.
async fn follow(
    mcp: Arc<Mcp>,
    ctx: TaskContext,
    by: String,
    paused: Paused,
    mut asker: Asker,
    mut gate: Option<(String, String)>,
) -> Result<CallToolResult, TaskExit> {
    let failed = |e: &str| TaskExit::Error(ErrorData::internal_error(e.to_string(), None));
    let runs = mcp.state.runs().await.map_err(|e| failed(e.message()))?;
    let mut changes = runs.changes();
    let mut decisions = mcp
        .state
        .approvals()
        .await
        .map_err(|e| failed(e.message()))?
        .subscribe();
    // The gates asked so far (each asked under a key of its own).
    let mut gates = u32::from(gate.is_some());
    loop {
        let run = runs
            .get(&paused.run_id)
            .await
            .map_err(|e| failed(&e.to_string()))?;
        let envelope: Value = run
            .result
            .as_deref()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_default();
        if run.status.is_final() {
            ctx.set_status_message(format!("run {} ended: {}", paused.run_id, run.status));
            return Ok(follow_answer(envelope, &paused));
        }
        let waiting = matches!(
            run.status,
            clawdis_store::HistoryStatus::NeedsApproval | clawdis_store::HistoryStatus::NeedsInput
        );
        let identity = waiting.then(|| gate_identity(&envelope)).flatten();
        if identity != gate.as_ref().map(|(id, _)| id.clone()) {
            if let Some((_, key)) = gate.take() {
                mcp.tasks.withdraw(ctx.task_id(), &key);
            }
            if let Some(identity) = identity {
                gates += 1;
                let key = format!("gate-{gates}");
                let summary = waiting_summary(&envelope, &paused.run_id);
                ctx.set_status_message(summary.clone());
                asker.ask(&key, &summary);
                gate = Some((identity, key));
            } else {
                ctx.set_status_message(format!("run {} is running", paused.run_id));
            }
        }
        tokio::select! {
            _ = changes.changed() => {}
            _ = decisions.recv() => {}
            // A decision made by another process shows only here.
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            Some(answered) = asker.answers.join_next() => heard(ctx.task_id(), answered),
            () = ctx.cancelled() => {
                let decider = Decider {
                    by: Some(by.clone()),
                    via: Channel::Mcp,
                    presence: None,
                    seen: None,
                    comment: Some("tasks/cancel".into()),
                };
                if let Err(e) = runs.cancel(&paused.run_id, decider).await {
                    tracing::warn!(run_id = %paused.run_id, error = %e, "cancelling a task's run");
                }
                return Err(TaskExit::Cancelled);
            }
        }
    }
}

/// What tells one gate of a run from the next: its resume token.
fn gate_identity(envelope: &Value) -> Option<String> {
    ["requiresApproval", "requiresInput"]
        .iter()
        .find_map(|k| envelope.get(k)?.get("resumeToken")?.as_str())
        .map(str::to_string)
}
