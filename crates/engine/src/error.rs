//! The engine's error type, mirroring Lobster's two error classes.

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

/// An engine error: a kind plus Lobster's exact message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{message}")]
pub struct Error {
    /// The error class.
    #[serde(rename = "type")]
    pub kind: ErrorKind,
    /// The human-readable message, as Lobster words it.
    pub message: String,
}

impl Error {
    /// A `parse_error`.
    pub fn parse(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::ParseError,
            message: message.into(),
        }
    }

    /// A `runtime_error`.
    pub fn runtime(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::RuntimeError,
            message: message.into(),
        }
    }

    /// The same error with its message prefixed.
    pub fn prefixed(self, prefix: &str) -> Self {
        Error {
            kind: self.kind,
            message: format!("{prefix}{}", self.message),
        }
    }
}

impl From<clawdis_store::StoreError> for Error {
    fn from(e: clawdis_store::StoreError) -> Self {
        Error::runtime(format!("state store: {e}"))
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
