//! Finding a Chrome/Chromium executable.

use std::path::{Path, PathBuf};

use crate::{BrowserError, Result};

/// Executable names looked up on `PATH` (Linux), in order.
pub const LINUX_NAMES: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome-stable",
    "google-chrome",
];

/// App bundles looked up under `/Applications` and `~/Applications` (macOS),
/// in order: Chrome Canary, then Chromium, then Chrome.
pub const MAC_BUNDLES: [(&str, &str); 3] = [
    (
        "Google Chrome Canary.app",
        "Contents/MacOS/Google Chrome Canary",
    ),
    ("Chromium.app", "Contents/MacOS/Chromium"),
    ("Google Chrome.app", "Contents/MacOS/Google Chrome"),
];

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// What to do when no browser is found: the package to install, or the
/// setting that names one.
pub const INSTALL_HINT: &str = if cfg!(target_os = "macos") {
    "install Chromium (`brew install --cask chromium`) or Google Chrome, or set an absolute executablePath in settings.json"
} else {
    "install the chromium package (Debian: `sudo apt-get install chromium`; Ubuntu: `sudo snap install chromium`), or set an absolute executablePath in settings.json"
};

/// The browser to launch: the configured path (which must be absolute and
/// executable), else the first one found for this platform.
pub fn find_executable(
    configured: Option<&str>,
    path_var: Option<&str>,
    home: Option<&Path>,
) -> Result<PathBuf> {
    if let Some(p) = configured.map(str::trim).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(p);
        if !path.is_absolute() {
            return Err(BrowserError::Config(format!(
                "browser path must be absolute: {p}"
            )));
        }
        if !is_executable(&path) {
            return Err(BrowserError::NotFound(format!(
                "browser executable not found or not executable: {p}"
            )));
        }
        return Ok(path);
    }
    let candidates: Vec<PathBuf> = if cfg!(target_os = "macos") {
        let mut roots = vec![PathBuf::from("/Applications")];
        roots.extend(home.map(|h| h.join("Applications")));
        MAC_BUNDLES
            .iter()
            .flat_map(|(bundle, exe)| roots.iter().map(move |r| r.join(bundle).join(exe)))
            .collect()
    } else {
        let dirs: Vec<PathBuf> = std::env::split_paths(path_var.unwrap_or_default()).collect();
        LINUX_NAMES
            .iter()
            .flat_map(|name| dirs.iter().map(move |d| d.join(name)))
            .collect()
    };
    candidates.into_iter().find(|c| is_executable(c)).ok_or_else(|| {
        BrowserError::NotFound(if cfg!(target_os = "macos") {
            format!("no Chrome Canary, Chromium or Chrome app found in /Applications or ~/Applications; {INSTALL_HINT}")
        } else {
            format!("no browser found on PATH (looked for {}); {INSTALL_HINT}", LINUX_NAMES.join(", "))
        })
    })
}

#[cfg(all(test, not(target_os = "macos")))]
mod tests {
    use super::*;

    fn fake_exe(dir: &Path, name: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn path_lookup_follows_name_order_and_configured_path_wins() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        fake_exe(a.path(), "google-chrome");
        let chromium = fake_exe(b.path(), "chromium");
        let path_var = std::env::join_paths([a.path(), b.path()]).unwrap();
        let found = find_executable(None, path_var.to_str(), None).unwrap();
        assert_eq!(
            found, chromium,
            "chromium is preferred over google-chrome even later on PATH"
        );
        let configured = fake_exe(a.path(), "my-chrome");
        assert_eq!(
            find_executable(configured.to_str(), None, None).unwrap(),
            configured
        );
        assert!(matches!(
            find_executable(Some("chromium"), None, None),
            Err(BrowserError::Config(_))
        ));
        assert!(matches!(
            find_executable(None, Some(""), None),
            Err(BrowserError::NotFound(_))
        ));
    }
}
