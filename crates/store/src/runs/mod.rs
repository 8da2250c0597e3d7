//! The `runs` table: paused runs, their exactly-once claim and their end.

use sqlx::{Connection, Row};

mod columns;

pub use columns::{Channel, Decision, Gate, RunKind, RunStatus};

use crate::history::{HistoryEnd, write_end, write_resumed};
use crate::{ProcessOwner, Result, Store, StoreError, now_iso};

/// The columns [`run_from_row`] reads, in order.
macro_rules! run_columns {
    () => {
        "state_key, kind, gate, approval_id, status, workflow_name, request_json, state_json, created_at, \
         claim_id, decision, decided_by, decided_via, decided_at, result_json, next_state_key, cwd, \
         decision_comment, expires_at, run_id, decided_presence"
    };
}
pub(crate) use run_columns;

/// The assignments of a claim, bound by [`claim_update`].
macro_rules! claim_set {
    () => {
        "UPDATE runs SET status = 'running', claim_id = ?, claimed_pid = ?, claimed_at = ?, \
         decision = ?, decided_by = ?, decided_via = ?, decided_at = ?, decision_comment = ?, \
         decided_presence = ? "
    };
}

/// A paused run to record.
#[derive(Clone, Debug)]
pub struct NewRun {
    /// `workflow_resume_<uuid>` or `pipeline_resume_<uuid>`.
    pub state_key: String,
    /// What paused.
    pub kind: RunKind,
    /// The gate it paused at.
    pub gate: Gate,
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
    /// When the gate expires (RFC 3339), if its policy says.
    pub expires_at: Option<String>,
    /// The service run it belongs to (see [`crate::HistoryRun`]), if any.
    pub run_id: Option<String>,
}

/// A recorded run.
#[derive(Clone, Debug)]
pub struct Run {
    /// State key.
    pub state_key: String,
    /// What paused.
    pub kind: RunKind,
    /// The gate it paused at.
    pub gate: Gate,
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
    /// The decision taken.
    pub decision: Option<Decision>,
    /// Who decided.
    pub decided_by: Option<String>,
    /// Through which channel.
    pub decided_via: Option<Channel>,
    /// When.
    pub decided_at: Option<String>,
    /// Final envelope of the resume, as JSON.
    pub result_json: Option<String>,
    /// The next gate the resume paused at.
    pub next_state_key: Option<String>,
    /// The directory the pausing process ran in.
    pub cwd: Option<String>,
    /// What the decider said: an approval's comment, a denial's reason.
    pub decision_comment: Option<String>,
    /// When the gate expires (RFC 3339), if its policy says.
    pub expires_at: Option<String>,
    /// The service run it belongs to, if any.
    pub run_id: Option<String>,
    /// How the decider showed a person was there, when one did.
    pub decided_presence: Option<crate::Presence>,
}

/// A decision that claims a pending run, with who took it and how.
#[derive(Clone, Debug)]
pub struct Decided {
    /// The decision.
    pub decision: Decision,
    /// Who decided, if known.
    pub decided_by: Option<String>,
    /// The channel it came through.
    pub decided_via: Channel,
    /// What the decider said with it.
    pub comment: Option<String>,
    /// How the decider showed a person was there, if one was.
    pub presence: Option<crate::Presence>,
    /// The digest of what the gate showed when it was decided.
    pub digest: Option<String>,
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
    /// Where the service run this gate belongs to got to, recorded in the
    /// same transaction.
    pub history: Option<HistoryEnd>,
}

impl Store {
    /// Records a paused run. Fails if the approval id is already used.
    pub async fn insert_run(&self, run: &NewRun) -> Result<()> {
        // One statement is its own transaction.
        insert_query(run)
            .execute(&mut *self.conns.get().await?)
            .await?;
        Ok(())
    }

