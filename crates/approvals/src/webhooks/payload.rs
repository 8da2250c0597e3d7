//! What an event is sent as, and to whom: the `{type, timestamp, data}`
//! body and the receivers, from the workflow's `webhooks:` block and the
//! settings' global webhooks.

use std::path::Path;

use clawdis_engine::workflow::Webhooks as WorkflowHooks;
use clawdis_store::{
    DeliveryLink, Gate, HistoryKind, HistoryRun, NewDelivery, RunKind, RunStatus, Store,
    StoredEvent,
};
use serde_json::{Value, json};

use crate::settings::ServiceSettings;
use crate::{Approvals, ApprovalsError};

/// What an event is about, read once from the store.
enum Subject {
    /// A gate: its pause or decision, or the end of the run a `lobster`
    /// process started, which ends at the resume of its last gate.
    Gate(clawdis_store::Run),
    /// The end of a service run.
    Service(HistoryRun),
}

/// The deliveries of `event`: one per receiver, each with the same body.
/// An event whose run is gone, or that no one receives, has none (and no
/// body is built for it).
pub(super) async fn deliveries_for(
    approvals: &Approvals,
    settings: &ServiceSettings,
    event: &StoredEvent,
) -> Result<Vec<NewDelivery>, ApprovalsError> {
    let store = approvals.store();
    let Some(subject) = find(store, event).await? else {
        tracing::debug!(seq = event.seq, subject = %event.subject, "event without its run");
        return Ok(Vec::new());
    };
    let hooks = match &subject {
        Subject::Gate(run) => gate_hooks(store, run).await,
        Subject::Service(history) => history_hooks(history),
    };
    let kind = kind_of(event, &subject);
    let mut urls: Vec<&str> = hooks.url_for(&kind).into_iter().collect();
    for hook in &settings.webhooks {
        if hook.wants(&kind) && !urls.contains(&hook.url.as_str()) {
            urls.push(&hook.url);
        }
    }
    if urls.is_empty() {
        return Ok(Vec::new());
    }
    let data = data_of(approvals, event, &subject).await?;
    // A link opens a page that asks; only that page decides. It is signed
    // as each attempt is sent, where the user made this backend reachable.
    let link = match &subject {
        Subject::Gate(run)
            if settings.public_base_url.is_some()
                && matches!(kind.as_str(), "approval.pending" | "handoff.requested")
                && run.gate == Gate::Approval =>
        {
            Some(DeliveryLink {
                gate: run.state_key.clone(),
                expires_at: run.expires_at.clone(),
            })
        }
        _ => None,
    };
    // The ledger's head travels with every payload: a receiver that keeps
    // them holds a copy a rewrite of the ledger would not match.
    let head = crate::audit_head(store).await?;
    let body = json!({ "type": kind, "timestamp": event.at, "data": data, "auditHead": head });
    let payload_json = serde_json::to_string(&body)
        .map_err(|e| ApprovalsError::Invalid(format!("webhook payload: {e}")))?;
    Ok(urls
        .into_iter()
        .map(|url| NewDelivery {
            id: format!("msg_{}", uuid::Uuid::new_v4().simple()),
            kind: kind.clone(),
            url: url.to_string(),
            payload_json: payload_json.clone(),
            link: link.clone(),
        })
        .collect())
}

/// What `event` is called to its receivers: a browser session's hand-off
/// is `handoff.requested` when it waits and `handoff.ended` when the
/// person hands back or declines; every other event keeps its name.
fn kind_of(event: &StoredEvent, subject: &Subject) -> String {
    let handoff = matches!(subject, Subject::Gate(run)
        if run.workflow_name.as_deref() == Some(crate::BROWSER_HANDOFF));
    match event.kind.as_str() {
        "approval.pending" if handoff => "handoff.requested".into(),
        "approval.decided" if handoff => "handoff.ended".into(),
        other => other.to_string(),
    }
}

