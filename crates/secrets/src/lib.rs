//! Clawdis secrets (the control token, API keys) in the OS keychain: the
//! macOS Keychain, the Secret Service on Linux, the Credential Manager on
//! Windows. Where no keychain is reachable (a server with no D-Bus session,
//! CI), or with `CLAWDIS_KEYCHAIN=off`, a 0600 file under `<home>/secrets/`
//! holds the secret instead. Secret values are never logged.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// The keychain service every Clawdis secret is stored under.
pub const SERVICE: &str = "clawdis";
/// Set to `off` to keep secrets in files even where a keychain exists.
pub const KEYCHAIN_ENV: &str = "CLAWDIS_KEYCHAIN";

/// Errors from the secret store.
#[derive(Debug, thiserror::Error, Serialize)]
#[serde(tag = "kind", content = "message", rename_all = "snake_case")]
pub enum SecretsError {
    /// A secret name that is not a plain file name.
    #[error("invalid secret name {0:?}: use letters, digits, '-', '_' and '.'")]
    Name(String),
    /// Reading or writing the fallback file failed.
    #[error("{0}")]
    Io(String),
}

impl From<std::io::Error> for SecretsError {
    fn from(e: std::io::Error) -> Self {
        SecretsError::Io(e.to_string())
    }
}

/// The crate's result type.
pub type Result<T, E = SecretsError> = std::result::Result<T, E>;

/// Where a secret is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    /// The OS keychain.
    Keychain,
    /// A 0600 file under `<home>/secrets/`.
    File,
}

/// The secrets of one Clawdis home.
#[derive(Clone, Debug)]
pub struct Secrets {
    home: PathBuf,
    keychain: bool,
}

fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(SecretsError::Name(name.to_string()))
    }
}

impl Secrets {
    /// The store for `home`: the keychain unless `CLAWDIS_KEYCHAIN=off`.
    pub fn new(home: &Path) -> Secrets {
        let off = std::env::var(KEYCHAIN_ENV).is_ok_and(|v| {
            matches!(
                v.to_ascii_lowercase().as_str(),
                "off" | "0" | "false" | "no"
            )
        });
        Secrets {
            home: home.to_path_buf(),
            keychain: !off,
        }
    }

    /// A store that only uses files (tests, and servers that opt out).
    pub fn files_only(home: &Path) -> Secrets {
        Secrets {
            home: home.to_path_buf(),
            keychain: false,
        }
    }

    /// Why the OS keychain does not answer, where it does not and was not
    /// turned off (`CLAWDIS_KEYCHAIN=off`); the secrets are then kept in
    /// files. Said once where a backend starts, not at every use.
    pub fn keychain_problem(&self) -> Option<String> {
        if !self.keychain {
            return None;
        }
        let entry = match keyring::Entry::new(SERVICE, &self.account("keychain-check")) {
            Ok(entry) => entry,
            Err(e) => return Some(e.to_string()),
        };
        match entry.get_password() {
            Ok(_) | Err(keyring::Error::NoEntry) => None,
            Err(e) => Some(e.to_string()),
        }
    }

    /// The fallback file of a secret.
    pub fn file(&self, name: &str) -> PathBuf {
        self.home.join("secrets").join(name)
    }

    /// The keychain account: the secret's name and the home it belongs to,
    /// so two homes (two profiles, tests) never share a secret.
    fn account(&self, name: &str) -> String {
        let home = self
            .home
            .canonicalize()
            .unwrap_or_else(|_| self.home.clone());
        format!("{name}@{}", home.display())
    }

    /// The keychain entry, or `None` when no keychain is reachable.
    fn entry(&self, name: &str) -> Option<keyring::Entry> {
        if !self.keychain {
            return None;
        }
        match keyring::Entry::new(SERVICE, &self.account(name)) {
            Ok(entry) => Some(entry),
            Err(e) => {
                tracing::debug!(error = %e, "no keychain; secrets stay in files under home");
                None
            }
        }
    }

