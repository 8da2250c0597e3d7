//! The `used_links` table: signed approval links are single-use.

use crate::{Result, Store, now_iso};

impl Store {
    /// Spends the link named by `nonce` on gate `state_key`: `true` the
    /// first time, `false` ever after.
    pub async fn spend_link(&self, nonce: &str, state_key: &str) -> Result<bool> {
        let done = sqlx::query(
            "INSERT OR IGNORE INTO used_links (nonce, state_key, used_at) VALUES (?, ?, ?)",
        )
        .bind(nonce)
        .bind(state_key)
        .bind(now_iso())
        .execute(&mut *self.conns.write().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Whether the link `nonce` names was spent already.
    pub async fn link_spent(&self, nonce: &str) -> Result<bool> {
        let row = sqlx::query("SELECT 1 FROM used_links WHERE nonce = ?")
            .bind(nonce)
            .fetch_optional(&mut *self.conns.get().await?)
            .await?;
        Ok(row.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_link_is_spent_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        assert!(!store.link_spent("n1").await.unwrap());
        assert!(store.spend_link("n1", "k1").await.unwrap());
        assert!(store.link_spent("n1").await.unwrap());
        assert!(!store.spend_link("n1", "k1").await.unwrap());
        assert!(store.spend_link("n2", "k1").await.unwrap());
    }
}
