//! What a failed command answers the window: the error serialised as
//! `{error, kind, code?}`, so a page can tell a refused choice from a run
//! someone else decided without reading the message.

use clawdis_approvals::ApprovalsError;
use clawdis_browser::BrowserError;
use serde::Serialize;

/// A command's error as the window receives it.
#[derive(Debug, Serialize)]
pub struct CommandError {
    /// The message to show.
    error: String,
    /// What kind of failure it is (`invalid`, `already_decided`, ...).
    kind: &'static str,
    /// A stable code, where the error has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
}

impl From<ApprovalsError> for CommandError {
    fn from(e: ApprovalsError) -> Self {
        let kind = match &e {
            ApprovalsError::NotFound(_) => "not_found",
            ApprovalsError::AlreadyDecided(_) => "already_decided",
            ApprovalsError::Invalid(_) => "invalid",
            ApprovalsError::Forbidden(_) => "forbidden",
            ApprovalsError::Gone(_) => "gone",
            ApprovalsError::Elsewhere(_) => "elsewhere",
            ApprovalsError::Mismatch(_) => "mismatch",
            ApprovalsError::Stale(_) => "stale",
            ApprovalsError::Parse(_) => "parse",
            ApprovalsError::Store(_) => "store",
        };
        CommandError {
            error: e.to_string(),
            kind,
            code: None,
        }
    }
}

impl From<clawdis_server::requests::NotWaiting> for CommandError {
    fn from(e: clawdis_server::requests::NotWaiting) -> Self {
        CommandError {
            error: e.to_string(),
            kind: "gone",
            code: None,
        }
    }
}

impl From<clawdis_server::ApiError> for CommandError {
    fn from(e: clawdis_server::ApiError) -> Self {
        let kind = match e.status().as_u16() {
            404 => "not_found",
            409 => "conflict",
            400 => "invalid",
            _ => "failed",
        };
        CommandError {
            error: e.message().to_string(),
            kind,
            code: e.code(),
        }
    }
}

impl From<BrowserError> for CommandError {
    fn from(e: BrowserError) -> Self {
        CommandError {
            kind: e.kind(),
            code: e.code(),
            error: e.to_string(),
        }
    }
}
