//! The `audit` table: an append-only ledger of who decided what, and
//! through which channel. Each entry's `hash` covers its fields and the
//! previous entry's hash, so changing, removing or reordering an entry
//! breaks the chain at that entry ([`verify`]). Rewriting the whole chain
//! from some entry on is not caught by the file alone: the head hash
//! travels in webhook payloads and exports, so a copy kept elsewhere shows
//! it.

use sha2::{Digest as _, Sha256};
use sqlx::{Connection as _, Row as _, SqliteConnection};

use crate::error::Result;
use crate::now_iso;
use crate::open::Store;

/// The `prevHash` of the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// How a decider showed a person was there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    /// A click in the app's window or notification.
    Click,
    /// An approver token, issued to a person.
    Token,
    /// A paired device's passkey, with user verification.
    Passkey,
    /// The operating system's own check of the person (Touch ID, the
    /// login password).
    Os,
}

impl Presence {
    /// The presence spelled `text`.
    pub fn parse(text: &str) -> Option<Presence> {
        [
            Presence::Click,
            Presence::Token,
            Presence::Passkey,
            Presence::Os,
        ]
        .into_iter()
        .find(|p| p.as_str() == text)
    }

    /// Its spelling in the ledger.
    pub fn as_str(self) -> &'static str {
        match self {
            Presence::Click => "click",
            Presence::Token => "token",
            Presence::Passkey => "passkey",
            Presence::Os => "os",
        }
    }
}

/// An entry to append.
#[derive(Clone, Debug, Default)]
pub struct NewEntry {
    /// What happened: `gate.approve`, `gate.reject`, `gate.cancel`,
    /// `gate.respond`, `gate.expire` (a decision), `gate.vote` (an approval
    /// counted toward `min_approvals`), `gate.refused` (an attempt on a
    /// `human` gate that was not a person's), `token.issued`,
    /// `token.revoked`.
    pub kind: String,
    /// What it happened to: a gate's approval id (else its run id), a
    /// token's name.
    pub subject: String,
    /// Who: the principal, as decisions name it.
    pub by: Option<String>,
    /// The channel it came through.
    pub via: Option<String>,
    /// How a person was shown to be there, if one was.
    pub presence: Option<Presence>,
    /// The digest of what the person was shown, when there is one.
    pub digest: Option<String>,
}

/// An entry of the ledger.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Its place: 1, 2, 3, ... with no gaps.
    pub seq: i64,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// What happened.
    pub kind: String,
    /// What it happened to.
    pub subject: String,
    /// Who.
    pub by: Option<String>,
    /// Through which channel.
    pub via: Option<String>,
    /// How a person was shown to be there.
    pub presence: Option<String>,
    /// The digest of what the person was shown.
    pub digest: Option<String>,
    /// The previous entry's hash ([`GENESIS`] for the first).
    pub prev_hash: String,
    /// SHA-256 (hex) of this entry's fields and `prevHash`.
    pub hash: String,
}

impl Entry {
    /// The hash its fields come to: SHA-256, in hex, of the JSON array
    /// `[seq, at, kind, subject, by, via, presence, digest, prevHash]`
    /// (an array, so no key order to agree on; absent fields are null).
    pub fn computed_hash(&self) -> String {
        let fields = serde_json::json!([
            self.seq,
            self.at,
            self.kind,
            self.subject,
            self.by,
            self.via,
            self.presence,
            self.digest,
            self.prev_hash,
        ]);
        format!("{:x}", Sha256::digest(fields.to_string().as_bytes()))
    }
}

/// Where a chain breaks: the first entry that does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    /// The entry's place (the one expected there, when it is missing).
    pub seq: i64,
    /// What is wrong with it.
    pub why: String,
}

/// Checks a ledger read oldest first: each entry in its place, following
/// the one before, with the hash its fields come to.
pub fn verify(entries: &[Entry]) -> std::result::Result<(), Broken> {
    let mut prev = GENESIS.to_string();
    for (i, entry) in entries.iter().enumerate() {
        let expected = i64::try_from(i).unwrap_or(i64::MAX) + 1;
        if entry.seq != expected {
            return Err(Broken {
                seq: expected,
                why: format!(
                    "entry {expected} is missing or out of place (entry {} is there)",
                    entry.seq
                ),
            });
        }
        if entry.prev_hash != prev {
            return Err(Broken {
                seq: entry.seq,
                why: format!(
                    "entry {} does not follow entry {} (one of them was changed, removed or moved)",
                    entry.seq,
                    entry.seq - 1
                ),
            });
        }
        if entry.computed_hash() != entry.hash {
            return Err(Broken {
                seq: entry.seq,
                why: format!("entry {} was changed", entry.seq),
            });
        }
        prev.clone_from(&entry.hash);
    }
    Ok(())
}

fn entry_from_row(r: &sqlx::sqlite::SqliteRow) -> Entry {
    Entry {
        seq: r.get(0),
        at: r.get(1),
        kind: r.get(2),
        subject: r.get(3),
        by: r.get(4),
        via: r.get(5),
        presence: r.get(6),
        digest: r.get(7),
        prev_hash: r.get(8),
        hash: r.get(9),
    }
}

