//! One paused (or decided) run as the app shows it, and the bus events.

use serde::Serialize;
use serde_json::Value;

/// How many items a preview carries; `itemCount` has the total.
const PREVIEW_ITEMS: usize = 5;

/// A run paused at a gate, or decided, in the shape the windows read.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The run's id (its state key); windows and notifications decide by it.
    pub id: String,
    /// `workflow-file` or `pipeline-resume` (the token kind).
    #[serde(skip)]
    pub kind: String,
    /// The short approval id agents may quote (`lobster resume --id`).
    pub approval_id: Option<String>,
    /// `approval` or `input`.
    pub gate: String,
    /// `pending`, `running`, `done`, `cancelled` or `failed`.
    pub status: String,
    /// The workflow's name, for workflow files.
    pub workflow: Option<String>,
    /// What the person is asked.
    pub prompt: String,
    /// The first items the gate holds.
    pub items: Vec<Value>,
    /// How many items it holds.
    pub item_count: usize,
    /// The JSON schema of the answer an input gate wants.
    pub response_schema: Option<Value>,
    /// Defaults for that answer, when the workflow gave some.
    pub defaults: Option<Value>,
    /// The directory the run paused in; its remaining steps run there.
    pub cwd: Option<String>,
    /// When the run paused (RFC 3339).
    pub created_at: String,
    /// `approve`, `reject`, `respond` or `cancel`, once decided.
    pub decision: Option<String>,
    /// Who decided, when known.
    pub decided_by: Option<String>,
    /// `cli`, `app` or `notification`.
    pub decided_via: Option<String>,
    /// When (RFC 3339).
    pub decided_at: Option<String>,
}

impl Approval {
    /// Reads the stored run and its request block.
    pub fn from_run(run: &clawdis_store::Run) -> Approval {
        let request: Value = serde_json::from_str(&run.request_json).unwrap_or(Value::Null);
        let items = request
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let text = |key: &str| request.get(key).and_then(Value::as_str).map(str::to_string);
        Approval {
            id: run.state_key.clone(),
            kind: run.kind.clone(),
            approval_id: run.approval_id.clone(),
            gate: run.gate.clone(),
            status: run.status.as_str().to_string(),
            workflow: run.workflow_name.clone(),
            prompt: text("prompt").unwrap_or_default(),
            item_count: items.len(),
            items: items.into_iter().take(PREVIEW_ITEMS).collect(),
            response_schema: request.get("responseSchema").cloned(),
            defaults: request.get("defaults").cloned(),
            cwd: run.cwd.clone(),
            created_at: run.created_at.clone(),
            decision: run.decision.clone(),
            decided_by: run.decided_by.clone(),
            decided_via: run.decided_via.clone(),
            decided_at: run.decided_at.clone(),
        }
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
        format!("{} ({what})", self.prompt)
    }
}

/// What the bus carries.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
