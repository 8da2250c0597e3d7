//! Following the store: every process that shares the home writes to the
//! same SQLite file, so a short poll of the runs table sees pauses and
//! decisions from any of them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::{Approval, Approvals, Event};

/// How often the store is read. A pause reaches the bus within this (plus
/// one small query), well inside the 1 s the app promises.
pub const POLL: Duration = Duration::from_millis(100);

/// How many recent runs each look compares.
const WINDOW: i64 = 200;

impl Approvals {
    /// Publishes an [`Event`] for each pause and change from now on, until
    /// the last [`Approvals`] handle is dropped. Runs already pending when it
    /// starts are announced as paused.
    pub async fn watch(self: Arc<Self>) {
        tracing::info!(dir = %self.dir.display(), "watching approvals");
        let weak = Arc::downgrade(&self);
        drop(self);
        let mut seen: HashMap<String, (String, Option<String>)> = HashMap::new();
        let mut ticker = tokio::time::interval(POLL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut stamp = None;
        // When the next gate expires; `Some("")` until first asked.
        let mut next_expiry = Some(String::new());
        loop {
            ticker.tick().await;
            let Some(this) = weak.upgrade() else { return };
            if next_expiry
                .as_deref()
                .is_some_and(|at| at <= clawdis_store::now_iso().as_str())
            {
                match this.expire_due().await {
                    Ok(next) => next_expiry = next,
                    Err(e) => tracing::warn!(error = %e, "approvals: expiring gates"),
                }
            }
            // Every commit touches the database or its write-ahead log:
            // while neither changed there is nothing new to read.
            let now_stamp = file_stamp(this.store.path());
            if now_stamp.is_some() && now_stamp == stamp {
                continue;
            }
            stamp = now_stamp;
            // A new pause may expire before the one we knew of.
            if let Ok((due, next)) = this.store.expiries(&clawdis_store::now_iso()).await {
                next_expiry = if due.is_empty() {
                    match (next_expiry.take(), next) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    }
                } else {
                    Some(String::new())
                };
            }
            let runs = match this.look().await {
                Ok(runs) => runs,
                Err(e) => {
                    tracing::warn!(error = %e, "approvals: reading the store");
                    continue;
                }
            };
            let mut now = HashMap::with_capacity(runs.len());
            let mut events = Vec::new();
            for run in &runs {
                let fingerprint = (run.status.as_str().to_string(), run.decided_at.clone());
                // The approval as every view shows it: its votes and who
                // started its run too.
                let full = || async {
                    match this.with_votes(run).await {
                        Ok(approval) => approval,
                        Err(_) => Approval::from_run(run),
                    }
                };
                let event = match seen.get(&run.state_key) {
                    Some(old) if *old == fingerprint => None,
                    Some(_) => Some(Event::Changed {
                        approval: full().await,
                    }),
                    None if run.status == clawdis_store::RunStatus::Pending => {
                        Some(Event::Paused {
                            approval: full().await,
                        })
                    }
                    None => None,
                };
                now.insert(run.state_key.clone(), fingerprint);
                events.extend(event);
            }
            // The pending runs first, so that whoever hears an event reads
            // the new count; sent under the lock `subscribe_with_pending`
            // takes, so that a new listener gets this look either as its
            // backlog or as events, never both or neither.
            let mut pending = this.pending.lock().unwrap_or_else(|e| e.into_inner());
            for event in &events {
                let (Event::Paused { approval } | Event::Changed { approval }) = event;
                if approval.status == clawdis_store::RunStatus::Pending {
                    pending.insert(approval.state_key.clone(), approval.clone());
                }
            }
            let still: std::collections::HashSet<&str> = runs
                .iter()
                .filter(|r| r.status == clawdis_store::RunStatus::Pending)
                .map(|r| r.state_key.as_str())
                .collect();
            pending.retain(|key, _| still.contains(key.as_str()));
            for event in events {
                tracing::debug!(?event, "approvals event");
                let _ = this.bus.send(event);
            }
            drop(pending);
            seen = now;
        }
    }

    /// Every pending run and the most recent others, oldest first.
    async fn look(&self) -> Result<Vec<clawdis_store::Run>, clawdis_store::StoreError> {
        let mut runs = self.store.list_runs(None, WINDOW).await?;
        if runs.len() as i64 == WINDOW {
            let pending = self
                .store
                .list_runs(Some(clawdis_store::RunStatus::Pending), i64::MAX)
                .await?;
            let known: std::collections::HashSet<String> =
                runs.iter().map(|r| r.state_key.clone()).collect();
            runs.extend(
                pending
                    .into_iter()
                    .filter(|r| !known.contains(&r.state_key)),
            );
            runs.sort_by(|a, b| b.created_at.cmp(&a.created_at));
        }
        runs.reverse();
        Ok(runs)
    }
}

/// Size and modification time of the database and its WAL file.
pub(crate) type Stamp = [(u64, std::time::SystemTime); 2];

/// The [`Stamp`] of database `db`: it changes with every commit.
pub(crate) fn file_stamp(db: &std::path::Path) -> Option<Stamp> {
    let stat = |path: &std::path::Path| {
        std::fs::metadata(path)
            .ok()
            .and_then(|m| Some((m.len(), m.modified().ok()?)))
    };
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    Some([
        stat(db)?,
        stat(std::path::Path::new(&wal)).unwrap_or((0, std::time::UNIX_EPOCH)),
    ])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clawdis_store::{Gate, NewRun, RunKind};
    use tokio::sync::broadcast::error::TryRecvError;

    use crate::{Approvals, Event};

    fn paused(key: &str, approval_id: &str) -> NewRun {
        NewRun {
            state_key: key.into(),
            kind: RunKind::Workflow,
            gate: Gate::Approval,
            approval_id: Some(approval_id.into()),
            workflow_name: None,
            request_json: r#"{"prompt":"Send?"}"#.into(),
            state_json: "{}".into(),
            cwd: None,
            expires_at: None,
            run_id: None,
        }
    }

    fn key(event: &Event) -> String {
        let (Event::Paused { approval } | Event::Changed { approval }) = event;
        approval.state_key.clone()
    }

    /// Regression: the app's notifications subscribed after the watcher's
    /// first look and missed what it told (a full-suite run: of a backlog
    /// of five at start-up, two were notified and none summarized).
    #[tokio::test]
    async fn a_listener_after_the_first_look_gets_the_pending_runs_once() {
        let dir = tempfile::tempdir().unwrap();
        let approvals = Approvals::open(dir.path()).await.unwrap();
        for i in 0..3 {
            let run = paused(&format!("k{i}"), &format!("0000000{i}"));
            approvals.store().insert_run(&run).await.unwrap();
        }
        let mut early = approvals.subscribe();
        tokio::spawn(approvals.clone().watch());
        let mut told = BTreeSet::new();
        while told.len() < 3 {
            told.insert(key(&early.recv().await.unwrap()));
        }

        let (backlog, mut late) = approvals.subscribe_with_pending();
        let backlog: BTreeSet<String> = backlog.iter().map(|a| a.state_key.clone()).collect();
        assert_eq!(
            backlog, told,
            "the late listener gets what was told before it"
        );
        assert_eq!(approvals.pending_count(), 3);

        approvals
            .store()
            .insert_run(&paused("k3", "00000003"))
            .await
            .unwrap();
        assert_eq!(key(&early.recv().await.unwrap()), "k3");
        assert_eq!(key(&late.try_recv().unwrap()), "k3", "and what comes after");
        assert!(
            matches!(late.try_recv(), Err(TryRecvError::Empty)),
            "and nothing twice"
        );
    }
}