    /// Pending runs whose gate expired at or before `now` (RFC 3339), and
    /// the earliest expiry still to come.
    pub async fn expiries(&self, now: &str) -> Result<(Vec<String>, Option<String>)> {
        let mut conn = self.conns.get().await?;
        let due = sqlx::query(
            "SELECT state_key FROM runs WHERE status = 'pending' AND expires_at IS NOT NULL
             AND expires_at <= ? ORDER BY expires_at",
        )
        .bind(now)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| r.get::<String, _>(0))
        .collect();
        let next = sqlx::query(
            "SELECT MIN(expires_at) FROM runs WHERE status = 'pending' AND expires_at > ?",
        )
        .bind(now)
        .fetch_one(&mut *conn)
        .await?
        .get::<Option<String>, _>(0);
        Ok((due, next))
    }

    /// Whether an approval id is taken.
    pub async fn approval_id_exists(&self, approval_id: &str) -> Result<bool> {
        let row = sqlx::query("SELECT 1 FROM runs WHERE approval_id = ?")
            .bind(approval_id)
            .fetch_optional(&mut *self.conns.get().await?)
            .await?;
        Ok(row.is_some())
    }

    /// Looks a run up by state key.
    pub async fn get_run(&self, state_key: &str) -> Result<Option<Run>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE state_key = ?"
        ))
        .bind(state_key)
        .fetch_optional(&mut *self.conns.get().await?)
        .await?;
        row.map(|r| run_from_row(&r)).transpose()
    }

    /// Looks a run up by its short approval id.
    pub async fn get_run_by_approval_id(&self, approval_id: &str) -> Result<Option<Run>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE approval_id = ?"
        ))
        .bind(approval_id)
        .fetch_optional(&mut *self.conns.get().await?)
        .await?;
        row.map(|r| run_from_row(&r)).transpose()
    }

    /// The latest gate of run `run_id` (the one it waits at, if it waits).
    pub async fn latest_gate(&self, run_id: &str) -> Result<Option<Run>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE run_id = ? ORDER BY rowid DESC LIMIT 1"
        ))
        .bind(run_id)
        .fetch_optional(&mut *self.conns.get().await?)
        .await?;
        row.map(|r| run_from_row(&r)).transpose()
    }

    /// Runs in `status`, newest first.
    pub async fn list_runs(&self, status: Option<RunStatus>, limit: i64) -> Result<Vec<Run>> {
        let rows = match status {
            Some(s) => {
                sqlx::query(concat!(
                    "SELECT ",
                    run_columns!(),
                    " FROM runs WHERE status = ? ORDER BY created_at DESC LIMIT ?"
                ))
                .bind(s.as_str())
                .bind(limit)
                .fetch_all(&mut *self.conns.get().await?)
                .await?
            }
            None => {
                sqlx::query(concat!(
                    "SELECT ",
                    run_columns!(),
                    " FROM runs ORDER BY created_at DESC LIMIT ?"
                ))
                .bind(limit)
                .fetch_all(&mut *self.conns.get().await?)
                .await?
            }
        };
        rows.iter().map(run_from_row).collect()
    }

    /// Claims a pending run for `owner`, exactly once across processes.
    ///
    /// A run left `running` by a process that no longer exists (killed while
    /// resuming) is claimable again, so a crash never loses a paused run.
    #[tracing::instrument(level = "debug", skip(self, decision))]
    pub async fn claim(
        &self,
        state_key: &str,
        owner: &ProcessOwner,
        decision: &Decided,
    ) -> Result<Claim> {
        // A pending run, the usual case, is claimed in one statement.
        let pending = claim_update(
            concat!(
                claim_set!(),
                "WHERE state_key = ? AND status = 'pending' RETURNING ",
                run_columns!()
            ),
            owner,
            decision,
        )
        .bind(state_key)
        .fetch_optional(&mut *self.conns.get().await?)
        .await?;
        if let Some(row) = pending {
            return self.claimed(run_from_row(&row)?, owner, decision).await;
        }
        let Some(run) = self.get_run(state_key).await? else {
            return Ok(Claim::Missing);
        };
        let stale_claim = match (run.status, &run.claim_id) {
            (RunStatus::Running, Some(claim)) => {
                !ProcessOwner::parse(claim).is_some_and(|o| o.is_alive())
            }
            _ => false,
        };
        if run.status != RunStatus::Pending && !stale_claim {
            return Ok(Claim::Taken(run));
        }
        // Compare-and-set on what was read: a dead owner's claim, or a run
        // another process has just released.
        let claimed = claim_update(
            concat!(
                claim_set!(),
                "WHERE state_key = ? AND status = ? AND IFNULL(claim_id, '') = ? RETURNING ",
                run_columns!()
            ),
            owner,
            decision,
        )
        .bind(state_key)
        .bind(run.status.as_str())
        .bind(run.claim_id.clone().unwrap_or_default())
        .fetch_optional(&mut *self.conns.get().await?)
        .await?;
        match claimed {
            Some(row) => self.claimed(run_from_row(&row)?, owner, decision).await,
            None => Ok(self
                .get_run(state_key)
                .await?
                .map_or(Claim::Missing, Claim::Taken)),
        }
    }

    /// A claim won: the decision goes into the ledger (before anyone is
    /// told of it), and the service run the gate belongs to runs again.
    async fn claimed(&self, run: Run, owner: &ProcessOwner, decision: &Decided) -> Result<Claim> {
        self.record_audit(&crate::NewAuditEntry {
            kind: format!("gate.{}", decision.decision.as_str()),
            subject: run.audit_subject(),
            by: decision.decided_by.clone(),
            via: Some(decision.decided_via.as_str().to_string()),
            presence: decision.presence,
            digest: decision.digest.clone(),
        })
        .await?;
        if let Some(run_id) = &run.run_id {
            write_resumed(&mut *self.conns.get().await?, run_id, owner).await?;
        }
        Ok(Claim::Claimed(run))
    }

    /// Ends a claimed run and, in the same transaction, records the next
    /// gate and where its service run got to.
    pub async fn finish(
        &self,
        state_key: &str,
        owner: &ProcessOwner,
        finish: &Finish,
    ) -> Result<bool> {
        let update = sqlx::query(
            "UPDATE runs SET status = ?, result_json = ?, next_state_key = ?
             WHERE state_key = ? AND status = 'running' AND claim_id = ? RETURNING run_id",
        )
        .bind(finish.status.as_str())
        .bind(&finish.result_json)
        .bind(finish.next.as_ref().map(|n| n.state_key.clone()))
        .bind(state_key)
        .bind(owner.to_string());
        let mut conn = self.conns.write().await?;
        if finish.next.is_none() && finish.history.is_none() {
            // One statement is its own transaction.
            return Ok(update.fetch_optional(&mut *conn).await?.is_some());
        }
        let mut tx = conn.begin().await?;
        if let Some(next) = &finish.next {
            insert_query(next).execute(&mut *tx).await?;
        }
        let Some(row) = update.fetch_optional(&mut *tx).await? else {
            tx.rollback().await?;
            return Ok(false);
        };
        if let (Some(end), Some(run_id)) = (&finish.history, row.get::<Option<String>, _>(0)) {
            write_end(&mut tx, &run_id, end).await?;
        }
        tx.commit().await?;
        Ok(true)
    }
}

