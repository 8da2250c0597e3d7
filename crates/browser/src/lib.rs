//! The clawd browser: Clawdis launches its own Chrome/Chromium with an
//! isolated profile (never the user's), themed "clawd" in lobster orange, on
//! dedicated ports. This crate knows nothing about Tauri or HTTP.

pub mod color;
pub mod discovery;
pub mod launch;
pub mod process;
pub mod profile;
pub mod settings;

use serde::Serialize;

/// Errors from the browser crate; serialisable so servers can return them.
#[derive(Debug, thiserror::Error, Serialize)]
#[serde(tag = "kind", content = "message", rename_all = "snake_case")]
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
}

impl From<std::io::Error> for BrowserError {
    fn from(e: std::io::Error) -> Self {
        BrowserError::Io(e.to_string())
    }
}

/// The crate's result type.
pub type Result<T, E = BrowserError> = std::result::Result<T, E>;
