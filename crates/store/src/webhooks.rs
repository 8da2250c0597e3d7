//! The `webhook_deliveries` and `webhook_attempts` tables: the durable
//! outbox. Each delivery is one event for one receiver, with a stable id
//! (the `webhook-id` header), retried until it is delivered or out of
//! attempts; each attempt is kept.

use sqlx::{Connection, Row};

use crate::spelled::spelled;
use crate::{Result, Store, now_iso};

spelled! {
    /// Where a delivery stands.
    pub enum DeliveryStatus {
        /// Waiting for its next attempt.
        Pending = "pending",
        /// A receiver answered 2xx.
        Delivered = "delivered",
        /// Out of attempts.
        Failed = "failed",
    }
}

/// A delivery to enqueue.
#[derive(Clone, Debug)]
pub struct NewDelivery {
    /// Its id (`msg_…`).
    pub id: String,
    /// The event type.
    pub kind: String,
    /// The receiver.
    pub url: String,
    /// The body to send (without the approval link: see `link`).
    pub payload_json: String,
    /// The approval link to put into the body as `data.approvalUrl` each
    /// time it is sent, signed then: never stored.
    pub link: Option<DeliveryLink>,
}

/// What a delivery keeps of its approval link: enough to sign one when it
/// is sent, nothing that opens the gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryLink {
    /// The gate's key in the store.
    pub gate: String,
    /// When the gate expires (RFC 3339), if it does: no link outlives it.
    pub expires_at: Option<String>,
}

/// A delivery.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// Its id: the `webhook-id` of every attempt.
    pub id: String,
    /// The event type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The receiver.
    pub url: String,
    /// The body sent (without the approval link, signed as it is sent).
    #[serde(skip)]
    pub payload_json: String,
    /// The approval link each attempt carries.
    #[serde(skip)]
    pub link: Option<DeliveryLink>,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts made.
    pub attempts: u32,
    /// Attempts made before the last redelivery.
    #[serde(skip)]
    pub budget_from: u32,
    /// When it is due next (while pending).
    pub next_attempt_at: Option<String>,
    /// What went wrong last.
    pub last_error: Option<String>,
    /// When it was enqueued.
    pub created_at: String,
    /// When a receiver took it.
    pub delivered_at: Option<String>,
}

/// One attempt of a delivery.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttempt {
    /// 1 for the first.
    pub attempt: u32,
    /// When it was sent.
    pub at: String,
    /// The receiver's HTTP status, if it answered.
    pub status_code: Option<u16>,
    /// What went wrong, if anything.
    pub error: Option<String>,
    /// How long it took.
    pub duration_ms: u64,
}

/// What an attempt comes to.
#[derive(Clone, Debug)]
pub enum AttemptEnd {
    /// Delivered.
    Delivered,
    /// Failed; try again at this time (RFC 3339).
    Retry(String),
    /// Failed for the last time.
    GiveUp,
}

macro_rules! delivery_columns {
    () => {
        "id, type, url, payload_json, status, attempts, budget_from, next_attempt_at, last_error, \
         created_at, delivered_at, link_gate, link_expires_at"
    };
}

fn delivery_from_row(r: &sqlx::sqlite::SqliteRow) -> Result<Delivery> {
    Ok(Delivery {
        id: r.get(0),
        kind: r.get(1),
        url: r.get(2),
        payload_json: r.get(3),
        status: crate::runs::spelled(r, 4, "status", DeliveryStatus::parse)?,
        attempts: u32::try_from(r.get::<i64, _>(5)).unwrap_or(0),
        budget_from: u32::try_from(r.get::<i64, _>(6)).unwrap_or(0),
        next_attempt_at: r.get(7),
        last_error: r.get(8),
        created_at: r.get(9),
        delivered_at: r.get(10),
        link: r.get::<Option<String>, _>(11).map(|gate| DeliveryLink {
            gate,
            expires_at: r.get(12),
        }),
    })
}

