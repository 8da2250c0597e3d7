//! What an event is sent as, and to whom: the `{type, timestamp, data}`
//! body and the receivers, from the workflow's `webhooks:` block and the
//! settings' global webhooks.

use std::path::Path;

use clawdis_engine::workflow::Webhooks as WorkflowHooks;
use clawdis_store::{HistoryKind, NewDelivery, RunKind, RunStatus, StoredEvent};
use serde_json::{Value, json};

use crate::settings::ServiceSettings;
use crate::{ApprovalLinks, Approvals, ApprovalsError};

/// The deliveries of `event`: one per receiver, each with the same body.
/// An event whose run is gone has none.
pub(super) async fn deliveries_for(
    approvals: &Approvals,
    settings: &ServiceSettings,
    links: Option<&ApprovalLinks>,
    event: &StoredEvent,
) -> Result<Vec<NewDelivery>, ApprovalsError> {
    let Some((mut data, hooks)) = subject(approvals, event).await? else {
        tracing::debug!(seq = event.seq, subject = %event.subject, "event without its run");
        return Ok(Vec::new());
    };
    let mut urls: Vec<&str> = hooks.url_for(&event.kind).into_iter().collect();
    for hook in &settings.webhooks {
        if hook.wants(&event.kind) && !urls.contains(&hook.url.as_str()) {
            urls.push(&hook.url);
        }
    }
    if urls.is_empty() {
        return Ok(Vec::new());
    }
    // A pending approval gate's signed link, when the user made this
    // backend reachable: it opens a page that asks; only that page decides.
    if let (Some(base), Some(links), Some(fields)) =
        (&settings.public_base_url, links, data.as_object_mut())
        && event.kind == "approval.pending"
        && fields.get("gate").and_then(Value::as_str) == Some("approval")
        && let Some(run) = approvals.store().get_run(&event.subject).await?
    {
        let token = links.sign(&run.state_key, run.expires_at.as_deref());
        fields.insert(
            "approvalUrl".into(),
            json!(format!("{}/approve/{token}", base.trim_end_matches('/'))),
        );
    }
    let body = json!({ "type": event.kind, "timestamp": event.at, "data": data });
    let payload_json = serde_json::to_string(&body)
        .map_err(|e| ApprovalsError::Invalid(format!("webhook payload: {e}")))?;
    Ok(urls
        .into_iter()
        .map(|url| NewDelivery {
            id: format!("msg_{}", uuid::Uuid::new_v4().simple()),
            kind: event.kind.clone(),
            url: url.to_string(),
            payload_json: payload_json.clone(),
        })
        .collect())
}

/// The event's `data` and the webhooks of the workflow it came from.
async fn subject(
    approvals: &Approvals,
    event: &StoredEvent,
) -> Result<Option<(Value, WorkflowHooks)>, ApprovalsError> {
    let store = approvals.store();
    if event.kind.starts_with("approval.") {
        let Some(run) = store.get_run(&event.subject).await? else {
            return Ok(None);
        };
        let hooks = gate_hooks(approvals, &run).await;
        let approval = approvals.get(&event.subject).await?;
        let data =
            serde_json::to_value(&approval).map_err(|e| ApprovalsError::Invalid(e.to_string()))?;
        return Ok(Some((data, hooks)));
    }
    // A run's end: a service run (its history row), or a run a `lobster`
    // process started, which ends at the resume of its last gate.
    if let Some(history) = store.get_history(&event.subject).await? {
        let view = crate::view::load_run(store, &event.subject, |_| {})
            .await?
            .ok_or_else(|| ApprovalsError::NotFound(format!("run {}", event.subject)))?;
        let hooks = match history.kind {
            HistoryKind::Workflow => hooks_in(&history.definition, &event.subject),
            HistoryKind::Pipeline => WorkflowHooks::default(),
        };
        let data =
            serde_json::to_value(&view).map_err(|e| ApprovalsError::Invalid(e.to_string()))?;
        return Ok(Some((data, hooks)));
    }
    let Some(run) = store.get_run(&event.subject).await? else {
        return Ok(None);
    };
    let hooks = gate_hooks(approvals, &run).await;
    let status = match run.status {
        RunStatus::Done => "ok",
        other => other.as_str(),
    };
    let result: Value = run
        .result_json
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
        .unwrap_or(Value::Null);
    let data = json!({
        "runId": run.state_key,
        "workflow": run.workflow_name,
        "status": status,
        "finishedAt": run.decided_at,
        "result": result,
    });
    Ok(Some((data, hooks)))
}

/// The webhooks of the workflow a gate's run belongs to: the definition a
/// service run kept, else the file a `lobster` run named.
async fn gate_hooks(approvals: &Approvals, run: &clawdis_store::Run) -> WorkflowHooks {
    if let Some(run_id) = &run.run_id {
        return match approvals.store().get_history(run_id).await {
            Ok(Some(h)) if h.kind == HistoryKind::Workflow => hooks_in(&h.definition, run_id),
            Ok(_) => WorkflowHooks::default(),
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
