//! Durable state for Clawdis in one SQLite file.
//!
//! Holds paused runs (approval and input gates) with their decisions, and the
//! key/value state behind `state.set`, `state.get` and `diff.last`. Every
//! change is a single SQLite transaction, so a `kill -9` at any point leaves
//! either the old or the new state, never half of one. A paused run is
//! resumed exactly once: [`Store::claim`] is a compare-and-set on its status.

mod conns;
mod owner;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, Row, SqliteConnection};

use conns::Conns;

pub use owner::{ProcessOwner, current_owner};

/// File name of the database inside the state directory.
pub const DB_FILE: &str = "clawdis.db";

/// The columns [`run_from_row`] reads, in order.
macro_rules! run_columns {
    () => {
        "state_key, kind, gate, approval_id, status, workflow_name, request_json, state_json, created_at, \
         claim_id, decision, decided_by, decided_via, decided_at, result_json, next_state_key, cwd"
    };
}

/// The assignments of a claim, bound by [`claim_update`].
macro_rules! claim_set {
    () => {
        "UPDATE runs SET status = 'running', claim_id = ?, claimed_pid = ?, claimed_at = ?, \
         decision = ?, decided_by = ?, decided_via = ?, decided_at = ? "
    };
}

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Errors from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened, read or written.
    #[error("{0}")]
    Db(#[from] sqlx::Error),
    /// The schema could not be migrated.
    #[error("{0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The state directory could not be created.
    #[error("cannot create state directory {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Where a paused run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Waiting for a decision.
    Pending,
    /// Claimed by a resume that is executing it.
    Running,
    /// Resumed to completion (or to its next gate).
    Done,
    /// Rejected or cancelled.
    Cancelled,
    /// The resume failed while executing.
    Failed,
}

impl RunStatus {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Pending => "pending",
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Failed => "failed",
        }
    }

    fn parse(s: &str) -> RunStatus {
        match s {
            "pending" => RunStatus::Pending,
            "running" => RunStatus::Running,
            "done" => RunStatus::Done,
            "cancelled" => RunStatus::Cancelled,
            _ => RunStatus::Failed,
        }
    }
}

/// A paused run to record.
#[derive(Clone, Debug)]
pub struct NewRun {
    /// `workflow_resume_<uuid>` or `pipeline_resume_<uuid>`.
    pub state_key: String,
    /// Token kind: `workflow-file` or `pipeline-resume`.
    pub kind: String,
    /// `approval` or `input`.
    pub gate: String,
    /// Short approval id (approval gates only).
    pub approval_id: Option<String>,
    /// Workflow name, when the run is a named workflow.
    pub workflow_name: Option<String>,
    /// The gate's request block as JSON.
    pub request_json: String,
    /// Everything a resume needs, as JSON.
    pub state_json: String,
    /// The directory the pausing process ran in.
    pub cwd: Option<String>,
}

/// A recorded run.
#[derive(Clone, Debug)]
pub struct Run {
    /// State key.
    pub state_key: String,
    /// Token kind.
    pub kind: String,
    /// `approval` or `input`.
    pub gate: String,
    /// Short approval id.
    pub approval_id: Option<String>,
    /// Status.
    pub status: RunStatus,
    /// Workflow name.
    pub workflow_name: Option<String>,
    /// Request block JSON.
    pub request_json: String,
    /// Resume state JSON.
    pub state_json: String,
    /// ISO-8601 creation time.
    pub created_at: String,
    /// Owner of the current claim (`pid:start`), while running.
    pub claim_id: Option<String>,
    /// The decision taken (`approve`, `reject`, `respond`, `cancel`).
    pub decision: Option<String>,
    /// Who decided.
    pub decided_by: Option<String>,
    /// Through which channel (`cli`, `app`, `notification`, `http`).
    pub decided_via: Option<String>,
    /// When.
    pub decided_at: Option<String>,
    /// Final envelope of the resume, as JSON.
    pub result_json: Option<String>,
    /// The next gate the resume paused at.
    pub next_state_key: Option<String>,
    /// The directory the pausing process ran in.
    pub cwd: Option<String>,
}

