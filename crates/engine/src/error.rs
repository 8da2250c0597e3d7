//! The engine's error type, mirroring Lobster's two error classes.

use std::sync::Arc;

use serde::Serialize;

/// Whether an error is the caller's input (`parse_error`, exit 2) or a
/// failure while running (`runtime_error`, exit 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Bad pipeline text, arguments, tokens or responses.
    ParseError,
    /// A failure while running a pipeline or workflow.
    RuntimeError,
}

impl ErrorKind {
    /// The `error.type` string of the tool envelope.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ParseError => "parse_error",
            ErrorKind::RuntimeError => "runtime_error",
        }
    }

    /// The kind with this wire spelling.
    pub fn from_wire(s: &str) -> Option<ErrorKind> {
        match s {
            "parse_error" => Some(ErrorKind::ParseError),
            "runtime_error" => Some(ErrorKind::RuntimeError),
            _ => None,
        }
    }

    /// The process exit code Lobster uses for this kind.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::ParseError => 2,
            ErrorKind::RuntimeError => 1,
        }
    }
}

/// What kind of failure an error is. Decisions such as retries and
/// `on_error` look at this, never at the message text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Failure {
    /// Bad input: pipeline text, arguments, tokens or responses.
    Input,
    /// A command, step or request failed while running.
    #[default]
    Failed,
    /// A pipeline inside a workflow step stopped at a gate it cannot pause
    /// at; retries and `on_error` do not apply.
    Halted,
    /// A step or block ran past its `timeout_ms`.
    TimedOut,
    /// An operating-system call failed; the error keeps its source.
    Io,
    /// The state store failed; the error keeps its source.
    Store,
    /// The caller may not do this: a gate that needs a person, asked by
    /// an agent.
    NotAllowed,
    /// The caller decided this already (an approver approving twice).
    Again,
    /// The gate changed since the decider was shown it.
    Stale,
}

/// An engine error: its class on the wire, what kind of failure it is,
/// Lobster's exact message, and the underlying error where there is one.
#[derive(Clone, Debug, thiserror::Error, Serialize)]
#[error("{message}")]
pub struct Error {
    /// The error class.
    #[serde(rename = "type")]
    pub kind: ErrorKind,
    /// What kind of failure it is.
    #[serde(skip)]
    pub failure: Failure,
    /// The human-readable message, as Lobster words it.
    pub message: String,
    /// The error this one comes from, such as an I/O error.
    #[serde(skip)]
    #[source]
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Errors are equal when class, failure and message are: the source is a
/// detail of where they came from.
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.failure == other.failure && self.message == other.message
    }
}

impl Eq for Error {}

impl Error {
    /// An error of class `kind`, as read back from an envelope.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let failure = match kind {
            ErrorKind::ParseError => Failure::Input,
            ErrorKind::RuntimeError => Failure::Failed,
        };
        Error {
            kind,
            failure,
            message: message.into(),
            source: None,
        }
    }

    /// A `parse_error`: bad input.
    pub fn parse(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::ParseError, message)
    }

    /// A `runtime_error`: something failed while running.
    pub fn runtime(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::RuntimeError, message)
    }

    /// A `runtime_error` of another kind of failure.
    pub fn failed(failure: Failure, message: impl Into<String>) -> Self {
        Error {
            failure,
            ..Error::runtime(message)
        }
    }

    /// A `runtime_error` for a failed operating-system call, keeping it.
    pub fn io(message: impl Into<String>, source: std::io::Error) -> Self {
        Error {
            source: Some(Arc::new(source)),
            ..Error::failed(Failure::Io, message)
        }
    }

    /// The same error with its message prefixed.
    pub fn prefixed(self, prefix: &str) -> Self {
        Error {
            message: format!("{prefix}{}", self.message),
            ..self
        }
    }
}

impl From<clawdis_store::StoreError> for Error {
    fn from(e: clawdis_store::StoreError) -> Self {
        let message = format!("state store: {e}");
        Error {
            source: Some(Arc::new(e)),
            ..Error::failed(Failure::Store, message)
        }
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
