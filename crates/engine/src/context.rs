//! What a running pipeline or workflow can see: mode, environment, working
//! directory, where renderers write, and the state store.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use clawdis_store::Store;
use tokio::sync::OnceCell;

use crate::error::{Error, Result};
use crate::value::Value;

/// Human mode prints items and prompts on a TTY; tool mode prints one JSON
/// envelope and turns every gate into a resumable pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Interactive / human-readable.
    Human,
    /// Machine-readable envelope (`--mode tool`).
    Tool,
}

/// Where renderer output (`json`, `table`) goes.
#[derive(Clone, Debug)]
pub enum Sink {
    /// The process's standard output.
    Stdout,
    /// Captured text (pipeline steps inside workflows).
    Buffer(Arc<Mutex<String>>),
}

impl Sink {
    /// A new capturing sink.
    pub fn buffer() -> Sink {
        Sink::Buffer(Arc::new(Mutex::new(String::new())))
    }

    /// Writes text.
    pub fn write(&self, text: &str) {
        match self {
            Sink::Stdout => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
            }
            Sink::Buffer(buf) => buf.lock().unwrap_or_else(|e| e.into_inner()).push_str(text),
        }
    }

    /// The captured text so far (empty for stdout).
    pub fn captured(&self) -> String {
        match self {
            Sink::Stdout => String::new(),
            Sink::Buffer(buf) => buf.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        }
    }
}

/// The environment passed to child processes.
pub type Env = BTreeMap<String, String>;

/// A lazily opened handle on the SQLite store in the state directory.
#[derive(Clone, Debug)]
pub struct StateHandle {
    dir: PathBuf,
    store: Arc<OnceCell<Store>>,
    /// An opening started by [`StateHandle::open_ahead`].
    opening: Arc<Mutex<Option<tokio::task::JoinHandle<()>>>>,
}

impl StateHandle {
    /// A handle on the store in `dir` (opened on first use).
    pub fn new(dir: PathBuf) -> Self {
        StateHandle {
            dir,
            store: Arc::new(OnceCell::new()),
            opening: Arc::default(),
        }
    }

    /// A handle on a store the caller already opened in `dir`.
    pub fn opened(dir: PathBuf, store: Store) -> Self {
        StateHandle {
            dir,
            store: Arc::new(OnceCell::new_with(Some(store))),
            opening: Arc::default(),
        }
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The store, opening and migrating it on first use (with one
    /// connection: a run uses it a statement at a time).
    pub async fn store(&self) -> Result<&Store> {
        self.store
            .get_or_try_init(|| Store::open_dir_with(&self.dir, 1))
            .await
            .map_err(|e| {
                Error::runtime(format!(
                    "cannot open state database in {}: {e}",
                    self.dir.display()
                ))
            })
    }

    /// Starts opening the store on a background task, for a run that will
    /// probably need it: the opening (a few hundred microseconds of file
    /// and lock work on SQLite's own thread) then overlaps the run's first
    /// steps. [`StateHandle::store`] waits for it; a failure is reported
    /// there, by the next attempt.
    pub fn open_ahead(&self) {
        if self.store.initialized() {
            return;
        }
        let handle = self.clone();
        let task = tokio::spawn(async move {
            if let Err(e) = handle.store().await {
                tracing::debug!(error = %e.message, "store not opened ahead");
            }
        });
        *self.opening.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
    }

    /// Closes the store if it was opened (waiting for an opening under way).
    pub async fn close(&self) {
        if let Some(store) = self.once_opened().await {
            store.close().await;
        }
    }

    /// Readies the store for the exit of a short-lived process, without
    /// closing it (see [`Store::settle_before_exit`]); waits for an opening
    /// under way.
    pub async fn settle_before_exit(&self) {
        if let Some(store) = self.once_opened().await {
            store.settle_before_exit().await;
        }
    }

    /// The store, once an opening under way has ended; `None` if never opened.
    async fn once_opened(&self) -> Option<&Store> {
        let opening = self
            .opening
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(task) = opening {
            let _ = task.await;
        }
        self.store.get()
    }
}

/// This process's environment (variables that are not UTF-8 are left out).
pub fn process_env() -> Env {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// The state directory: `LOBSTER_STATE_DIR`, else `CLAWDIS_HOME`, else `~/.clawdis`.
pub fn state_dir(env: &Env) -> PathBuf {
    state_dir_in(env, &clawdis_home(env))
}

/// The state directory of a process whose Clawdis home is `home`:
/// `LOBSTER_STATE_DIR`, else `home`.
pub fn state_dir_in(env: &Env, home: &Path) -> PathBuf {
    match env
        .get("LOBSTER_STATE_DIR")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        Some(dir) => PathBuf::from(dir),
        None => home.to_path_buf(),
    }
}

/// The Clawdis home: `CLAWDIS_HOME`, else `~/.clawdis`.
pub fn clawdis_home(env: &Env) -> PathBuf {
    if let Some(dir) = env
        .get("CLAWDIS_HOME")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        return PathBuf::from(dir);
    }
    let home = env.get("HOME").cloned().unwrap_or_else(|| ".".into());
    PathBuf::from(home).join(".clawdis")
}

/// Everything a command needs to run.
#[derive(Clone, Debug)]
pub struct Ctx {
    /// Human or tool mode.
    pub mode: Mode,
    /// Environment for child processes (and for reading settings).
    pub env: Arc<Env>,
    /// Working directory for child processes and relative paths.
    pub cwd: PathBuf,
    /// Where renderers write.
    pub stdout: Sink,
    /// Whether standard input is an interactive terminal.
    pub stdin_is_tty: bool,
    /// The durable state store.
    pub state: StateHandle,
    /// A response to hand to the first stage when resuming an in-place input request.
    pub resume_response: Option<Value>,
    /// Who resumes, when not this process's CLI user (the app, a notification).
    pub decider: Option<Decider>,
    /// The step journal, when this is a service run (see [`crate::journal`]).
    pub journal: Option<crate::journal::Journal>,
    /// What the host offers runs: the workflow library, the LLM.
    pub services: Arc<Services>,
}

/// What the host (the backend, `lobster`) offers the runs it starts.
#[derive(Clone, Default)]
pub struct Services {
    /// The workflow library's directories (`invoke_pipeline` finds
    /// pipelines there by name, after the invoking file's directory).
    pub library: Vec<PathBuf>,
    /// The LLM `prompt` steps and `llm.invoke` ask.
    pub llm: Option<crate::llm::LlmConfig>,
    /// Where the LLM's configuration comes from when `llm` is not given:
    /// read the first time a step asks for it (a `lobster` process reads
    /// the home's settings only then).
    llm_from: Option<Arc<dyn Fn() -> Option<crate::llm::LlmConfig> + Send + Sync>>,
    llm_read: Arc<std::sync::OnceLock<Option<crate::llm::LlmConfig>>>,
}

impl Services {
    /// The workflow library in `library`, and `llm`.
    pub fn new(library: Vec<PathBuf>, llm: Option<crate::llm::LlmConfig>) -> Services {
        Services {
            library,
            llm,
            ..Services::default()
        }
    }

