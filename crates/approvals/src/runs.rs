//! The workflow service's runs: a workflow or pipeline started by a caller
//! (HTTP, MCP, the CLI), executed in this process, recorded in the history
//! with every step and every decision on its gates, listed, cancelled and
//! exported. A run that pauses is decided like any other gate (see
//! [`crate::Approvals::decide`]); the resume, wherever it happens, goes on
//! recording into the same history.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use clawdis_engine::envelope::Envelope;
use clawdis_engine::journal::Journal;
use clawdis_engine::pause::history_end;
use clawdis_engine::pipeline::parse::{Stage, parse_pipeline};
use clawdis_engine::value::Value;
use clawdis_engine::workflow::file::{self, Workflow};
use clawdis_engine::workflow::{check_args, library};
use clawdis_store::{
    HistoryEnd, HistoryKind, HistoryQuery, HistoryStatus, NewHistory, RunStatus, StepRecord,
    StepStatus,
};
use tokio::sync::watch;

use crate::view::{RunPage, RunView};
use crate::{Approvals, ApprovalsError, Choice, Decider};

/// The most runs one page of [`Runs::list`] holds.
pub const MAX_PAGE: u32 = 500;

/// What to run.
#[derive(Clone, Debug)]
pub enum What {
    /// A pipeline, as `lobster run` takes it.
    Pipeline(String),
    /// A workflow: a name from the library, or an absolute path.
    Workflow(String),
}

/// A run a caller asks for.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// The pipeline or workflow.
    pub what: What,
    /// The workflow's args (an object).
    pub args: serde_json::Value,
    /// Where its steps run: an absolute directory. By default a workflow
    /// runs in its file's directory and a pipeline in the state directory.
    pub cwd: Option<PathBuf>,
    /// The principal starting it.
    pub started_by: String,
}

/// A run that has started.
#[derive(Debug)]
pub struct Started {
    /// Its id.
    pub run_id: String,
    result: watch::Receiver<Option<serde_json::Value>>,
}

impl Started {
    /// Waits for the run to end or pause, and returns its envelope.
    pub async fn envelope(mut self) -> serde_json::Value {
        match self.result.wait_for(Option::is_some).await {
            Ok(done) => done.clone().unwrap_or_default(),
            Err(_) => Envelope::from(clawdis_engine::Error::runtime("the run was dropped"))
                .to_value()
                .to_serde(),
        }
    }
}

/// Which runs to list.
#[derive(Clone, Debug, Default)]
pub struct RunQuery {
    /// Only runs in this status.
    pub status: Option<HistoryStatus>,
    /// Only runs of this workflow.
    pub workflow: Option<String>,
    /// How many (at most [`MAX_PAGE`]; 50 when 0).
    pub limit: u32,
    /// The `next` of the previous page.
    pub cursor: Option<String>,
}

/// What the runs bus carries: a run started, or a run whose status
/// changed (it paused, was resumed anywhere, ended or was cancelled).
#[derive(Clone, Debug, serde::Serialize)]
#[serde(tag = "type")]
pub enum RunEvent {
    /// A run started.
    #[serde(rename = "run.started")]
    Started {
        /// The run.
        run: Box<RunView>,
    },
    /// A run's status changed.
    #[serde(rename = "run.changed")]
    Changed {
        /// The run as it is now.
        run: Box<RunView>,
    },
}

/// A run executing in this process.
struct Live {
    journal: Journal,
    task: tokio::task::JoinHandle<()>,
    result: watch::Sender<Option<serde_json::Value>>,
}

/// The runs of one Clawdis home.
pub struct Runs {
    approvals: Arc<Approvals>,
    workflow_dirs: Vec<PathBuf>,
    live: Mutex<HashMap<String, Live>>,
    bus: tokio::sync::broadcast::Sender<RunEvent>,
    /// The status last announced for each run not yet ended.
    announced: Mutex<HashMap<String, HistoryStatus>>,
    /// Counts the changes of this process's runs (see [`Runs::changes`]).
    changed: watch::Sender<u64>,
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runs")
            .field("workflow_dirs", &self.workflow_dirs)
            .finish_non_exhaustive()
    }
}

