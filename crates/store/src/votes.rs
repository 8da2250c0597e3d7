//! The `votes` table: approvals counted toward a gate that needs several
//! distinct approvers (`min_approvals`).

use sqlx::{Connection, Row};

use crate::{Channel, Decided, Result, Store, now_iso};

/// One approver's approval of a gate.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Vote {
    /// Who approved.
    pub approver: String,
    /// Through which channel.
    pub via: Channel,
    /// When (RFC 3339).
    pub at: String,
    /// What they said.
    pub comment: Option<String>,
    /// How they showed they were there.
    pub presence: Option<crate::Presence>,
}

/// What [`Store::add_vote`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// Counted; the gate now has this many approvals.
    Now(u32),
    /// This approver had approved it already; nothing changed.
    Again,
    /// The run is no longer waiting.
    Closed,
}

impl Store {
    /// Counts `approver`'s approval (`decided`) of the pending run
    /// `state_key`, in one transaction with the check that it still waits
    /// and, when it counts, its entry in the ledger.
    pub async fn add_vote(
        &self,
        state_key: &str,
        approver: &str,
        decided: &Decided,
    ) -> Result<Counted> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let pending = sqlx::query(
            "SELECT approval_id, run_id FROM runs WHERE state_key = ? AND status = 'pending'",
        )
        .bind(state_key)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(pending) = pending else {
            return Ok(Counted::Closed);
        };
        let subject = pending
            .get::<Option<String>, _>(0)
            .or_else(|| pending.get::<Option<String>, _>(1))
            .unwrap_or_else(|| state_key.to_string());
        let via = decided.decided_via;
        let comment = decided.comment.as_deref();
        let added = sqlx::query(
            "INSERT INTO votes (state_key, approver, via, at, comment, presence)
             VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(state_key, approver) DO NOTHING",
        )
        .bind(state_key)
        .bind(approver)
        .bind(via.as_str())
        .bind(now_iso())
        .bind(comment)
        .bind(decided.presence.map(crate::Presence::as_str))
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let count: i64 = sqlx::query("SELECT COUNT(*) FROM votes WHERE state_key = ?")
            .bind(state_key)
            .fetch_one(&mut *tx)
            .await?
            .get(0);
        if added == 1 {
            crate::audit::append(
                &mut tx,
                &crate::NewAuditEntry {
                    kind: "gate.vote".into(),
                    subject,
                    by: Some(approver.to_string()),
                    via: Some(via.as_str().to_string()),
                    presence: decided.presence,
                    digest: decided.digest.clone(),
                },
            )
            .await?;
        }
        tx.commit().await?;
        Ok(if added == 1 {
            Counted::Now(u32::try_from(count).unwrap_or(u32::MAX))
        } else {
            Counted::Again
        })
    }

    /// The approvals counted for `state_key`, oldest first.
    pub async fn votes(&self, state_key: &str) -> Result<Vec<Vote>> {
        let rows = sqlx::query(
            "SELECT approver, via, at, comment, presence FROM votes WHERE state_key = ?
             ORDER BY at, approver",
        )
        .bind(state_key)
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        rows.iter()
            .map(|r| {
                let via: &str = r.get(1);
                Ok(Vote {
                    approver: r.get(0),
                    via: Channel::parse(via).ok_or_else(|| crate::StoreError::Corrupt {
                        column: "via",
                        value: via.to_string(),
                    })?,
                    at: r.get(2),
                    comment: r.get(3),
                    presence: r.get::<Option<&str>, _>(4).and_then(crate::Presence::parse),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::test_run;

    #[tokio::test]
    async fn each_approver_counts_once_while_the_run_waits() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        store.insert_run(&test_run("k", "0000000a")).await.unwrap();
        let http = Decided {
            decision: crate::Decision::Approve,
            decided_by: None,
            decided_via: Channel::Http,
            comment: None,
            presence: Some(crate::Presence::Token),
            digest: None,
        };
        let vote = |who: &'static str| store.add_vote("k", who, &http);
        assert_eq!(vote("ann").await.unwrap(), Counted::Now(1));
        assert_eq!(vote("ann").await.unwrap(), Counted::Again);
        assert_eq!(vote("bob").await.unwrap(), Counted::Now(2));
        assert_eq!(
            store.add_vote("gone", "ann", &http).await.unwrap(),
            Counted::Closed
        );
        // Each counted approval is in the ledger; the repeat is not.
        let ledger = store.audit_entries().await.unwrap();
        assert_eq!(
            ledger
                .iter()
                .map(|e| (e.kind.as_str(), e.by.as_deref(), e.presence.as_deref()))
                .collect::<Vec<_>>(),
            [
                ("gate.vote", Some("ann"), Some("token")),
                ("gate.vote", Some("bob"), Some("token"))
            ]
        );
        let votes = store.votes("k").await.unwrap();
        assert_eq!(
            votes
                .iter()
                .map(|v| v.approver.as_str())
                .collect::<Vec<_>>(),
            ["ann", "bob"]
        );
    }
}
