//! Triggers: the workflows' `triggers:` blocks, fired by the backend (the
//! app or `clawdis serve`). A cron trigger runs its workflow on its
//! schedule in the local time zone, catching up what it missed while no
//! backend ran as its `catchup` says; a watch trigger runs it when files
//! matching its glob appear or change, passing them as the arg `paths`.
//!
//! How far each trigger is handled (its mark) and whether a person paused
//! it are kept in the store; a fire moves the mark in the same transaction
//! as its run's history row, so each occurrence runs once, across
//! restarts, `kill -9` and two backends on one home. Only one backend, the
//! holder of the store's scheduler lease, fires at a time.

mod schedule;
mod watch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Local, SecondsFormat, Utc};
use clawdis_engine::workflow::{Catchup, Trigger, TriggerKind, library};
use clawdis_store::{Advance, TriggerRecord};
use notify::Watcher as _;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::time::Instant;

use crate::runs::{RunRequest, Runs, What};
use crate::{Approvals, ApprovalsError};

use self::watch::{Batch, Glob};

/// How often the scheduler looks again without being woken: for the
/// lease, a clock that jumped, a machine that slept, a watched directory
/// that appeared.
const POLL: Duration = Duration::from_secs(5);

/// How often the workflow directories are read again even without a file
/// event (a directory created after the start is not watched).
const REDISCOVER: Duration = Duration::from_secs(30);

/// A trigger as `GET /triggers` and `clawdis triggers list` show it.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TriggerView {
    /// Its id: derived from its workflow file, kind, spec and args.
    pub id: String,
    /// The workflow it runs.
    pub workflow: String,
    /// The workflow's file.
    pub path: PathBuf,
    /// `cron` or `watch`.
    pub kind: &'static str,
    /// The schedule or glob, as written.
    pub spec: String,
    /// The args each run gets (a watch adds `paths`).
    pub args: serde_json::Value,
    /// A schedule's catch-up policy: `none`, `one` or `all`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catchup: Option<&'static str>,
    /// When a schedule fires next (RFC 3339 in the local time zone); null
    /// for a watch and while paused.
    pub next: Option<String>,
    /// Whether a person paused it.
    pub paused: bool,
    /// When it last started a run.
    pub last_fired_at: Option<String>,
    /// What keeps it from working, if anything (a watched directory that
    /// does not exist, a run its args could not start).
    pub error: Option<String>,
}

/// A trigger of a workflow of the library.
#[derive(Clone, Debug)]
struct Found {
    id: String,
    workflow: String,
    path: PathBuf,
    trigger: Trigger,
}

/// The triggers of one Clawdis home's workflow library.
pub struct Triggers {
    approvals: Arc<Approvals>,
    dirs: Vec<PathBuf>,
    /// What keeps each trigger from working, by id.
    problems: Mutex<HashMap<String, String>>,
    /// Wakes the scheduler (a trigger paused or resumed here).
    wake: tokio::sync::Notify,
}

impl std::fmt::Debug for Triggers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Triggers")
            .field("dirs", &self.dirs)
            .finish_non_exhaustive()
    }
}

/// A time as the store writes it.
fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A mark read back (a mark that does not read is taken as now).
fn parse_mark(mark: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(mark).map_or_else(|_| Utc::now(), |t| t.with_timezone(&Utc))
}

