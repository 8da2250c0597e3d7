//! The `browser_sessions` table: the clawd browser's sessions and the last
//! snapshot of each (URL, cookies, localStorage), kept so a session comes
//! back after a crash or a restart.

use sqlx::Row;

use crate::{Result, Store, now_iso};

/// A session as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    /// Its id.
    pub id: String,
    /// The named persistent profile it uses, if any.
    pub profile: Option<String>,
    /// Its dialog policy, as spelled in the API.
    pub dialogs: String,
    /// The browser context it last had.
    pub context: Option<String>,
    /// Its page's URL at the last snapshot.
    pub url: String,
    /// Cookies and localStorage at the last snapshot (JSON).
    pub state: String,
    /// When it was created.
    pub created_at: String,
    /// When it was last snapshotted.
    pub saved_at: String,
}

fn record(r: &sqlx::sqlite::SqliteRow) -> SessionRecord {
    SessionRecord {
        id: r.get(0),
        profile: r.get(1),
        dialogs: r.get(2),
        context: r.get(3),
        url: r.get(4),
        state: r.get(5),
        created_at: r.get(6),
        saved_at: r.get(7),
    }
}

const COLUMNS: &str = "id, profile, dialogs, context, url, state, created_at, saved_at";

impl Store {
    /// Records a new session.
    pub async fn insert_session(&self, s: &SessionRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO browser_sessions (id, profile, dialogs, context, url, state, created_at, saved_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&s.id)
        .bind(&s.profile)
        .bind(&s.dialogs)
        .bind(&s.context)
        .bind(&s.url)
        .bind(&s.state)
        .bind(&s.created_at)
        .bind(&s.saved_at)
        .execute(&mut *self.conns.write().await?)
        .await?;
        Ok(())
    }

    /// Saves a session's snapshot; false when it no longer exists.
    pub async fn save_session(
        &self,
        id: &str,
        context: &str,
        url: &str,
        state: &str,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE browser_sessions SET context = ?, url = ?, state = ?, saved_at = ? WHERE id = ?",
        )
        .bind(context)
        .bind(url)
        .bind(state)
        .bind(now_iso())
        .bind(id)
        .execute(&mut *self.conns.write().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records the browser context a session now has.
    pub async fn set_session_context(&self, id: &str, context: &str) -> Result<()> {
        sqlx::query("UPDATE browser_sessions SET context = ? WHERE id = ?")
            .bind(context)
            .bind(id)
            .execute(&mut *self.conns.write().await?)
            .await?;
        Ok(())
    }

    /// One session.
    pub async fn session(&self, id: &str) -> Result<Option<SessionRecord>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM browser_sessions WHERE id = ?"
        )))
        .bind(id)
        .fetch_optional(&mut *self.conns.get().await?)
        .await?;
        Ok(row.as_ref().map(record))
    }

    /// Every session, oldest first.
    pub async fn sessions(&self) -> Result<Vec<SessionRecord>> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM browser_sessions ORDER BY created_at, id"
        )))
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        Ok(rows.iter().map(record).collect())
    }

    /// Forgets a session; false when there was none.
    pub async fn delete_session(&self, id: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM browser_sessions WHERE id = ?")
            .bind(id)
            .execute(&mut *self.conns.write().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}
