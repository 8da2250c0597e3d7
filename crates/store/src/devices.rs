//! The `devices` table: paired devices, each with the passkey (a public key
//! and a counter) it approves with. Pairing and revoking go into the ledger
//! in the same transaction.

use sqlx::{Connection as _, Row};

use crate::{Result, Store, now_iso};

/// A paired device as listed (its passkey is not handed out).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceRecord {
    /// Its name, unique.
    pub name: String,
    /// The WebAuthn relying party its passkey belongs to (`localhost`, or
    /// the host of `publicBaseUrl`).
    pub rp_id: String,
    /// When it was paired (RFC 3339).
    pub created_at: String,
    /// When it last approved or signed in.
    pub last_used_at: Option<String>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
}

/// A live device and its passkey, as webauthn-rs serialised it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveDevice {
    /// Its name.
    pub name: String,
    /// The passkey's JSON.
    pub passkey: String,
}

fn device_entry(kind: &str, name: &str, issuer: &crate::Issuer) -> crate::NewAuditEntry {
    crate::NewAuditEntry {
        kind: kind.into(),
        subject: format!("device:{name}"),
        by: issuer.by.clone(),
        via: Some(issuer.via.clone()),
        presence: issuer.presence,
        digest: None,
    }
}

impl Store {
    /// Records a device paired by `issuer`; `Ok(false)` when the name is
    /// taken (revoked or not).
    pub async fn insert_device(
        &self,
        name: &str,
        rp_id: &str,
        passkey: &str,
        issuer: &crate::Issuer,
    ) -> Result<bool> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let done = sqlx::query(
            "INSERT INTO devices (name, rp_id, passkey, created_at) VALUES (?, ?, ?, ?)
             ON CONFLICT(name) DO NOTHING",
        )
        .bind(name)
        .bind(rp_id)
        .bind(passkey)
        .bind(now_iso())
        .execute(&mut *tx)
        .await?;
        let paired = done.rows_affected() == 1;
        if paired {
            crate::audit::append(&mut tx, &device_entry("device.paired", name, issuer)).await?;
        }
        tx.commit().await?;
        Ok(paired)
    }

    /// Every device, oldest first.
    pub async fn list_devices(&self) -> Result<Vec<DeviceRecord>> {
        let rows = sqlx::query(
            "SELECT name, rp_id, created_at, last_used_at, revoked_at FROM devices
             ORDER BY created_at, name",
        )
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        Ok(rows
            .iter()
            .map(|r| DeviceRecord {
                name: r.get(0),
                rp_id: r.get(1),
                created_at: r.get(2),
                last_used_at: r.get(3),
                revoked_at: r.get(4),
            })
            .collect())
    }

    /// The live devices of relying party `rp_id`, with their passkeys.
    pub async fn live_devices(&self, rp_id: &str) -> Result<Vec<LiveDevice>> {
        let rows = sqlx::query(
            "SELECT name, passkey FROM devices WHERE rp_id = ? AND revoked_at IS NULL
             ORDER BY created_at, name",
        )
        .bind(rp_id)
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        Ok(rows
            .iter()
            .map(|r| LiveDevice {
                name: r.get(0),
                passkey: r.get(1),
            })
            .collect())
    }

    /// Whether any device is paired and not revoked.
    pub async fn any_live_device(&self) -> Result<bool> {
        let row = sqlx::query("SELECT 1 FROM devices WHERE revoked_at IS NULL LIMIT 1")
            .fetch_optional(&mut *self.conns.get().await?)
            .await?;
        Ok(row.is_some())
    }

    /// Keeps device `name`'s passkey as it is after a use (its counter),
    /// and when it was used.
    pub async fn used_device(&self, name: &str, passkey: &str) -> Result<()> {
        sqlx::query(
            "UPDATE devices SET passkey = ?, last_used_at = ? WHERE name = ? AND revoked_at IS NULL",
        )
        .bind(passkey)
        .bind(now_iso())
        .bind(name)
        .execute(&mut *self.conns.write().await?)
        .await?;
        Ok(())
    }

    /// Revokes device `name`, by `issuer`; `Ok(false)` when there is no
    /// live one.
    pub async fn revoke_device(&self, name: &str, issuer: &crate::Issuer) -> Result<bool> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let done =
            sqlx::query("UPDATE devices SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL")
                .bind(now_iso())
                .bind(name)
                .execute(&mut *tx)
                .await?;
        let revoked = done.rows_affected() == 1;
        if revoked {
            crate::audit::append(&mut tx, &device_entry("device.revoked", name, issuer)).await?;
        }
        tx.commit().await?;
        Ok(revoked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Issuer;

    #[tokio::test]
    async fn a_device_is_paired_once_used_and_revoked_into_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        assert!(!store.any_live_device().await.unwrap());
        let cli = Issuer::cli();
        assert!(
            store
                .insert_device("phone", "localhost", "{}", &cli)
                .await
                .unwrap()
        );
        assert!(
            !store
                .insert_device("phone", "localhost", "{}", &cli)
                .await
                .unwrap()
        );
        assert!(store.any_live_device().await.unwrap());
        store.used_device("phone", "{\"n\":1}").await.unwrap();
        let live = store.live_devices("localhost").await.unwrap();
        assert_eq!(live[0].passkey, "{\"n\":1}");
        assert!(store.live_devices("example.com").await.unwrap().is_empty());
        assert!(
            store.list_devices().await.unwrap()[0]
                .last_used_at
                .is_some()
        );
        assert!(store.revoke_device("phone", &cli).await.unwrap());
        assert!(!store.revoke_device("phone", &cli).await.unwrap());
        assert!(store.live_devices("localhost").await.unwrap().is_empty());
        let kinds: Vec<String> = store
            .audit_entries()
            .await
            .unwrap()
            .into_iter()
            .map(|e| format!("{} {}", e.kind, e.subject))
            .collect();
        assert_eq!(
            kinds,
            ["device.paired device:phone", "device.revoked device:phone"]
        );
    }
}
