//! Runs as the service shows them (HTTP, MCP, the CLI): the history row,
//! its steps and the decisions on its gates, in the names of the runs API.

use clawdis_store::{
    Channel, Decision, HistoryKind, HistoryRun, HistoryStatus, Run, StepRecord, StepStatus, Store,
    Vote,
};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::approval::Json;

/// One page of runs.
#[derive(Clone, Debug, Serialize)]
pub struct RunPage {
    /// The runs, newest first.
    pub runs: Vec<RunView>,
    /// The cursor of the next page; `None` on the last.
    pub next: Option<String>,
}

/// A run with its steps and decisions.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    /// Its id.
    pub run_id: String,
    /// `workflow` or `pipeline`.
    pub kind: HistoryKind,
    /// The workflow's name (`null` for a pipeline).
    pub workflow: Option<String>,
    /// `running`, `ok`, `needs_approval`, `needs_input`, `cancelled` or `failed`.
    pub status: HistoryStatus,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended for good.
    pub finished_at: Option<String>,
    /// The principal that started it.
    pub started_by: String,
    /// The args it was given.
    pub args: Option<Json>,
    /// Where its steps ran.
    pub cwd: Option<String>,
    /// Each step of the workflow, in order.
    pub steps: Vec<StepView>,
    /// Each decision on its gates, oldest first.
    pub decisions: Vec<DecisionView>,
    /// Its last envelope.
    pub result: Option<Json>,
}

/// One step of a run.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepView {
    /// The step's id.
    pub id: String,
    /// `pending`, `running`, `ok`, `failed`, `skipped` or `cancelled`.
    pub status: StepStatus,
    /// When its first attempt started.
    pub started_at: Option<String>,
    /// When it ended.
    pub finished_at: Option<String>,
    /// How long it took, every attempt included.
    pub duration_ms: Option<u64>,
    /// How many attempts it made.
    pub attempts: u32,
    /// Its result.
    pub output: Option<Json>,
    /// Its error, when it failed.
    pub error: Option<String>,
}

/// One decision on a run's gate.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionView {
    /// The gate's short id (`null` for an input gate recorded before
    /// input gates had one).
    pub approval_id: Option<String>,
    /// `approve`, `deny`, `cancel`, `respond` or `expire`.
    pub decision: &'static str,
    /// Who decided.
    pub by: Option<String>,
    /// The channel: `cli`, `app`, `notification`, `http` or `expiry`.
    pub via: Channel,
    /// When (RFC 3339).
    pub at: Option<String>,
    /// What they said; a denial's reason.
    pub comment: Option<String>,
    /// How a person showed they were there: `click`, `token`, `passkey`,
    /// `os`; `null` for agents, links and the expiry.
    pub presence: Option<clawdis_store::Presence>,
}

/// The API's word for a decision: a rejection is a `deny`.
pub fn decision_word(decision: Decision) -> &'static str {
    match decision {
        Decision::Reject => "deny",
        other => other.as_str(),
    }
}

fn raw(json: Option<&str>) -> Option<Json> {
    json.and_then(|j| RawValue::from_string(j.to_string()).ok())
}

/// Run `run_id` as the store has it, its steps first passed through
/// `merge` (the live journal of a run this process executes).
pub(crate) async fn load_run(
    store: &Store,
    run_id: &str,
    merge: impl FnOnce(&mut Vec<StepRecord>),
) -> Result<Option<RunView>, clawdis_store::StoreError> {
    let Some(run) = store.get_history(run_id).await? else {
        return Ok(None);
    };
    let mut steps = store.history_steps(run_id).await?;
    merge(&mut steps);
    let gates = store.history_gates(run_id).await?;
    let votes = gate_votes(store, &gates).await?;
    Ok(Some(RunView::new(&run, &steps, &gates, &votes)))
}

/// The approvals counted on each of `gates` (for `min_approvals`).
pub(crate) async fn gate_votes(
    store: &Store,
    gates: &[Run],
) -> Result<Vec<Vec<Vote>>, clawdis_store::StoreError> {
    let mut votes = Vec::with_capacity(gates.len());
    for gate in gates {
        votes.push(store.votes(&gate.state_key).await?);
    }
    Ok(votes)
}

/// The decisions on `gate`: each counted approval before the one that
/// decided it, then its decision.
pub(crate) fn gate_decisions(gate: &Run, votes: &[Vote]) -> Vec<DecisionView> {
    let mut decisions: Vec<DecisionView> = votes
        .iter()
        .filter(|v| {
            !(gate.decision == Some(Decision::Approve)
                && gate.decided_by.as_deref() == Some(v.approver.as_str()))
        })
        .map(|v| DecisionView {
            approval_id: gate.approval_id.clone(),
            decision: "approve",
            by: Some(v.approver.clone()),
            via: v.via,
            at: Some(v.at.clone()),
            comment: v.comment.clone(),
            presence: v.presence,
        })
        .collect();
    if let (Some(decision), Some(via)) = (gate.decision, gate.decided_via) {
        decisions.push(DecisionView {
            approval_id: gate.approval_id.clone(),
            decision: decision_word(decision),
            by: gate.decided_by.clone(),
            via,
            at: gate.decided_at.clone(),
            comment: gate.decision_comment.clone(),
            presence: gate.decided_presence,
        });
    }
    decisions
}

impl RunView {
    /// The view of `run` with its steps, gates and the votes on each gate.
    pub(crate) fn new(
        run: &HistoryRun,
        steps: &[StepRecord],
        gates: &[Run],
        votes: &[Vec<Vote>],
    ) -> RunView {
        RunView {
            run_id: run.run_id.clone(),
            kind: run.kind,
            workflow: run.workflow.clone(),
            status: run.status,
            started_at: run.started_at.clone(),
            finished_at: run.finished_at.clone(),
            started_by: run.started_by.clone(),
            args: raw(Some(&run.args_json)),
            cwd: run.cwd.clone(),
            steps: steps
                .iter()
                .map(|s| StepView {
                    id: s.id.clone(),
                    status: s.status,
                    started_at: s.started_at.clone(),
                    finished_at: s.finished_at.clone(),
                    duration_ms: s.duration_ms,
                    attempts: s.attempts,
                    output: raw(s.output_json.as_deref()),
                    error: s.error.clone(),
                })
                .collect(),
            decisions: gates
                .iter()
                .zip(votes)
                .flat_map(|(gate, votes)| gate_decisions(gate, votes))
                .collect(),
            result: raw(run.result_json.as_deref()),
        }
    }
}

/// Run `run` as one self-contained document (`GET /runs/{id}/export`).
pub(crate) fn export(run: &HistoryRun, view: RunView) -> serde_json::Value {
    serde_json::json!({
        "format": "clawdis.run/1",
        "exportedAt": clawdis_store::now_iso(),
        "definition": {
            "kind": run.kind,
            "workflow": run.workflow,
            "text": run.definition,
        },
        "run": view,
    })
}
