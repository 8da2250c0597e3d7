//! The tool-mode JSON envelope OpenClaw parses.

use crate::error::Error;
use crate::value::{Object, Value};

/// Outcome status of a successful envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Finished; `output` holds the items.
    Ok,
    /// Paused at an approval gate.
    NeedsApproval,
    /// Paused for structured input.
    NeedsInput,
    /// Rejected or cancelled.
    Cancelled,
}

impl Status {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::NeedsApproval => "needs_approval",
            Status::NeedsInput => "needs_input",
            Status::Cancelled => "cancelled",
        }
    }
}

/// A tool envelope: `{protocolVersion, ok, status, output, requiresApproval, requiresInput}`
/// or `{protocolVersion, ok:false, error:{type, message}}`.
#[derive(Clone, Debug, PartialEq)]
pub enum Envelope {
    /// A successful run (possibly paused or cancelled).
    Success {
        /// Status.
        status: Status,
        /// Items (empty unless `Ok`).
        output: Vec<Value>,
        /// The approval request, when paused for approval.
        requires_approval: Option<Value>,
        /// The input request, when paused for input.
        requires_input: Option<Value>,
        /// Why a person denied the run, for the agent: what they said, and
        /// that a denial means stop (a denial made through the backend;
        /// Lobster's own `resume --approve no` has none).
        reason: Option<String>,
        /// Who decided the gate, how and when, when this envelope is the
        /// recorded end of a run decided before this call (a late `resume`
        /// collects it and decides nothing itself).
        decided: Option<Value>,
    },
    /// A failure.
    Failure(Error),
}

impl Envelope {
    /// A finished run.
    pub fn ok(output: Vec<Value>) -> Envelope {
        Envelope::Success {
            status: Status::Ok,
            output,
            requires_approval: None,
            requires_input: None,
            reason: None,
            decided: None,
        }
    }

    /// A cancelled run.
    pub fn cancelled() -> Envelope {
        Envelope::Success {
            status: Status::Cancelled,
            output: Vec::new(),
            requires_approval: None,
            requires_input: None,
            reason: None,
            decided: None,
        }
    }

    /// A run a person denied: cancelled, with why, for the agent.
    pub fn denied(by: &str, said: Option<&str>) -> Envelope {
        let why = said
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map_or_else(String::new, |s| format!(": {s}"));
        Envelope::Success {
            status: Status::Cancelled,
            output: Vec::new(),
            requires_approval: None,
            requires_input: None,
            reason: Some(format!(
                "Denied by {by}{why}. A denial means stop: do not retry this, rephrase it or \
                 find another way to do it."
            )),
            decided: None,
        }
    }

    /// This envelope as the recorded end of a run whose gate was decided
    /// before the call that gets it: `decided` says by whom, how and when.
    pub fn decided_before(mut self, decided: Value) -> Envelope {
        if let Envelope::Success { decided: said, .. } = &mut self {
            *said = Some(decided);
        }
        self
    }

    /// A run paused for approval.
    pub fn needs_approval(request: Value) -> Envelope {
        Envelope::Success {
            status: Status::NeedsApproval,
            output: Vec::new(),
            requires_approval: Some(request),
            requires_input: None,
            reason: None,
            decided: None,
        }
    }

    /// A run paused for input.
    pub fn needs_input(request: Value) -> Envelope {
        Envelope::Success {
            status: Status::NeedsInput,
            output: Vec::new(),
            requires_approval: None,
            requires_input: Some(request),
            reason: None,
            decided: None,
        }
    }

    /// The process exit code for this envelope.
    pub fn exit_code(&self) -> i32 {
        match self {
            Envelope::Success { .. } => 0,
            Envelope::Failure(e) => e.kind.exit_code(),
        }
    }

    /// The status a service run has with this envelope (see
    /// [`clawdis_store::HistoryStatus`]).
    pub fn history_status(&self) -> clawdis_store::HistoryStatus {
        use clawdis_store::HistoryStatus as H;
        match self {
            Envelope::Failure(_) => H::Failed,
            Envelope::Success { status, .. } => match status {
                Status::Ok => H::Ok,
                Status::NeedsApproval => H::NeedsApproval,
                Status::NeedsInput => H::NeedsInput,
                Status::Cancelled => H::Cancelled,
            },
        }
    }

    /// The envelope as JSON, keys in Lobster's order.
    pub fn to_value(&self) -> Value {
        let mut obj = Object::new();
        obj.insert("protocolVersion", Value::from(1.0));
        match self {
            Envelope::Success {
                status,
                output,
                requires_approval,
                requires_input,
                reason,
                decided,
            } => {
                obj.insert("ok", Value::Bool(true));
                obj.insert("status", Value::from(status.as_str()));
                obj.insert("output", Value::Array(output.clone()));
                obj.insert(
                    "requiresApproval",
                    requires_approval.clone().unwrap_or(Value::Null),
                );
                obj.insert(
                    "requiresInput",
                    requires_input.clone().unwrap_or(Value::Null),
                );
                if let Some(reason) = reason {
                    obj.insert("reason", Value::from(reason.as_str()));
                }
                if let Some(decided) = decided {
                    obj.insert("decided", decided.clone());
                }
            }
            Envelope::Failure(e) => {
                obj.insert("ok", Value::Bool(false));
                let mut err = Object::new();
                err.insert("type", Value::from(e.kind.as_str()));
                err.insert("message", Value::from(e.message.as_str()));
                obj.insert("error", Value::Object(err));
            }
        }
        Value::Object(obj)
    }

    /// Reads back an envelope written by [`Envelope::to_value`] (a recorded
    /// result); `None` when `value` is not one.
    pub fn from_value(value: &Value) -> Option<Envelope> {
        let Value::Object(obj) = value else {
            return None;
        };
        if obj.get("ok") == Some(&Value::Bool(false)) {
            let Some(Value::Object(err)) = obj.get("error") else {
                return None;
            };
            let kind = match err.get("type") {
                Some(Value::String(t)) => crate::error::ErrorKind::from_wire(t)?,
                _ => return None,
            };
            let message = match err.get("message") {
                Some(Value::String(m)) => m.to_string(),
                _ => String::new(),
            };
            return Some(Envelope::Failure(Error::new(kind, message)));
        }
        let status = match obj.get("status") {
            Some(Value::String(s)) => match &**s {
                "ok" => Status::Ok,
                "needs_approval" => Status::NeedsApproval,
                "needs_input" => Status::NeedsInput,
                "cancelled" => Status::Cancelled,
                _ => return None,
            },
            _ => return None,
        };
        let output = match obj.get("output") {
            Some(Value::Array(items)) => items.clone(),
            _ => Vec::new(),
        };
        let present = |key: &str| obj.get(key).filter(|v| **v != Value::Null).cloned();
        Some(Envelope::Success {
            status,
            output,
            requires_approval: present("requiresApproval"),
            requires_input: present("requiresInput"),
            reason: match obj.get("reason") {
                Some(Value::String(r)) => Some(r.to_string()),
                _ => None,
            },
            decided: present("decided"),
        })
    }

    /// The envelope as printed: pretty JSON plus a newline.
    pub fn render(&self) -> String {
        self.to_value().to_json_pretty() + "\n"
    }
}

impl From<Error> for Envelope {
    fn from(e: Error) -> Self {
        Envelope::Failure(e)
    }
}
