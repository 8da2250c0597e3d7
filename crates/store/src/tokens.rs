//! The `tokens` table: named bearer tokens and their roles. Only a digest
//! of each token is stored; the caller computes it.

use sqlx::{Connection as _, Row};

use crate::spelled::spelled;
use crate::{Result, Store, StoreError, now_iso};

spelled! {
    /// What a named token may do.
    pub enum Role {
        /// An agent: runs workflows, drives the browser, resumes its own
        /// runs where the policy lets agents decide.
        Agent = "agent",
        /// A person's token: may also decide gates that need a human.
        Approver = "approver",
    }
}

/// A named token as stored (its digest is not handed out).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenRecord {
    /// Its name, unique.
    pub name: String,
    /// What it may do.
    pub role: Role,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
}

fn record(r: &sqlx::sqlite::SqliteRow) -> Result<TokenRecord> {
    let role: &str = r.get(1);
    Ok(TokenRecord {
        name: r.get(0),
        role: Role::parse(role).ok_or_else(|| StoreError::Corrupt {
            column: "role",
            value: role.to_string(),
        })?,
        created_at: r.get(2),
        revoked_at: r.get(3),
    })
}

/// Who issued a token, as the ledger records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issuer {
    /// Who confirmed it, when a person did.
    pub by: Option<String>,
    /// Where: `cli` (the command line, for agent tokens), `app` (a
    /// person confirming a request in the app).
    pub via: String,
    /// How the person who confirmed it showed they were there.
    pub presence: Option<crate::Presence>,
}

impl Issuer {
    /// Whoever holds the home, through the command line (which has no
    /// other identity).
    pub fn cli() -> Issuer {
        Issuer {
            by: None,
            via: "cli".into(),
            presence: None,
        }
    }
}

/// A token's entry in the ledger: issued (with its role) or revoked.
fn token_entry(
    kind: &str,
    name: &str,
    role: Option<Role>,
    issuer: &Issuer,
) -> crate::NewAuditEntry {
    crate::NewAuditEntry {
        kind: kind.into(),
        subject: match role {
            Some(role) => format!("{name} ({})", role.as_str()),
            None => name.to_string(),
        },
        by: issuer.by.clone(),
        via: Some(issuer.via.clone()),
        presence: issuer.presence,
        digest: None,
    }
}

impl Store {
    /// Records a token by its digest, issued by `issuer`. A name already
    /// taken (revoked or not) is refused with `Ok(false)`. Issued, it goes
    /// into the ledger in the same transaction.
    pub async fn insert_token(
        &self,
        name: &str,
        role: Role,
        digest: &str,
        issuer: &Issuer,
    ) -> Result<bool> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let done = sqlx::query(
            "INSERT INTO tokens (name, role, digest, created_at) VALUES (?, ?, ?, ?)
             ON CONFLICT(name) DO NOTHING",
        )
        .bind(name)
        .bind(role.as_str())
        .bind(digest)
        .bind(now_iso())
        .execute(&mut *tx)
        .await?;
        let issued = done.rows_affected() == 1;
        if issued {
            crate::audit::append(
                &mut tx,
                &token_entry("token.issued", name, Some(role), issuer),
            )
            .await?;
        }
        tx.commit().await?;
        Ok(issued)
    }

    /// Every token, oldest first.
    pub async fn list_tokens(&self) -> Result<Vec<TokenRecord>> {
        let rows = sqlx::query(
            "SELECT name, role, created_at, revoked_at FROM tokens ORDER BY created_at, name",
        )
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        rows.iter().map(record).collect()
    }

    /// The live (not revoked) token with this digest.
    pub async fn token_by_digest(&self, digest: &str) -> Result<Option<TokenRecord>> {
        let row = sqlx::query(
            "SELECT name, role, created_at, revoked_at FROM tokens
             WHERE digest = ? AND revoked_at IS NULL",
        )
        .bind(digest)
        .fetch_optional(&mut *self.conns.get().await?)
        .await?;
        row.map(|r| record(&r)).transpose()
    }

    /// Revokes token `name` as `by` says; `Ok(false)` when there is no live
    /// one. Revoked, it goes into the ledger in the same transaction.
    pub async fn revoke_token(&self, name: &str, by: &Issuer) -> Result<bool> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let done =
            sqlx::query("UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL")
                .bind(now_iso())
                .bind(name)
                .execute(&mut *tx)
                .await?;
        let revoked = done.rows_affected() == 1;
        if revoked {
            crate::audit::append(&mut tx, &token_entry("token.revoked", name, None, by)).await?;
        }
        tx.commit().await?;
        Ok(revoked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tokens_are_found_by_digest_until_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        assert!(
            store
                .insert_token("ci", Role::Agent, "d1", &Issuer::cli())
                .await
                .unwrap()
        );
        assert!(
            !store
                .insert_token("ci", Role::Approver, "d2", &Issuer::cli())
                .await
                .unwrap(),
            "names are unique"
        );
        let found = store.token_by_digest("d1").await.unwrap().unwrap();
        assert_eq!((found.name.as_str(), found.role), ("ci", Role::Agent));
        assert!(store.token_by_digest("d2").await.unwrap().is_none());
        assert!(store.revoke_token("ci", &Issuer::cli()).await.unwrap());
        assert!(
            !store.revoke_token("ci", &Issuer::cli()).await.unwrap(),
            "once"
        );
        assert!(store.token_by_digest("d1").await.unwrap().is_none());
        let listed = store.list_tokens().await.unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].revoked_at.is_some());
    }
}
