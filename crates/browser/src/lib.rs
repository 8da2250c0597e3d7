//! The clawd browser: Clawdis launches its own Chrome/Chromium with an
//! isolated profile (never the user's), themed "clawd" in lobster orange, on
//! dedicated ports. This crate knows nothing about Tauri or HTTP: it returns
//! typed results, and the server maps them to statuses.
//!
//! Layers, each using only those below it: the leaves (`cdp`, `frames`, `element`,
//! `events`, `snapshot`, `storage`, `emulation`, `inspect`, `wait`, ...)
//! work on one connection or page; `manager` owns the browser and its tabs;
//! `act`, `hooks`, `logs` and `doctor` are operations on a `Manager`.

pub mod act;
pub mod action;
pub mod cdp;
pub mod color;
pub mod consent;
pub mod devices;
pub mod discovery;
pub mod doctor;
pub mod element;
pub mod emulation;
pub mod events;
pub mod files;
pub mod frames;
pub mod hooks;
pub mod input;
pub mod inspect;
pub mod launch;
pub mod logs;
pub mod manager;
pub mod metrics;
pub mod policy;
pub mod process;
pub mod profile;
pub mod refs;
pub mod screencast;
pub mod session;
pub mod settings;
pub mod snapshot;
pub mod storage;
pub mod targets;
pub mod wait;

/// Errors from the browser crate, typed by what went wrong; the server
/// decides what each means over HTTP.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// Bad configuration (a relative executable path, port 9222, ...).
    #[error("{0}")]
    Config(String),
    /// No Chrome/Chromium executable was found.
    #[error("{0}")]
    NotFound(String),
    /// The CDP port is taken.
    #[error("{0}")]
    PortInUse(String),
    /// Reading or writing profile or settings files failed.
    #[error("{0}")]
    Io(String),
    /// A request the caller got wrong; `code` is a stable machine-readable tag.
    #[error("{message}")]
    Invalid {
        /// What is wrong.
        message: String,
        /// A stable code such as `ACT_INVALID_REQUEST`.
        code: Option<&'static str>,
    },
    /// A tab, profile or element that does not exist.
    #[error("{0}")]
    Missing(String),
    /// The request conflicts with the browser's state (not running, disabled,
    /// ambiguous target id prefix).
    #[error("{0}")]
    Conflict(String),
    /// A ref that names no element now: from a snapshot of a document
    /// that is gone, never given, or its element left the page (code
    /// `detached`, as a session's action fails).
    #[error("{0}")]
    StaleRef(String),
    /// Refused by policy (evaluate disabled, target mismatch).
    #[error("{message}")]
    Forbidden {
        /// Why.
        message: String,
        /// A stable code such as `ACT_EVALUATE_DISABLED`.
        code: Option<&'static str>,
    },
    /// Not supported by this server.
    #[error("{0}")]
    Unsupported(String),
    /// The DevTools protocol reported an error.
    #[error("{0}")]
    Cdp(String),
    /// A JavaScript dialog blocks the page until it is answered.
    #[error("{0}")]
    DialogOpen(String),
    /// The browser did not answer in time.
    #[error("{0}")]
    Timeout(String),
    /// The page's site could not be reached (no name, no connection, a
    /// TLS failure): the browser worked, the site did not answer.
    #[error("{0}")]
    Unreachable(String),
    /// A person has the page (a hand-off): only reading it is allowed
    /// until they hand it back.
    #[error("{0}")]
    HandedOff(String),
}

impl BrowserError {
    /// A request the caller got wrong, with no code.
    pub fn invalid(message: impl Into<String>) -> Self {
        BrowserError::Invalid {
            message: message.into(),
            code: None,
        }
    }

    /// A request the caller got wrong, with a stable code.
    pub fn invalid_code(code: &'static str, message: impl Into<String>) -> Self {
        BrowserError::Invalid {
            message: message.into(),
            code: Some(code),
        }
    }

    /// What kind of error this is, as a stable snake_case name.
    pub fn kind(&self) -> &'static str {
        match self {
            BrowserError::Config(_) => "config",
            BrowserError::NotFound(_) => "not_found",
            BrowserError::PortInUse(_) => "port_in_use",
            BrowserError::Io(_) => "io",
            BrowserError::Invalid { .. } => "invalid",
            BrowserError::Missing(_) => "missing",
            BrowserError::Conflict(_) => "conflict",
            BrowserError::StaleRef(_) => "stale_ref",
            BrowserError::Forbidden { .. } => "forbidden",
            BrowserError::Unsupported(_) => "unsupported",
            BrowserError::Cdp(_) => "cdp",
            BrowserError::DialogOpen(_) => "dialog_open",
            BrowserError::Timeout(_) => "timeout",
            BrowserError::Unreachable(_) => "unreachable",
            BrowserError::HandedOff(_) => "handed_off",
        }
    }

    /// The machine-readable code, if any.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            BrowserError::Invalid { code, .. } | BrowserError::Forbidden { code, .. } => *code,
            // The sessions' failure code for the same mistake: one name.
            BrowserError::StaleRef(_) => Some("detached"),
            BrowserError::DialogOpen(_) => Some("DIALOG_OPEN"),
            BrowserError::HandedOff(_) => Some("handed_off"),
            _ => None,
        }
    }
}

impl From<std::io::Error> for BrowserError {
    fn from(e: std::io::Error) -> Self {
        BrowserError::Io(e.to_string())
    }
}

/// The crate's result type.
pub type Result<T, E = BrowserError> = std::result::Result<T, E>;
