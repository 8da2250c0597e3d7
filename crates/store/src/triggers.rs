//! The `triggers` and `scheduler_lease` tables: how far each workflow
//! trigger is handled, which ones a person paused, and which backend fires
//! them.

use sqlx::Row;

use crate::{Result, Store, now_iso};

/// A trigger as the store knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerRecord {
    /// Its id.
    pub id: String,
    /// The workflow it runs (by name, for the record).
    pub workflow: String,
    /// The time (RFC 3339, UTC) up to which it is handled.
    pub mark: String,
    /// Whether a person paused it.
    pub paused: bool,
    /// When it last started a run.
    pub fired_at: Option<String>,
}

/// Moves a trigger's mark from `from` to `to`: a compare-and-set that
/// fails if another backend moved it first or the trigger is paused.
#[derive(Clone, Debug)]
pub struct Advance {
    /// The trigger.
    pub id: String,
    /// The mark it must still have.
    pub from: String,
    /// Its new mark.
    pub to: String,
}

impl Advance {
    /// Applies the move on `conn`; `fired` records a run started now.
    pub(crate) async fn apply(
        &self,
        conn: &mut sqlx::SqliteConnection,
        fired: bool,
    ) -> Result<bool> {
        let now = now_iso();
        let done = sqlx::query(
            "UPDATE triggers SET mark = ?, updated_at = ?,
                 fired_at = CASE WHEN ? THEN ? ELSE fired_at END
             WHERE id = ? AND mark = ? AND paused = 0",
        )
        .bind(&self.to)
        .bind(&now)
        .bind(fired)
        .bind(&now)
        .bind(&self.id)
        .bind(&self.from)
        .execute(conn)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}

fn record_from_row(r: &sqlx::sqlite::SqliteRow) -> TriggerRecord {
    TriggerRecord {
        id: r.get(0),
        workflow: r.get(1),
        mark: r.get(2),
        paused: r.get::<i64, _>(3) != 0,
        fired_at: r.get(4),
    }
}

impl Store {
    /// Trigger `id` of `workflow`, recorded as handled up to `mark` the
    /// first time it is seen (what happened before it existed is not
    /// caught up); as recorded ever after.
    pub async fn arm_trigger(&self, id: &str, workflow: &str, mark: &str) -> Result<TriggerRecord> {
        let mut conn = self.conns.write().await?;
        sqlx::query(
            "INSERT INTO triggers (id, workflow, mark, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET workflow = excluded.workflow
             WHERE workflow <> excluded.workflow",
        )
        .bind(id)
        .bind(workflow)
        .bind(mark)
        .bind(now_iso())
        .execute(&mut *conn)
        .await?;
        let row =
            sqlx::query("SELECT id, workflow, mark, paused, fired_at FROM triggers WHERE id = ?")
                .bind(id)
                .fetch_one(&mut *conn)
                .await?;
        Ok(record_from_row(&row))
    }

    /// Trigger `id`, if it was ever seen.
    pub async fn get_trigger(&self, id: &str) -> Result<Option<TriggerRecord>> {
        let row =
            sqlx::query("SELECT id, workflow, mark, paused, fired_at FROM triggers WHERE id = ?")
                .bind(id)
                .fetch_optional(&mut *self.conns.get().await?)
                .await?;
        Ok(row.as_ref().map(record_from_row))
    }

    /// Moves a trigger's mark without starting a run (occurrences its
    /// catch-up policy skips); `false` if the compare-and-set failed.
    pub async fn advance_trigger(&self, advance: &Advance) -> Result<bool> {
        advance.apply(&mut *self.conns.get().await?, false).await
    }

    /// Pauses or resumes trigger `id`. A resumed trigger is handled up to
    /// now: what it would have done while paused is skipped, not caught
    /// up. `None` if the trigger was never seen.
    pub async fn set_trigger_paused(
        &self,
        id: &str,
        paused: bool,
    ) -> Result<Option<TriggerRecord>> {
        let now = now_iso();
        let row = sqlx::query(
            "UPDATE triggers SET paused = ?, updated_at = ?,
                 mark = CASE WHEN paused = 1 AND ? = 0 AND mark < ? THEN ? ELSE mark END
             WHERE id = ? RETURNING id, workflow, mark, paused, fired_at",
        )
        .bind(paused)
        .bind(&now)
        .bind(paused)
        .bind(&now)
        .bind(&now)
        .bind(id)
        .fetch_optional(&mut *self.conns.write().await?)
        .await?;
        Ok(row.as_ref().map(record_from_row))
    }

