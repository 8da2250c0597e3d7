//! `clawdis audit list|export|verify`: the hash-chained ledger, read from
//! the store the backend and `lobster` write it to.

use std::path::Path;

use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::json;

use crate::print_line;

/// What to do with the ledger.
#[derive(Subcommand)]
pub enum AuditAction {
    /// Print `{entries, head}`: the newest entries first.
    List {
        /// How many.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
        limit: u32,
    },
    /// Print every entry, oldest first, one JSON object a line, then a last
    /// line `{"head": {seq, hash}}`: a copy to keep elsewhere.
    Export,
    /// Recompute the chain; exit 1 naming the first entry that was changed,
    /// removed or moved.
    Verify,
}

/// Runs `action` on the ledger of `home`'s store.
pub fn audit(home: &Path, action: AuditAction) -> Result<()> {
    crate::on_approvals(home, async |approvals| {
        let store = approvals.store();
        let head = store
            .audit_head()
            .await?
            .map(|(seq, hash)| json!({ "seq": seq, "hash": hash }));
        match action {
            AuditAction::List { limit } => {
                let entries = store.list_audit(limit, None).await?;
                let answer = json!({ "entries": entries, "head": head });
                print_line(&serde_json::to_string_pretty(&answer)?);
            }
            AuditAction::Export => {
                for entry in store.audit_entries().await? {
                    print_line(&serde_json::to_string(&entry)?);
                }
                print_line(&json!({ "head": head }).to_string());
            }
            AuditAction::Verify => {
                let entries = store.audit_entries().await?;
                if let Err(broken) = clawdis_store::verify_audit(&entries) {
                    bail!(
                        "the ledger is broken at entry {}: {}",
                        broken.seq,
                        broken.why
                    );
                }
                print_line(&format!(
                    "the ledger holds: {} entries, head {}",
                    entries.len(),
                    entries
                        .last()
                        .map_or(clawdis_store::GENESIS, |e| e.hash.as_str())
                ));
            }
        }
        Ok(())
    })
}