/// A decision that claims a pending run.
#[derive(Clone, Debug)]
pub struct Decision {
    /// `approve`, `reject`, `respond` or `cancel`.
    pub decision: String,
    /// Who decided, if known.
    pub decided_by: Option<String>,
    /// Channel: `cli`, `app`, `notification`, `http`.
    pub decided_via: String,
}

/// What [`Store::claim`] found.
#[derive(Debug)]
pub enum Claim {
    /// This caller now owns the run and must finish it.
    Claimed(Run),
    /// Another resume owns or finished it.
    Taken(Run),
    /// No such run.
    Missing,
}

/// How a claimed run ended.
#[derive(Clone, Debug)]
pub struct Finish {
    /// Final status (`Done`, `Cancelled` or `Failed`).
    pub status: RunStatus,
    /// The final envelope, as JSON.
    pub result_json: String,
    /// A new gate the resume paused at, recorded in the same transaction.
    pub next: Option<NewRun>,
}

/// Current time as ISO-8601 UTC with milliseconds (`Date#toISOString`).
pub fn now_iso() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Connections in the pool of a long-lived process.
const POOLED: u32 = 4;

/// Bytes of write-ahead log [`Store::close`] leaves for the next process
/// (about 64 pages). The first connection of a process reads the whole log,
/// so it is kept short.
const WAL_KEEP_BYTES: u64 = 64 * 4120;

/// Leaves the write-ahead log in place when the connection closes instead
/// of checkpointing it. A checkpoint syncs the database file, which would
/// cost every short-lived `lobster` process about a millisecond; commits
/// are in the log either way, and [`Store::close`] checkpoints once the log
/// has grown past [`WAL_KEEP_BYTES`]. Reading the log back is SQLite's own
/// recovery (the path a `kill -9` takes), so nothing committed is lost.
pub(crate) async fn keep_log_on_close(conn: &mut sqlx::SqliteConnection) -> std::result::Result<(), sqlx::Error> {
    let mut handle = conn.lock_handle().await?;
    // SAFETY: the handle is a live connection, locked for this call;
    // SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE takes an int and an optional int out-pointer.
    let rc = unsafe {
        libsqlite3_sys::sqlite3_db_config(
            handle.as_raw_handle().as_ptr(),
            libsqlite3_sys::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            1 as std::ffi::c_int,
            std::ptr::null_mut::<std::ffi::c_int>(),
        )
    };
    if rc != libsqlite3_sys::SQLITE_OK {
        tracing::debug!(rc, "SQLite kept checkpoint-on-close");
    }
    Ok(())
}

/// Whether the database has exactly this build's migrations applied (with
/// their checksums): one query, where the migrator would make three. On
/// anything else the migrator runs and reports.
async fn migrated(conn: &mut SqliteConnection) -> bool {
    let Ok(rows) = sqlx::query("SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version").fetch_all(conn).await else {
        return false;
    };
    let expected: Vec<_> = MIGRATOR.iter().filter(|m| !m.migration_type.is_down_migration()).collect();
    rows.len() == expected.len()
        && rows
            .iter()
            .zip(expected)
            .all(|(row, m)| row.get::<i64, _>(0) == m.version && row.get::<Vec<u8>, _>(1) == *m.checksum && row.get::<bool, _>(2))
}

/// The SQLite store.
#[derive(Clone, Debug)]
pub struct Store {
    conns: Conns,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database in `dir` and migrates it,
    /// with a pool of connections for a long-lived process.
    pub async fn open_dir(dir: &Path) -> Result<Store> {
        Store::open_dir_with(dir, POOLED).await
    }

    /// Opens the database in `dir` with at most `connections` connections.
    /// A short-lived process such as `lobster` uses one, held until
    /// [`Store::close`]: it runs a statement at a time, and a second
    /// connection would cost a second open.
    pub async fn open_dir_with(dir: &Path, connections: u32) -> Result<Store> {
        create_private_dir(dir)?;
        Store::open_with(&dir.join(DB_FILE), connections).await
    }

