//! The Clawdis workflow engine: a Rust reimplementation of OpenClaw's
//! Lobster workflow shell.
//!
//! Pipelines (`exec --json … | where … | approve …`) and workflow files run
//! here; paused runs are stored durably through `clawdis-store`. Nothing in
//! this crate knows about windows, tray icons or HTTP servers.

pub mod commands;
pub mod context;
pub mod envelope;
pub mod error;
pub mod exec;
pub mod items;
pub mod journal;
mod js_sort;
mod json_error;
mod json_stream;
pub mod llm;
mod path;
pub mod pause;
pub mod pipeline;
pub mod provenance;
pub mod resume;
mod schema;
pub mod shown;
pub mod token;
pub mod value;
pub mod workflow;

pub use context::{Ctx, Mode, StateHandle};
pub use envelope::{Envelope, Status};
pub use error::{Error, ErrorKind, Failure, Result};
pub use value::Value;

/// What the fuzz targets in `fuzz/` drive besides the public surface.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::exec::shell_free::Direct;
    pub use crate::json_stream::{ChunkedArray, json_items};
}