impl Store {
    /// Enqueues event `seq`'s deliveries and removes the event, in one
    /// transaction (a delivery already enqueued for it is kept as it is).
    pub async fn fan_out(&self, seq: i64, deliveries: &[NewDelivery]) -> Result<()> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin().await?;
        let now = now_iso();
        for d in deliveries {
            sqlx::query(
                "INSERT OR IGNORE INTO webhook_deliveries (id, event_seq, type, url, payload_json,
                 status, next_attempt_at, created_at, link_gate, link_expires_at)
                 VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
            )
            .bind(&d.id)
            .bind(seq)
            .bind(&d.kind)
            .bind(&d.url)
            .bind(&d.payload_json)
            .bind(&now)
            .bind(&now)
            .bind(d.link.as_ref().map(|l| &l.gate))
            .bind(d.link.as_ref().and_then(|l| l.expires_at.as_ref()))
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query("DELETE FROM events WHERE seq = ?")
            .bind(seq)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Takes up to `limit` deliveries due at `now` for this process: each
    /// is leased until `lease_until`, when it is due again should the
    /// sender hang; [`Store::release_dead_leases`] frees it sooner should
    /// the sender die before recording its attempt.
    pub async fn lease_due(
        &self,
        now: &str,
        lease_until: &str,
        limit: u32,
    ) -> Result<Vec<Delivery>> {
        let rows = sqlx::query(concat!(
            "UPDATE webhook_deliveries SET next_attempt_at = ?, leased_by = ? WHERE id IN (
                SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ?
                ORDER BY next_attempt_at LIMIT ?) RETURNING ",
            delivery_columns!()
        ))
        .bind(lease_until)
        .bind(crate::current_owner().to_string())
        .bind(now)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.conns.write().await?)
        .await?;
        rows.iter().map(delivery_from_row).collect()
    }

    /// Makes the deliveries leased by a process that is gone due now (a
    /// backend killed mid-delivery); returns how many.
    pub async fn release_dead_leases(&self) -> Result<u64> {
        let mut conn = self.conns.write().await?;
        let leased: Vec<(String, String)> = sqlx::query_as(
            "SELECT id, leased_by FROM webhook_deliveries
             WHERE status = 'pending' AND leased_by IS NOT NULL",
        )
        .fetch_all(&mut *conn)
        .await?;
        let now = now_iso();
        let mut released = 0;
        for (id, owner) in leased {
            if crate::ProcessOwner::parse(&owner).is_some_and(|o| o.is_alive()) {
                continue;
            }
            released += sqlx::query(
                "UPDATE webhook_deliveries SET next_attempt_at = ?, leased_by = NULL
                 WHERE id = ? AND leased_by = ?",
            )
            .bind(&now)
            .bind(&id)
            .bind(&owner)
            .execute(&mut *conn)
            .await?
            .rows_affected();
        }
        Ok(released)
    }

    /// When the next pending delivery is due.
    pub async fn next_delivery_due(&self) -> Result<Option<String>> {
        let row = sqlx::query(
            "SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'",
        )
        .fetch_one(&mut *self.conns.get().await?)
        .await?;
        Ok(row.get(0))
    }

    /// Records an attempt of delivery `id` and what it comes to, in one
    /// transaction.
    pub async fn record_attempt(
        &self,
        id: &str,
        attempt: &DeliveryAttempt,
        end: &AttemptEnd,
    ) -> Result<()> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin().await?;
        sqlx::query(
            "INSERT OR REPLACE INTO webhook_attempts (delivery_id, attempt, at, status_code, error,
             duration_ms) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(i64::from(attempt.attempt))
        .bind(&attempt.at)
        .bind(attempt.status_code.map(i64::from))
        .bind(&attempt.error)
        .bind(i64::try_from(attempt.duration_ms).unwrap_or(i64::MAX))
        .execute(&mut *tx)
        .await?;
        let (status, next, delivered) = match end {
            AttemptEnd::Delivered => (DeliveryStatus::Delivered, None, Some(attempt.at.clone())),
            AttemptEnd::Retry(at) => (DeliveryStatus::Pending, Some(at.clone()), None),
            AttemptEnd::GiveUp => (DeliveryStatus::Failed, None, None),
        };
        sqlx::query(
            "UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?,
             leased_by = NULL, last_error = ?, delivered_at = IFNULL(?, delivered_at) WHERE id = ?",
        )
        .bind(status.as_str())
        .bind(i64::from(attempt.attempt))
        .bind(next)
        .bind(&attempt.error)
        .bind(delivered)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The most recent `limit` deliveries, newest first.
    pub async fn list_deliveries(&self, limit: u32) -> Result<Vec<Delivery>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            delivery_columns!(),
            " FROM webhook_deliveries ORDER BY created_at DESC, rowid DESC LIMIT ?"
        ))
        .bind(i64::from(limit))
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        rows.iter().map(delivery_from_row).collect()
    }

    /// Delivery `id`.
    pub async fn get_delivery(&self, id: &str) -> Result<Option<Delivery>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            delivery_columns!(),
            " FROM webhook_deliveries WHERE id = ?"
        ))
        .bind(id)
        .fetch_optional(&mut *self.conns.get().await?)
        .await?;
        row.map(|r| delivery_from_row(&r)).transpose()
    }

    /// The attempts of delivery `id`, first first.
    pub async fn delivery_attempts(&self, id: &str) -> Result<Vec<DeliveryAttempt>> {
        let rows = sqlx::query(
            "SELECT attempt, at, status_code, error, duration_ms FROM webhook_attempts
             WHERE delivery_id = ? ORDER BY attempt",
        )
        .bind(id)
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        Ok(rows
            .iter()
            .map(|r| DeliveryAttempt {
                attempt: u32::try_from(r.get::<i64, _>(0)).unwrap_or(0),
                at: r.get(1),
                status_code: r
                    .get::<Option<i64>, _>(2)
                    .and_then(|c| u16::try_from(c).ok()),
                error: r.get(3),
                duration_ms: u64::try_from(r.get::<i64, _>(4)).unwrap_or(0),
            })
            .collect())
    }

    /// Makes delivery `id` due now with a fresh set of attempts (its id and
    /// body unchanged); `None` if there is no such delivery.
    pub async fn redeliver(&self, id: &str) -> Result<Option<Delivery>> {
        let row = sqlx::query(concat!(
            "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?,
             leased_by = NULL, budget_from = attempts WHERE id = ? RETURNING ",
            delivery_columns!()
        ))
        .bind(now_iso())
        .bind(id)
        .fetch_optional(&mut *self.conns.write().await?)
        .await?;
        row.map(|r| delivery_from_row(&r)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_delivery_is_leased_once_retried_and_redelivered() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        let d = NewDelivery {
            id: "msg_1".into(),
            kind: "run.completed".into(),
            url: "http://127.0.0.1:9/hook".into(),
            payload_json: "{}".into(),
            link: None,
        };
        store.fan_out(7, std::slice::from_ref(&d)).await.unwrap();
        store.fan_out(7, &[d]).await.unwrap();
        let far = "9999-01-01T00:00:00.000Z";
        let leased = store.lease_due(far, far, 10).await.unwrap();
        assert_eq!(leased.len(), 1, "one delivery per event and receiver");
        assert!(
            store
                .lease_due(&now_iso(), far, 10)
                .await
                .unwrap()
                .is_empty(),
            "leased"
        );
        assert_eq!(store.release_dead_leases().await.unwrap(), 0, "ours, alive");
        // A sender killed mid-delivery: its lease is released at once.
        sqlx::query("UPDATE webhook_deliveries SET leased_by = '999999999:1'")
            .execute(&mut *store.conns.write().await.unwrap())
            .await
            .unwrap();
        assert_eq!(store.release_dead_leases().await.unwrap(), 1);
        let again = store.lease_due(&now_iso(), far, 10).await.unwrap();
        assert_eq!(again.len(), 1, "due again");
        let attempt = DeliveryAttempt {
            attempt: 1,
            at: now_iso(),
            status_code: Some(500),
            error: Some("HTTP 500".into()),
            duration_ms: 3,
        };
        store
            .record_attempt("msg_1", &attempt, &AttemptEnd::GiveUp)
            .await
            .unwrap();
        let failed = store.get_delivery("msg_1").await.unwrap().unwrap();
        assert_eq!(
            (failed.status, failed.attempts),
            (DeliveryStatus::Failed, 1)
        );
        let again = store.redeliver("msg_1").await.unwrap().unwrap();
        assert_eq!(
            (again.status, again.budget_from),
            (DeliveryStatus::Pending, 1)
        );
        assert_eq!(store.delivery_attempts("msg_1").await.unwrap().len(), 1);
        assert!(store.redeliver("msg_nope").await.unwrap().is_none());
    }
}