    /// Opens (creating if needed) the database file at `path` and migrates it.
    pub async fn open(path: &Path) -> Result<Store> {
        Store::open_with(path, POOLED).await
    }

    #[tracing::instrument(level = "debug")]
    async fn open_with(path: &Path, connections: u32) -> Result<Store> {
        precreate_private_file(path);
        let options = SqliteConnectOptions::from_str("sqlite://")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        let conns = if connections <= 1 {
            // Told to keep its log only when it is closed (see `Conns::close`):
            // a process that leaves it to the exit never closes it.
            let conn = options.clone().connect().await?;
            Conns::One(std::sync::Arc::new(tokio::sync::Mutex::new(Some(conn))))
        } else {
            let pool = SqlitePoolOptions::new()
                .max_connections(connections)
                .min_connections(0)
                // A ping before every statement guards against a server that
                // hung up; a SQLite file in this process cannot, and the ping
                // is a round trip to the connection's thread per statement.
                .test_before_acquire(false)
                .after_connect(|conn, _| Box::pin(keep_log_on_close(conn)))
                .connect_with(options.clone())
                .await?;
            Conns::Pool(pool)
        };
        if !migrated(&mut *conns.get().await?).await {
            conns.migrate(&options).await?;
        }
        Ok(Store { conns, path: path.to_path_buf() })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the store, waiting for statements in progress. A write-ahead
    /// log grown past [`WAL_KEEP_BYTES`] is first checkpointed into the
    /// database and truncated (skipped if another process keeps it busy).
    pub async fn close(&self) {
        self.checkpoint_long_log().await;
        self.conns.close().await;
    }

    /// Ends a short-lived process's use of the store just before it exits:
    /// a long log is checkpointed as by [`Store::close`], and the
    /// connection is left to the exit, which releases its locks (its
    /// commits are in the log already) without the round trip to the
    /// connection's thread that a close takes.
    pub async fn settle_before_exit(&self) {
        self.checkpoint_long_log().await;
    }

    async fn checkpoint_long_log(&self) {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > WAL_KEEP_BYTES)
            && let Ok(mut conn) = self.conns.get().await
        {
            let checkpoint = async {
                sqlx::query("PRAGMA busy_timeout = 100").execute(&mut *conn).await?;
                sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *conn).await
            };
            if let Err(e) = checkpoint.await {
                tracing::debug!(error = %e, "write-ahead log not checkpointed");
            }
        }
    }

    /// Runs SQLite's `PRAGMA integrity_check`; `Ok(true)` when the file is sound.
    pub async fn integrity_check(&self) -> Result<bool> {
        let row = sqlx::query("PRAGMA integrity_check").fetch_one(&mut *self.conns.get().await?).await?;
        Ok(row.get::<String, _>(0) == "ok")
    }

    /// Reads a key/value entry (`state.get`).
    pub async fn kv_get(&self, key: &str) -> Result<Option<String>> {
        let row = sqlx::query("SELECT value_json FROM kv WHERE key = ?").bind(key).fetch_optional(&mut *self.conns.get().await?).await?;
        Ok(row.map(|r| r.get::<String, _>(0)))
    }

    /// Writes a key/value entry (`state.set`).
    pub async fn kv_set(&self, key: &str, value_json: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO kv (key, value_json, updated_at) VALUES (?, ?, ?)
             ON CONFLICT(key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at",
        )
        .bind(key)
        .bind(value_json)
        .bind(now_iso())
        .execute(&mut *self.conns.get().await?)
        .await?;
        Ok(())
    }

    /// Records a paused run. Fails if the approval id is already used.
    pub async fn insert_run(&self, run: &NewRun) -> Result<()> {
        // One statement is its own transaction.
        insert_query(run).execute(&mut *self.conns.get().await?).await?;
        Ok(())
    }

    /// Whether an approval id is taken.
    pub async fn approval_id_exists(&self, approval_id: &str) -> Result<bool> {
        let row =
            sqlx::query("SELECT 1 FROM runs WHERE approval_id = ?").bind(approval_id).fetch_optional(&mut *self.conns.get().await?).await?;
        Ok(row.is_some())
    }

    /// Looks a run up by state key.
    pub async fn get_run(&self, state_key: &str) -> Result<Option<Run>> {
        let row = sqlx::query(concat!("SELECT ", run_columns!(), " FROM runs WHERE state_key = ?"))
            .bind(state_key)
            .fetch_optional(&mut *self.conns.get().await?)
            .await?;
        Ok(row.map(|r| run_from_row(&r)))
    }

    /// Looks a run up by its short approval id.
    pub async fn get_run_by_approval_id(&self, approval_id: &str) -> Result<Option<Run>> {
        let row = sqlx::query(concat!("SELECT ", run_columns!(), " FROM runs WHERE approval_id = ?"))
            .bind(approval_id)
            .fetch_optional(&mut *self.conns.get().await?)
            .await?;
        Ok(row.map(|r| run_from_row(&r)))
    }

    /// Runs in `status`, newest first.
    pub async fn list_runs(&self, status: Option<RunStatus>, limit: i64) -> Result<Vec<Run>> {
        let rows = match status {
            Some(s) => {
                sqlx::query(concat!("SELECT ", run_columns!(), " FROM runs WHERE status = ? ORDER BY created_at DESC LIMIT ?"))
                    .bind(s.as_str())
                    .bind(limit)
                    .fetch_all(&mut *self.conns.get().await?)
                    .await?
            }
            None => {
                sqlx::query(concat!("SELECT ", run_columns!(), " FROM runs ORDER BY created_at DESC LIMIT ?"))
                    .bind(limit)
                    .fetch_all(&mut *self.conns.get().await?)
                    .await?
            }
        };
        Ok(rows.iter().map(run_from_row).collect())
    }

    /// Claims a pending run for `owner`, exactly once across processes.
    ///
    /// A run left `running` by a process that no longer exists (killed while
    /// resuming) is claimable again, so a crash never loses a paused run.
    #[tracing::instrument(level = "debug", skip(self, decision))]
    pub async fn claim(&self, state_key: &str, owner: &ProcessOwner, decision: &Decision) -> Result<Claim> {
        // A pending run, the usual case, is claimed in one statement.
        let pending =
            claim_update(concat!(claim_set!(), "WHERE state_key = ? AND status = 'pending' RETURNING ", run_columns!()), owner, decision)
                .bind(state_key)
                .fetch_optional(&mut *self.conns.get().await?)
                .await?;
        if let Some(row) = pending {
            return Ok(Claim::Claimed(run_from_row(&row)));
        }
        let Some(run) = self.get_run(state_key).await? else {
            return Ok(Claim::Missing);
        };
        let stale_claim = match (run.status, &run.claim_id) {
            (RunStatus::Running, Some(claim)) => !ProcessOwner::parse(claim).is_some_and(|o| o.is_alive()),
            _ => false,
        };
        if run.status != RunStatus::Pending && !stale_claim {
            return Ok(Claim::Taken(run));
        }
        // Compare-and-set on what was read: a dead owner's claim, or a run
        // another process has just released.
        let claimed = claim_update(
            concat!(claim_set!(), "WHERE state_key = ? AND status = ? AND IFNULL(claim_id, '') = ? RETURNING ", run_columns!()),
            owner,
            decision,
        )
        .bind(state_key)
        .bind(run.status.as_str())
        .bind(run.claim_id.clone().unwrap_or_default())
        .fetch_optional(&mut *self.conns.get().await?)
        .await?;
        match claimed {
            Some(row) => Ok(Claim::Claimed(run_from_row(&row))),
            None => Ok(self.get_run(state_key).await?.map_or(Claim::Missing, Claim::Taken)),
        }
    }

    /// Ends a claimed run and, in the same transaction, records the next gate.
    pub async fn finish(&self, state_key: &str, owner: &ProcessOwner, finish: &Finish) -> Result<bool> {
        let update = sqlx::query(
            "UPDATE runs SET status = ?, result_json = ?, next_state_key = ?
             WHERE state_key = ? AND status = 'running' AND claim_id = ?",
        )
        .bind(finish.status.as_str())
        .bind(&finish.result_json)
        .bind(finish.next.as_ref().map(|n| n.state_key.clone()))
        .bind(state_key)
        .bind(owner.to_string());
        let Some(next) = &finish.next else {
            // One statement is its own transaction.
            return Ok(update.execute(&mut *self.conns.get().await?).await?.rows_affected() == 1);
        };
        let mut conn = self.conns.get().await?;
        let mut tx = conn.begin().await?;
        insert_query(next).execute(&mut *tx).await?;
        let done = update.execute(&mut *tx).await?.rows_affected();
        if done != 1 {
            tx.rollback().await?;
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }
}

