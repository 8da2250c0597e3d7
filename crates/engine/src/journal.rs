//! The step journal of a run: what each step of a workflow did (start,
//! end, duration, attempts, output, error) while the run loop executes it.
//! The workflow service reads it live and stores it with the run's end. A
//! `lobster` run is recorded only if it pauses: its journal holds the
//! run's history row until then ([`Journal::unrecorded`]).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use clawdis_store::{HistoryKind, NewHistory, StepRecord, StepStatus, now_iso};

use crate::value::Value;

/// A step being recorded, with the clock of its first attempt.
#[derive(Debug)]
struct Entry {
    record: StepRecord,
    started: Option<Instant>,
}

/// Who started a run that a `lobster` process started: an agent's shell
/// or OpenClaw, as far as the store can tell.
pub const STARTED_BY_LOBSTER: &str = "lobster";

/// A run's history row and its steps, not written yet.
pub type Unrecorded = (NewHistory, Vec<StepRecord>);

/// The journal of one run, shared by the contexts that run it.
#[derive(Clone, Debug)]
pub struct Journal {
    run_id: Arc<str>,
    entries: Arc<Mutex<Vec<Entry>>>,
    unrecorded: Arc<Mutex<Option<Unrecorded>>>,
}

impl Journal {
    /// An empty journal for run `run_id`, whose history row is written.
    pub fn new(run_id: &str) -> Journal {
        Journal {
            run_id: Arc::from(run_id),
            entries: Arc::default(),
            unrecorded: Arc::default(),
        }
    }

    /// A journal for a run of this process (`lobster run`) that the store
    /// has not seen: `run` and its `steps` are written with its first
    /// pause ([`Journal::take_unrecorded`]), and not at all if it never
    /// pauses.
    pub fn unrecorded(run: NewHistory, steps: Vec<StepRecord>) -> Journal {
        Journal {
            run_id: Arc::from(run.run_id.as_str()),
            entries: Arc::default(),
            unrecorded: Arc::new(Mutex::new(Some((run, steps)))),
        }
    }

    /// [`Journal::unrecorded`] for pipeline `text`, run by `lobster` in
    /// `cwd`.
    pub fn for_lobster_pipeline(text: String, cwd: &std::path::Path) -> Journal {
        Journal::for_lobster(
            HistoryKind::Pipeline,
            None,
            text,
            "{}".to_string(),
            Vec::new(),
            cwd,
        )
    }

    /// [`Journal::unrecorded`] for a run that `lobster` starts in `cwd`,
    /// under a new run id.
    pub(crate) fn for_lobster(
        kind: HistoryKind,
        workflow: Option<String>,
        definition: String,
        args_json: String,
        steps: Vec<StepRecord>,
        cwd: &std::path::Path,
    ) -> Journal {
        let run = NewHistory {
            run_id: uuid::Uuid::new_v4().to_string(),
            kind,
            workflow,
            definition,
            args_json,
            cwd: cwd.to_str().map(str::to_string),
            started_by: STARTED_BY_LOBSTER.to_string(),
            // Who asked, as the OS describes this process and its parents
            // (the agent that spawned `lobster`): what an approval shows.
            // Its parents are kept without their arguments, which may hold
            // secrets of their own; `lobster`'s own are what the agent ran.
            provenance_json: crate::provenance::Process::of(std::process::id())
                .map(|mut p| {
                    for parent in &mut p.parents {
                        parent.args.clear();
                    }
                    p
                })
                .and_then(|p| serde_json::to_string(&p).ok()),
        };
        Journal::unrecorded(run, steps)
    }