impl Runs {
    /// The runs of `approvals`' home, with the named workflows found in
    /// `workflow_dirs`. Runs a killed backend left executing are recorded
    /// as where they got to: waiting at their gate, or failed.
    pub async fn open(
        approvals: Arc<Approvals>,
        workflow_dirs: Vec<PathBuf>,
    ) -> Result<Arc<Runs>, ApprovalsError> {
        let gates = approvals.subscribe();
        let runs = Runs {
            approvals,
            workflow_dirs,
            live: Mutex::default(),
            bus: tokio::sync::broadcast::channel(256).0,
            announced: Mutex::default(),
            changed: watch::Sender::new(0),
        };
        runs.recover().await?;
        let runs = Arc::new(runs);
        tokio::spawn(follow_gates(Arc::downgrade(&runs), gates));
        Ok(runs)
    }

    /// Receives every later [`RunEvent`].
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<RunEvent> {
        self.bus.subscribe()
    }

    /// Ticks whenever a run of this process starts or changes: what needs
    /// only to know that something changed (the webhook sender's wake-up)
    /// watches this rather than the [`RunEvent`]s, which are read from
    /// the store for their listeners.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Announces run `run_id` as it is now, unless its status is the one
    /// announced last. With no one listening, the run is not read at all.
    async fn announce(&self, run_id: &str, started: bool) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        if self.bus.receiver_count() == 0 {
            self.announced
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
            return;
        }
        let run = match self.get(run_id).await {
            Ok(run) => Box::new(run),
            Err(e) => {
                tracing::warn!(run_id, error = %e, "reading a run to announce");
                return;
            }
        };
        {
            let mut announced = self.announced.lock().unwrap_or_else(|e| e.into_inner());
            if announced.get(run_id) == Some(&run.status) {
                return;
            }
            if run.status.is_final() {
                announced.remove(run_id);
            } else {
                announced.insert(run_id.to_string(), run.status);
            }
        }
        let event = if started {
            RunEvent::Started { run }
        } else {
            RunEvent::Changed { run }
        };
        let _ = self.bus.send(event);
    }

    async fn recover(&self) -> Result<(), ApprovalsError> {
        let store = self.approvals.store();
        for run in store.interrupted_history().await? {
            let gates = store.history_gates(&run.run_id).await?;
            let waiting = gates.last().filter(|g| {
                g.status == RunStatus::Pending
                    || clawdis_engine::pause::pending(Some((*g).clone())).is_some()
            });
            let end = match waiting {
                Some(gate) => HistoryEnd {
                    status: match gate.gate {
                        clawdis_store::Gate::Approval => HistoryStatus::NeedsApproval,
                        clawdis_store::Gate::Input => HistoryStatus::NeedsInput,
                    },
                    result_json: None,
                    steps: Vec::new(),
                },
                None => {
                    let envelope = Envelope::from(clawdis_engine::Error::runtime(
                        "interrupted: the backend stopped while this run was executing",
                    ));
                    HistoryEnd {
                        status: HistoryStatus::Failed,
                        result_json: Some(envelope.to_value().to_json()),
                        steps: Vec::new(),
                    }
                }
            };
            tracing::info!(run_id = %run.run_id, status = %end.status, "interrupted run recorded");
            store.end_history(&run.run_id, &end, None).await?;
        }
        Ok(())
    }

    /// Starts a run in this process and returns at once; the run goes on
    /// in the background ([`Started::envelope`] waits for it).
    pub async fn start(self: &Arc<Self>, request: RunRequest) -> Result<Started, ApprovalsError> {
        let prepared = self.prepare(&request)?;
        self.approvals
            .store()
            .start_history(&prepared.row, &prepared.steps)
            .await?;
        Ok(self.launch(prepared).await)
    }

    /// [`Runs::start`] for a trigger's fire: the run starts only if
    /// `advance` moves the trigger's mark (in the same transaction as the
    /// run's history row); `None` when another backend fired it first or
    /// it was paused.
    pub(crate) async fn start_fired(
        self: &Arc<Self>,
        request: RunRequest,
        advance: &clawdis_store::Advance,
    ) -> Result<Option<Started>, ApprovalsError> {
        let prepared = self.prepare(&request)?;
        let started = self
            .approvals
            .store()
            .start_fired_history(&prepared.row, &prepared.steps, advance)
            .await?;
        Ok(match started {
            true => Some(self.launch(prepared).await),
            false => None,
        })
    }

    /// Executes a run whose history row is written.
    async fn launch(self: &Arc<Self>, prepared: Prepared) -> Started {
        let Prepared { plan, row, cwd, .. } = prepared;
        let run_id = row.run_id;
        let journal = Journal::new(&run_id);
        self.announce(&run_id, true).await;
        let mut ctx = self.approvals.context(None);
        ctx.cwd = cwd;
        ctx.journal = Some(journal.clone());
        let (result, receiver) = watch::channel(None);
        // The task waits until it is registered, so that its end always
        // finds its entry (and a cancel always finds the task).
        let (registered, wait_registered) = tokio::sync::oneshot::channel::<()>();
        let runs = Arc::clone(self);
        let id = run_id.clone();
        let task = tokio::spawn(async move {
            let _ = wait_registered.await;
            let envelope = match &plan {
                Plan::Workflow(workflow, args) => {
                    clawdis_engine::workflow::run_workflow(workflow, args, &ctx)
                        .await
                        .unwrap_or_else(Envelope::from)
                }
                Plan::Pipeline(stages) => {
                    clawdis_engine::pipeline::tool::run_tool(stages, &ctx).await
                }
            };
            runs.ended(&id, &envelope, &ctx).await;
        });
        self.lock().insert(
            run_id.clone(),
            Live {
                journal,
                task,
                result,
            },
        );
        let _ = registered.send(());
        Started {
            run_id,
            result: receiver,
        }
    }

    /// Records how run `run_id` came out (a pause is recorded with its
    /// gate already) and hands its envelope to those waiting.
    async fn ended(&self, run_id: &str, envelope: &Envelope, ctx: &clawdis_engine::Ctx) {
        let status = envelope.history_status();
        if !matches!(
            status,
            HistoryStatus::NeedsApproval | HistoryStatus::NeedsInput
        ) && let Err(e) = self
            .approvals
            .store()
            .end_history(run_id, &history_end(envelope, ctx), None)
            .await
        {
            tracing::error!(run_id, error = %e, "recording the end of a run");
        }
        let live = self.lock().remove(run_id);
        if let Some(live) = live {
            live.result
                .send_replace(Some(envelope.to_value().to_serde()));
        }
        tracing::info!(run_id, %status, "run ended");
        self.announce(run_id, false).await;
    }

    /// What `request` runs, its history row and steps, and where it runs.
    fn prepare(&self, request: &RunRequest) -> Result<Prepared, ApprovalsError> {
        let run_id = uuid::Uuid::new_v4().to_string();
        let run_id = run_id.as_str();
        let cwd = match &request.cwd {
            Some(dir) if dir.is_absolute() && dir.is_dir() => Some(dir.clone()),
            Some(dir) if dir.is_absolute() => {
                return Err(ApprovalsError::NotFound(format!(
                    "cwd: no directory {}",
                    dir.display()
                )));
            }
            Some(dir) => {
                return Err(ApprovalsError::Invalid(format!(
                    "cwd: {} is not an absolute path to a directory",
                    dir.display()
                )));
            }
            None => None,
        };
        let args_json = serde_json::to_string(&request.args).unwrap_or_else(|_| "{}".into());
        let new = |kind, workflow: Option<String>, definition: String, cwd: &Path| NewHistory {
            run_id: run_id.to_string(),
            kind,
            workflow,
            definition,
            args_json: args_json.clone(),
            cwd: cwd.to_str().map(str::to_string),
            started_by: request.started_by.clone(),
            provenance_json: None,
        };
        match &request.what {
            What::Pipeline(text) => {
                if request.args.as_object().is_some_and(|a| !a.is_empty()) {
                    return Err(ApprovalsError::Invalid(
                        "args: a pipeline takes no args (they are for workflows)".into(),
                    ));
                }
                let stages = parse_pipeline(text).map_err(|e| ApprovalsError::Parse(e.message))?;
                let cwd = cwd.unwrap_or_else(|| self.approvals.dir.clone());
                let row = new(HistoryKind::Pipeline, None, text.clone(), &cwd);
                Ok(Prepared {
                    plan: Plan::Pipeline(stages),
                    row,
                    cwd,
                    steps: Vec::new(),
                })
            }
            What::Workflow(name) => {
                let path = self.resolve(name)?;
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    ApprovalsError::Parse(format!("workflow: cannot read {}: {e}", path.display()))
                })?;
                let workflow = file::parse(&text, &path)
                    .map_err(|e| ApprovalsError::Parse(format!("workflow: {}", e.message)))?;
                let args = Value::from_json(&args_json)
                    .map_err(|e| ApprovalsError::Parse(format!("args: {e}")))?;
                check_args(&workflow, &args).map_err(ApprovalsError::Parse)?;
                let name = workflow.library_name();
                let cwd = cwd
                    .or_else(|| path.parent().map(Path::to_path_buf))
                    .unwrap_or_else(|| self.approvals.dir.clone());
                let row = new(HistoryKind::Workflow, Some(name), text, &cwd);
                let steps = workflow.pending_steps();
                Ok(Prepared {
                    plan: Plan::Workflow(Box::new(workflow), args),
                    row,
                    cwd,
                    steps,
                })
            }
        }
    }

    /// The file of workflow `name`: a name from the library, or an
    /// absolute path to a workflow file.
    fn resolve(&self, name: &str) -> Result<PathBuf, ApprovalsError> {
        if name.contains('/') || name.contains(std::path::MAIN_SEPARATOR) {
            let path = Path::new(name);
            if !path.is_absolute() {
                return Err(ApprovalsError::Invalid(format!(
                    "workflow: {name:?} is a relative path; give a name from GET /workflows or an absolute path"
                )));
            }
            return file::resolve_path(name, Path::new("/"))
                .map_err(|e| ApprovalsError::NotFound(format!("workflow {name}: {e}")));
        }
        library::discover(&self.workflow_dirs)
            .workflows
            .into_iter()
            .find(|w| w.name == name)
            .map(|w| w.path)
            .ok_or_else(|| {
                ApprovalsError::NotFound(format!(
                    "workflow {name:?}: no such workflow (GET /workflows lists them)"
                ))
            })
    }

    /// Run `run_id` as it stands, with its steps and decisions.
    pub async fn get(&self, run_id: &str) -> Result<RunView, ApprovalsError> {
        crate::view::load_run(self.approvals.store(), run_id, |steps| {
            self.merge_live(run_id, steps);
        })
        .await?
        .ok_or_else(|| ApprovalsError::NotFound(format!("run {run_id}")))
    }

    /// Runs, newest first, one page at a time.
    pub async fn list(&self, query: &RunQuery) -> Result<RunPage, ApprovalsError> {
        let limit = match query.limit {
            0 => 50,
            n => n.min(MAX_PAGE),
        };
        let before = match query.cursor.as_deref().filter(|c| !c.is_empty()) {
            None => None,
            Some(cursor) => Some(cursor.parse::<i64>().map_err(|_| {
                ApprovalsError::Invalid(format!(
                    "cursor: {cursor:?} is not a cursor this server gave"
                ))
            })?),
        };
        let store = self.approvals.store();
        let rows = store
            .list_history(&HistoryQuery {
                status: query.status,
                workflow: query.workflow.clone(),
                before,
                limit: limit + 1,
            })
            .await?;
        let more = rows.len() > limit as usize;
        let page: Vec<String> = rows
            .iter()
            .take(limit as usize)
            .map(|r| r.run_id.clone())
            .collect();
        let mut steps_of = store.history_steps_of(&page).await?;
        let mut gates_of = store.history_gates_of(&page).await?;
        let mut runs = Vec::new();
        for run in rows.iter().take(limit as usize) {
            let mut steps = steps_of.remove(&run.run_id).unwrap_or_default();
            self.merge_live(&run.run_id, &mut steps);
            let gates = gates_of.remove(&run.run_id).unwrap_or_default();
            let votes = crate::view::gate_votes(store, &gates).await?;
            runs.push(RunView::new(run, &steps, &gates, &votes));
        }
        let next = more
            .then(|| rows.get(limit as usize - 1).map(|r| r.seq.to_string()))
            .flatten();
        Ok(RunPage { runs, next })
    }

    /// Cancels run `run_id`: a run executing here is stopped (its child
    /// processes killed), a paused one has its gate cancelled by
    /// `decider`. A run that has ended is a conflict.
    pub async fn cancel(&self, run_id: &str, decider: Decider) -> Result<RunView, ApprovalsError> {
        let live = self.lock().remove(run_id);
        if let Some(live) = live {
            live.task.abort();
            let finished = live.task.await.is_ok();
            if !finished {
                let store = self.approvals.store();
                let now = store.get_history(run_id).await?;
                if now.is_some_and(|r| r.status == HistoryStatus::Running) {
                    let envelope = Envelope::cancelled();
                    let end = HistoryEnd {
                        status: HistoryStatus::Cancelled,
                        result_json: Some(envelope.to_value().to_json()),
                        steps: live.journal.end_running(StepStatus::Cancelled),
                    };
                    store.end_history(run_id, &end, None).await?;
                    live.result
                        .send_replace(Some(envelope.to_value().to_serde()));
                    tracing::info!(run_id, "run cancelled while executing");
                    self.announce(run_id, false).await;
                    return self.get(run_id).await;
                }
            }
        }
        let run = self.get(run_id).await?;
        match run.status {
            HistoryStatus::NeedsApproval | HistoryStatus::NeedsInput => {
                let gates = self.approvals.store().history_gates(run_id).await?;
                let Some(gate) = gates.iter().rev().find(|g| g.status == RunStatus::Pending) else {
                    return Err(ApprovalsError::AlreadyDecided(format!(
                        "run {run_id} is being resumed"
                    )));
                };
                self.approvals
                    .decide(&gate.state_key, Choice::Cancel, decider)
                    .await?;
                self.get(run_id).await
            }
            HistoryStatus::Running => Err(ApprovalsError::Elsewhere(format!(
                "run {run_id} is executing in another process; cancel it there"
            ))),
            ended => Err(ApprovalsError::AlreadyDecided(format!(
                "run {run_id} has ended ({ended})"
            ))),
        }
    }

    /// Run `run_id` as one self-contained JSON document: the definition as
    /// it ran, its args, steps, decisions and result, and the ledger's head
    /// when it was exported.
    pub async fn export(&self, run_id: &str) -> Result<serde_json::Value, ApprovalsError> {
        let view = self.get(run_id).await?;
        let store = self.approvals.store();
        let run = store
            .get_history(run_id)
            .await?
            .ok_or_else(|| ApprovalsError::NotFound(format!("run {run_id}")))?;
        let mut document = crate::view::export(&run, view);
        document["auditHead"] = crate::audit_head(store).await?;
        Ok(document)
    }

    /// Steps of a run executing here, from its journal (newer than the store).
    fn merge_live(&self, run_id: &str, steps: &mut Vec<StepRecord>) {
        let journal = self.lock().get(run_id).map(|l| l.journal.clone());
        let Some(journal) = journal else { return };
        for step in journal.steps() {
            match steps.iter_mut().find(|s| s.id == step.id) {
                Some(stored) => *stored = step,
                None => steps.push(step),
            }
        }
        steps.sort_by_key(|s| s.position);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Announces the runs whose gates change, whichever process changed them
/// (a resume by `lobster`, the app, the expiry), until `runs` is dropped.
async fn follow_gates(
    runs: std::sync::Weak<Runs>,
    mut gates: tokio::sync::broadcast::Receiver<crate::Event>,
) {
    loop {
        let event = match gates.recv().await {
            Ok(event) => event,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let (crate::Event::Paused { approval } | crate::Event::Changed { approval }) = event;
        let Some(runs) = runs.upgrade() else { return };
        // A gate recorded before runs had ids has no run to announce.
        if approval.run_id != approval.state_key {
            runs.announce(&approval.run_id, false).await;
        }
    }
}

/// A run ready to record and execute.
struct Prepared {
    plan: Plan,
    row: NewHistory,
    cwd: PathBuf,
    steps: Vec<StepRecord>,
}

/// What a run executes, parsed and checked.
enum Plan {
    Workflow(Box<Workflow>, Value),
    Pipeline(Vec<Stage>),
}
