//! The `history` and `history_steps` tables: every run started through the
//! workflow service, from start to end, with each step's timing, attempts,
//! output and error. The decisions on its gates are the `runs` rows that
//! carry its `run_id` ([`Store::history_gates`]).

use std::collections::HashMap;

use sqlx::{Connection, Row};

mod columns;

pub use columns::{HistoryKind, HistoryStatus, StepStatus};

use crate::runs::{NewRun, insert_query, run_from_row};
use crate::{ProcessOwner, Result, Run, Store, now_iso};

/// A service run about to start.
#[derive(Clone, Debug)]
pub struct NewHistory {
    /// Its id (`runId`).
    pub run_id: String,
    /// A workflow file or a pipeline.
    pub kind: HistoryKind,
    /// The workflow's name.
    pub workflow: Option<String>,
    /// The file's text or the pipeline, as it runs.
    pub definition: String,
    /// The args it was given, as JSON.
    pub args_json: String,
    /// The directory it runs in.
    pub cwd: Option<String>,
    /// The principal that started it.
    pub started_by: String,
    /// The process that started it, as JSON (`lobster`'s runs).
    pub provenance_json: Option<String>,
}

/// A recorded service run.
#[derive(Clone, Debug)]
pub struct HistoryRun {
    /// Its place in the history: later runs have larger numbers.
    pub seq: i64,
    /// Its id.
    pub run_id: String,
    /// A workflow file or a pipeline.
    pub kind: HistoryKind,
    /// The workflow's name.
    pub workflow: Option<String>,
    /// The file's text or the pipeline, as it ran.
    pub definition: String,
    /// The args, as JSON.
    pub args_json: String,
    /// The directory it ran in.
    pub cwd: Option<String>,
    /// Where it stands.
    pub status: HistoryStatus,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended for good.
    pub finished_at: Option<String>,
    /// The principal that started it.
    pub started_by: String,
    /// The process executing it, while it runs.
    pub owner: Option<String>,
    /// Its last envelope, as JSON.
    pub result_json: Option<String>,
    /// The process that started it, as JSON (`lobster`'s runs).
    pub provenance_json: Option<String>,
}

/// One step of a service run.
#[derive(Clone, Debug, PartialEq)]
pub struct StepRecord {
    /// The step's id.
    pub id: String,
    /// Its index in the workflow.
    pub position: u32,
    /// Where it stands.
    pub status: StepStatus,
    /// When its first attempt started.
    pub started_at: Option<String>,
    /// When it ended.
    pub finished_at: Option<String>,
    /// How long it took, all attempts included.
    pub duration_ms: Option<u64>,
    /// Attempts made (retries count).
    pub attempts: u32,
    /// Its result, as JSON.
    pub output_json: Option<String>,
    /// Its error message, when it failed.
    pub error: Option<String>,
}

impl StepRecord {
    /// A step not reached yet.
    pub fn pending(id: &str, position: u32) -> StepRecord {
        StepRecord {
            id: id.to_string(),
            position,
            status: StepStatus::Pending,
            started_at: None,
            finished_at: None,
            duration_ms: None,
            attempts: 0,
            output_json: None,
            error: None,
        }
    }
}

/// Where a service run got to: its status, its envelope, and the steps
/// that changed.
#[derive(Clone, Debug)]
pub struct HistoryEnd {
    /// The run's status now.
    pub status: HistoryStatus,
    /// Its envelope, as JSON; `None` keeps the one recorded.
    pub result_json: Option<String>,
    /// The steps this part of the run touched.
    pub steps: Vec<StepRecord>,
}

/// Which runs [`Store::list_history`] returns.
#[derive(Clone, Debug, Default)]
pub struct HistoryQuery {
    /// Only runs in this status.
    pub status: Option<HistoryStatus>,
    /// Only runs of this workflow.
    pub workflow: Option<String>,
    /// Only runs older than this `seq` (the paging cursor).
    pub before: Option<i64>,
    /// At most this many.
    pub limit: u32,
}

/// The columns [`history_from_row`] reads, in order.
macro_rules! history_columns {
    () => {
        "SELECT seq, run_id, kind, workflow, definition, args_json, cwd, status, started_at, \
         finished_at, started_by, owner, result_json, provenance_json FROM history "
    };
}