    /// Reads a secret and where it is kept. A secret found in a file while
    /// a keychain is reachable moves into the keychain.
    pub fn get(&self, name: &str) -> Result<Option<(String, Location)>> {
        check_name(name)?;
        if let Some(entry) = self.entry(name) {
            match entry.get_password() {
                Ok(value) => return Ok(Some((value, Location::Keychain))),
                Err(keyring::Error::NoEntry) => {
                    return match self.read_file(name)? {
                        Some(value) => Ok(Some((value.clone(), self.set(name, &value)?))),
                        None => Ok(None),
                    };
                }
                Err(e) => {
                    tracing::debug!(error = %e, "keychain unreachable; using files under home");
                }
            }
        }
        Ok(self.read_file(name)?.map(|v| (v, Location::File)))
    }

    /// A reader of secret `name`'s current value, for callers that read it
    /// at each use (a key set later is then used without a restart).
    pub fn reader(
        &self,
        name: &str,
    ) -> impl Fn() -> std::result::Result<Option<String>, String> + Send + Sync + 'static {
        let (secrets, name) = (self.clone(), name.to_string());
        move || {
            secrets
                .get(&name)
                .map(|found| found.map(|(value, _)| value))
                .map_err(|e| e.to_string())
        }
    }

    /// Stores a secret: in the keychain when reachable (removing any
    /// fallback file), else in a 0600 file.
    pub fn set(&self, name: &str, value: &str) -> Result<Location> {
        check_name(name)?;
        if let Some(entry) = self.entry(name) {
            match entry.set_password(value) {
                Ok(()) => {
                    match std::fs::remove_file(self.file(name)) {
                        Ok(()) => {
                            tracing::info!(name, "moved a secret from its file into the keychain");
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(e.into()),
                    }
                    return Ok(Location::Keychain);
                }
                Err(e) => {
                    tracing::debug!(error = %e, "keychain unreachable; using files under home");
                }
            }
        }
        self.write_file(name, value)?;
        Ok(Location::File)
    }

    /// Reads a secret, creating it with `make` on first use.
    pub fn get_or_create(
        &self,
        name: &str,
        make: impl FnOnce() -> String,
    ) -> Result<(String, Location)> {
        if let Some(found) = self.get(name)? {
            return Ok(found);
        }
        let value = make();
        let location = self.set(name, &value)?;
        Ok((value, location))
    }

    /// Removes a secret from both the keychain and the fallback file.
    pub fn delete(&self, name: &str) -> Result<()> {
        check_name(name)?;
        if let Some(entry) = self.entry(name) {
            let _ = entry.delete_credential();
        }
        match std::fs::remove_file(self.file(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    fn read_file(&self, name: &str) -> Result<Option<String>> {
        match std::fs::read_to_string(self.file(name)) {
            Ok(text) if !text.trim().is_empty() => Ok(Some(text.trim().to_string())),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes the file atomically, readable by the owner only.
    fn write_file(&self, name: &str, value: &str) -> Result<()> {
        use std::io::Write;
        let path = self.file(name);
        let dir = path.parent().unwrap_or(&self.home);
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            opts.mode(0o600);
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        let mut file = opts.open(&tmp)?;
        file.write_all(value.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_round_trip_privately() {
        let home = tempfile::tempdir().unwrap();
        let s = Secrets::files_only(home.path());
        assert_eq!(s.get("control-token").unwrap(), None);
        let (made, at) = s.get_or_create("control-token", || "abc".into()).unwrap();
        assert_eq!((made.as_str(), at), ("abc", Location::File));
        let (again, _) = s.get_or_create("control-token", || "other".into()).unwrap();
        assert_eq!(again, "abc", "created once");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(s.file("control-token"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
        s.delete("control-token").unwrap();
        assert_eq!(s.get("control-token").unwrap(), None);
    }

    #[test]
    fn names_cannot_escape_the_secrets_dir() {
        let home = tempfile::tempdir().unwrap();
        let s = Secrets::files_only(home.path());
        for bad in ["", "../x", "a/b", ".hidden", "a b"] {
            assert!(
                matches!(s.set(bad, "v"), Err(SecretsError::Name(_))),
                "{bad:?}"
            );
        }
    }
}