/// The id of `trigger` of the workflow in `path`: 12 hex digits of a
/// SHA-256 over what makes the trigger what it is.
fn trigger_id(path: &Path, trigger: &Trigger) -> String {
    let args = clawdis_engine::value::Value::Object(trigger.args.clone()).to_json();
    let text = format!(
        "{}\n{}\n{}\n{args}",
        path.display(),
        trigger.kind_name(),
        trigger.spec
    );
    hmac_sha256::Hash::hash(text.as_bytes())[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Triggers {
    /// The triggers of the workflows in `dirs`, recorded in `approvals`'
    /// store.
    pub fn new(approvals: Arc<Approvals>, dirs: Vec<PathBuf>) -> Arc<Triggers> {
        Arc::new(Triggers {
            approvals,
            dirs,
            problems: Mutex::default(),
            wake: tokio::sync::Notify::new(),
        })
    }

    /// Every trigger of the library, with its next fire time.
    pub async fn list(&self) -> Result<Vec<TriggerView>, ApprovalsError> {
        let now = Utc::now();
        let mut views = Vec::new();
        for found in self.found().await? {
            let record = self.arm(&found, now).await?;
            views.push(self.view(&found, &record, now));
        }
        Ok(views)
    }

    /// Pauses trigger `id`: it fires nothing until resumed.
    pub async fn pause(&self, id: &str) -> Result<TriggerView, ApprovalsError> {
        self.set_paused(id, true).await
    }

    /// Resumes trigger `id`. What it would have done while paused is
    /// skipped, not caught up.
    pub async fn resume(&self, id: &str) -> Result<TriggerView, ApprovalsError> {
        self.set_paused(id, false).await
    }

    async fn set_paused(&self, id: &str, paused: bool) -> Result<TriggerView, ApprovalsError> {
        let now = Utc::now();
        let found = self
            .found()
            .await?
            .into_iter()
            .find(|f| f.id == id)
            .ok_or_else(|| {
                ApprovalsError::NotFound(format!(
                    "trigger {id:?}: no such trigger (GET /triggers lists them)"
                ))
            })?;
        self.arm(&found, now).await?;
        let record = self
            .approvals
            .store()
            .set_trigger_paused(id, paused)
            .await?
            .ok_or_else(|| ApprovalsError::NotFound(format!("trigger {id:?}")))?;
        tracing::info!(trigger = id, workflow = %found.workflow, paused, "trigger paused or resumed");
        self.wake.notify_one();
        Ok(self.view(&found, &record, now))
    }

    /// The triggers of the library's workflows, each once.
    async fn found(&self) -> Result<Vec<Found>, ApprovalsError> {
        let dirs = self.dirs.clone();
        let library = tokio::task::spawn_blocking(move || library::discover(&dirs))
            .await
            .map_err(|e| ApprovalsError::Invalid(format!("reading the workflows: {e}")))?;
        let mut found: Vec<Found> = Vec::new();
        for entry in library.workflows {
            for trigger in entry.triggers {
                let id = trigger_id(&entry.path, &trigger);
                if found.iter().any(|f| f.id == id) {
                    continue;
                }
                found.push(Found {
                    id,
                    workflow: entry.name.clone(),
                    path: entry.path.clone(),
                    trigger,
                });
            }
        }
        Ok(found)
    }

    /// The store's record of `found`, made now if it is new.
    async fn arm(
        &self,
        found: &Found,
        now: DateTime<Utc>,
    ) -> Result<TriggerRecord, ApprovalsError> {
        let store = self.approvals.store();
        // Each look reads; only a trigger seen for the first time (or
        // whose workflow was renamed) writes.
        if let Some(record) = store.get_trigger(&found.id).await?
            && record.workflow == found.workflow
        {
            return Ok(record);
        }
        Ok(store
            .arm_trigger(&found.id, &found.workflow, &iso(now))
            .await?)
    }

    fn view(&self, found: &Found, record: &TriggerRecord, now: DateTime<Utc>) -> TriggerView {
        let (catchup, next) = match &found.trigger.kind {
            TriggerKind::Cron { schedule, catchup } => (
                Some(match catchup {
                    Catchup::None => "none",
                    Catchup::One => "one",
                    Catchup::All => "all",
                }),
                (!record.paused)
                    .then(|| schedule::next(schedule, now, &Local))
                    .flatten()
                    .map(|t| {
                        t.with_timezone(&Local)
                            .to_rfc3339_opts(SecondsFormat::Secs, false)
                    }),
            ),
            TriggerKind::Watch => (None, None),
        };
        TriggerView {
            id: found.id.clone(),
            workflow: found.workflow.clone(),
            path: found.path.clone(),
            kind: found.trigger.kind_name(),
            spec: found.trigger.spec.clone(),
            args: clawdis_engine::value::Value::Object(found.trigger.args.clone()).to_serde(),
            catchup,
            next,
            paused: record.paused,
            last_fired_at: record.fired_at.clone(),
            error: self.problem(&found.id),
        }
    }

    fn problem(&self, id: &str) -> Option<String> {
        self.problems().get(id).cloned()
    }

    fn set_problem(&self, id: &str, problem: Option<String>) {
        let mut problems = self.problems();
        match problem {
            Some(text) => problems.insert(id.to_string(), text),
            None => problems.remove(id),
        };
    }

    fn problems(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.problems.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fires the triggers, starting their runs in `runs`, for as long as
    /// the task runs. While another backend holds the home's scheduler
    /// lease this one only waits to take over.
    pub async fn run(self: Arc<Self>, runs: Arc<Runs>) {
        let (changes, mut changed) = unbounded_channel();
        // Keeps the workflow directories watched while the scheduler runs:
        // a workflow file added, changed or removed is read at once.
        let library_changes = changes.clone();
        let _library = crate::catalog::watch_dirs(&self.dirs, move || {
            let _ = library_changes.send(Change::Library);
        });
        let mut scheduler = Scheduler::default();
        loop {
            let wake_at = self.pass(&runs, &mut scheduler, &changes).await;
            tokio::select! {
                () = tokio::time::sleep_until(wake_at) => {}
                () = self.wake.notified() => {}
                change = changed.recv() => {
                    if let Some(change) = change {
                        scheduler.note(change);
                    }
                }
            }
            // Everything that arrived meanwhile, before the next look.
            while let Ok(change) = changed.try_recv() {
                scheduler.note(change);
            }
        }
    }

    /// One look at every trigger; returns when to look again.
    async fn pass(
        &self,
        runs: &Arc<Runs>,
        scheduler: &mut Scheduler,
        changes: &UnboundedSender<Change>,
    ) -> Instant {
        let mut wake_at = Instant::now() + POLL;
        let store = self.approvals.store();
        match store.claim_scheduler().await {
            Ok(true) if !scheduler.leading => {
                tracing::info!("this backend fires the workflows' triggers");
                scheduler.leading = true;
                scheduler.discovered = None;
            }
            Ok(true) => {}
            Ok(false) => {
                if scheduler.leading {
                    tracing::info!("another backend fires the workflows' triggers now");
                }
                *scheduler = Scheduler::default();
                return wake_at;
            }
            Err(e) => {
                tracing::warn!(error = %e, "taking the scheduler lease");
                return wake_at;
            }
        }
        if scheduler
            .discovered
            .is_none_or(|at| at.elapsed() >= REDISCOVER)
        {
            match self.found().await {
                Ok(found) => {
                    scheduler.discovered = Some(Instant::now());
                    scheduler
                        .watches
                        .retain(|id, _| found.iter().any(|f| &f.id == id));
                    scheduler.found = found;
                }
                Err(e) => tracing::warn!(error = %e, "reading the workflows' triggers"),
            }
        }
        for found in scheduler.found.clone() {
            let result = match &found.trigger.kind {
                TriggerKind::Cron { schedule, catchup } => {
                    self.tick_cron(runs, &found, schedule, *catchup).await
                }
                TriggerKind::Watch => self.tick_watch(runs, &found, scheduler, changes).await,
            };
            match result {
                Ok(Some(at)) => wake_at = wake_at.min(at),
                Ok(None) => {}
                Err(e) => tracing::warn!(trigger = %found.id, error = %e, "a trigger's turn"),
            }
        }
        wake_at
    }

    /// Fires what schedule `found` has due; returns when it is due next.
    async fn tick_cron(
        &self,
        runs: &Arc<Runs>,
        found: &Found,
        schedule: &croner::Cron,
        catchup: Catchup,
    ) -> Result<Option<Instant>, ApprovalsError> {
        let now = Utc::now();
        let record = self.arm(found, now).await?;
        if record.paused {
            return Ok(None);
        }
        let due = schedule::due(schedule, catchup, parse_mark(&record.mark), now, &Local);
        let mut from = record.mark;
        if let Some(skip_to) = due.skip_to {
            let to = iso(skip_to);
            tracing::info!(trigger = %found.id, workflow = %found.workflow, until = %to, "missed runs skipped (catchup: none)");
            let advance = Advance {
                id: found.id.clone(),
                from,
                to: to.clone(),
            };
            if !self.approvals.store().advance_trigger(&advance).await? {
                return Ok(Some(Instant::now()));
            }
            from = to;
        }
        for occurrence in due.fire {
            let to = iso(occurrence);
            let advance = Advance {
                id: found.id.clone(),
                from,
                to: to.clone(),
            };
            let args = value_args(&found.trigger, None);
            if !self.fire(runs, found, args, &advance).await? {
                break;
            }
            from = to;
        }
        Ok(schedule::next(schedule, now, &Local)
            .map(|next| Instant::now() + (next - Utc::now()).to_std().unwrap_or_default()))
    }

    /// Keeps watch `found` watching and fires its batch once the files
    /// are quiet; returns when the batch is ready.
    async fn tick_watch(
        &self,
        runs: &Arc<Runs>,
        found: &Found,
        scheduler: &mut Scheduler,
        changes: &UnboundedSender<Change>,
    ) -> Result<Option<Instant>, ApprovalsError> {
        let now = Utc::now();
        let record = self.arm(found, now).await?;
        let dir = found.path.parent().unwrap_or(Path::new("/"));
        let watch = match scheduler.watches.get_mut(&found.id) {
            Some(watch) => watch,
            None => {
                let glob = Glob::parse(&found.trigger.spec, dir);
                scheduler
                    .watches
                    .entry(found.id.clone())
                    .or_insert(Watching {
                        glob,
                        watcher: None,
                        batch: None,
                        mark: record.mark.clone(),
                        floor: None,
                    })
            }
        };
        if watch.mark != record.mark {
            // Moved by a resume (or another backend): the changes up to
            // the new mark are handled, whenever their events come.
            watch.floor = Some(parse_mark(&record.mark));
            watch.mark.clone_from(&record.mark);
        }
        let glob = match &watch.glob {
            Ok(glob) => glob.clone(),
            Err(e) => {
                self.set_problem(&found.id, Some(format!("watch: {e}")));
                return Ok(None);
            }
        };
        if record.paused {
            watch.batch = None;
            return Ok(None);
        }
        if watch.watcher.is_some() && !glob.base.is_dir() {
            // The directory went away; watch it again when it is back.
            watch.watcher = None;
        }
        if watch.watcher.is_none() {
            match watch_files(&found.id, &glob, changes.clone()) {
                Ok(watcher) => {
                    watch.watcher = Some(watcher);
                    self.set_problem(&found.id, None);
                    // What changed while no backend watched.
                    let missed = glob.changed_since(parse_mark(&record.mark));
                    if !missed.is_empty() {
                        watch.add(missed);
                    }
                }
                Err(problem) => {
                    self.set_problem(&found.id, Some(problem));
                    return Ok(None);
                }
            }
        }
        let Some(mut batch) = watch
            .batch
            .take_if(|b| b.ready_at() <= std::time::Instant::now())
        else {
            return Ok(watch
                .batch
                .as_ref()
                .map(|b| Instant::from_std(b.ready_at())));
        };
        if let Some(floor) = watch.floor {
            batch.retain_changed_after(floor);
        }
        let paths = batch.into_paths();
        if paths.is_empty() {
            return Ok(None);
        }
        let advance = Advance {
            id: found.id.clone(),
            from: record.mark,
            to: iso(Utc::now()),
        };
        let args = value_args(&found.trigger, Some(&paths));
        if self.fire(runs, found, args, &advance).await? {
            watch.mark = advance.to;
        }
        Ok(None)
    }

    /// Starts a run of `found` with `args` if `advance` moves its mark;
    /// `false` when another backend moved it first or it was paused. A run
    /// that cannot start (its args no longer fit the workflow) is
    /// recorded as the trigger's problem and its occurrence passed.
    async fn fire(
        &self,
        runs: &Arc<Runs>,
        found: &Found,
        args: serde_json::Value,
        advance: &Advance,
    ) -> Result<bool, ApprovalsError> {
        let request = RunRequest {
            what: What::Workflow(found.path.to_string_lossy().into_owned()),
            args,
            cwd: None,
            started_by: format!("trigger:{}", found.id),
        };
        match runs.start_fired(request, advance).await {
            Ok(Some(started)) => {
                tracing::info!(trigger = %found.id, workflow = %found.workflow, run_id = %started.run_id, at = %advance.to, "trigger fired");
                self.set_problem(&found.id, None);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e @ (ApprovalsError::Invalid(_) | ApprovalsError::NotFound(_))) => {
                tracing::warn!(trigger = %found.id, workflow = %found.workflow, error = %e, "a trigger's run did not start");
                self.set_problem(&found.id, Some(format!("the last run did not start: {e}")));
                self.approvals
                    .store()
                    .advance_trigger(advance)
                    .await
                    .map_err(ApprovalsError::from)
            }
            Err(e) => Err(e),
        }
    }
}

/// The trigger's args as a run takes them, with a watch's `paths`.
fn value_args(trigger: &Trigger, paths: Option<&[PathBuf]>) -> serde_json::Value {
    let mut args = clawdis_engine::value::Value::Object(trigger.args.clone()).to_serde();
    if let (Some(paths), Some(object)) = (paths, args.as_object_mut()) {
        object.insert(
            "paths".into(),
            paths
                .iter()
                .map(|p| serde_json::Value::from(p.to_string_lossy().into_owned()))
                .collect(),
        );
    }
    args
}

/// What the scheduler of this backend holds between passes.
#[derive(Default)]
struct Scheduler {
    /// Whether this backend holds the lease.
    leading: bool,
    /// The library's triggers, as last read.
    found: Vec<Found>,
    /// When they were read (`None`: read them again).
    discovered: Option<Instant>,
    /// The watch triggers being watched, by id.
    watches: HashMap<String, Watching>,
}

impl Scheduler {
    fn note(&mut self, change: Change) {
        match change {
            Change::Library => self.discovered = None,
            Change::Files { id, paths } => {
                if let Some(watch) = self.watches.get_mut(&id) {
                    watch.add(paths);
                }
            }
        }
    }
}

/// A watch trigger being watched.
struct Watching {
    glob: Result<Glob, String>,
    watcher: Option<notify::RecommendedWatcher>,
    batch: Option<Batch>,
    /// The trigger's mark as this backend last saw or moved it.
    mark: String,
    /// The mark as someone else (a resume) last moved it: files changed
    /// before it are not run, however late their events arrive.
    floor: Option<DateTime<Utc>>,
}

impl Watching {
    fn add(&mut self, paths: Vec<PathBuf>) {
        match &mut self.batch {
            Some(batch) => batch.add(paths),
            None => self.batch = Some(Batch::new(paths)),
        }
    }
}

/// What the file watchers tell the scheduler.
#[derive(Debug)]
enum Change {
    /// A workflow file changed.
    Library,
    /// Files of watch trigger `id` appeared or changed.
    Files { id: String, paths: Vec<PathBuf> },
}

/// Watches `glob`'s directory for trigger `id`.
fn watch_files(
    id: &str,
    glob: &Glob,
    changes: UnboundedSender<Change>,
) -> Result<notify::RecommendedWatcher, String> {
    if !glob.base.is_dir() {
        return Err(format!(
            "watch: {} is not a directory (yet); the watch starts when it is",
            glob.base.display()
        ));
    }
    let id = id.to_string();
    let matcher = glob.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if !watch::is_change(&event.kind) {
            return;
        }
        let paths: Vec<PathBuf> = event
            .paths
            .into_iter()
            .filter(|p| matcher.matches(p))
            .collect();
        if !paths.is_empty() {
            let _ = changes.send(Change::Files {
                id: id.clone(),
                paths,
            });
        }
    })
    .map_err(|e| format!("watch: {e}"))?;
    let mode = match glob.recursive {
        true => notify::RecursiveMode::Recursive,
        false => notify::RecursiveMode::NonRecursive,
    };
    watcher
        .watch(&glob.base, mode)
        .map_err(|e| format!("watch {}: {e}", glob.base.display()))?;
    Ok(watcher)
}
