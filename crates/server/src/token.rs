//! The control token: generated at first start and kept in the OS keychain
//! (a 0600 file under home where no keychain is reachable).

use std::path::Path;

use clawdis_secrets::{Secrets, SecretsError};

/// The token's secret name.
pub const TOKEN_SECRET: &str = "control-token";

/// Reads the control token, creating it on first use.
pub fn control_token(home: &Path) -> Result<String, SecretsError> {
    let (token, location) = Secrets::new(home).get_or_create(TOKEN_SECRET, || {
        format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        )
    })?;
    tracing::debug!(?location, "control token");
    Ok(token)
}
