//! The store's error type.

use std::path::PathBuf;

/// Errors from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened, read or written.
    #[error("{0}")]
    Db(#[from] sqlx::Error),
    /// The schema could not be migrated.
    #[error("{0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored value no version of Clawdis writes.
    #[error("the database holds {value:?} in column {column}")]
    Corrupt {
        /// The column.
        column: &'static str,
        /// What it holds.
        value: String,
    },
    /// The state directory could not be created.
    #[error("cannot create state directory {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
