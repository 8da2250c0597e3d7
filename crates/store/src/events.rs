//! The `events` table: what webhooks announce, written by the database's
//! own triggers in the same transaction as the change (see the migration
//! `0008_webhooks.sql`), so no process that pauses or decides a run can
//! forget one, and none is announced for a change that did not commit.

use sqlx::Row;

use crate::{Result, Store};

/// An event not yet turned into deliveries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEvent {
    /// Its place in the log; never reused.
    pub seq: i64,
    /// `approval.pending`, `approval.decided`, `run.completed` or `run.failed`.
    pub kind: String,
    /// The gate's state key (`approval.*`, and the end of a run a `lobster`
    /// process started) or the service run's id.
    pub subject: String,
    /// When it happened (RFC 3339).
    pub at: String,
}

impl Store {
    /// The oldest `limit` events not yet turned into deliveries.
    pub async fn pending_events(&self, limit: u32) -> Result<Vec<StoredEvent>> {
        let rows = sqlx::query("SELECT seq, type, subject, at FROM events ORDER BY seq LIMIT ?")
            .bind(i64::from(limit))
            .fetch_all(&mut *self.conns.get().await?)
            .await?;
        Ok(rows
            .iter()
            .map(|r| StoredEvent {
                seq: r.get(0),
                kind: r.get(1),
                subject: r.get(2),
                at: r.get(3),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::test_run;
    use crate::{Channel, Decided, Decision, Finish, RunStatus, current_owner};

    #[tokio::test]
    async fn pausing_deciding_and_ending_a_run_each_leave_one_event() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        store.insert_run(&test_run("k1", "0000000a")).await.unwrap();
        let me = current_owner();
        let decided = Decided {
            decision: Decision::Approve,
            decided_by: None,
            decided_via: Channel::Cli,
            comment: None,
            presence: None,
            digest: None,
        };
        store.claim("k1", &me, &decided).await.unwrap();
        let finish = Finish {
            status: RunStatus::Done,
            result_json: "{}".into(),
            next: None,
            history: None,
        };
        assert!(store.finish("k1", &me, &finish).await.unwrap());
        let events = store.pending_events(10).await.unwrap();
        let kinds: Vec<(&str, &str)> = events
            .iter()
            .map(|e| (e.kind.as_str(), e.subject.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("approval.pending", "k1"),
                ("approval.decided", "k1"),
                ("run.completed", "k1")
            ]
        );
        assert!(events.windows(2).all(|w| w[0].seq < w[1].seq));
    }
}
