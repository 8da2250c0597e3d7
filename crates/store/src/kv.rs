//! The `kv` table: the key/value state behind `state.set`, `state.get` and
//! `diff.last`.

use sqlx::Row;

use crate::{Result, Store, now_iso};

impl Store {
    /// Reads a key/value entry (`state.get`).
    pub async fn kv_get(&self, key: &str) -> Result<Option<String>> {
        let row = sqlx::query("SELECT value_json FROM kv WHERE key = ?")
            .bind(key)
            .fetch_optional(&mut *self.conns.get().await?)
            .await?;
        Ok(row.map(|r| r.get::<String, _>(0)))
    }

    /// Writes a key/value entry (`state.set`).
    pub async fn kv_set(&self, key: &str, value_json: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO kv (key, value_json, updated_at) VALUES (?, ?, ?)
             ON CONFLICT(key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at",
        )
        .bind(key)
        .bind(value_json)
        .bind(now_iso())
        .execute(&mut *self.conns.write().await?)
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[tokio::test]
    async fn kv_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        assert_eq!(store.kv_get("a").await.unwrap(), None);
        store.kv_set("a", "1").await.unwrap();
        store.kv_set("a", "2").await.unwrap();
        assert_eq!(store.kv_get("a").await.unwrap().as_deref(), Some("2"));
    }
}