    /// No library, and the LLM `load` gives when a step first asks.
    pub fn llm_from(
        load: impl Fn() -> Option<crate::llm::LlmConfig> + Send + Sync + 'static,
    ) -> Services {
        Services {
            llm_from: Some(Arc::new(load)),
            ..Services::default()
        }
    }

    /// The LLM, if one is configured.
    pub fn llm(&self) -> Option<&crate::llm::LlmConfig> {
        self.llm.as_ref().or_else(|| {
            let load = self.llm_from.as_ref()?;
            self.llm_read.get_or_init(|| load()).as_ref()
        })
    }
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("library", &self.library)
            .field("llm", &self.llm)
            .finish_non_exhaustive()
    }
}

/// Who decides a paused run, and through which channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decider {
    /// The person or account, when known.
    pub by: Option<String>,
    /// The channel the decision comes through.
    pub via: clawdis_store::Channel,
    /// How a person was shown to be there: a click in the app's window or
    /// notification, an approver token, a paired device's passkey, the
    /// operating system's check. `None` for agents, the owner token, a bare
    /// link and the expiry. Only a decider with one approves a gate whose
    /// policy is `approvers: human`; `presence: verified` takes only a
    /// passkey or the OS's check.
    pub presence: Option<clawdis_store::Presence>,
    /// The digest of what they were shown ([`crate::shown::digest`]), when
    /// the channel shows the gate: a decision on a gate that has changed
    /// since is refused.
    pub seen: Option<String>,
    /// What they said with this decision: an approval's comment, a
    /// denial's reason.
    pub comment: Option<String>,
}

impl Decider {
    /// Paired device `device`, whose passkey signed this decision, made on
    /// what was shown with digest `seen`.
    pub fn device(device: &str, seen: Option<String>, comment: Option<String>) -> Decider {
        Decider {
            by: Some(format!("device:{device}")),
            via: clawdis_store::Channel::Device,
            presence: Some(clawdis_store::Presence::Passkey),
            seen,
            comment,
        }
    }
}

impl Ctx {
    /// A context for this process: its environment, cwd, stdout and TTY state.
    pub fn from_process(mode: Mode) -> Ctx {
        let env = process_env();
        let state = StateHandle::new(state_dir(&env));
        Ctx {
            mode,
            env: Arc::new(env),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            stdout: Sink::Stdout,
            // SAFETY: isatty only inspects the file descriptor.
            stdin_is_tty: unsafe { libc::isatty(0) } == 1,
            state,
            resume_response: None,
            decider: None,
            journal: None,
            services: Arc::default(),
        }
    }

    /// An environment variable, when set and non-empty after trimming.
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|s| !s.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_store_opened_ahead_is_the_one_the_run_gets() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateHandle::new(dir.path().join("state"));
        state.open_ahead();
        let store = state.store().await.expect("opened");
        assert!(store.path().starts_with(dir.path()));
        state.close().await;
    }

    #[tokio::test]
    async fn a_failed_opening_ahead_is_reported_by_the_next_use() {
        let dir = tempfile::tempdir().unwrap();
        let not_a_dir = dir.path().join("file");
        std::fs::write(&not_a_dir, "").unwrap();
        let state = StateHandle::new(not_a_dir.join("state"));
        state.open_ahead();
        let e = state.store().await.expect_err("cannot open under a file");
        assert!(
            e.message.starts_with("cannot open state database in "),
            "{}",
            e.message
        );
        state.close().await;
    }
}
