//! Resuming paused workflow runs.
use crate::context::Ctx;
use crate::envelope::Envelope;
use crate::error::Error;
use crate::pause::Intent;
use crate::value::Value;

/// Resumes a workflow run stored under `state_key`.
pub async fn resume_stored(_state_key: &str, _intent: Intent, _ctx: &Ctx) -> Envelope {
    Error::runtime("Workflow resume state not found").into()
}

/// Resumes a legacy inline workflow token.
pub async fn resume_inline(_payload: Value, _intent: Intent, _ctx: &Ctx) -> Envelope {
    Error::runtime("Workflow resume state not found").into()
}
