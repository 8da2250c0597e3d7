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
            // The count first: whoever hears an event reads it right away.
            let pending = runs
                .iter()
                .filter(|r| r.status == clawdis_store::RunStatus::Pending)
                .count();
            if let Ok(mut count) = this.pending.lock() {
                *count = pending;
            }
            let mut now = HashMap::with_capacity(runs.len());
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
                if let Some(event) = event {
                    tracing::debug!(?event, "approvals event");
                    let _ = this.bus.send(event);
                }
            }
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