/// The gate or service run `event` is about.
async fn find(store: &Store, event: &StoredEvent) -> Result<Option<Subject>, ApprovalsError> {
    if !event.kind.starts_with("approval.")
        && let Some(history) = store.get_history(&event.subject).await?
    {
        return Ok(Some(Subject::Service(history)));
    }
    Ok(store.get_run(&event.subject).await?.map(Subject::Gate))
}

/// The event's `data`: the approval as `GET /approvals/{id}` shows it
/// (its signed link is added as each attempt is sent), or the run as `GET
/// /runs/{id}` does.
async fn data_of(
    approvals: &Approvals,
    event: &StoredEvent,
    subject: &Subject,
) -> Result<Value, ApprovalsError> {
    match subject {
        Subject::Gate(run) if event.kind.starts_with("approval.") => {
            let mut approval = approvals.with_votes(run).await?;
            // A page's picture stays on this machine: a receiver hears of
            // the page by its URL and title.
            if let Some(page) = &mut approval.context.browser {
                page.screenshot.clear();
            }
            to_json(&approval)
        }
        Subject::Gate(run) => {
            let result: Value = run
                .result_json
                .as_deref()
                .and_then(|r| serde_json::from_str(r).ok())
                .unwrap_or(Value::Null);
            Ok(json!({
                "runId": run.state_key,
                "workflow": run.workflow_name,
                "status": match run.status {
                    RunStatus::Done => "ok",
                    other => other.as_str(),
                },
                "finishedAt": run.decided_at,
                "result": result,
            }))
        }
        Subject::Service(history) => {
            let view = crate::view::load_run(approvals.store(), &history.run_id, |_| {})
                .await?
                .ok_or_else(|| ApprovalsError::NotFound(format!("run {}", history.run_id)))?;
            to_json(&view)
        }
    }
}

fn to_json(value: &impl serde::Serialize) -> Result<Value, ApprovalsError> {
    serde_json::to_value(value).map_err(|e| ApprovalsError::Invalid(e.to_string()))
}

/// The webhooks of a service run's workflow, as it ran.
fn history_hooks(history: &HistoryRun) -> WorkflowHooks {
    match history.kind {
        HistoryKind::Workflow => hooks_in(&history.definition, &history.run_id),
        HistoryKind::Pipeline => WorkflowHooks::default(),
    }
}

/// The webhooks of the workflow a gate's run belongs to: the definition a
/// service run kept, else the file a `lobster` run named.
async fn gate_hooks(store: &Store, run: &clawdis_store::Run) -> WorkflowHooks {
    if let Some(run_id) = &run.run_id {
        return match store.get_history(run_id).await {
            Ok(Some(history)) => history_hooks(&history),
            Ok(None) => WorkflowHooks::default(),
            Err(e) => {
                tracing::warn!(run_id, error = %e, "reading a run's webhooks");
                WorkflowHooks::default()
            }
        };
    }
    if run.kind != RunKind::Workflow {
        return WorkflowHooks::default();
    }
    let state: Value = serde_json::from_str(&run.state_json).unwrap_or(Value::Null);
    // The definition the run paused with, which is what it resumes with.
    if let Some(text) = state.get("definition").and_then(Value::as_str) {
        return hooks_in(text, &run.state_key);
    }
    let Some(path) = state.get("filePath").and_then(Value::as_str) else {
        return WorkflowHooks::default();
    };
    match std::fs::read_to_string(Path::new(path)) {
        Ok(text) => hooks_in(&text, &run.state_key),
        Err(e) => {
            tracing::warn!(path, error = %e, "reading a paused workflow's webhooks");
            WorkflowHooks::default()
        }
    }
}

/// The `webhooks:` of a definition; a bad block sends to no one but is
/// logged (the file was checked when it ran).
fn hooks_in(definition: &str, run: &str) -> WorkflowHooks {
    WorkflowHooks::in_text(definition).unwrap_or_else(|e| {
        tracing::warn!(run, error = %e.message, "a workflow's webhooks block");
        WorkflowHooks::default()
    })
}