impl Store {
    /// Records a service run as running in this process, with its steps
    /// pending, in one transaction.
    pub async fn start_history(&self, run: &NewHistory, steps: &[StepRecord]) -> Result<()> {
        self.start_history_with(run, steps, None).await.map(|_| ())
    }

    /// [`Store::start_history`] for a run a trigger fires: the trigger's
    /// mark advances in the same transaction, and only if it still reads
    /// `advance.from` and the trigger is not paused. `false` (and no run
    /// recorded) when another backend fired it first or it was paused.
    pub async fn start_fired_history(
        &self,
        run: &NewHistory,
        steps: &[StepRecord],
        advance: &crate::Advance,
    ) -> Result<bool> {
        self.start_history_with(run, steps, Some(advance)).await
    }

    async fn start_history_with(
        &self,
        run: &NewHistory,
        steps: &[StepRecord],
        advance: Option<&crate::Advance>,
    ) -> Result<bool> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin().await?;
        if let Some(advance) = advance
            && !advance.apply(&mut tx, true).await?
        {
            return Ok(false);
        }
        insert_history(&mut tx, run, steps).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Records a run that the store first hears of as it pauses (a
    /// `lobster` run): its history row and steps as `end` leaves them, and
    /// its gate, in one transaction.
    pub async fn record_paused(
        &self,
        run: &NewHistory,
        steps: &[StepRecord],
        end: &HistoryEnd,
        gate: &NewRun,
    ) -> Result<()> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin().await?;
        insert_history(&mut tx, run, steps).await?;
        insert_query(gate).execute(&mut *tx).await?;
        write_end(&mut tx, &run.run_id, end).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records where service run `run_id` got to, and the gate it paused
    /// at, in one transaction.
    pub async fn end_history(
        &self,
        run_id: &str,
        end: &HistoryEnd,
        gate: Option<&NewRun>,
    ) -> Result<()> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin().await?;
        if let Some(gate) = gate {
            insert_query(gate).execute(&mut *tx).await?;
        }
        write_end(&mut tx, run_id, end).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Service run `run_id`.
    pub async fn get_history(&self, run_id: &str) -> Result<Option<HistoryRun>> {
        let row = sqlx::query(concat!(history_columns!(), "WHERE run_id = ?"))
            .bind(run_id)
            .fetch_optional(&mut *self.conns.get().await?)
            .await?;
        row.map(|r| history_from_row(&r)).transpose()
    }

    /// Service runs, newest first, as `query` says.
    pub async fn list_history(&self, query: &HistoryQuery) -> Result<Vec<HistoryRun>> {
        // One statement per filter, so that SQLite walks the index that
        // matches it (an `OR` with a NULL parameter would scan the table).
        let sql = match (query.status.is_some(), query.workflow.is_some()) {
            (false, false) => concat!(
                history_columns!(),
                "WHERE seq < ? ORDER BY seq DESC LIMIT ?"
            ),
            (true, false) => concat!(
                history_columns!(),
                "WHERE status = ? AND seq < ? ORDER BY seq DESC LIMIT ?"
            ),
            (false, true) => concat!(
                history_columns!(),
                "WHERE workflow = ? AND seq < ? ORDER BY seq DESC LIMIT ?"
            ),
            (true, true) => concat!(
                history_columns!(),
                "WHERE status = ? AND workflow = ? AND seq < ? ORDER BY seq DESC LIMIT ?"
            ),
        };
        let mut statement = sqlx::query(sql);
        if let Some(status) = query.status {
            statement = statement.bind(status.as_str());
        }
        if let Some(workflow) = &query.workflow {
            statement = statement.bind(workflow);
        }
        let rows = statement
            .bind(query.before.unwrap_or(i64::MAX))
            .bind(i64::from(query.limit))
            .fetch_all(&mut *self.conns.get().await?)
            .await?;
        rows.iter().map(history_from_row).collect()
    }

    /// The steps of service run `run_id`, in the workflow's order.
    pub async fn history_steps(&self, run_id: &str) -> Result<Vec<StepRecord>> {
        let mut steps = self.history_steps_of(&[run_id.to_string()]).await?;
        Ok(steps.remove(run_id).unwrap_or_default())
    }

    /// The steps of each of `run_ids` (one query for a whole page), in
    /// their workflows' order; a run without steps has no entry.
    pub async fn history_steps_of(
        &self,
        run_ids: &[String],
    ) -> Result<HashMap<String, Vec<StepRecord>>> {
        let mut steps: HashMap<String, Vec<StepRecord>> = HashMap::new();
        if run_ids.is_empty() {
            return Ok(steps);
        }
        let sql = format!(
            "SELECT run_id, step_id, position, status, started_at, finished_at, duration_ms,
             attempts, output_json, error FROM history_steps WHERE run_id IN ({})
             ORDER BY run_id, position, step_id",
            placeholders(run_ids.len())
        );
        // Only placeholders are spliced in; the ids are bound.
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        for id in run_ids {
            statement = statement.bind(id);
        }
        for r in statement.fetch_all(&mut *self.conns.get().await?).await? {
            steps.entry(r.get(0)).or_default().push(StepRecord {
                id: r.get(1),
                position: u32::try_from(r.get::<i64, _>(2)).unwrap_or(u32::MAX),
                status: crate::runs::spelled(&r, 3, "status", StepStatus::parse)?,
                started_at: r.get(4),
                finished_at: r.get(5),
                duration_ms: r
                    .get::<Option<i64>, _>(6)
                    .map(|d| u64::try_from(d).unwrap_or(0)),
                attempts: u32::try_from(r.get::<i64, _>(7)).unwrap_or(0),
                output_json: r.get(8),
                error: r.get(9),
            });
        }
        Ok(steps)
    }

    /// The gates service run `run_id` paused at, oldest first.
    pub async fn history_gates(&self, run_id: &str) -> Result<Vec<Run>> {
        let mut gates = self.history_gates_of(&[run_id.to_string()]).await?;
        Ok(gates.remove(run_id).unwrap_or_default())
    }

    /// The gates each of `run_ids` paused at (one query for a whole
    /// page), oldest first; a run that never paused has no entry.
    pub async fn history_gates_of(&self, run_ids: &[String]) -> Result<HashMap<String, Vec<Run>>> {
        let mut gates: HashMap<String, Vec<Run>> = HashMap::new();
        if run_ids.is_empty() {
            return Ok(gates);
        }
        let sql = format!(
            "SELECT {} FROM runs WHERE run_id IN ({}) ORDER BY created_at, rowid",
            crate::runs::run_columns!(),
            placeholders(run_ids.len())
        );
        // Only placeholders are spliced in; the ids are bound.
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        for id in run_ids {
            statement = statement.bind(id);
        }
        for row in statement.fetch_all(&mut *self.conns.get().await?).await? {
            let gate = run_from_row(&row)?;
            if let Some(run_id) = gate.run_id.clone() {
                gates.entry(run_id).or_default().push(gate);
            }
        }
        Ok(gates)
    }

    /// Service runs recorded as running by a process that no longer exists
    /// (killed mid-run): the caller records where each got to.
    pub async fn interrupted_history(&self) -> Result<Vec<HistoryRun>> {
        let rows = sqlx::query(concat!(history_columns!(), "WHERE status = 'running'"))
            .fetch_all(&mut *self.conns.write().await?)
            .await?;
        let runs = rows
            .iter()
            .map(history_from_row)
            .collect::<Result<Vec<_>>>()?;
        Ok(runs
            .into_iter()
            .filter(|r| {
                !r.owner
                    .as_deref()
                    .and_then(ProcessOwner::parse)
                    .is_some_and(|o| o.is_alive())
            })
            .collect())
    }
}

/// Records `end` for `run_id` inside `tx`: the steps it touched, the
/// steps a final status leaves unreached, and the run's status.
/// Inserts `run` as running in this process, with `steps`.
async fn insert_history(
    tx: &mut sqlx::SqliteConnection,
    run: &NewHistory,
    steps: &[StepRecord],
) -> Result<()> {
    sqlx::query(
        "INSERT INTO history (run_id, kind, workflow, definition, args_json, cwd, status,
         started_at, started_by, owner, provenance_json)
         VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)",
    )
    .bind(&run.run_id)
    .bind(run.kind.as_str())
    .bind(&run.workflow)
    .bind(&run.definition)
    .bind(&run.args_json)
    .bind(&run.cwd)
    .bind(now_iso())
    .bind(&run.started_by)
    .bind(crate::current_owner().to_string())
    .bind(&run.provenance_json)
    .execute(&mut *tx)
    .await?;
    upsert_steps(&mut *tx, &run.run_id, steps).await
}

