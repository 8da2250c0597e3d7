//! The store's connections: a pool for a long-lived process, or one
//! connection held for the life of a short-lived one.
//!
//! sqlx runs each SQLite connection on a thread of its own. A pool hands a
//! connection out per statement and, when it comes back, checks it with a
//! round trip to that thread and a spawned task; a `lobster` process that
//! runs a few statements in a row pays for those hand-offs more than for
//! the statements. Holding its one connection skips them; statements still
//! run one at a time, as they did with a pool of one.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{Sqlite, SqliteConnection, SqlitePool};
use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};

/// Where the store's statements run.
#[derive(Clone, Debug)]
pub(crate) enum Conns {
    /// A pool, for processes that serve many callers, and the turn its
    /// writers take (see [`Conns::write`]).
    Pool(SqlitePool, Arc<Mutex<()>>),
    /// One connection; `None` once closed.
    One(Arc<Mutex<Option<SqliteConnection>>>),
}

/// A connection lent for one operation.
pub(crate) enum Lent<'a> {
    Pooled(PoolConnection<Sqlite>),
    Held(MappedMutexGuard<'a, SqliteConnection>),
}

impl Conns {
    /// A connection for the next statements.
    pub(crate) async fn get(&self) -> Result<Lent<'_>, sqlx::Error> {
        match self {
            Conns::Pool(pool, _) => Ok(Lent::Pooled(pool.acquire().await?)),
            Conns::One(one) => MutexGuard::try_map(one.lock().await, Option::as_mut)
                .map(Lent::Held)
                .map_err(|_closed| sqlx::Error::PoolClosed),
        }
    }

    /// A connection for statements that write. SQLite lets one writer in
    /// at a time and makes the others sleep and retry (1, 2, 5, 10 … ms),
    /// which under load is a long tail of waits; the pool's writers take
    /// their turn here instead, in order, and SQLite never makes one of
    /// this process's writers sleep. (Another process's writer still
    /// waits in SQLite, as before.)
    pub(crate) async fn write(&self) -> Result<Writing<'_>, sqlx::Error> {
        match self {
            Conns::Pool(pool, turn) => {
                let turn = turn.lock().await;
                Ok(Writing {
                    conn: Lent::Pooled(pool.acquire().await?),
                    _turn: Some(turn),
                })
            }
            Conns::One(_) => Ok(Writing {
                conn: self.get().await?,
                _turn: None,
            }),
        }
    }

    /// Brings the schema up to date. The migrator takes a pool (its future
    /// is `Send` only for a pool's borrow), so a held connection's store
    /// migrates through a pool of its own, opened for this (a new or an
    /// older database) and closed after.
    pub(crate) async fn migrate(
        &self,
        options: &SqliteConnectOptions,
    ) -> Result<(), sqlx::migrate::MigrateError> {
        match self {
            Conns::Pool(pool, _) => crate::open::MIGRATOR.run(pool).await,
            Conns::One(_) => {
                let pool = SqlitePoolOptions::new()
                    .max_connections(1)
                    .connect_with(options.clone())
                    .await?;
                let migrated = crate::open::MIGRATOR.run(&pool).await;
                pool.close().await;
                migrated
            }
        }
    }

    /// Closes every connection, waiting for statements in progress.
    pub(crate) async fn close(&self) {
        match self {
            Conns::Pool(pool, _) => pool.close().await,
            Conns::One(one) => {
                if let Some(mut conn) = one.lock().await.take() {
                    if let Err(e) = crate::open::keep_log_on_close(&mut conn).await {
                        tracing::debug!(error = %e, "write-ahead log not kept on close");
                    }
                    let _ = sqlx::Connection::close(conn).await;
                }
            }
        }
    }
}

/// A connection lent for one write, with this process's writers' turn.
pub(crate) struct Writing<'a> {
    conn: Lent<'a>,
    _turn: Option<MutexGuard<'a, ()>>,
}

impl Deref for Writing<'_> {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        &self.conn
    }
}

impl DerefMut for Writing<'_> {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.conn
    }
}

impl Deref for Lent<'_> {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        match self {
            Lent::Pooled(conn) => conn,
            Lent::Held(conn) => conn,
        }
    }
}

impl DerefMut for Lent<'_> {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        match self {
            Lent::Pooled(conn) => conn,
            Lent::Held(conn) => conn,
        }
    }
}
