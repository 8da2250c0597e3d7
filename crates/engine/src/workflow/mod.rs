//! Workflow files (`.lobster`, `.yaml`, `.yml`, `.json`): loading ([`file`](mod@file)),
//! args (`args`), the run loop and its policies (`run`), running each
//! kind of step (`steps`), the state they share (`state`), approval and
//! input gates with approver identity (`gates`), the `webhooks:` and
//! `triggers:` blocks ([`Webhooks`], [`Trigger`]), and recording a pause
//! ([`run_file`], `pause_for`), and what a paused gate unlocks
//! ([`unlocks_of_state`]). Resuming is [`crate::resume`]'s.

mod args;
pub(crate) mod condition;
pub mod dry_run;
pub mod file;
mod gates;
pub mod gobby;
pub mod graph;
pub mod library;
pub(crate) mod programs;
mod run;
mod state;
mod steps;
pub(crate) mod template;
mod triggers;
mod unlocks;
mod webhooks;

pub use args::{check_args, resolve_workflow_args};
pub use file::duration_secs;
pub(crate) use gates::check_identity;
pub use gates::{Gate, PipelineInput, PipelineResume};
pub use state::{Outcome, Run, output_items};
pub use triggers::{Catchup, Trigger, TriggerKind, parse_cron, parse_triggers};
pub use unlocks::{Ran, Unlocked, Unlocks, of_state as unlocks_of_state};
pub use webhooks::{WEBHOOK_KEYS, Webhooks, check_url};

use std::path::Path;

use crate::context::Ctx;
use crate::envelope::Envelope;
use crate::error::Result;
use crate::journal::Journal;
use crate::pause::{Gate as PauseGate, Pause};
use crate::value::{Object, Value};
use clawdis_store::{HistoryKind, RunKind};

use self::file::Workflow;

/// Runs a workflow file from the start; a pause is recorded in the store.
/// A run without a journal (`lobster run`) gets one, so that a pause
/// records the run, its file's text and its steps in the history.
pub async fn run_file(path: &Path, provided: &Value, ctx: &Ctx) -> Result<Envelope> {
    let text = file::read(path)?;
    let workflow = file::parse(&text, path)?;
    if ctx.journal.is_some() {
        return run_workflow(&workflow, provided, ctx).await;
    }
    let journal = Journal::for_lobster(
        HistoryKind::Workflow,
        Some(workflow.library_name()),
        text,
        provided.to_json(),
        workflow.pending_steps(),
        &ctx.cwd,
    );
    let ctx = Ctx {
        journal: Some(journal),
        ..ctx.clone()
    };
    run_workflow(&workflow, provided, &ctx).await
}

/// Runs a loaded workflow from the start; a pause is recorded in the store.
pub async fn run_workflow(workflow: &Workflow, provided: &Value, ctx: &Ctx) -> Result<Envelope> {
    if workflow.pipeline.as_ref().is_some_and(|p| !p.enabled) {
        return Err(crate::error::Error::runtime(format!(
            "Pipeline {} is disabled (enabled: false)",
            workflow.name.as_deref().unwrap_or("(unnamed)")
        )));
    }
    if workflow
        .steps
        .iter()
        .any(|s| s.approval.is_some() || s.input.is_some())
    {
        // It will most likely pause and record the pause. The opening runs
        // on this thread's runtime: let it start (SQLite's own thread then
        // works while the steps run) before steps that may not yield.
        ctx.state.open_ahead();
        tokio::task::yield_now().await;
    }
    let args = resolve_workflow_args(workflow, provided);
    let mut run = Run {
        workflow,
        args,
        results: Object::new(),
        last: None,
        stack: vec![
            std::fs::canonicalize(&workflow.path).unwrap_or_else(|_| workflow.path.clone()),
        ],
        pipeline_resume: None,
        login: Default::default(),
    };
    let outcome = run.run_from(0, ctx).await?;
    match pause_for(workflow, &run, outcome) {
        Ok(envelope) => Ok(envelope),
        Err(pause) => pause.record(ctx).await,
    }
}

/// The envelope of a finished run, or the pause to record.
pub(crate) fn pause_for(
    workflow: &Workflow,
    run: &Run<'_>,
    outcome: Outcome,
) -> Result<Envelope, Pause> {
    let (gate, resume_at, results) = match outcome {
        Outcome::Done(items) => return Ok(Envelope::ok(items)),
        Outcome::Paused {
            gate,
            resume_at,
            results,
        } => (gate, resume_at, results),
    };
    let mut state = Object::new();
    state.insert(
        "filePath",
        Value::from(workflow.path.to_string_lossy().into_owned()),
    );
    // The definition the person is shown is the one that runs after the
    // gate: the run resumes with this text, never the file as edited
    // since (issue #34; Lobster re-reads the file).
    if !workflow.text.is_empty() {
        state.insert("definition", Value::from(workflow.text.as_str()));
    }
    // And so do the program files those steps run from its directory.
    let programs = programs::bind(workflow, resume_at);
    if !programs.is_empty() {
        state.insert("programs", Value::Object(programs));
    }
    state.insert("resumeAtIndex", Value::from(resume_at));
    state.insert("steps", Value::Object(results));
    state.insert("args", Value::Object(run.args.clone()));
    if let Some(last) = &run.last {
        state.insert("lastStepId", Value::from(last.as_str()));
    }
    let (gate_kind, request) = match gate {
        Gate::Approval {
            step_id,
            request,
            identity,
        } => {
            state.insert("approvalStepId", Value::from(step_id));
            state.insert("approvalIdentity", Value::Object(identity));
            (PauseGate::Approval, request)
        }
        Gate::PipelineInput {
            step_id,
            request,
            subject,
            input,
        } => {
            state.insert("inputStepId", Value::from(step_id));
            state.insert("inputKind", Value::from("pipeline_command"));
            state.insert(
                "inputSchema",
                request.get("responseSchema").cloned().unwrap_or_default(),
            );
            if let Some(s) = subject {
                state.insert("inputSubject", s);
            }
            let mut pi = Object::new();
            pi.insert("pipeline", Value::Array(input.pipeline));
            pi.insert("resumeAtIndex", Value::from(input.resume_at));
            pi.insert("items", Value::Array(input.items));
            state.insert("pipelineInput", Value::Object(pi));
            (PauseGate::Input, request)
        }
        Gate::Input {
            step_id,
            request,
            subject,
        } => {
            state.insert("inputStepId", Value::from(step_id));
            state.insert(
                "inputSchema",
                request.get("responseSchema").cloned().unwrap_or_default(),
            );
            if let Some(s) = subject {
                state.insert("inputSubject", s);
            }
            (PauseGate::Input, request)
        }
    };
    state.insert("createdAt", Value::from(clawdis_store::now_iso()));
    Err(Pause {
        kind: RunKind::Workflow,
        gate: gate_kind,
        request,
        state: Value::Object(state),
        workflow_name: workflow.name.clone(),
    })
}
