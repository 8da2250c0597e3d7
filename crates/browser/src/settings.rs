//! `<home>/settings.json`: what the desktop app's settings window edits and
//! `clawdis serve` reads. Flags override these for one run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{BrowserError, Result};

/// Default accent colour: lobster orange.
pub const DEFAULT_ACCENT: &str = "#FF4500";
/// Default control API address.
pub const DEFAULT_CONTROL_URL: &str = "http://127.0.0.1:18791";
/// Default Chrome DevTools Protocol port.
pub const DEFAULT_CDP_PORT: u16 = 18792;
/// The most browser sessions the pool holds.
pub const MAX_SESSIONS: usize = 4;
/// The port every other tool uses; never ours.
pub const FORBIDDEN_CDP_PORT: u16 = 9222;

/// Browser settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// Whether the clawd browser is on.
    pub enabled: bool,
    /// Where the control API listens.
    pub control_url: String,
    /// The CDP port Chromium listens on.
    pub cdp_port: u16,
    /// Profile accent colour, `#RRGGBB`.
    pub accent_color: String,
    /// Run Chromium headless.
    pub headless: bool,
    /// Never launch; only connect to a running browser.
    pub attach_only: bool,
    /// An absolute path to the browser executable (else discovered).
    pub executable_path: Option<String>,
    /// Whether `evaluate` actions are allowed.
    pub evaluate_enabled: bool,
    /// If not empty, the only hosts navigation may reach (`*.example.com` for subdomains).
    pub allowed_hosts: Vec<String>,
    /// Hosts navigation may never reach.
    pub blocked_hosts: Vec<String>,
    /// How many browser sessions may be open at once (1–4).
    pub max_sessions: usize,
    /// Directories of named workflows besides `<home>/workflows` (absolute,
    /// `~/…`, or relative to the home).
    pub workflow_dirs: Vec<String>,
    /// The keys other parts of Clawdis read from the same file (the
    /// workflow service's webhooks), kept as they are when settings are saved.
    #[serde(flatten)]
    pub others: serde_json::Map<String, serde_json::Value>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: true,
            control_url: DEFAULT_CONTROL_URL.into(),
            cdp_port: DEFAULT_CDP_PORT,
            accent_color: DEFAULT_ACCENT.into(),
            headless: false,
            attach_only: false,
            executable_path: None,
            evaluate_enabled: true,
            max_sessions: MAX_SESSIONS,
            allowed_hosts: Vec::new(),
            blocked_hosts: Vec::new(),
            workflow_dirs: Vec::new(),
            others: serde_json::Map::new(),
        }
    }
}

impl Settings {
    /// Where named workflows live: `<home>/workflows`, then `workflowDirs`.
    pub fn workflow_dirs(&self, home: &Path) -> Vec<PathBuf> {
        let user_home = std::env::var_os("HOME").map(PathBuf::from);
        std::iter::once(home.join("workflows"))
            .chain(
                self.workflow_dirs
                    .iter()
                    .filter(|d| !d.trim().is_empty())
                    .map(|d| match (d.strip_prefix("~/"), &user_home) {
                        (Some(rest), Some(user_home)) => user_home.join(rest),
                        _ => home.join(d),
                    }),
            )
            .collect()
    }
}

/// A problem with one field, for display next to it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldIssue {
    /// The field (`executablePath`, `cdpPort`, ...).
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
    /// `true` when the value is accepted but deserves a warning.
    pub warning: bool,
}

