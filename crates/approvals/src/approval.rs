//! One paused (or decided) run as the app shows it, and the bus events.

use clawdis_store::{Channel, Decision, Gate, RunKind, RunStatus};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::legible::{Legible, legible};
use crate::view::{DecisionView, gate_decisions};

/// How many items a preview carries; `itemCount` has the total.
const PREVIEW_ITEMS: usize = 5;

/// JSON kept as the run wrote it: the windows show objects with their keys
/// in the workflow's order (a schema's fields, an item's columns).
pub type Json = Box<RawValue>;

/// A run paused at a gate, or decided, in the shape the windows read.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The run's id, as every route that takes a run knows it (`GET
    /// /runs/{id}`, `/approvals/{id}`); the same as `runId`.
    pub id: String,
    /// The run's id: the run it belongs to, whoever started it (the
    /// service, or a `lobster` process, whose run is recorded when it
    /// pauses). A gate recorded before runs had ids has its own.
    pub run_id: String,
    /// The gate's key in the store: what a decision on exactly this gate
    /// resumes (a run may pause again at a later gate).
    #[serde(skip)]
    pub state_key: String,
    /// What paused (its spelling is the token kind).
    #[serde(skip)]
    pub kind: RunKind,
    /// The gate's short id: decides exactly this gate (`lobster resume
    /// --id` takes those of approval gates, as in Lobster).
    pub approval_id: Option<String>,
    /// The gate: `approval` or `input`.
    pub gate: Gate,
    /// The gate: `pending`, `decided` (by anyone, through any channel)
    /// or `expired` (decided by its `on_expiry`).
    #[serde(rename = "status")]
    pub state: ApprovalState,
    /// The paused run behind it: `pending`, `running` (being resumed),
    /// `done`, `cancelled` or `failed`.
    #[serde(rename = "runStatus")]
    pub status: RunStatus,
    /// The workflow's name, for workflow files.
    pub workflow: Option<String>,
    /// What the person is asked.
    pub prompt: String,
    /// The first items the gate holds.
    pub items: Vec<Json>,
    /// How many items it holds.
    pub item_count: usize,
    /// The JSON schema of the answer an input gate wants.
    pub response_schema: Option<Json>,
    /// Defaults for that answer, when the workflow gave some.
    pub defaults: Option<Json>,
    /// Who may decide and how many must approve: `{approvers, minApprovals}`.
    pub policy: Policy,
    /// The directory the run paused in; its remaining steps run there.
    pub cwd: Option<String>,
    /// Whether the workflow file on disk differs from the definition the
    /// run paused with, which is what it resumes with; none for a
    /// pipeline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_changed: Option<bool>,
    /// SHA-256 of what the gate shows: its request (prompt, items, policy)
    /// and the state it resumes with (the definition it paused with, the
    /// steps run so far). A decision that names another is refused (409):
    /// the gate changed since it was shown.
    pub digest: String,
    /// When the run paused (RFC 3339).
    pub created_at: String,
    /// `approve`, `reject`, `respond` or `cancel`, once decided.
    pub decision: Option<Decision>,
    /// Who decided, when known.
    pub decided_by: Option<String>,
    /// `cli`, `app`, `notification` or `http`.
    pub decided_via: Option<Channel>,
    /// When (RFC 3339).
    pub decided_at: Option<String>,
    /// What the decider said: an approval's comment, a denial's reason.
    pub comment: Option<String>,
    /// How the decided run ended: its final tool envelope.
    pub result: Option<Json>,
    /// Every decision on the gate, oldest first: the approvals counted
    /// toward `minApprovals`, then the one that decided it.
    pub decisions: Vec<DecisionView>,
}

/// What a person reads of a gate, made legible: the API keeps the raw
/// text, every human view shows this.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Readable {
    /// The workflow's name.
    pub workflow: Option<Legible>,
    /// The prompt.
    pub prompt: Legible,
    /// The items, one pretty-printed JSON value after another; what is not
    /// shown is said.
    pub items: Legible,
}

/// A gate with what a person reads of it: the approval's own fields (JSON
/// kept as written, keys in order), and `readable`.
#[derive(Clone, Debug, Serialize)]
pub struct ForAPerson {
    /// The gate.
    #[serde(flatten)]
    pub approval: Approval,
    /// What a person reads of it.
    pub readable: Readable,
}

/// Where a gate stands, as the approvals API says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalState {
    /// Waiting for a decision.
    Pending,
    /// Decided by someone.
    Decided,
    /// Decided by its expiry.
    Expired,
}

impl ApprovalState {
    /// The state of the gate `run` paused at.
    pub fn of(run: &clawdis_store::Run) -> ApprovalState {
        match run.decision {
            None => ApprovalState::Pending,
            Some(Decision::Expire) => ApprovalState::Expired,
            Some(_) => ApprovalState::Decided,
        }
    }
}

