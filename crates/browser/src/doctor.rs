//! `GET /doctor`: what stands between the user and a working clawd
//! browser, as OpenClaw's doctor reads it (`{id, status, summary, fixHint?}`).

use serde::Serialize;

use crate::launch::{check_cdp_port, no_display};
use crate::manager::Manager;
use crate::{BrowserError, discovery};

/// One finding.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// Stable id (`executable`, `cdp-port`, ...).
    pub id: &'static str,
    /// `pass`, `warn`, `fail` or `info`.
    pub status: &'static str,
    /// What was found.
    pub summary: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_hint: Option<String>,
}

fn check(id: &'static str, status: &'static str, summary: String, fix_hint: Option<&str>) -> Check {
    Check {
        id,
        status,
        summary,
        fix_hint: fix_hint.map(str::to_string),
    }
}

/// The findings for this manager's browser.
pub fn run(manager: &Manager) -> Vec<Check> {
    let settings = manager.settings();
    let status = manager.status();
    let mut out = Vec::new();
    if !status.enabled {
        out.push(check(
            "enabled",
            "fail",
            "the browser is disabled".into(),
            Some("set \"enabled\": true in settings.json (and drop --no-browser)"),
        ));
    }
    if settings.connect_only() {
        out.push(check(
            "mode",
            "info",
            format!(
                "connect only (attach-only or remote); CDP on port {}",
                settings.cdp_port
            ),
            None,
        ));
    } else {
        match discovery::find_executable(
            settings.executable_path.as_deref(),
            std::env::var("PATH").ok().as_deref(),
            None,
        ) {
            Ok(exe) => out.push(check("executable", "pass", exe.display().to_string(), None)),
            Err(e) => out.push(check(
                "executable",
                "fail",
                e.to_string(),
                Some(discovery::INSTALL_HINT),
            )),
        }
    }
    if status.running {
        out.push(check(
            "cdp-port",
            "pass",
            format!("the clawd browser listens on {}", status.cdp_port),
            None,
        ));
    } else {
        match check_cdp_port(status.cdp_port) {
            Ok(()) => out.push(check(
                "cdp-port",
                "pass",
                format!("port {} is free", status.cdp_port),
                None,
            )),
            Err(BrowserError::PortInUse(m)) if !settings.connect_only() => out.push(check(
                "cdp-port",
                "warn",
                m,
                Some("stop what uses the port or pick another cdpPort"),
            )),
            Err(BrowserError::PortInUse(m)) => out.push(check("cdp-port", "pass", m, None)),
            Err(e) => out.push(check(
                "cdp-port",
                "fail",
                e.to_string(),
                Some("pick another cdpPort"),
            )),
        }
    }
    let dir = manager.user_data_dir();
    out.push(check(
        "profile",
        "info",
        if dir.exists() {
            format!("isolated profile at {}", dir.display())
        } else {
            format!("profile will be created at {}", dir.display())
        },
        None,
    ));
    if !status.headless && no_display() {
        out.push(check(
            "display",
            "info",
            "no DISPLAY or WAYLAND_DISPLAY: the browser runs headless".into(),
            None,
        ));
    }
    out
}