fn run_from_row(r: &sqlx::sqlite::SqliteRow) -> Run {
    Run {
        state_key: r.get(0),
        kind: r.get(1),
        gate: r.get(2),
        approval_id: r.get(3),
        status: RunStatus::parse(r.get::<&str, _>(4)),
        workflow_name: r.get(5),
        request_json: r.get(6),
        state_json: r.get(7),
        created_at: r.get(8),
        claim_id: r.get(9),
        decision: r.get(10),
        decided_by: r.get(11),
        decided_via: r.get(12),
        decided_at: r.get(13),
        result_json: r.get(14),
        next_state_key: r.get(15),
        cwd: r.get(16),
    }
}

/// `sql` (a [`claim_set!`] update) with the claim by `owner` bound; the
/// caller binds its condition.
fn claim_update<'q>(
    sql: &'static str,
    owner: &ProcessOwner,
    decision: &'q Decision,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    let now = now_iso();
    sqlx::query(sql)
        .bind(owner.to_string())
        .bind(i64::from(owner.pid))
        .bind(now.clone())
        .bind(&decision.decision)
        .bind(&decision.decided_by)
        .bind(&decision.decided_via)
        .bind(now)
}

/// The statement recording `run` as pending.
fn insert_query(run: &NewRun) -> sqlx::query::Query<'_, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    sqlx::query(
        "INSERT INTO runs (state_key, kind, approval_id, gate, status, workflow_name, request_json, state_json, created_at, cwd)
         VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)",
    )
    .bind(&run.state_key)
    .bind(&run.kind)
    .bind(&run.approval_id)
    .bind(&run.gate)
    .bind(&run.workflow_name)
    .bind(&run.request_json)
    .bind(&run.state_json)
    .bind(now_iso())
    .bind(&run.cwd)
}