pub(crate) async fn write_end(
    tx: &mut sqlx::SqliteConnection,
    run_id: &str,
    end: &HistoryEnd,
) -> Result<()> {
    upsert_steps(&mut *tx, run_id, &end.steps).await?;
    let now = now_iso();
    if end.status.is_final() {
        let unreached = if end.status == HistoryStatus::Cancelled {
            StepStatus::Cancelled
        } else {
            StepStatus::Skipped
        };
        sqlx::query(
            "UPDATE history_steps SET status = ? WHERE run_id = ? AND status IN ('pending', 'running')",
        )
        .bind(unreached.as_str())
        .bind(run_id)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query(
        "UPDATE history SET status = ?, result_json = IFNULL(?, result_json), finished_at = ?,
         owner = NULL WHERE run_id = ?",
    )
    .bind(end.status.as_str())
    .bind(&end.result_json)
    .bind(end.status.is_final().then_some(now))
    .bind(run_id)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Marks service run `run_id` running again in `owner`, which claimed one
/// of its gates.
pub(crate) async fn write_resumed(
    conn: &mut sqlx::SqliteConnection,
    run_id: &str,
    owner: &ProcessOwner,
) -> Result<()> {
    sqlx::query("UPDATE history SET status = 'running', owner = ? WHERE run_id = ?")
        .bind(owner.to_string())
        .bind(run_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// `?, ?, …`: `n` placeholders.
fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// How many steps one statement writes (10 variables each, well under
/// SQLite's limit).
const STEPS_PER_STATEMENT: usize = 50;

/// Writes `steps` of run `run_id`, a statement for up to
/// [`STEPS_PER_STATEMENT`] of them: each round trip to the connection's
/// thread costs more than the rows.
async fn upsert_steps(
    conn: &mut sqlx::SqliteConnection,
    run_id: &str,
    steps: &[StepRecord],
) -> Result<()> {
    for chunk in steps.chunks(STEPS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO history_steps (run_id, position, step_id, status, started_at, finished_at,
             duration_ms, attempts, output_json, error) VALUES {}
             ON CONFLICT(run_id, step_id) DO UPDATE SET position = excluded.position,
             status = excluded.status, started_at = excluded.started_at,
             finished_at = excluded.finished_at, duration_ms = excluded.duration_ms,
             attempts = excluded.attempts, output_json = excluded.output_json, error = excluded.error",
            vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ")
        );
        // Only placeholders are spliced in; the values are bound.
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        for step in chunk {
            statement = statement
                .bind(run_id)
                .bind(i64::from(step.position))
                .bind(&step.id)
                .bind(step.status.as_str())
                .bind(&step.started_at)
                .bind(&step.finished_at)
                .bind(
                    step.duration_ms
                        .map(|d| i64::try_from(d).unwrap_or(i64::MAX)),
                )
                .bind(i64::from(step.attempts))
                .bind(&step.output_json)
                .bind(&step.error);
        }
        statement.execute(&mut *conn).await?;
    }
    Ok(())
}

fn history_from_row(r: &sqlx::sqlite::SqliteRow) -> Result<HistoryRun> {
    Ok(HistoryRun {
        seq: r.get(0),
        run_id: r.get(1),
        kind: crate::runs::spelled(r, 2, "kind", HistoryKind::parse)?,
        workflow: r.get(3),
        definition: r.get(4),
        args_json: r.get(5),
        cwd: r.get(6),
        status: crate::runs::spelled(r, 7, "status", HistoryStatus::parse)?,
        started_at: r.get(8),
        finished_at: r.get(9),
        started_by: r.get(10),
        owner: r.get(11),
        result_json: r.get(12),
        provenance_json: r.get(13),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::test_run;
    use crate::{Channel, Claim, Decided, Decision, Finish, RunStatus, current_owner};

    fn new_run(run_id: &str, workflow: &str) -> NewHistory {
        NewHistory {
            run_id: run_id.into(),
            kind: HistoryKind::Workflow,
            workflow: Some(workflow.into()),
            definition: "steps: []".into(),
            args_json: "{}".into(),
            cwd: None,
            started_by: "owner".into(),
            provenance_json: None,
        }
    }

    fn ran(id: &str, position: u32) -> StepRecord {
        StepRecord {
            status: StepStatus::Ok,
            attempts: 1,
            ..StepRecord::pending(id, position)
        }
    }

    #[tokio::test]
    async fn a_run_paused_and_resumed_keeps_one_history() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        let steps = [StepRecord::pending("a", 0), StepRecord::pending("b", 1)];
        store
            .start_history(&new_run("r1", "flow"), &steps)
            .await
            .unwrap();
        let mut gate = test_run("k1", "0000000a");
        gate.run_id = Some("r1".into());
        let paused = HistoryEnd {
            status: HistoryStatus::NeedsApproval,
            result_json: Some("{\"status\":\"needs_approval\"}".into()),
            steps: vec![ran("a", 0)],
        };
        store.end_history("r1", &paused, Some(&gate)).await.unwrap();
        let run = store.get_history("r1").await.unwrap().unwrap();
        assert_eq!(run.status, HistoryStatus::NeedsApproval);
        assert_eq!(run.finished_at, None, "a pause is not an end");

        let me = current_owner();
        let decided = Decided {
            decision: Decision::Reject,
            decided_by: Some("token:ann".into()),
            decided_via: Channel::Http,
            comment: Some("no".into()),
            presence: None,
            digest: None,
        };
        assert!(matches!(
            store.claim("k1", &me, &decided).await.unwrap(),
            Claim::Claimed(_)
        ));
        let resumed = store.get_history("r1").await.unwrap().unwrap();
        assert_eq!(resumed.status, HistoryStatus::Running);
        assert_eq!(resumed.owner, Some(me.to_string()));

        let finish = Finish {
            status: RunStatus::Cancelled,
            result_json: "{}".into(),
            next: None,
            history: Some(HistoryEnd {
                status: HistoryStatus::Cancelled,
                result_json: Some("{\"status\":\"cancelled\"}".into()),
                steps: Vec::new(),
            }),
        };
        assert!(store.finish("k1", &me, &finish).await.unwrap());
        let run = store.get_history("r1").await.unwrap().unwrap();
        assert_eq!(run.status, HistoryStatus::Cancelled);
        assert!(run.finished_at.is_some());
        let steps = store.history_steps("r1").await.unwrap();
        let statuses: Vec<_> = steps.iter().map(|s| (s.id.as_str(), s.status)).collect();
        assert_eq!(
            statuses,
            [("a", StepStatus::Ok), ("b", StepStatus::Cancelled)],
            "a step a cancelled run never reached is cancelled"
        );
        let gates = store.history_gates("r1").await.unwrap();
        assert_eq!(gates.len(), 1);
        assert_eq!(gates[0].decision, Some(Decision::Reject));
        assert_eq!(gates[0].decision_comment.as_deref(), Some("no"));
    }

    #[tokio::test]
    async fn the_history_pages_newest_first_and_filters() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        for i in 0..5 {
            let flow = if i % 2 == 0 { "even" } else { "odd" };
            store
                .start_history(&new_run(&format!("r{i}"), flow), &[])
                .await
                .unwrap();
        }
        let done = HistoryEnd {
            status: HistoryStatus::Ok,
            result_json: None,
            steps: Vec::new(),
        };
        store.end_history("r4", &done, None).await.unwrap();
        let page = |query: HistoryQuery| {
            let store = store.clone();
            async move {
                store
                    .list_history(&query)
                    .await
                    .unwrap()
                    .into_iter()
                    .map(|r| r.run_id)
                    .collect::<Vec<_>>()
            }
        };
        let first = store
            .list_history(&HistoryQuery {
                limit: 2,
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(
            first.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
            ["r4", "r3"]
        );
        let next = page(HistoryQuery {
            limit: 2,
            before: Some(first[1].seq),
            ..Default::default()
        })
        .await;
        assert_eq!(next, ["r2", "r1"]);
        let even = page(HistoryQuery {
            limit: 10,
            workflow: Some("even".into()),
            ..Default::default()
        })
        .await;
        assert_eq!(even, ["r4", "r2", "r0"]);
        let running_even = page(HistoryQuery {
            limit: 10,
            workflow: Some("even".into()),
            status: Some(HistoryStatus::Running),
            ..Default::default()
        })
        .await;
        assert_eq!(running_even, ["r2", "r0"]);
        // This process is alive: none of its runs is interrupted.
        assert!(store.interrupted_history().await.unwrap().is_empty());
    }
}
