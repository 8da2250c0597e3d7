//! How Chromium is started: command-line flags and CDP port checks.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::path::PathBuf;

use crate::settings::FORBIDDEN_CDP_PORT;
use crate::{BrowserError, Result};

/// What a launch needs.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// The profile's user-data-dir.
    pub user_data_dir: PathBuf,
    /// The CDP port.
    pub cdp_port: u16,
    /// Headless mode.
    pub headless: bool,
    /// Disable the sandbox (needed as root).
    pub no_sandbox: bool,
}

/// Whether a headed window has nowhere to go: Linux (or another X11/Wayland
/// system) with neither `DISPLAY` nor `WAYLAND_DISPLAY`. macOS always has
/// a display.
pub fn no_display() -> bool {
    let unset = |k| std::env::var_os(k).is_none_or(|v| v.is_empty());
    !cfg!(target_os = "macos") && unset("DISPLAY") && unset("WAYLAND_DISPLAY")
}

/// Environment for a managed launch. On Linux, Chromium keeps its crash
/// database in the user's own `~/.config/chromium` whatever the
/// user-data-dir; this moves it beside the isolated profile.
pub fn launch_env(opts: &LaunchOptions) -> Vec<(&'static str, PathBuf)> {
    let dir = opts
        .user_data_dir
        .parent()
        .unwrap_or(&opts.user_data_dir)
        .join("crash-reports");
    vec![("BREAKPAD_DUMP_LOCATION", dir)]
}

/// Chromium's command-line flags for a managed launch.
pub fn launch_args(opts: &LaunchOptions) -> Vec<String> {
    let mut args = vec![
        format!("--remote-debugging-port={}", opts.cdp_port),
        "--remote-debugging-address=127.0.0.1".to_string(),
        format!("--user-data-dir={}", opts.user_data_dir.display()),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-sync".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-features=Translate,MediaRouter".into(),
        "--disable-session-crashed-bubble".into(),
        "--hide-crash-restore-bubble".into(),
        "--password-store=basic".into(),
    ];
    if opts.headless {
        args.push("--headless=new".into());
        args.push("--disable-gpu".into());
    }
    if opts.no_sandbox {
        args.push("--no-sandbox".into());
        args.push("--disable-setuid-sandbox".into());
    }
    if cfg!(target_os = "linux") {
        args.push("--disable-dev-shm-usage".into());
    }
    args.push("about:blank".into());
    args
}

/// Whether this process runs as root (Chromium then needs `--no-sandbox`).
pub fn running_as_root() -> bool {
    #[cfg(unix)]
    {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Uid:"))
                    .map(|l| l.split_whitespace().nth(1) == Some("0"))
            })
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Refuses 9222 and a CDP port that is already taken on 127.0.0.1 or
/// `[::1]` (when 127.0.0.1 is taken, Chromium silently listens on `[::1]`
/// and a connection to 127.0.0.1 would reach the other browser).
pub fn check_cdp_port(port: u16) -> Result<()> {
    if port == FORBIDDEN_CDP_PORT {
        return Err(BrowserError::Config(
            "CDP port 9222 is reserved for other tools; the clawd browser uses its own".into(),
        ));
    }
    let v4 = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    if TcpListener::bind(v4).is_err() {
        return Err(BrowserError::PortInUse(format!(
            "CDP port {port} is already in use on 127.0.0.1"
        )));
    }
    let v6 = SocketAddr::from((Ipv6Addr::LOCALHOST, port));
    match TcpListener::bind(v6) {
        Ok(_) => Ok(()),
        // No IPv6 loopback on this machine: nothing can be listening there.
        Err(e) if e.kind() == std::io::ErrorKind::AddrNotAvailable => Ok(()),
        Err(_) => Err(BrowserError::PortInUse(format!(
            "CDP port {port} is already in use on [::1]"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_and_reserved_ports_are_refused() {
        assert!(matches!(check_cdp_port(9222), Err(BrowserError::Config(_))));
        let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = taken.local_addr().unwrap().port();
        assert!(matches!(
            check_cdp_port(port),
            Err(BrowserError::PortInUse(_))
        ));
        drop(taken);
        assert!(check_cdp_port(port).is_ok());
    }

    #[test]
    fn flags_isolate_the_profile() {
        let args = launch_args(&LaunchOptions {
            user_data_dir: "/h/browser/clawd/user-data".into(),
            cdp_port: 18792,
            headless: true,
            no_sandbox: true,
        });
        assert!(args.contains(&"--remote-debugging-port=18792".to_string()));
        assert!(args.contains(&"--user-data-dir=/h/browser/clawd/user-data".to_string()));
        assert!(
            args.iter().any(|a| a == "--disable-background-networking")
                && args.iter().any(|a| a == "--disable-component-update")
        );
        assert!(
            args.iter().any(|a| a == "--no-sandbox") && args.iter().any(|a| a == "--headless=new")
        );
    }
}