    /// Takes (or keeps) the home's scheduler lease for this process:
    /// `true` when this process is the one to fire triggers, because no
    /// other live process holds the lease.
    pub async fn claim_scheduler(&self) -> Result<bool> {
        let me = crate::current_owner().to_string();
        // The holder's own look, every few seconds, only reads.
        let holder: Option<String> =
            sqlx::query_scalar("SELECT owner FROM scheduler_lease WHERE id = 1")
                .fetch_optional(&mut *self.conns.get().await?)
                .await?;
        if holder.as_deref() == Some(me.as_str()) {
            return Ok(true);
        }
        let mut conn = self.conns.write().await?;
        sqlx::query("INSERT OR IGNORE INTO scheduler_lease (id, owner, since) VALUES (1, ?, ?)")
            .bind(&me)
            .bind(now_iso())
            .execute(&mut *conn)
            .await?;
        let holder: String = sqlx::query_scalar("SELECT owner FROM scheduler_lease WHERE id = 1")
            .fetch_one(&mut *conn)
            .await?;
        if holder == me {
            return Ok(true);
        }
        if crate::ProcessOwner::parse(&holder).is_some_and(|o| o.is_alive()) {
            return Ok(false);
        }
        let taken = sqlx::query(
            "UPDATE scheduler_lease SET owner = ?, since = ? WHERE id = 1 AND owner = ?",
        )
        .bind(&me)
        .bind(now_iso())
        .bind(&holder)
        .execute(&mut *conn)
        .await?;
        Ok(taken.rows_affected() == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HistoryKind, NewHistory};

    fn run(id: &str) -> NewHistory {
        NewHistory {
            run_id: id.into(),
            kind: HistoryKind::Workflow,
            workflow: Some("nightly".into()),
            definition: "steps: []".into(),
            args_json: "{}".into(),
            cwd: None,
            started_by: "trigger:t1".into(),
            provenance_json: None,
        }
    }

    fn advance(from: &str, to: &str) -> Advance {
        Advance {
            id: "t1".into(),
            from: from.into(),
            to: to.into(),
        }
    }

    #[tokio::test]
    async fn a_trigger_is_armed_once_and_each_mark_fires_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        let armed = store
            .arm_trigger("t1", "nightly", "2026-01-01T00:00:00.000Z")
            .await
            .unwrap();
        assert_eq!(armed.mark, "2026-01-01T00:00:00.000Z");
        assert!(!armed.paused);
        let again = store
            .arm_trigger("t1", "renamed", "2026-06-01T00:00:00.000Z")
            .await
            .unwrap();
        assert_eq!(again.mark, armed.mark, "a second arm keeps the mark");
        assert_eq!(again.workflow, "renamed");

        let step = advance("2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z");
        assert!(
            store
                .start_fired_history(&run("r1"), &[], &step)
                .await
                .unwrap()
        );
        assert!(
            !store
                .start_fired_history(&run("r2"), &[], &step)
                .await
                .unwrap(),
            "the same occurrence fires once"
        );
        assert!(store.get_history("r1").await.unwrap().is_some());
        assert!(
            store.get_history("r2").await.unwrap().is_none(),
            "no run for a lost race"
        );
        let now = store.get_trigger("t1").await.unwrap().unwrap();
        assert_eq!(now.mark, "2026-01-02T00:00:00.000Z");
        assert!(now.fired_at.is_some());
    }

    #[tokio::test]
    async fn a_paused_trigger_fires_nothing_and_resumes_from_now() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        store
            .arm_trigger("t1", "nightly", "2026-01-01T00:00:00.000Z")
            .await
            .unwrap();
        assert!(
            store
                .set_trigger_paused("t1", true)
                .await
                .unwrap()
                .unwrap()
                .paused
        );
        let step = advance("2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z");
        assert!(
            !store
                .start_fired_history(&run("r1"), &[], &step)
                .await
                .unwrap()
        );
        assert!(!store.advance_trigger(&step).await.unwrap());
        let resumed = store
            .set_trigger_paused("t1", false)
            .await
            .unwrap()
            .unwrap();
        assert!(!resumed.paused);
        assert!(resumed.mark.as_str() > "2026-11-01", "{}", resumed.mark);
        assert!(
            store
                .set_trigger_paused("nope", true)
                .await
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn one_live_process_holds_the_scheduler_lease() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        assert!(store.claim_scheduler().await.unwrap());
        assert!(store.claim_scheduler().await.unwrap(), "kept");
        // A live other process holds it: pid 1 (init) is always alive.
        sqlx::query("UPDATE scheduler_lease SET owner = '1:0'")
            .execute(&mut *store.conns.write().await.unwrap())
            .await
            .unwrap();
        assert!(!store.claim_scheduler().await.unwrap());
        // A dead one's lease is taken over.
        sqlx::query("UPDATE scheduler_lease SET owner = '4194304:1'")
            .execute(&mut *store.conns.write().await.unwrap())
            .await
            .unwrap();
        assert!(store.claim_scheduler().await.unwrap());
    }
}