    /// The history row still to write, once: whoever takes it writes it.
    pub fn take_unrecorded(&self) -> Option<Unrecorded> {
        self.unrecorded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// The service run it records.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// What has been recorded so far, in the workflow's order.
    pub fn steps(&self) -> Vec<StepRecord> {
        let mut steps: Vec<StepRecord> = self.lock().iter().map(|e| e.record.clone()).collect();
        steps.sort_by_key(|s| s.position);
        steps
    }

    /// Marks every step still running as `status` (a run cancelled or
    /// stopped mid-step); returns the steps.
    pub fn end_running(&self, status: StepStatus) -> Vec<StepRecord> {
        let now = now_iso();
        for entry in self.lock().iter_mut() {
            if entry.record.status == StepStatus::Running {
                entry.record.status = status;
                entry.record.finished_at = Some(now.clone());
                entry.record.duration_ms = entry.started.map(elapsed_ms);
            }
        }
        self.steps()
    }

    /// Step `id` (at `position`) started its first attempt.
    pub(crate) fn started(&self, position: usize, id: &str) {
        self.update(position, id, |entry| {
            entry.started = Some(Instant::now());
            let r = &mut entry.record;
            r.status = StepStatus::Running;
            r.started_at = Some(now_iso());
            r.finished_at = None;
            r.duration_ms = None;
            r.attempts = 0;
            r.output_json = None;
            r.error = None;
        });
    }

    /// Step `id` starts another attempt.
    pub(crate) fn attempt(&self, position: usize, id: &str) {
        self.update(position, id, |entry| entry.record.attempts += 1);
    }

    /// Step `id` ended: done with `output`, or failed with an error.
    pub(crate) fn finished(&self, position: usize, id: &str, end: Result<&Value, &str>) {
        self.update(position, id, |entry| {
            let r = &mut entry.record;
            match end {
                Ok(output) => {
                    r.status = StepStatus::Ok;
                    r.output_json = Some(output.to_json());
                }
                Err(message) => {
                    r.status = StepStatus::Failed;
                    r.error = Some(message.to_string());
                }
            }
            r.finished_at = Some(now_iso());
            r.duration_ms = entry.started.map(elapsed_ms);
        });
    }

    /// Step `id` is not run (its `when` is false).
    pub(crate) fn skipped(&self, position: usize, id: &str) {
        self.update(position, id, |entry| {
            entry.record.status = StepStatus::Skipped;
        });
    }

    /// Step `id` waits: it paused to ask for input mid-pipeline.
    pub(crate) fn waiting(&self, position: usize, id: &str) {
        self.update(position, id, |entry| {
            entry.record.status = StepStatus::Pending;
        });
    }

    fn update(&self, position: usize, id: &str, change: impl FnOnce(&mut Entry)) {
        let mut entries = self.lock();
        let at = match entries.iter().position(|e| e.record.id == id) {
            Some(at) => at,
            None => {
                let position = u32::try_from(position).unwrap_or(u32::MAX);
                entries.push(Entry {
                    record: StepRecord::pending(id, position),
                    started: None,
                });
                entries.len() - 1
            }
        };
        change(&mut entries[at]);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_timed_and_counts_its_attempts() {
        let journal = Journal::new("r1");
        journal.skipped(1, "later");
        journal.started(0, "first");
        journal.attempt(0, "first");
        journal.attempt(0, "first");
        journal.finished(0, "first", Err("exit 1"));
        let steps = journal.steps();
        assert_eq!(steps[0].id, "first", "in the workflow's order");
        assert_eq!(steps[0].status, StepStatus::Failed);
        assert_eq!(steps[0].attempts, 2);
        assert_eq!(steps[0].error.as_deref(), Some("exit 1"));
        assert!(steps[0].duration_ms.is_some() && steps[0].finished_at.is_some());
        assert_eq!(steps[1].status, StepStatus::Skipped);
    }

    #[test]
    fn a_run_stopped_mid_step_ends_the_step() {
        let journal = Journal::new("r1");
        journal.started(0, "slow");
        journal.attempt(0, "slow");
        let steps = journal.end_running(StepStatus::Cancelled);
        assert_eq!(steps[0].status, StepStatus::Cancelled);
        assert!(steps[0].finished_at.is_some());
    }
}