/// Creates `dir` and its parents, the new ones private to the user (0700).
pub fn create_private_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|source| StoreError::Dir { path: dir.to_path_buf(), source })
}

/// Creates the database file with mode 0600 before SQLite does (SQLite would
/// use the umask); its `-wal` and `-shm` files inherit the mode.
fn precreate_private_file(path: &Path) {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    if let Err(e) = opts.open(path) {
        tracing::debug!(error = %e, "could not pre-create database file");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_run(key: &str, approval: &str) -> NewRun {
        NewRun {
            state_key: key.into(),
            kind: "workflow-file".into(),
            gate: "approval".into(),
            approval_id: Some(approval.into()),
            workflow_name: None,
            request_json: "{}".into(),
            state_json: "{}".into(),
            cwd: None,
        }
    }

    fn decision() -> Decision {
        Decision { decision: "approve".into(), decided_by: None, decided_via: "cli".into() }
    }

    #[tokio::test]
    async fn claim_is_exactly_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        store.insert_run(&new_run("k1", "0000000a")).await.unwrap();
        let me = current_owner();
        assert!(matches!(store.claim("k1", &me, &decision()).await.unwrap(), Claim::Claimed(_)));
        // The same live owner cannot claim twice.
        assert!(matches!(store.claim("k1", &me, &decision()).await.unwrap(), Claim::Taken(_)));
        let finish = Finish { status: RunStatus::Done, result_json: "{}".into(), next: Some(new_run("k2", "0000000b")) };
        assert!(store.finish("k1", &me, &finish).await.unwrap());
        assert_eq!(store.get_run("k1").await.unwrap().unwrap().status, RunStatus::Done);
        assert_eq!(store.get_run_by_approval_id("0000000b").await.unwrap().unwrap().state_key, "k2");
        assert!(matches!(store.claim("nope", &me, &decision()).await.unwrap(), Claim::Missing));
    }

    #[tokio::test]
    async fn stale_claim_of_dead_process_is_reclaimable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        store.insert_run(&new_run("k1", "0000000c")).await.unwrap();
        let dead = ProcessOwner { pid: i32::MAX as u32 - 7, start: 1 };
        assert!(matches!(store.claim("k1", &dead, &decision()).await.unwrap(), Claim::Claimed(_)));
        let me = current_owner();
        assert!(matches!(store.claim("k1", &me, &decision()).await.unwrap(), Claim::Claimed(_)));
    }

    #[tokio::test]
    async fn duplicate_approval_id_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        store.insert_run(&new_run("k1", "0000000d")).await.unwrap();
        assert!(store.insert_run(&new_run("k2", "0000000d")).await.is_err());
        assert!(store.approval_id_exists("0000000d").await.unwrap());
    }

    #[tokio::test]
    async fn close_keeps_a_short_log_and_checkpoints_a_long_one() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join(format!("{DB_FILE}-wal"));
        let store = Store::open_dir_with(dir.path(), 1).await.unwrap();
        store.insert_run(&new_run("k1", "0000000e")).await.unwrap();
        store.close().await;
        let kept = std::fs::metadata(&wal).unwrap().len();
        assert!(kept > 0 && kept <= WAL_KEEP_BYTES, "a short log stays for the next process ({kept} bytes)");

        let store = Store::open_dir_with(dir.path(), 1).await.unwrap();
        assert_eq!(store.get_run("k1").await.unwrap().unwrap().status, RunStatus::Pending, "read back from the log");
        let big = "x".repeat(4000);
        for i in 0..80 {
            store.kv_set(&format!("key{i}"), &format!("\"{big}\"")).await.unwrap();
        }
        assert!(std::fs::metadata(&wal).unwrap().len() > WAL_KEEP_BYTES);
        store.close().await;
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), 0, "a long log is checkpointed and truncated");

        let store = Store::open_dir(dir.path()).await.unwrap();
        assert!(store.integrity_check().await.unwrap());
        assert_eq!(store.kv_get("key79").await.unwrap().map(|v| v.len()), Some(4002));
        assert!(store.get_run("k1").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn a_database_migrated_differently_is_still_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir_with(dir.path(), 1).await.unwrap();
        store.close().await;
        let store = Store::open_dir_with(dir.path(), 1).await.expect("an up-to-date database opens");
        sqlx::query("UPDATE _sqlx_migrations SET checksum = x'00' WHERE version = (SELECT MIN(version) FROM _sqlx_migrations)")
            .execute(&mut *store.conns.get().await.unwrap())
            .await
            .unwrap();
        store.close().await;
        let e = Store::open_dir_with(dir.path(), 1).await.expect_err("a changed migration");
        assert!(matches!(e, StoreError::Migrate(_)), "{e}");
    }

    #[tokio::test]
    async fn kv_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        assert_eq!(store.kv_get("a").await.unwrap(), None);
        store.kv_set("a", "1").await.unwrap();
        store.kv_set("a", "2").await.unwrap();
        assert_eq!(store.kv_get("a").await.unwrap().as_deref(), Some("2"));
    }
}
