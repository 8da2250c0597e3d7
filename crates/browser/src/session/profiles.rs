//! Named persistent profiles: `<home>/browser/profiles/<name>/`, holding the
//! profile's storage state (`state.sealed`: cookies and localStorage,
//! sealed with the home's key), so its logins outlive sessions and
//! restarts. Written atomically (a temporary file renamed over the old
//! one).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::seal::Sealer;
use super::state::StorageState;
use crate::{BrowserError, Result};

const STATE_FILE: &str = "state.sealed";

/// A profile as clients see it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileInfo {
    /// Its name.
    pub name: String,
    /// Its directory.
    pub path: String,
    /// How many cookies it keeps.
    pub cookies: usize,
    /// How many origins' localStorage it keeps.
    pub origins: usize,
}

/// A profile name: 1–64 letters, digits, `-` or `_` (it names a directory).
pub fn check_profile_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(BrowserError::invalid(format!(
            "profile names are 1-64 letters, digits, - or _, not {name:?}"
        )))
    }
}

fn dir(home: &Path, name: &str) -> PathBuf {
    home.join("browser").join("profiles").join(name)
}

fn info(home: &Path, name: &str, sealer: &Sealer) -> Result<ProfileInfo> {
    let state = load(home, name, sealer)?;
    Ok(ProfileInfo {
        name: name.to_string(),
        path: dir(home, name).display().to_string(),
        cookies: state.cookies.len(),
        origins: state.origins.len(),
    })
}

/// A profile's saved state; a profile used for the first time is empty
/// (and made).
pub fn load(home: &Path, name: &str, sealer: &Sealer) -> Result<StorageState> {
    check_profile_name(name)?;
    let file = dir(home, name).join(STATE_FILE);
    match std::fs::read_to_string(&file) {
        Ok(text) => Ok(sealer.open(&text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(StorageState::default()),
        Err(e) => Err(e.into()),
    }
}

/// Saves a profile's state.
pub fn save(home: &Path, name: &str, state: &StorageState, sealer: &Sealer) -> Result<()> {
    check_profile_name(name)?;
    let dir = dir(home, name);
    clawdis_store::create_private_dir(&dir).map_err(|e| BrowserError::Io(e.to_string()))?;
    let tmp = dir.join(format!("{STATE_FILE}.tmp"));
    std::fs::write(&tmp, sealer.seal(state))?;
    std::fs::rename(&tmp, dir.join(STATE_FILE))?;
    Ok(())
}

/// Every profile, by name.
pub fn list(home: &Path, sealer: &Sealer) -> Result<Vec<ProfileInfo>> {
    let root = home.join("browser").join("profiles");
    let mut names: Vec<String> = match std::fs::read_dir(&root) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| check_profile_name(n).is_ok())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    names.sort();
    names.iter().map(|n| info(home, n, sealer)).collect()
}

/// Makes an empty profile; an existing one is a conflict.
pub fn create(home: &Path, name: &str, sealer: &Sealer) -> Result<ProfileInfo> {
    check_profile_name(name)?;
    if dir(home, name).exists() {
        return Err(BrowserError::Conflict(format!("profile {name} exists")));
    }
    save(home, name, &StorageState::default(), sealer)?;
    info(home, name, sealer)
}

/// Removes a profile and everything it kept.
pub fn delete(home: &Path, name: &str) -> Result<()> {
    check_profile_name(name)?;
    let dir = dir(home, name);
    if !dir.exists() {
        return Err(BrowserError::Missing(format!("no profile {name}")));
    }
    std::fs::remove_dir_all(dir)?;
    Ok(())
}

/// A profile's state, for export.
pub fn export(home: &Path, name: &str, sealer: &Sealer) -> Result<StorageState> {
    check_profile_name(name)?;
    if !dir(home, name).exists() {
        return Err(BrowserError::Missing(format!("no profile {name}")));
    }
    load(home, name, sealer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain() {
        for ok in ["work", "a-b_c", "X1"] {
            assert!(check_profile_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "../x", "a/b", "a b", ".", &"x".repeat(65)] {
            assert!(check_profile_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn profiles_round_trip() {
        let home = tempfile::tempdir().unwrap();
        let sealer = Sealer::for_home_with(home.path(), false).unwrap();
        assert!(list(home.path(), &sealer).unwrap().is_empty());
        create(home.path(), "work", &sealer).unwrap();
        assert!(create(home.path(), "work", &sealer).is_err());
        let state = StorageState {
            cookies: vec![serde_json::json!({ "name": "sid", "value": "1", "domain": "x" })],
            origins: Vec::new(),
        };
        save(home.path(), "work", &state, &sealer).unwrap();
        assert_eq!(export(home.path(), "work", &sealer).unwrap(), state);
        assert_eq!(list(home.path(), &sealer).unwrap()[0].cookies, 1);
        let file = std::fs::read_to_string(home.path().join("browser/profiles/work/state.sealed"))
            .unwrap();
        assert!(!file.contains("sid"), "sealed: {file}");
        delete(home.path(), "work").unwrap();
        assert!(export(home.path(), "work", &sealer).is_err());
    }
}
