//! Durable state for Clawdis in one SQLite file.
//!
//! Holds paused runs (approval and input gates) with their decisions, the
//! history of runs started through the workflow service, and the
//! key/value state behind `state.set`, `state.get` and `diff.last`, and the
//! digests of named bearer tokens, the webhook outbox, and how far each
//! workflow trigger is handled, the clawd browser's sessions with their
//! action log, and the hash-chained audit ledger. Every
//! change is a single SQLite transaction, so a `kill -9` at any point leaves
//! either the old or the new state, never half of one. A paused run is
//! resumed exactly once: [`Store::claim`] is a compare-and-set on its status.

mod audit;
mod browser_actions;
mod browser_sessions;
mod conns;
mod devices;
mod error;
mod events;
mod history;
mod kv;
mod links;
mod open;
mod owner;
mod runs;
mod spelled;
mod tokens;
mod triggers;
mod votes;
mod webhooks;

pub use audit::{
    Broken, Entry as AuditEntry, GENESIS, NewEntry as NewAuditEntry, Presence,
    verify as verify_audit,
};
pub use browser_actions::{ActionRecord, NewAction};
pub use browser_sessions::SessionRecord;
pub use devices::{DeviceRecord, LiveDevice};
pub use error::{Result, StoreError};
pub use events::StoredEvent;
pub use history::{
    HistoryEnd, HistoryKind, HistoryQuery, HistoryRun, HistoryStatus, NewHistory, StepRecord,
    StepStatus,
};
pub use open::{Store, create_private_dir};
pub use owner::{ProcessOwner, current_owner};
pub use runs::{Channel, Claim, Decided, Decision, Finish, Gate, NewRun, Run, RunKind, RunStatus};
pub use tokens::{Issuer, Role, TokenRecord};
pub use triggers::{Advance, TriggerRecord};
pub use votes::{Counted, Vote};
pub use webhooks::{
    AttemptEnd, Delivery, DeliveryAttempt, DeliveryLink, DeliveryStatus, NewDelivery,
};

/// File name of the database inside the state directory.
pub const DB_FILE: &str = "clawdis.db";

/// Current time as ISO-8601 UTC with milliseconds (`Date#toISOString`).
pub fn now_iso() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The time `delay` from now, as the store writes times (RFC 3339, UTC,
/// milliseconds), which compare in time order as text.
pub fn iso_after(delay: std::time::Duration) -> String {
    let now = chrono::Utc::now();
    chrono::Duration::from_std(delay)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC)
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