/// Reads column `i`, spelled as one of `T`'s values.
pub(crate) fn spelled<T>(
    r: &sqlx::sqlite::SqliteRow,
    i: usize,
    column: &'static str,
    parse: fn(&str) -> Option<T>,
) -> Result<T> {
    let text: &str = r.get(i);
    parse(text).ok_or_else(|| StoreError::Corrupt {
        column,
        value: text.to_string(),
    })
}

/// Like [`spelled`], for a column that may be NULL.
fn spelled_opt<T>(
    r: &sqlx::sqlite::SqliteRow,
    i: usize,
    column: &'static str,
    parse: fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    match r.get::<Option<&str>, _>(i) {
        None => Ok(None),
        Some(_) => spelled(r, i, column, parse).map(Some),
    }
}

pub(crate) fn run_from_row(r: &sqlx::sqlite::SqliteRow) -> Result<Run> {
    Ok(Run {
        state_key: r.get(0),
        kind: spelled(r, 1, "kind", RunKind::parse)?,
        gate: spelled(r, 2, "gate", Gate::parse)?,
        approval_id: r.get(3),
        status: spelled(r, 4, "status", RunStatus::parse)?,
        workflow_name: r.get(5),
        request_json: r.get(6),
        state_json: r.get(7),
        created_at: r.get(8),
        claim_id: r.get(9),
        decision: spelled_opt(r, 10, "decision", Decision::parse)?,
        decided_by: r.get(11),
        decided_via: spelled_opt(r, 12, "decided_via", Channel::parse)?,
        decided_at: r.get(13),
        result_json: r.get(14),
        next_state_key: r.get(15),
        cwd: r.get(16),
        decision_comment: r.get(17),
        expires_at: r.get(18),
        run_id: r.get(19),
        decided_presence: r
            .get::<Option<&str>, _>(20)
            .and_then(crate::Presence::parse),
    })
}