/// Whether a host name or address is this machine.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl Settings {
    /// The settings file in `home`.
    pub fn path(home: &Path) -> PathBuf {
        home.join("settings.json")
    }

    /// Loads settings, with defaults for a missing file or missing fields.
    pub fn load(home: &Path) -> Result<Settings> {
        match std::fs::read_to_string(Settings::path(home)) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                BrowserError::Config(format!("{}: {e}", Settings::path(home).display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes settings atomically (temp file + rename).
    pub fn save(&self, home: &Path) -> Result<()> {
        std::fs::create_dir_all(home)?;
        let path = Settings::path(home);
        let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
        let text =
            serde_json::to_string_pretty(self).map_err(|e| BrowserError::Io(e.to_string()))? + "\n";
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path)?;
        Ok(())
    }

    /// Whether the control URL points elsewhere (then Clawdis only connects).
    pub fn remote_control(&self) -> bool {
        url::Url::parse(&self.control_url)
            .ok()
            .and_then(|u| u.host_str().map(|h| !is_loopback_host(h)))
            .unwrap_or(false)
    }

    /// Whether Clawdis may launch a browser, or must only connect to one.
    pub fn connect_only(&self) -> bool {
        self.attach_only || self.remote_control()
    }

    /// Checks every field; errors refuse the settings, warnings do not.
    pub fn validate(&self) -> Vec<FieldIssue> {
        let mut issues = Vec::new();
        let mut error = |field, message: String| {
            issues.push(FieldIssue {
                field,
                message,
                warning: false,
            });
        };
        if let Some(p) = self
            .executable_path
            .as_deref()
            .filter(|p| !p.trim().is_empty())
            && !Path::new(p).is_absolute()
        {
            error(
                "executablePath",
                format!("browser path must be absolute: {p}"),
            );
        }
        if self.cdp_port == FORBIDDEN_CDP_PORT {
            error(
                "cdpPort",
                "port 9222 is reserved for other tools; pick another CDP port".into(),
            );
        }
        if self.cdp_port == 0 {
            error("cdpPort", "CDP port must be between 1 and 65535".into());
        }
        match parse_control_url(&self.control_url) {
            Err(_) => error(
                "controlUrl",
                format!("not an http URL with a port: {}", self.control_url),
            ),
            Ok((_, FORBIDDEN_CDP_PORT)) => error(
                "controlUrl",
                "port 9222 is reserved for other tools; pick another port".into(),
            ),
            Ok(_) => {}
        }
        if !(1..=MAX_SESSIONS).contains(&self.max_sessions) {
            error(
                "maxSessions",
                format!(
                    "maxSessions must be 1 to {MAX_SESSIONS}, not {}",
                    self.max_sessions
                ),
            );
        }
        if crate::color::parse_hex(&self.accent_color).is_none() {
            error(
                "accentColor",
                format!(
                    "accent colour must look like #RRGGBB: {}",
                    self.accent_color
                ),
            );
        }
        if self.remote_control() {
            issues.push(FieldIssue {
                field: "controlUrl",
                message: "not a loopback address: Clawdis will only connect to this browser, never launch one".into(),
                warning: true,
            });
        }
        issues
    }
}

/// Parses the control URL into host and port (`http://127.0.0.1:18791`).
pub fn parse_control_url(text: &str) -> Result<(String, u16)> {
    let url = url::Url::parse(text)
        .map_err(|e| BrowserError::Config(format!("invalid control URL {text}: {e}")))?;
    if url.scheme() != "http" {
        return Err(BrowserError::Config(format!(
            "control URL must be http: {text}"
        )));
    }
    let host = url
        .host_str()
        .ok_or_else(|| BrowserError::Config(format!("control URL has no host: {text}")))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| BrowserError::Config(format!("control URL has no port: {text}")))?;
    Ok((
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_partial_files_fill_in() {
        let home = tempfile::tempdir().unwrap();
        assert_eq!(Settings::load(home.path()).unwrap(), Settings::default());
        std::fs::write(
            Settings::path(home.path()),
            r#"{"headless":true,"cdpPort":19000,"webhooks":[{"url":"http://127.0.0.1:9/h"}]}"#,
        )
        .unwrap();
        let s = Settings::load(home.path()).unwrap();
        assert!(s.headless);
        assert_eq!(s.cdp_port, 19000);
        assert_eq!(s.accent_color, "#FF4500");
        s.save(home.path()).unwrap();
        assert_eq!(Settings::load(home.path()).unwrap(), s);
        // The service's keys survive a save by the browser's side.
        let saved = std::fs::read_to_string(Settings::path(home.path())).unwrap();
        assert!(saved.contains("http://127.0.0.1:9/h"), "{saved}");
        std::fs::write(Settings::path(home.path()), "{nope").unwrap();
        assert!(matches!(
            Settings::load(home.path()),
            Err(BrowserError::Config(_))
        ));
    }

    #[test]
    fn validation_messages() {
        let bad = Settings {
            executable_path: Some("chromium".into()),
            cdp_port: 9222,
            ..Settings::default()
        };
        let fields: Vec<_> = bad
            .validate()
            .into_iter()
            .filter(|i| !i.warning)
            .map(|i| i.field)
            .collect();
        assert_eq!(fields, vec!["executablePath", "cdpPort"]);
        let remote = Settings {
            control_url: "http://10.0.0.5:18791".into(),
            ..Settings::default()
        };
        let issues = remote.validate();
        assert!(issues.iter().all(|i| i.warning));
        assert!(remote.connect_only());
        assert!(!Settings::default().connect_only());
        assert!(
            Settings {
                attach_only: true,
                ..Settings::default()
            }
            .connect_only()
        );
        assert!(
            is_loopback_host("[::1]")
                && is_loopback_host("localhost")
                && !is_loopback_host("example.com")
        );
    }
}