macro_rules! audit_columns {
    () => {
        "seq, at, kind, subject, by, via, presence, digest, prev_hash, hash"
    };
}

/// Appends `new` after the last entry, inside the caller's transaction
/// (which must hold SQLite's write lock, so that no other writer appends
/// between the read of the last entry and this one).
pub(crate) async fn append(conn: &mut SqliteConnection, new: &NewEntry) -> Result<Entry> {
    let last = sqlx::query("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1")
        .fetch_optional(&mut *conn)
        .await?;
    let (seq, prev_hash) = match last {
        Some(r) => (r.get::<i64, _>(0) + 1, r.get::<String, _>(1)),
        None => (1, GENESIS.to_string()),
    };
    let mut entry = Entry {
        seq,
        at: now_iso(),
        kind: new.kind.clone(),
        subject: new.subject.clone(),
        by: new.by.clone(),
        via: new.via.clone(),
        presence: new.presence.map(|p| p.as_str().to_string()),
        digest: new.digest.clone(),
        prev_hash,
        hash: String::new(),
    };
    entry.hash = entry.computed_hash();
    sqlx::query(
        "INSERT INTO audit (seq, at, kind, subject, by, via, presence, digest, prev_hash, hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(entry.seq)
    .bind(&entry.at)
    .bind(&entry.kind)
    .bind(&entry.subject)
    .bind(&entry.by)
    .bind(&entry.via)
    .bind(&entry.presence)
    .bind(&entry.digest)
    .bind(&entry.prev_hash)
    .bind(&entry.hash)
    .execute(&mut *conn)
    .await?;
    Ok(entry)
}

impl Store {
    /// Appends `new` to the ledger, in a transaction of its own.
    pub async fn record_audit(&self, new: &NewEntry) -> Result<Entry> {
        let mut conn = self.conns.write().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let entry = append(&mut tx, new).await?;
        tx.commit().await?;
        Ok(entry)
    }

    /// Up to `limit` entries, newest first, before `cursor` (a `seq`) when
    /// given.
    pub async fn list_audit(&self, limit: u32, cursor: Option<i64>) -> Result<Vec<Entry>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            audit_columns!(),
            " FROM audit WHERE seq < ? ORDER BY seq DESC LIMIT ?"
        ))
        .bind(cursor.unwrap_or(i64::MAX))
        .bind(i64::from(limit))
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        Ok(rows.iter().map(entry_from_row).collect())
    }

    /// The whole ledger, oldest first.
    pub async fn audit_entries(&self) -> Result<Vec<Entry>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            audit_columns!(),
            " FROM audit ORDER BY seq"
        ))
        .fetch_all(&mut *self.conns.get().await?)
        .await?;
        Ok(rows.iter().map(entry_from_row).collect())
    }

    /// The last entry's `seq` and hash: what a copy kept elsewhere is
    /// checked against.
    pub async fn audit_head(&self) -> Result<Option<(i64, String)>> {
        let row = sqlx::query("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1")
            .fetch_optional(&mut *self.conns.get().await?)
            .await?;
        Ok(row.map(|r| (r.get(0), r.get(1))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: &str) -> NewEntry {
        NewEntry {
            kind: kind.into(),
            subject: "1a2b3c4d".into(),
            by: Some("token:ann".into()),
            via: Some("http".into()),
            presence: Some(Presence::Token),
            digest: None,
        }
    }

    #[tokio::test]
    async fn the_chain_holds_and_any_change_breaks_it_where_it_was_made() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        for kind in ["gate.vote", "gate.approve", "token.revoked"] {
            store.record_audit(&entry(kind)).await.unwrap();
        }
        let entries = store.audit_entries().await.unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].prev_hash, GENESIS);
        assert_eq!(entries[1].prev_hash, entries[0].hash);
        assert_eq!(verify(&entries), Ok(()));
        assert_eq!(
            store.audit_head().await.unwrap(),
            Some((3, entries[2].hash.clone()))
        );
        let newest = store.list_audit(2, None).await.unwrap();
        assert_eq!(newest.iter().map(|e| e.seq).collect::<Vec<_>>(), [3, 2]);
        let older = store.list_audit(2, Some(2)).await.unwrap();
        assert_eq!(older.iter().map(|e| e.seq).collect::<Vec<_>>(), [1]);

        let mut changed = entries.clone();
        changed[1].by = Some("token:mallory".into());
        assert_eq!(verify(&changed).unwrap_err().seq, 2);
        let mut removed = entries.clone();
        removed.remove(1);
        assert_eq!(verify(&removed).unwrap_err().seq, 2);
        let mut moved = entries.clone();
        moved.swap(0, 1);
        assert_eq!(verify(&moved).unwrap_err().seq, 1);
        // Rehashed after a change, an entry still breaks the next one.
        let mut rehashed = entries;
        rehashed[0].kind = "gate.approve".into();
        rehashed[0].hash = rehashed[0].computed_hash();
        assert_eq!(verify(&rehashed).unwrap_err().seq, 2);
    }
}
