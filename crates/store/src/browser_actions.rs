//! The `browser_actions` table: every action run in a browser session,
//! the session's trace.

use sqlx::Row;

use crate::{Result, Store, now_iso};

/// One logged action.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionRecord {
    /// Its place in the log.
    pub seq: i64,
    /// The session it ran in.
    pub session: String,
    /// The action's name.
    pub action: String,
    /// What it aimed at, as text.
    pub target: Option<String>,
    /// The request body (JSON).
    pub input: Option<String>,
    /// Whether it succeeded.
    pub ok: bool,
    /// Its failure code.
    pub code: Option<String>,
    /// The whole result object (JSON).
    pub result: String,
    /// How long it took.
    pub duration_ms: i64,
    /// How many retries it took.
    pub retries: i64,
    /// A screenshot of a failure.
    pub screenshot: Option<String>,
    /// When it ended (RFC 3339).
    pub at: String,
}

/// An action to log.
#[derive(Clone, Debug)]
pub struct NewAction<'a> {
    /// The session.
    pub session: &'a str,
    /// The action's name.
    pub action: &'a str,
    /// What it aimed at.
    pub target: Option<String>,
    /// The request body.
    pub input: Option<String>,
    /// Whether it succeeded.
    pub ok: bool,
    /// Its failure code.
    pub code: Option<&'a str>,
    /// The result object.
    pub result: String,
    /// How long it took.
    pub duration_ms: u64,
    /// Its retries.
    pub retries: u32,
    /// A failure's screenshot.
    pub screenshot: Option<String>,
}

impl Store {
    /// Appends an action to its session's log.
    pub async fn log_action(&self, a: &NewAction<'_>) -> Result<i64> {
        let done = sqlx::query(
            "INSERT INTO browser_actions (session, action, target, input, ok, code, result, duration_ms, retries, screenshot, at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(a.session)
        .bind(a.action)
        .bind(&a.target)
        .bind(&a.input)
        .bind(a.ok)
        .bind(a.code)
        .bind(&a.result)
        .bind(a.duration_ms as i64)
        .bind(i64::from(a.retries))
        .bind(&a.screenshot)
        .bind(now_iso())
        .execute(&mut *self.conns.write().await?)
        .await?;
        Ok(done.last_insert_rowid())
    }

    /// A session's actions after `after` (a `seq`), oldest first, at most
    /// `limit`.
    pub async fn actions_of(
        &self,
        session: &str,
        after: i64,
        limit: u32,
    ) -> Result<Vec<ActionRecord>> {
        let rows = sqlx::query(concat!(
            action_columns!(),
            "WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?"
        ))
        .bind(session)
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        Ok(rows.iter().map(action_of).collect())
    }

    /// A session's last `limit` actions, oldest first.
    pub async fn last_actions(&self, session: &str, limit: u32) -> Result<Vec<ActionRecord>> {
        let rows = sqlx::query(concat!(
            action_columns!(),
            "WHERE session = ? ORDER BY seq DESC LIMIT ?"
        ))
        .bind(session)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        Ok(rows.iter().rev().map(action_of).collect())
    }
}

/// The columns [`action_of`] reads, in order.
macro_rules! action_columns {
    () => {
        "SELECT seq, session, action, target, input, ok, code, result, duration_ms, retries, \
         screenshot, at FROM browser_actions "
    };
}
use action_columns;

fn action_of(r: &sqlx::sqlite::SqliteRow) -> ActionRecord {
    ActionRecord {
        seq: r.get(0),
        session: r.get(1),
        action: r.get(2),
        target: r.get(3),
        input: r.get(4),
        ok: r.get::<i64, _>(5) != 0,
        code: r.get(6),
        result: r.get(7),
        duration_ms: r.get(8),
        retries: r.get(9),
        screenshot: r.get(10),
        at: r.get(11),
    }
}