impl Approval {
    /// Reads the stored run and its request block.
    pub fn from_run(run: &clawdis_store::Run) -> Approval {
        let request: Request = serde_json::from_str(&run.request_json).unwrap_or_default();
        let items = request.items.unwrap_or_default();
        let run_id = run.run_id.clone().unwrap_or_else(|| run.state_key.clone());
        Approval {
            id: run_id.clone(),
            run_id,
            state_key: run.state_key.clone(),
            kind: run.kind,
            approval_id: run.approval_id.clone(),
            gate: run.gate,
            state: ApprovalState::of(run),
            status: run.status,
            workflow: run.workflow_name.clone(),
            prompt: match request.prompt {
                Some(serde_json::Value::String(text)) => text,
                Some(other) => other.to_string(),
                None => String::new(),
            },
            item_count: items.len(),
            items: items.into_iter().take(PREVIEW_ITEMS).collect(),
            response_schema: request.response_schema,
            defaults: request.defaults,
            policy: Policy {
                approvers: request.approvers.unwrap_or_else(|| "any".to_string()),
                presence: request.presence.unwrap_or_else(|| "any".to_string()),
                min_approvals: request.min_approvals.unwrap_or(1),
                expires_at: request.expires_at,
                on_expiry: request.on_expiry,
                forbid_self_approval: request.forbid_self_approval.unwrap_or(false),
            },
            cwd: run.cwd.clone(),
            file_changed: file_changed(&run.state_json),
            digest: clawdis_engine::shown::digest(&run.state_json, &run.request_json),
            created_at: run.created_at.clone(),
            decision: run.decision,
            decided_by: run.decided_by.clone(),
            decided_via: run.decided_via,
            decided_at: run.decided_at.clone(),
            comment: run.decision_comment.clone(),
            result: run
                .result_json
                .as_deref()
                .and_then(|r| RawValue::from_string(r.to_string()).ok()),
            decisions: gate_decisions(run, &[]),
        }
    }

    /// What a person reads of the gate: its workflow's name, prompt and
    /// items, each made legible (hidden characters escaped, look-alikes
    /// flagged).
    pub fn readable(&self) -> Readable {
        let mut items = String::new();
        for item in &self.items {
            items.push_str(&pretty(item.get()));
            items.push('\n');
        }
        let more = self.item_count.saturating_sub(self.items.len());
        if more > 0 {
            items.push_str(&format!(
                "… and {more} more item{} not shown here\n",
                if more == 1 { "" } else { "s" }
            ));
        }
        Readable {
            workflow: self.workflow.as_deref().map(legible),
            prompt: legible(&self.prompt),
            items: legible(items.trim_end()),
        }
    }

    /// The gate as a person's view takes it: its fields, and `readable`.
    pub fn for_a_person(self) -> ForAPerson {
        ForAPerson {
            readable: self.readable(),
            approval: self,
        }
    }

    /// Whether only a person may approve the gate: `approvers: human`, or
    /// `presence: verified`.
    pub fn needs_a_person(&self) -> bool {
        self.policy.approvers == "human" || self.policy.presence == "verified"
    }

    /// One line for a notification body: the prompt and the item count.
    pub fn summary(&self) -> String {
        let what = match (&self.workflow, self.item_count) {
            (Some(name), 0) => name.clone(),
            (Some(name), 1) => format!("{name}: 1 item"),
            (Some(name), n) => format!("{name}: {n} items"),
            (None, 0) => "pipeline".to_string(),
            (None, 1) => "1 item".to_string(),
            (None, n) => format!("{n} items"),
        };
        let changed = if self.file_changed == Some(true) {
            " [the workflow file changed since it paused; the paused steps run]"
        } else {
            ""
        };
        format!("{} ({what}){changed}", self.prompt)
    }
}

/// JSON text indented, its keys in the order written.
fn pretty(raw: &str) -> String {
    let mut out = Vec::new();
    let mut from = serde_json::Deserializer::from_str(raw);
    let mut to = serde_json::Serializer::pretty(&mut out);
    match serde_transcode::transcode(&mut from, &mut to) {
        Ok(()) => String::from_utf8(out).unwrap_or_else(|_| raw.to_string()),
        Err(_) => raw.to_string(),
    }
}

/// Whether a paused workflow's file now differs from the definition its
/// state kept (a file gone or unreadable differs too); none when the state
/// kept no definition (a pipeline, or a run paused before they were kept).
fn file_changed(state_json: &str) -> Option<bool> {
    let state: serde_json::Value = serde_json::from_str(state_json).ok()?;
    let kept = state.get("definition")?.as_str()?;
    let path = state.get("filePath")?.as_str()?;
    Some(std::fs::read_to_string(path).map_or(true, |now| now != kept))
}

/// Who may decide a gate, as its workflow file says.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    /// `human` or `any`.
    pub approvers: String,
    /// `verified` when only a paired device's passkey or the operating
    /// system's check approves; else `any`.
    pub presence: String,
    /// How many distinct approvers must approve.
    pub min_approvals: u32,
    /// When the gate expires (RFC 3339), if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// What it comes to then: `cancel`, `deny` or `approve`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_expiry: Option<String>,
    /// Whether the principal that started the run may not approve it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forbid_self_approval: bool,
}

/// The stored request block (`requiresApproval` / `requiresInput`).
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    prompt: Option<serde_json::Value>,
    items: Option<Vec<Json>>,
    response_schema: Option<Json>,
    defaults: Option<Json>,
    approvers: Option<String>,
    presence: Option<String>,
    min_approvals: Option<u32>,
    expires_at: Option<String>,
    on_expiry: Option<String>,
    forbid_self_approval: Option<bool>,
}

/// What the bus carries.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Event {
    /// A run paused at a gate.
    Paused {
        /// The run.
        approval: Approval,
    },
    /// A paused run was decided (anywhere) or its resume finished.
    Changed {
        /// The run as it is now.
        approval: Approval,
    },
}
