//! The clawd browser's lifecycle and tabs: launch or adopt or attach,
//! health, the CDP connection, and which tab is active. Servers (HTTP, the
//! desktop shell) call this; it knows nothing about either.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::EventLoadEventFired;
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};

use crate::cdp::{Cdp, page_call, page_events};
use crate::element::{self, Locator};
use crate::events::{TabEvents, now_ms};
use crate::launch::{LaunchOptions, no_display, running_as_root};
use crate::process::{self, RunningBrowser};
use crate::refs::RefTable;
use crate::settings::Settings;
use crate::{BrowserError, Result, color, discovery, policy, profile, targets};

/// The managed profile's name.
pub const PROFILE: &str = "clawd";
/// Names clients may use for the managed profile (`?profile=`).
pub const PROFILE_ALIASES: [&str; 2] = ["clawd", "openclaw"];
/// Default wait for a page load after navigation.
pub const NAVIGATE_TIMEOUT: Duration = Duration::from_secs(20);

/// One tab as clients see it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tab {
    /// The CDP target id.
    pub target_id: String,
    /// Page title.
    pub title: String,
    /// Current URL.
    pub url: String,
    /// Always `page`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The page's DevTools WebSocket URL.
    pub ws_url: String,
    /// Whether this is the tab calls without a `targetId` act on.
    pub is_active: bool,
    /// When Clawdis last opened or focused it (ms since the epoch).
    pub last_focused_at: Option<u64>,
}

/// Browser status for `GET /` and the tray.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Browser on in settings (and not `--no-browser`).
    pub enabled: bool,
    /// The profile name.
    pub profile: &'static str,
    /// `clawd`: the managed profile.
    pub driver: &'static str,
    /// Always `cdp`.
    pub transport: &'static str,
    /// Whether a browser is up.
    pub running: bool,
    /// Whether the CDP connection is up.
    pub cdp_ready: bool,
    /// The browser's pid (launched or adopted).
    pub pid: Option<u32>,
    /// The CDP port.
    pub cdp_port: u16,
    /// The CDP base URL.
    pub cdp_url: String,
    /// The executable in use.
    pub chosen_browser: Option<String>,
    /// The isolated user-data-dir.
    pub user_data_dir: String,
    /// Accent colour.
    pub color: String,
    /// Headless (of the running browser, else the setting).
    pub headless: bool,
    /// Whether Chromium runs with `--no-sandbox`.
    pub no_sandbox: bool,
    /// Configured executable path.
    pub executable_path: Option<String>,
    /// Connect only, never launch.
    pub attach_only: bool,
    /// Whether `evaluate` is allowed.
    pub evaluate_enabled: bool,
}

#[derive(Default)]
struct Inner {
    process: Option<RunningBrowser>,
    cdp: Option<Arc<Cdp>>,
    headless: Option<bool>,
    active: Option<String>,
    focused: HashMap<String, u64>,
    refs: HashMap<String, RefTable>,
    events: HashMap<String, Arc<TabEvents>>,
}

impl Inner {
    /// The tab calls without a `targetId` act on, among the open `ids`:
    /// the one last opened or focused through Clawdis while it is open,
    /// else the most recently focused one still open, else the first in
    /// Chromium's list (its newest).
    fn active_among<'a, S: AsRef<str>>(&self, ids: &'a [S]) -> Option<&'a str> {
        let ids = || ids.iter().map(AsRef::as_ref);
        ids()
            .find(|id| self.active.as_deref() == Some(*id))
            .or_else(|| {
                ids()
                    .filter_map(|id| Some((self.focused.get(id)?, id)))
                    .max()
                    .map(|(_, id)| id)
            })
            .or_else(|| ids().next())
    }

    /// Drops a dead process or connection; true when something was dropped.
    fn reap(&mut self) -> bool {
        let process_dead = self.process.as_mut().is_some_and(|p| !p.is_running());
        let cdp_dead = self.cdp.as_ref().is_some_and(|c| !c.is_alive());
        if process_dead {
            tracing::warn!("the clawd browser exited");
            self.process = None;
            self.cdp = None;
        } else if cdp_dead {
            tracing::warn!("lost the CDP connection");
            self.cdp = None;
        }
        if process_dead || cdp_dead {
            self.headless = None;
            self.refs.clear();
            self.events.clear();
            self.focused.clear();
            self.active = None;
        }
        process_dead || cdp_dead
    }
}

