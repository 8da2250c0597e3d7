//! Opening the database: one SQLite file, private to the user, migrated,
//! with a held connection or a pool; closing it with a short log.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Row, SqliteConnection};

use crate::conns::Conns;
use crate::{DB_FILE, Result, StoreError};

pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

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
pub(crate) async fn keep_log_on_close(
    conn: &mut sqlx::SqliteConnection,
) -> std::result::Result<(), sqlx::Error> {
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

/// An exclusive `flock` on `<db>-migrate.lock`, held while migrating and
/// released when dropped (or when the process dies).
struct MigrationLock {
    _file: std::fs::File,
}

impl MigrationLock {
    async fn acquire(db: &Path) -> Result<MigrationLock> {
        use std::os::fd::AsRawFd as _;
        let mut name = db.as_os_str().to_owned();
        name.push("-migrate.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(std::path::PathBuf::from(name))
            .map_err(|e| StoreError::Db(sqlx::Error::Io(e)))?;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(MigrationLock { _file: file });
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::WouldBlock {
                return Err(StoreError::Db(sqlx::Error::Io(e)));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Whether the database has exactly this build's migrations applied (with
/// their checksums): one query, where the migrator would make three. On
/// anything else the migrator runs and reports.
async fn migrated(conn: &mut SqliteConnection) -> bool {
    let Ok(rows) =
        sqlx::query("SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(conn)
            .await
    else {
        return false;
    };
    let expected: Vec<_> = MIGRATOR
        .iter()
        .filter(|m| !m.migration_type.is_down_migration())
        .collect();
    rows.len() == expected.len()
        && rows.iter().zip(expected).all(|(row, m)| {
            row.get::<i64, _>(0) == m.version
                && row.get::<Vec<u8>, _>(1) == *m.checksum
                && row.get::<bool, _>(2)
        })
}

/// The SQLite store.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) conns: Conns,
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
            Conns::Pool(pool, std::sync::Arc::default())
        };
        if !migrated(&mut *conns.get().await?).await {
            // SQLite's migrator takes no lock: two processes opening a new
            // home at once (a `lobster` and the backend starting) would both
            // apply the first migration. One migrates; the others wait,
            // then find it done.
            let _lock = MigrationLock::acquire(path).await?;
            if !migrated(&mut *conns.get().await?).await {
                conns.migrate(&options).await?;
            }
        }
        Ok(Store {
            conns,
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the store, waiting for statements in progress. A write-ahead
    /// log grown past `WAL_KEEP_BYTES` is first checkpointed into the
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
                sqlx::query("PRAGMA busy_timeout = 100")
                    .execute(&mut *conn)
                    .await?;
                sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                    .execute(&mut *conn)
                    .await
            };
            if let Err(e) = checkpoint.await {
                tracing::debug!(error = %e, "write-ahead log not checkpointed");
            }
        }
    }

    /// Runs SQLite's `PRAGMA integrity_check`; `Ok(true)` when the file is sound.
    pub async fn integrity_check(&self) -> Result<bool> {
        let row = sqlx::query("PRAGMA integrity_check")
            .fetch_one(&mut *self.conns.get().await?)
            .await?;
        Ok(row.get::<String, _>(0) == "ok")
    }
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
    builder.create(dir).map_err(|source| StoreError::Dir {
        path: dir.to_path_buf(),
        source,
    })
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
    use crate::RunStatus;
    use crate::runs::test_run;

    #[tokio::test]
    async fn close_keeps_a_short_log_and_checkpoints_a_long_one() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join(format!("{DB_FILE}-wal"));
        // Creating the schema writes a long log of its own: start after it.
        Store::open_dir_with(dir.path(), 1)
            .await
            .unwrap()
            .close()
            .await;
        let store = Store::open_dir_with(dir.path(), 1).await.unwrap();
        store.insert_run(&test_run("k1", "0000000e")).await.unwrap();
        store.close().await;
        let kept = std::fs::metadata(&wal).unwrap().len();
        assert!(
            kept > 0 && kept <= WAL_KEEP_BYTES,
            "a short log stays for the next process ({kept} bytes)"
        );

        let store = Store::open_dir_with(dir.path(), 1).await.unwrap();
        assert_eq!(
            store.get_run("k1").await.unwrap().unwrap().status,
            RunStatus::Pending,
            "read back from the log"
        );
        let big = "x".repeat(4000);
        for i in 0..80 {
            store
                .kv_set(&format!("key{i}"), &format!("\"{big}\""))
                .await
                .unwrap();
        }
        assert!(std::fs::metadata(&wal).unwrap().len() > WAL_KEEP_BYTES);
        store.close().await;
        assert_eq!(
            std::fs::metadata(&wal).unwrap().len(),
            0,
            "a long log is checkpointed and truncated"
        );

        let store = Store::open_dir(dir.path()).await.unwrap();
        assert!(store.integrity_check().await.unwrap());
        assert_eq!(
            store.kv_get("key79").await.unwrap().map(|v| v.len()),
            Some(4002)
        );
        assert!(store.get_run("k1").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn a_database_migrated_differently_is_still_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir_with(dir.path(), 1).await.unwrap();
        store.close().await;
        let store = Store::open_dir_with(dir.path(), 1)
            .await
            .expect("an up-to-date database opens");
        sqlx::query("UPDATE _sqlx_migrations SET checksum = x'00' WHERE version = (SELECT MIN(version) FROM _sqlx_migrations)")
            .execute(&mut *store.conns.write().await.unwrap())
            .await
            .unwrap();
        store.close().await;
        let e = Store::open_dir_with(dir.path(), 1)
            .await
            .expect_err("a changed migration");
        assert!(matches!(e, StoreError::Migrate(_)), "{e}");
    }
}