/// `sql` (a [`claim_set!`] update) with the claim by `owner` bound; the
/// caller binds its condition.
impl Run {
    /// How the ledger names this gate: its approval id, else its run's id,
    /// else its key.
    pub fn audit_subject(&self) -> String {
        self.approval_id
            .clone()
            .or_else(|| self.run_id.clone())
            .unwrap_or_else(|| self.state_key.clone())
    }
}

fn claim_update<'q>(
    sql: &'static str,
    owner: &ProcessOwner,
    decision: &'q Decided,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    let now = now_iso();
    sqlx::query(sql)
        .bind(owner.to_string())
        .bind(i64::from(owner.pid))
        .bind(now.clone())
        .bind(decision.decision.as_str())
        .bind(&decision.decided_by)
        .bind(decision.decided_via.as_str())
        .bind(now)
        .bind(&decision.comment)
        .bind(decision.presence.map(crate::Presence::as_str))
}

/// The statement recording `run` as pending.
pub(crate) fn insert_query(
    run: &NewRun,
) -> sqlx::query::Query<'_, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    sqlx::query(
        "INSERT INTO runs (state_key, kind, approval_id, gate, status, workflow_name, request_json, state_json, created_at, cwd, expires_at, run_id)
         VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&run.state_key)
    .bind(run.kind.as_str())
    .bind(&run.approval_id)
    .bind(run.gate.as_str())
    .bind(&run.workflow_name)
    .bind(&run.request_json)
    .bind(&run.state_json)
    .bind(now_iso())
    .bind(&run.cwd)
    .bind(&run.expires_at)
    .bind(&run.run_id)
}

/// A pending run for tests.
#[cfg(test)]
pub(crate) fn test_run(key: &str, approval: &str) -> NewRun {
    NewRun {
        state_key: key.into(),
        kind: RunKind::Workflow,
        gate: Gate::Approval,
        approval_id: Some(approval.into()),
        workflow_name: None,
        request_json: "{}".into(),
        state_json: "{}".into(),
        cwd: None,
        expires_at: None,
        run_id: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::current_owner;

    fn decision() -> Decided {
        Decided {
            decision: Decision::Approve,
            decided_by: None,
            decided_via: Channel::Cli,
            comment: None,
            presence: None,
            digest: None,
        }
    }

    #[tokio::test]
    async fn claim_is_exactly_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        store.insert_run(&test_run("k1", "0000000a")).await.unwrap();
        let me = current_owner();
        assert!(matches!(
            store.claim("k1", &me, &decision()).await.unwrap(),
            Claim::Claimed(_)
        ));
        // The same live owner cannot claim twice.
        assert!(matches!(
            store.claim("k1", &me, &decision()).await.unwrap(),
            Claim::Taken(_)
        ));
        let finish = Finish {
            status: RunStatus::Done,
            result_json: "{}".into(),
            next: Some(test_run("k2", "0000000b")),
            history: None,
        };
        assert!(store.finish("k1", &me, &finish).await.unwrap());
        assert_eq!(
            store.get_run("k1").await.unwrap().unwrap().status,
            RunStatus::Done
        );
        assert_eq!(
            store
                .get_run_by_approval_id("0000000b")
                .await
                .unwrap()
                .unwrap()
                .state_key,
            "k2"
        );
        assert!(matches!(
            store.claim("nope", &me, &decision()).await.unwrap(),
            Claim::Missing
        ));
    }

    #[tokio::test]
    async fn stale_claim_of_dead_process_is_reclaimable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        store.insert_run(&test_run("k1", "0000000c")).await.unwrap();
        let dead = ProcessOwner {
            pid: i32::MAX as u32 - 7,
            start: 1,
        };
        assert!(matches!(
            store.claim("k1", &dead, &decision()).await.unwrap(),
            Claim::Claimed(_)
        ));
        let me = current_owner();
        assert!(matches!(
            store.claim("k1", &me, &decision()).await.unwrap(),
            Claim::Claimed(_)
        ));
    }

    #[tokio::test]
    async fn duplicate_approval_id_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        store.insert_run(&test_run("k1", "0000000d")).await.unwrap();
        assert!(store.insert_run(&test_run("k2", "0000000d")).await.is_err());
        assert!(store.approval_id_exists("0000000d").await.unwrap());
    }
}
