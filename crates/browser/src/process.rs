//! Starting and stopping the clawd browser process, and its first-launch
//! profile bootstrap.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::launch::{LaunchOptions, check_cdp_port, launch_args, launch_env};
use crate::{BrowserError, Result, profile};

/// A Chromium on our profile: one we launched, or one a previous server
/// launched and we adopted.
#[derive(Debug)]
pub struct RunningBrowser {
    /// `None` for an adopted browser (not our child).
    child: Option<Child>,
    /// Its process id.
    pub pid: u32,
    /// The CDP port.
    pub cdp_port: u16,
    /// The browser-level DevTools WebSocket URL.
    pub ws_url: String,
    /// The executable.
    pub executable: PathBuf,
    /// The profile directory.
    pub user_data_dir: PathBuf,
}

/// `GET http://127.0.0.1:<port>/json/version`.
pub fn cdp_version(port: u16) -> Option<Value> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_millis(500)))
        .build()
        .into();
    let mut resp = agent
        .get(&format!("http://127.0.0.1:{port}/json/version"))
        .call()
        .ok()?;
    let text = resp.body_mut().read_to_string().ok()?;
    serde_json::from_str(&text).ok()
}

/// Launches Chromium and waits until its CDP endpoint answers.
#[tracing::instrument(level = "info", skip(opts), fields(port = opts.cdp_port))]
pub fn start(executable: &Path, opts: &LaunchOptions, timeout: Duration) -> Result<RunningBrowser> {
    check_cdp_port(opts.cdp_port)?;
    std::fs::create_dir_all(&opts.user_data_dir)?;
    profile::clear_stale_lock(&opts.user_data_dir)?;
    profile::mark_clean_exit(&opts.user_data_dir)?;
    let mut child = Command::new(executable)
        .args(launch_args(opts))
        .envs(launch_env(opts))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            BrowserError::NotFound(format!("cannot start {}: {e}", executable.display()))
        })?;
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(version) = cdp_version(opts.cdp_port) {
            let ws_url = version
                .get("webSocketDebuggerUrl")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            return Ok(RunningBrowser {
                pid: child.id(),
                child: Some(child),
                cdp_port: opts.cdp_port,
                ws_url,
                executable: executable.to_path_buf(),
                user_data_dir: opts.user_data_dir.clone(),
            });
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                let _ = pipe.read_to_string(&mut stderr);
            }
            let tail: String = stderr
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            return Err(BrowserError::Io(format!(
                "browser exited during start ({status}): {tail}"
            )));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(BrowserError::Io(format!(
                "browser did not open CDP port {} within {timeout:?}",
                opts.cdp_port
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Adopts a browser a previous server left running on `user_data_dir`:
/// its `SingletonLock` names a live process that answers CDP on the port
/// it was started with (from its command line or `DevToolsActivePort`,
/// else `cdp_port`). Returns `None` when there is nothing to adopt.
pub fn adopt(executable: &Path, user_data_dir: &Path, cdp_port: u16) -> Option<RunningBrowser> {
    let pid = profile::lock_owner(user_data_dir).filter(|pid| process_alive(*pid))?;
    let from_cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .and_then(|raw| {
            raw.split(|b| *b == 0).find_map(|arg| {
                std::str::from_utf8(arg)
                    .ok()?
                    .strip_prefix("--remote-debugging-port=")?
                    .parse::<u16>()
                    .ok()
            })
        });
    let from_file = || -> Option<u16> {
        std::fs::read_to_string(user_data_dir.join("DevToolsActivePort"))
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    };
    let port = from_cmdline.or_else(from_file).unwrap_or(cdp_port);
    let version = cdp_version(port)?;
    let ws_url = version.get("webSocketDebuggerUrl")?.as_str()?.to_string();
    tracing::info!(
        pid,
        port,
        "adopting the clawd browser left running on its profile"
    );
    Some(RunningBrowser {
        child: None,
        pid,
        cdp_port: port,
        ws_url,
        executable: executable.to_path_buf(),
        user_data_dir: user_data_dir.to_path_buf(),
    })
}

/// Whether a process with this pid exists (signal 0).
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn signal(pid: u32, sig: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: sends a signal to the browser process we manage.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

impl RunningBrowser {
    /// Whether the process is still alive.
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => process_alive(self.pid),
        }
    }

    /// Stops gracefully (SIGTERM), then forcibly after `grace`.
    pub fn stop(mut self, grace: Duration) -> Result<()> {
        signal(self.pid, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if !self.is_running() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        match self.child.as_mut() {
            Some(child) => {
                child.kill()?;
                child.wait()?;
            }
            None => signal(self.pid, libc::SIGKILL),
        }
        Ok(())
    }
}

/// Prepares the managed profile: on first use, a short bootstrap run lets
/// Chromium write its own files, which are then themed with `name` and
/// `argb`; a profile themed otherwise since (the accent colour changed in
/// settings) is themed again. Returns the user-data-dir.
pub fn prepare_profile(
    executable: &Path,
    opts: &LaunchOptions,
    name: &str,
    argb: i32,
) -> Result<PathBuf> {
    match profile::decorated_as(&opts.user_data_dir) {
        None => {
            let bootstrap = start(
                executable,
                &LaunchOptions {
                    headless: true,
                    ..opts.clone()
                },
                Duration::from_secs(30),
            )?;
            bootstrap.stop(Duration::from_secs(5))?;
            profile::decorate(&opts.user_data_dir, name, argb)?;
        }
        Some(current) if current != profile::decoration(name, argb) => {
            profile::decorate(&opts.user_data_dir, name, argb)?;
        }
        Some(_) => {}
    }
    Ok(opts.user_data_dir.clone())
}