/// Owns the clawd browser for one backend process.
pub struct Manager {
    home: PathBuf,
    settings: RwLock<Settings>,
    no_browser: bool,
    lifecycle: tokio::sync::Mutex<()>,
    inner: Mutex<Inner>,
    metrics: crate::metrics::Metrics,
    screencasts: crate::screencast::Screencasts,
    /// The tabs a person has taken over (hand-offs), by target id.
    handed_off: Arc<Mutex<std::collections::HashSet<String>>>,
}

/// A tab handed to a person: the agent's actions on it are refused until
/// this is dropped.
#[derive(Debug)]
pub struct HandedOff {
    target: String,
    tabs: Arc<Mutex<std::collections::HashSet<String>>>,
}

impl Drop for HandedOff {
    fn drop(&mut self) {
        self.tabs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.target);
    }
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("home", &self.home)
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager for `home` with these effective settings; `no_browser`
    /// forbids launching for this run.
    pub fn new(home: PathBuf, settings: Settings, no_browser: bool) -> Manager {
        Manager {
            home,
            settings: RwLock::new(settings),
            no_browser,
            lifecycle: tokio::sync::Mutex::new(()),
            inner: Mutex::new(Inner::default()),
            metrics: crate::metrics::Metrics::new(),
            screencasts: crate::screencast::Screencasts::default(),
            handed_off: Arc::default(),
        }
    }

    /// The counters of every action and session of this browser.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// The Clawdis home.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// A copy of the effective settings.
    pub fn settings(&self) -> Settings {
        self.settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Replaces the effective settings (the settings window saved them).
    /// Turning the browser off stops it; other changes apply at the next
    /// launch.
    pub async fn apply_settings(&self, settings: Settings) -> Result<()> {
        let enabled = settings.enabled;
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = settings;
        if !enabled && self.status().running {
            self.stop().await?;
        }
        Ok(())
    }

    /// The isolated user-data-dir.
    pub fn user_data_dir(&self) -> PathBuf {
        profile::user_data_dir(&self.home, PROFILE)
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn enabled(&self) -> bool {
        self.settings().enabled && !self.no_browser
    }

    /// Checks a `?profile=` value: the managed profile under any alias.
    pub fn check_profile(name: Option<&str>) -> Result<()> {
        match name.map(str::trim).filter(|n| !n.is_empty()) {
            None => Ok(()),
            Some(n) if PROFILE_ALIASES.contains(&n) => Ok(()),
            Some(n) => Err(BrowserError::Missing(format!("profile \"{n}\" not found"))),
        }
    }

    /// Current status; never waits on a launch in progress.
    pub fn status(&self) -> Status {
        let s = self.settings();
        let mut inner = self.inner();
        inner.reap();
        let running = inner.process.is_some() || inner.cdp.is_some();
        let cdp_port = inner.process.as_ref().map_or(s.cdp_port, |p| p.cdp_port);
        Status {
            enabled: s.enabled && !self.no_browser,
            profile: PROFILE,
            driver: PROFILE,
            transport: "cdp",
            running,
            cdp_ready: inner.cdp.is_some(),
            pid: inner.process.as_ref().map(|p| p.pid),
            cdp_port,
            cdp_url: format!("http://127.0.0.1:{cdp_port}"),
            chosen_browser: inner
                .process
                .as_ref()
                .map(|p| p.executable.display().to_string()),
            user_data_dir: self.user_data_dir().display().to_string(),
            color: s.accent_color.clone(),
            headless: inner.headless.unwrap_or(s.headless),
            no_sandbox: running_as_root(),
            executable_path: s.executable_path.clone(),
            attach_only: s.connect_only(),
            evaluate_enabled: s.evaluate_enabled,
        }
    }

    /// The live connection, if any (does not start anything).
    fn live(&self) -> Option<Arc<Cdp>> {
        let mut inner = self.inner();
        inner.reap();
        inner.cdp.clone()
    }

    /// The connection, or a conflict: "browser not running".
    pub fn connected(&self) -> Result<Arc<Cdp>> {
        self.live()
            .ok_or_else(|| BrowserError::Conflict("browser not running".into()))
    }

    /// Starts (or adopts, or attaches to) the browser; a running one is
    /// reused. `headless` overrides the setting for this launch.
    #[tracing::instrument(level = "info", skip(self))]
    pub async fn start(&self, headless: Option<bool>) -> Result<Arc<Cdp>> {
        if !self.enabled() {
            return Err(BrowserError::Conflict(
                "Browser disabled in settings".into(),
            ));
        }
        let s = self.settings();
        if headless.is_some() && s.connect_only() {
            return Err(BrowserError::invalid(
                "headless cannot be set for an attach-only browser",
            ));
        }
        let _launching = self.lifecycle.lock().await;
        if let Some(cdp) = self.live() {
            return Ok(cdp);
        }
        if s.connect_only() {
            return self.attach(&s).await;
        }
        let mut headless = headless.unwrap_or(s.headless);
        if !headless && no_display() {
            tracing::info!("no display (DISPLAY and WAYLAND_DISPLAY unset): launching headless");
            headless = true;
        }
        let opts = LaunchOptions {
            user_data_dir: self.user_data_dir(),
            cdp_port: s.cdp_port,
            headless,
            no_sandbox: running_as_root(),
        };
        let argb = color::parse_hex(&s.accent_color)
            .map(color::signed_argb)
            .unwrap_or(-47872);
        let configured = s.executable_path.clone();
        let browser = tokio::task::spawn_blocking(move || -> Result<RunningBrowser> {
            let exe = discovery::find_executable(
                configured.as_deref(),
                std::env::var("PATH").ok().as_deref(),
                None,
            )?;
            if let Some(adopted) = process::adopt(&exe, &opts.user_data_dir, opts.cdp_port) {
                return Ok(adopted);
            }
            process::prepare_profile(&exe, &opts, PROFILE, argb)?;
            process::start(&exe, &opts, Duration::from_secs(30))
        })
        .await
        .map_err(|e| BrowserError::Io(e.to_string()))??;
        let cdp = match Cdp::connect(&browser.ws_url).await {
            Ok(cdp) => Arc::new(cdp),
            Err(e) => {
                let _ =
                    tokio::task::spawn_blocking(move || browser.stop(Duration::from_secs(5))).await;
                return Err(e);
            }
        };
        let mut inner = self.inner();
        inner.process = Some(browser);
        inner.cdp = Some(cdp.clone());
        inner.headless = Some(headless);
        Ok(cdp)
    }

    async fn attach(&self, s: &Settings) -> Result<Arc<Cdp>> {
        let port = s.cdp_port;
        let version = tokio::task::spawn_blocking(move || process::cdp_version(port))
            .await
            .map_err(|e| BrowserError::Io(e.to_string()))?;
        let ws_url = version.as_ref().and_then(|v| v.get("webSocketDebuggerUrl")).and_then(Value::as_str).ok_or_else(|| {
            BrowserError::Conflict(format!("attach-only: no browser is listening on CDP port {port}; start one or turn attach-only off"))
        })?;
        let cdp = Arc::new(Cdp::connect(ws_url).await?);
        self.inner().cdp = Some(cdp.clone());
        Ok(cdp)
    }

    /// Stops the browser (an attached one is only disconnected). Returns
    /// whether anything was running.
    pub async fn stop(&self) -> Result<bool> {
        let _stopping = self.lifecycle.lock().await;
        let (process, cdp) = {
            let mut inner = self.inner();
            let taken = (inner.process.take(), inner.cdp.take());
            *inner = Inner::default();
            taken
        };
        let stopped = process.is_some() || cdp.is_some();
        drop(cdp);
        if let Some(p) = process {
            tokio::task::spawn_blocking(move || p.stop(Duration::from_secs(5)))
                .await
                .map_err(|e| BrowserError::Io(e.to_string()))??;
        }
        Ok(stopped)
    }

    /// Stops the browser and moves its profile aside, to
    /// `user-data.reset-<ms>` beside it; the next start makes a fresh,
    /// themed one. Returns whether a profile was moved, and from/to where.
    pub async fn reset_profile(&self) -> Result<(bool, PathBuf, Option<PathBuf>)> {
        if self.settings().connect_only() {
            return Err(BrowserError::invalid(
                "reset-profile only applies to a browser Clawdis launches (this one is attach-only or remote)",
            ));
        }
        self.stop().await?;
        let _resetting = self.lifecycle.lock().await;
        let from = self.user_data_dir();
        if !from.exists() {
            return Ok((false, from, None));
        }
        let to = from.with_file_name(format!("user-data.reset-{}", now_ms()));
        std::fs::rename(&from, &to)?;
        tracing::info!(from = %from.display(), to = %to.display(), "profile reset");
        Ok((true, from, Some(to)))
    }

    /// The connection, starting the browser when it is enabled and down.
    pub async fn ensure(&self) -> Result<Arc<Cdp>> {
        match self.live() {
            Some(cdp) => Ok(cdp),
            None => self.start(None).await,
        }
    }

    /// The tabs of the browser's default context: the pages of browser
    /// sessions (each in a context of its own) are not tabs.
    async fn tab_targets(cdp: &Cdp) -> Result<Vec<Value>> {
        let contexts = cdp.call("Target.getBrowserContexts", json!({})).await?;
        let sessions: Vec<&str> = contexts
            .get("browserContextIds")
            .and_then(Value::as_array)
            .map(|ids| ids.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        Ok(Self::page_targets(cdp)
            .await?
            .into_iter()
            .filter(|t| {
                t.get("browserContextId")
                    .and_then(Value::as_str)
                    .is_none_or(|c| !sessions.contains(&c))
            })
            .collect())
    }

    /// Every page target, sessions' pages included.
    async fn page_targets(cdp: &Cdp) -> Result<Vec<Value>> {
        let result = cdp.call("Target.getTargets", json!({})).await?;
        Ok(result
            .get("targetInfos")
            .and_then(Value::as_array)
            .map(|infos| {
                infos
                    .iter()
                    .filter(|t| t.get("type").and_then(Value::as_str) == Some("page"))
                    .filter(|t| {
                        let url = t.get("url").and_then(Value::as_str).unwrap_or_default();
                        !url.starts_with("devtools://") && !url.starts_with("chrome-extension://")
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The tabs in Chromium's order; `None` when no browser is up.
    pub async fn tabs(&self) -> Result<Option<Vec<Tab>>> {
        let Some(cdp) = self.live() else {
            return Ok(None);
        };
        let infos = Self::tab_targets(&cdp).await?;
        let port = self.status().cdp_port;
        let inner = self.inner();
        let ids: Vec<&str> = infos
            .iter()
            .filter_map(|t| t.get("targetId").and_then(Value::as_str))
            .collect();
        let active = inner.active_among(&ids).map(str::to_string);
        Ok(Some(
            infos
                .iter()
                .map(|t| {
                    let id = t
                        .get("targetId")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    Tab {
                        title: t
                            .get("title")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .into(),
                        url: t
                            .get("url")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .into(),
                        kind: "page".into(),
                        ws_url: format!("ws://127.0.0.1:{port}/devtools/page/{id}"),
                        is_active: active.as_deref() == Some(id.as_str()),
                        last_focused_at: inner.focused.get(&id).copied(),
                        target_id: id,
                    }
                })
                .collect(),
        ))
    }

    async fn tab(&self, target_id: &str) -> Result<Tab> {
        let tabs = self.tabs().await?.unwrap_or_default();
        tabs.into_iter()
            .find(|t| t.target_id == target_id)
            .ok_or_else(|| BrowserError::Missing("tab not found".into()))
    }

    /// Resolves an id or unique prefix among the open tabs.
    pub async fn resolve(&self, wanted: &str) -> Result<String> {
        let cdp = self.connected()?;
        // A session's page answers to its exact id (`sessionId` routes);
        // prefixes are matched among the tabs only.
        let every = Self::page_targets(&cdp).await?;
        let wanted_id = wanted.trim();
        if every
            .iter()
            .any(|t| t.get("targetId").and_then(Value::as_str) == Some(wanted_id))
        {
            return Ok(wanted_id.to_string());
        }
        let infos = Self::tab_targets(&cdp).await?;
        let ids: Vec<&str> = infos
            .iter()
            .filter_map(|t| t.get("targetId").and_then(Value::as_str))
            .collect();
        targets::resolve(wanted, ids.iter().copied()).map(str::to_string)
    }

    fn mark_focused(&self, target_id: &str) {
        let mut inner = self.inner();
        inner.active = Some(target_id.to_string());
        inner.focused.insert(target_id.to_string(), now_ms());
    }

    /// Opens `url` in a new tab (or, with `new_tab == false`, in the active
    /// tab), waits for it to load, and makes it active.
    pub async fn open(&self, url: &str, new_tab: bool) -> Result<Tab> {
        let url = policy::check_url(url, &self.settings())?;
        let cdp = self.ensure().await?;
        let target_id = match (new_tab, self.active_target(&cdp).await?) {
            (false, Some(active)) => active,
            _ => new_blank_tab(&cdp).await?,
        };
        let page = cdp.page(&target_id).await?;
        // Watch before loading, so dialogs and console output of the load count.
        let events = self.events(&target_id, &page).await?;
        self.mark_focused(&target_id);
        navigate_page(&page, &url, NAVIGATE_TIMEOUT, events.dialog_opened()).await?;
        self.tab(&target_id).await
    }

    /// The active tab's id, if it is still open.
    async fn active_target(&self, cdp: &Cdp) -> Result<Option<String>> {
        let infos = Self::tab_targets(cdp).await?;
        let ids: Vec<String> = infos
            .iter()
            .filter_map(|t| {
                t.get("targetId")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect();
        let inner = self.inner();
        Ok(inner.active_among(&ids).map(str::to_string))
    }

    /// Brings a tab to the front and makes it active.
    pub async fn focus(&self, wanted: &str) -> Result<String> {
        let cdp = self.connected()?;
        let id = self.resolve(wanted).await?;
        cdp.call("Target.activateTarget", json!({ "targetId": id }))
            .await?;
        let page = cdp.page(&id).await?;
        page_call(&page, "Page.bringToFront", json!({})).await?;
        self.mark_focused(&id);
        Ok(id)
    }

    /// Closes a tab.
    pub async fn close(&self, wanted: &str, exact: bool) -> Result<String> {
        let cdp = self.connected()?;
        let id = if exact {
            let infos = Self::page_targets(&cdp).await?;
            infos
                .iter()
                .filter_map(|t| t.get("targetId").and_then(Value::as_str))
                .find(|id| *id == wanted)
                .map(str::to_string)
                .ok_or_else(|| BrowserError::Missing("tab not found".into()))?
        } else {
            self.resolve(wanted).await?
        };
        self.not_handed_off(&id)?;
        cdp.call("Target.closeTarget", json!({ "targetId": id }))
            .await?;
        // closeTarget answers before the target is gone; callers list tabs next.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while tokio::time::Instant::now() < deadline
            && Self::page_targets(&cdp)
                .await?
                .iter()
                .any(|t| t.get("targetId").and_then(Value::as_str) == Some(id.as_str()))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut inner = self.inner();
        inner.focused.remove(&id);
        inner.refs.remove(&id);
        inner.events.remove(&id);
        if inner.active.as_deref() == Some(id.as_str()) {
            inner.active = None;
        }
        Ok(id)
    }

    /// The page a call acts on: the named tab, else the active one; with no
    /// tab open, a blank one. Starts the browser if needed.
    pub async fn page_for(&self, target: Option<&str>) -> Result<(String, Page)> {
        let cdp = self.ensure().await?;
        let id = match target.map(str::trim).filter(|t| !t.is_empty()) {
            Some(wanted) => self.resolve(wanted).await?,
            None => match self.active_target(&cdp).await? {
                Some(id) => id,
                None => new_blank_tab(&cdp).await?,
            },
        };
        let page = cdp.page(&id).await?;
        self.events(&id, &page).await?;
        Ok((id, page))
    }

    /// `page_for`, refused with `DIALOG_OPEN` while a JavaScript dialog
    /// blocks the page (every call into it would hang until answered).
    pub async fn page_ready(&self, target: Option<&str>) -> Result<(String, Page)> {
        let (id, page) = self.page_for(target).await?;
        self.no_dialog(&id, &page).await?;
        Ok((id, page))
    }

    /// `page_ready` for a call that changes the page: refused with 409
    /// `handed_off` while a person has it (a hand-off).
    pub async fn page_to_change(&self, target: Option<&str>) -> Result<(String, Page)> {
        let (id, page) = self.page_ready(target).await?;
        self.not_handed_off(&id)?;
        Ok((id, page))
    }

    /// Refuses with `DIALOG_OPEN` while a JavaScript dialog blocks tab `id`.
    pub async fn no_dialog(&self, id: &str, page: &Page) -> Result<()> {
        match self.events(id, page).await?.pending() {
            Some(d) => Err(BrowserError::DialogOpen(format!(
                "a {} dialog (\"{}\", dialogId {}) blocks this tab; answer it with POST /hooks/dialog {{accept}}",
                d.kind, d.message, d.dialog_id
            ))),
            None => Ok(()),
        }
    }

    /// The dialog and file-chooser state of a tab, watching it from the
    /// first time it is used.
    pub async fn events(&self, target_id: &str, page: &Page) -> Result<Arc<TabEvents>> {
        if let Some(events) = self.inner().events.get(target_id) {
            return Ok(events.clone());
        }
        let fresh = TabEvents::watch(page.clone()).await?;
        let mut inner = self.inner();
        Ok(inner
            .events
            .entry(target_id.to_string())
            .or_insert(fresh)
            .clone())
    }

    /// A tab's URL as the browser reports it; unlike evaluating
    /// `location.href`, this answers while a dialog blocks the page.
    pub async fn target_url(&self, target_id: &str) -> Result<String> {
        let info = self
            .connected()?
            .call("Target.getTargetInfo", json!({ "targetId": target_id }))
            .await?;
        Ok(info
            .pointer("/targetInfo/url")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string())
    }

    /// Navigates a tab and waits for its load event.
    pub async fn navigate(
        &self,
        target: Option<&str>,
        url: &str,
        timeout: Duration,
    ) -> Result<(String, String)> {
        let url = policy::check_url(url, &self.settings())?;
        let (id, page) = self.page_for(target).await?;
        self.not_handed_off(&id)?;
        let events = self.events(&id, &page).await?;
        navigate_page(&page, &url, timeout, events.dialog_opened()).await?;
        let current = self.target_url(&id).await.unwrap_or(url);
        Ok((id, current))
    }

    /// Watches a tab's live picture, sharing the screencast another viewer
    /// of the tab already runs.
    pub async fn screencast(
        &self,
        target_id: &str,
        page: &Page,
        options: crate::screencast::Options,
    ) -> Result<crate::screencast::Viewer> {
        self.screencasts.watch(target_id, page, options).await
    }

    /// Hands tab `target_id` to a person until the guard is dropped; 409
    /// `handed_off` when a person has it already.
    pub fn hand_off(&self, target_id: &str) -> Result<HandedOff> {
        let mut tabs = self.handed_off.lock().unwrap_or_else(|e| e.into_inner());
        if !tabs.insert(target_id.to_string()) {
            return Err(handed_off());
        }
        Ok(HandedOff {
            target: target_id.to_string(),
            tabs: self.handed_off.clone(),
        })
    }

    /// Refuses with 409 `handed_off` while a person has tab `target_id`.
    pub fn not_handed_off(&self, target_id: &str) -> Result<()> {
        let taken = self
            .handed_off
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(target_id);
        if taken { Err(handed_off()) } else { Ok(()) }
    }

    /// Forgets what was kept of a tab (refs, event watcher), as when it closed.
    pub fn forget_tab(&self, target_id: &str) {
        let mut inner = self.inner();
        inner.refs.remove(target_id);
        inner.events.remove(target_id);
        inner.focused.remove(target_id);
    }

    /// Runs `f` on the ref table of a tab.
    pub fn with_refs<T>(&self, target_id: &str, f: impl FnOnce(&mut RefTable) -> T) -> T {
        let mut inner = self.inner();
        f(inner.refs.entry(target_id.to_string()).or_default())
    }
}

fn handed_off() -> BrowserError {
    BrowserError::HandedOff(
        "a person has this page (a hand-off): it can be read, not acted on, until they hand it back"
            .into(),
    )
}

/// Creates an `about:blank` tab and returns its target id.
async fn new_blank_tab(cdp: &Cdp) -> Result<String> {
    let created = cdp
        .call("Target.createTarget", json!({ "url": "about:blank" }))
        .await?;
    created
        .get("targetId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| BrowserError::Cdp("Target.createTarget returned no targetId".into()))
}

/// `Page.navigate`, then waits (up to `timeout`) for the load event of the
/// new document. A page that never finishes loading, or that opens a
/// dialog while loading (`dialog` changes), is left as it is.
async fn navigate_page(
    page: &Page,
    url: &str,
    timeout: Duration,
    mut dialog: tokio::sync::watch::Receiver<u64>,
) -> Result<()> {
    let mut loads = page_events::<EventLoadEventFired>(page).await?;
    let nav = tokio::select! {
        nav = page_call(page, "Page.navigate", json!({ "url": url })) => nav?,
        _ = dialog.changed() => {
            tracing::info!(url, "a dialog opened while the page loaded");
            return Ok(());
        }
    };
    if let Some(error) = nav
        .get("errorText")
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())
    {
        return Err(BrowserError::Unreachable(format!(
            "navigation to {url} failed: {error}"
        )));
    }
    if nav.get("loaderId").is_none() {
        return Ok(());
    }
    tokio::select! {
        loaded = tokio::time::timeout(timeout, loads.next()) => {
            if loaded.is_err() {
                tracing::info!(url, "page still loading after {} ms", timeout.as_millis());
            }
        }
        _ = dialog.changed() => tracing::info!(url, "a dialog opened while the page loaded"),
    }
    Ok(())
}

impl Manager {
    /// The backend node id of the element `at` names: a ref from a snapshot
    /// of the current document, or a selector waited for until `timeout`.
    pub async fn find(
        &self,
        target_id: &str,
        page: &Page,
        at: &Locator,
        timeout: Duration,
    ) -> Result<i64> {
        match at {
            Locator::Ref(r) => self.element(target_id, page, r).await,
            Locator::Selector(s) => element::wait_for_selector(page, s, timeout).await,
        }
    }

    /// The DOM node a snapshot ref names on this page's current document.
    pub async fn element(&self, target_id: &str, page: &Page, reference: &str) -> Result<i64> {
        self.element_in(target_id, page, page.into(), reference)
            .await
    }

    /// [`Manager::element`] for an element of the out-of-process frame
    /// `dom` is the session of (or of the page, for `Dom::Page`).
    pub async fn element_in(
        &self,
        target_id: &str,
        page: &Page,
        dom: crate::cdp::Dom<'_>,
        reference: &str,
    ) -> Result<i64> {
        let document = crate::snapshot::document_id(page).await?;
        let entry = self.with_refs(target_id, |t| t.lookup(reference, &document))?;
        if let Some(id) = entry.backend_node_id {
            return Ok(id);
        }
        let Some(page_ref) = &entry.page_ref else {
            return Err(BrowserError::invalid_code(
                "ACT_INVALID_REQUEST",
                format!("ref {reference} ({}) has no DOM element", entry.role),
            ));
        };
        let events = self.events(target_id, page).await?;
        crate::snapshot::resolve(dom, &events, page_ref)
            .await?
            .and_then(|node| node.get("backendNodeId").and_then(Value::as_i64))
            .ok_or_else(|| {
                BrowserError::StaleRef(format!(
                    "ref {} ({} \"{}\") is no longer in the page. Re-snapshot and use a ref from the new snapshot.",
                    reference.trim(),
                    entry.role,
                    entry.name
                ))
            })
    }
}
