//! Browser sessions: each an isolated browser context of the clawd browser
//! (own cookies and storage) with one page, optionally bound to a named
//! persistent profile. A pool of at most `maxSessions`. Each session's page
//! state (URL, cookies, localStorage) is snapshotted into SQLite after every
//! action that can change it, so a session comes back, restored, after
//! Chromium or the backend is killed. Health probes every 30 s; three
//! failures in a row recreate the session (a circuit breaker), and the next
//! caller is told.

mod profiles;
mod seal;
mod state;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use clawdis_store::{NewAction, SessionRecord, Store};
use serde::Serialize;
use serde_json::{Value, json};

use crate::action::{self, Outcome, Request, Tab};
use crate::cdp::Cdp;
use crate::consent::Consent;
use crate::events::DialogPolicy;
use crate::manager::Manager;
use crate::{BrowserError, Result};

pub use profiles::{ProfileInfo, check_profile_name};
pub use seal::{KEY_SECRET, Sealer};
pub use state::{Item, OriginStorage, StorageState};

/// How often sessions are probed.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(30);
/// Failed probes in a row that recreate a session.
pub const PROBE_FAILURES: u32 = 3;
/// How many sessions' artifact directories are kept.
pub const KEEP_ARTIFACTS: usize = 20;

/// What `POST /sessions` asks for.
#[derive(Clone, Debug, Default)]
pub struct NewSession {
    /// A named persistent profile.
    pub profile: Option<String>,
    /// A page to open.
    pub url: Option<String>,
    /// How dialogs are answered.
    pub dialogs: DialogPolicy,
}

/// A session as clients see it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// Its id.
    pub session_id: String,
    /// The named profile it uses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Its dialog policy.
    pub dialogs: DialogPolicy,
    /// Its page's URL.
    pub url: String,
    /// Its page's title (live sessions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `document.readyState` (live sessions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_state: Option<String>,
    /// Whether the page is loading (live sessions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_loading: Option<bool>,
    /// Whether it has a live context that answers.
    pub healthy: bool,
    /// Its page's target id (live sessions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_id: Option<String>,
    /// When it was created.
    pub created_at: String,
    /// When its state was last snapshotted.
    pub saved_at: String,
    /// What happened to it since the last call (recreated after a crash).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// The dialog that waits for an answer (`dialogs: ask`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<crate::events::DialogInfo>,
    /// The action running in it now, if one is (read without waiting
    /// for it to end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy: Option<&'static str>,
}

/// A session an action is running in: enough to describe it without
/// waiting for the action to end.
#[derive(Clone)]
struct Running {
    action: &'static str,
    info: SessionInfo,
    page: Page,
}

/// A session looked at without waiting: free, or running an action.
enum Glance<'a> {
    Free(tokio::sync::MutexGuard<'a, Slot>),
    Busy(Box<Running>),
}

/// Marks a session as running an action until dropped.
struct RunningGuard<'a> {
    running: &'a Mutex<HashMap<String, Running>>,
    id: String,
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

/// A session's live browser side.
struct Live {
    cdp: Arc<Cdp>,
    context: String,
    target: String,
    page: Page,
    consent: Arc<Consent>,
}

/// One session.
struct Slot {
    record: SessionRecord,
    policy: DialogPolicy,
    state: StorageState,
    live: Option<Live>,
    failures: u32,
    notices: Vec<String>,
    /// What the backend's own actions (the first page, a restore) handled,
    /// reported with the next action.
    carried: Vec<action::Handled>,
}

/// The sessions of one backend.
pub struct Sessions {
    manager: Arc<Manager>,
    store: Arc<Store>,
    slots: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Slot>>>>,
    /// Serializes creating sessions (the pool's limit).
    creating: tokio::sync::Mutex<()>,
    sealer: Sealer,
    /// The sessions running an action now.
    running: Mutex<HashMap<String, Running>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

/// What the store and the slot know of a session, without asking its page.
fn recorded(slot: &Slot) -> SessionInfo {
    SessionInfo {
        session_id: slot.record.id.clone(),
        profile: slot.record.profile.clone(),
        dialogs: slot.policy,
        url: slot.record.url.clone(),
        title: None,
        ready_state: None,
        is_loading: None,
        healthy: false,
        target_id: slot.live.as_ref().map(|l| l.target.clone()),
        created_at: slot.record.created_at.clone(),
        saved_at: slot.record.saved_at.clone(),
        notices: slot.notices.clone(),
        dialog: None,
        busy: None,
    }
}

fn missing(id: &str) -> BrowserError {
    BrowserError::Missing(format!("no session {id}"))
}

impl Sessions {
    /// The sessions recorded in `store`; they come alive when first used.
    pub async fn open(manager: Arc<Manager>, store: Arc<Store>) -> Result<Arc<Sessions>> {
        let sealer = Sealer::for_home(manager.home())?;
        let records = store.sessions().await.map_err(store_error)?;
        let slots = records
            .into_iter()
            .map(|record| {
                let slot = Slot {
                    policy: DialogPolicy::parse(&record.dialogs).unwrap_or_default(),
                    state: sealer.open(&record.state),
                    record,
                    live: None,
                    failures: 0,
                    notices: Vec::new(),
                    carried: Vec::new(),
                };
                (
                    slot.record.id.clone(),
                    Arc::new(tokio::sync::Mutex::new(slot)),
                )
            })
            .collect();
        Ok(Arc::new(Sessions {
            manager,
            store,
            slots: Mutex::new(slots),
            creating: tokio::sync::Mutex::new(()),
            sealer,
            running: Mutex::default(),
        }))
    }

    fn slot(&self, id: &str) -> Result<Arc<tokio::sync::Mutex<Slot>>> {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| missing(id))
    }

    fn all_slots(&self) -> Vec<(String, Arc<tokio::sync::Mutex<Slot>>)> {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(id, slot)| (id.clone(), slot.clone()))
            .collect()
    }

    /// Where a session's artifacts go.
    pub fn artifacts(&self, id: &str) -> PathBuf {
        self.manager
            .home()
            .join("browser")
            .join("artifacts")
            .join(id)
    }

    /// Creates a session: a fresh context (with the profile's saved state),
    /// optionally loading `url`.
    pub async fn create(&self, new: NewSession) -> Result<SessionInfo> {
        if let Some(name) = &new.profile {
            check_profile_name(name)?;
        }
        let _creating = self.creating.lock().await;
        let max = self.manager.settings().max_sessions;
        let count = self.slots.lock().unwrap_or_else(|e| e.into_inner()).len();
        if count >= max {
            return Err(BrowserError::Conflict(format!(
                "the session pool is full ({count} of maxSessions {max}); delete a session first"
            )));
        }
        if let Some(name) = &new.profile
            && self.profile_in_use(name).await
        {
            return Err(BrowserError::Conflict(format!(
                "profile {name} is in use by another session"
            )));
        }
        let id = format!("s-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let state = match &new.profile {
            Some(name) => profiles::load(self.manager.home(), name, &self.sealer)?,
            None => StorageState::default(),
        };
        let now = clawdis_store::now_iso();
        let mut slot = Slot {
            record: SessionRecord {
                id: id.clone(),
                profile: new.profile.clone(),
                dialogs: policy_name(new.dialogs).into(),
                context: None,
                url: "about:blank".into(),
                state: self.sealer.seal(&state),
                created_at: now.clone(),
                saved_at: now,
            },
            policy: new.dialogs,
            state,
            live: None,
            failures: 0,
            notices: Vec::new(),
            carried: Vec::new(),
        };
        self.store
            .insert_session(&slot.record)
            .await
            .map_err(store_error)?;
        self.prune_artifacts();
        let made = async {
            self.revive(&mut slot, false).await?;
            slot.notices.clear();
            if let Some(url) = &new.url {
                let request = action::parse("navigate", &json!({ "url": url }))?;
                let outcome = self
                    .run_in(&mut slot, &request, &json!({ "url": url }))
                    .await?;
                if let Some(e) = outcome.error {
                    return Err(BrowserError::Conflict(format!(
                        "opening {url}: {}",
                        e.message
                    )));
                }
                slot.carried = outcome.handled;
            }
            Ok(())
        }
        .await;
        if let Err(e) = made {
            self.discard(&mut slot).await;
            let _ = self.store.delete_session(&id).await;
            return Err(e);
        }
        let info = self.info(&mut slot).await;
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, Arc::new(tokio::sync::Mutex::new(slot)));
        self.manager.metrics().session("created");
        tracing::info!(session = %info.session_id, profile = ?info.profile, "session created");
        Ok(info)
    }

    /// Every session.
    pub async fn list(&self) -> Vec<SessionInfo> {
        let mut out = Vec::new();
        for (id, slot) in self.all_slots() {
            out.push(self.describe(&id, &slot).await);
        }
        out.sort_by(|a, b| (&a.created_at, &a.session_id).cmp(&(&b.created_at, &b.session_id)));
        out
    }

    /// Whether session `id` exists (known here; nothing is read).
    pub fn exists(&self, id: &str) -> bool {
        self.slot(id).is_ok()
    }

    /// One session, with its page's state.
    pub async fn get(&self, id: &str) -> Result<SessionInfo> {
        let slot = self.slot(id)?;
        Ok(self.describe(id, &slot).await)
    }

    /// Whether a session uses profile `name` (a session running an action
    /// is not waited for: its profile is known from when it started).
    async fn profile_in_use(&self, name: &str) -> bool {
        for (id, slot) in self.all_slots() {
            let profile = match self.glance(&id, &slot).await {
                Glance::Free(slot) => slot.record.profile.clone(),
                Glance::Busy(running) => running.info.profile,
            };
            if profile.as_deref() == Some(name) {
                return true;
            }
        }
        false
    }

    /// A session's state; one running an action is described from its
    /// page as it is now, without waiting for the action to end.
    async fn describe(&self, id: &str, slot: &tokio::sync::Mutex<Slot>) -> SessionInfo {
        match self.glance(id, slot).await {
            Glance::Free(mut slot) => self.info(&mut slot).await,
            Glance::Busy(running) => {
                let Running {
                    action,
                    mut info,
                    page,
                } = *running;
                info.busy = Some(action);
                info.healthy = self.probe(&page, &mut info).await;
                info
            }
        }
    }

    /// The session's slot when nothing holds it, or what is known of the
    /// action running in it; never waits for an action to end.
    async fn glance<'s>(&self, id: &str, slot: &'s tokio::sync::Mutex<Slot>) -> Glance<'s> {
        loop {
            if let Ok(slot) = slot.try_lock() {
                return Glance::Free(slot);
            }
            let running = self
                .running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(id)
                .cloned();
            if let Some(running) = running {
                return Glance::Busy(Box::new(running));
            }
            // Held a moment (an action starting, a snapshot): look again.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Closes and forgets a session (a profile keeps its state).
    pub async fn delete(&self, id: &str) -> Result<()> {
        let slot = self.slot(id)?;
        let mut slot = slot.lock().await;
        self.not_handed_off(&slot)?;
        if slot.live.is_some() && slot.record.profile.is_some() {
            let _ = self.snapshot(&mut slot).await;
        }
        self.discard(&mut slot).await;
        self.store.delete_session(id).await.map_err(store_error)?;
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        self.manager.metrics().session("deleted");
        tracing::info!(session = id, "session deleted");
        Ok(())
    }

    /// Recreates a session from its last snapshot.
    pub async fn restore(&self, id: &str) -> Result<SessionInfo> {
        let slot = self.slot(id)?;
        let mut slot = slot.lock().await;
        self.not_handed_off(&slot)?;
        self.discard(&mut slot).await;
        self.revive(&mut slot, true).await?;
        self.manager.metrics().session("restored");
        Ok(self.info(&mut slot).await)
    }

    /// The target id of the session's page (made live if it was not), for
    /// the tab routes that take a `sessionId`.
    pub async fn target_of(&self, id: &str) -> Result<String> {
        Ok(self.page_of(id).await?.0)
    }

    /// The session's page (made live if it was not) and its target id.
    pub async fn page_of(&self, id: &str) -> Result<(String, chromiumoxide::Page)> {
        let slot = self.slot(id)?;
        let mut slot = slot.lock().await;
        self.ensure(&mut slot).await?;
        slot.live
            .as_ref()
            .map(|l| (l.target.clone(), l.page.clone()))
            .ok_or_else(|| missing(id))
    }

    /// Runs an action in a session, logs it, and snapshots the session
    /// when the action can have changed it.
    /// Refuses with `handed_off` while a person has the session's page.
    fn not_handed_off(&self, slot: &Slot) -> Result<()> {
        match &slot.live {
            Some(live) => self.manager.not_handed_off(&live.target),
            None => Ok(()),
        }
    }

    /// While a person has the session's page (a hand-off), only actions
    /// that read it run; the others are refused with `handed_off`.
    pub async fn act(&self, id: &str, request: &Request, body: &Value) -> Result<Outcome> {
        let slot = self.slot(id)?;
        let mut slot = slot.lock().await;
        if !request.verb.reads_only() {
            self.not_handed_off(&slot)?;
        }
        self.run_in(&mut slot, request, body).await
    }

    /// Snapshots the session now (its URL, cookies and storage), as after
    /// an action that changed it: a person's work in it (a login) is kept.
    pub async fn save(&self, id: &str) -> Result<()> {
        let slot = self.slot(id)?;
        let mut slot = slot.lock().await;
        self.snapshot(&mut slot).await
    }

    /// Records `entry` in its session's log, as an action run in it is
    /// (a hand-off, which the person did, not the agent).
    pub async fn log(&self, entry: &NewAction<'_>) -> Result<()> {
        self.store
            .log_action(entry)
            .await
            .map(drop)
            .map_err(store_error)
    }

    async fn run_in(&self, slot: &mut Slot, request: &Request, body: &Value) -> Result<Outcome> {
        self.ensure(slot).await?;
        let id = slot.record.id.clone();
        let mut known = recorded(slot);
        known.notices.clear();
        let live = slot.live.as_ref().ok_or_else(|| missing(&id))?;
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                id.clone(),
                Running {
                    action: request.verb.name(),
                    info: known,
                    page: live.page.clone(),
                },
            );
        let _running = RunningGuard {
            running: &self.running,
            id: id.clone(),
        };
        let events = self.manager.events(&live.target, &live.page).await?;
        let tab = Tab {
            manager: &self.manager,
            target_id: &live.target,
            page: &live.page,
            dom: crate::cdp::Dom::Page(&live.page),
            events: &events,
            artifacts: self.artifacts(&id),
            session: Some(&id),
            consent: Some(&live.consent),
        };
        let mut outcome = action::run(&tab, request).await?;
        if outcome
            .error
            .as_ref()
            .is_some_and(|e| e.code == action::Code::Crashed)
        {
            slot.failures = PROBE_FAILURES;
        }
        outcome.notices = std::mem::take(&mut slot.notices);
        if !slot.carried.is_empty() {
            let mut handled = std::mem::take(&mut slot.carried);
            handled.append(&mut outcome.handled);
            outcome.handled = handled;
        }
        if request.verb.changes_page()
            && slot.failures == 0
            && let Err(e) = self.snapshot(slot).await
        {
            tracing::warn!(session = %id, error = %e, "snapshot after an action");
        }
        let mut logged_result = serde_json::to_value(&outcome).unwrap_or_default();
        redact(&mut logged_result, &["/data/value", "/data/fields/*/value"]);
        let result = logged_result.to_string();
        let mut input = body.clone();
        redact(&mut input, &["/text", "/fields/*/value"]);
        let logged = self
            .store
            .log_action(&NewAction {
                session: &id,
                action: request.verb.name(),
                target: request.verb.aim().map(|a| a.to_string()),
                input: Some(input.to_string()),
                ok: outcome.ok,
                code: outcome.error.as_ref().map(|e| e.code.as_str()),
                result,
                duration_ms: outcome.duration_ms,
                retries: outcome.retries,
                screenshot: outcome.screenshot.clone(),
            })
            .await;
        if let Err(e) = logged {
            tracing::warn!(session = %id, error = %e, "logging an action");
        }
        Ok(outcome)
    }

    /// Makes sure the session has a live context in the running browser,
    /// recreating it (and telling the next caller) when it has none.
    async fn ensure(&self, slot: &mut Slot) -> Result<()> {
        if slot.failures >= PROBE_FAILURES {
            self.discard(slot).await;
            slot.notices.push(
                "the session stopped answering; it was recreated from its last snapshot".into(),
            );
            slot.failures = 0;
        }
        let cdp = self.manager.ensure().await?;
        if let Some(live) = &slot.live {
            if Arc::ptr_eq(&live.cdp, &cdp) && target_exists(&cdp, &live.target).await {
                return Ok(());
            }
            slot.live = None;
            slot.notices.push("the browser or the session's page went away; the session was recreated from its last snapshot".into());
        }
        let saved = slot.record.saved_at.clone();
        if !self.revive(slot, true).await? {
            self.manager.metrics().session("recreated");
            slot.notices.push(format!(
                "the session was restored from its snapshot of {saved} (its browser context was gone)"
            ));
        }
        Ok(())
    }

    /// Gives the session a live context: the one it had, when the running
    /// browser still has it (true); else a new one with its snapshot
    /// restored (false).
    async fn revive(&self, slot: &mut Slot, restore: bool) -> Result<bool> {
        let cdp = self.manager.ensure().await?;
        if let Some((context, target)) = adoptable(&cdp, slot.record.context.as_deref()).await {
            let page = cdp.page(&target).await?;
            let consent = self
                .watch(&slot.record.id, &target, &page, slot.policy)
                .await?;
            slot.live = Some(Live {
                cdp,
                context,
                target,
                page,
                consent,
            });
            return Ok(true);
        }
        let created = cdp
            .call(
                "Target.createBrowserContext",
                json!({ "disposeOnDetach": false }),
            )
            .await?;
        let context = created
            .get("browserContextId")
            .and_then(Value::as_str)
            .ok_or_else(|| BrowserError::Cdp("Target.createBrowserContext returned no id".into()))?
            .to_string();
        let made = async {
            let target = cdp
                .call(
                    "Target.createTarget",
                    json!({ "url": "about:blank", "browserContextId": context }),
                )
                .await?
                .get("targetId")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| BrowserError::Cdp("Target.createTarget returned no id".into()))?;
            let page = cdp.page(&target).await?;
            let consent = self
                .watch(&slot.record.id, &target, &page, slot.policy)
                .await?;
            state::restore(&cdp, &context, &page, &slot.state).await?;
            Ok::<_, BrowserError>((target, page, consent))
        }
        .await;
        let (target, page, consent) = match made {
            Ok(made) => made,
            Err(e) => {
                let _ = cdp
                    .call(
                        "Target.disposeBrowserContext",
                        json!({ "browserContextId": context }),
                    )
                    .await;
                return Err(e);
            }
        };
        self.store
            .set_session_context(&slot.record.id, &context)
            .await
            .map_err(store_error)?;
        slot.record.context = Some(context.clone());
        slot.live = Some(Live {
            cdp,
            context,
            target,
            page,
            consent,
        });
        if restore && slot.record.url != "about:blank" {
            let url = slot.record.url.clone();
            let request = action::parse("navigate", &json!({ "url": url }))?;
            let live = slot.live.as_ref().ok_or_else(|| missing(&slot.record.id))?;
            let events = self.manager.events(&live.target, &live.page).await?;
            let tab = Tab {
                manager: &self.manager,
                target_id: &live.target,
                page: &live.page,
                dom: crate::cdp::Dom::Page(&live.page),
                events: &events,
                artifacts: self.artifacts(&slot.record.id),
                session: Some(&slot.record.id),
                consent: Some(&live.consent),
            };
            let outcome = action::run(&tab, &request).await?;
            if let Some(e) = outcome.error {
                tracing::warn!(session = %slot.record.id, error = %e.message, "restoring the session's page");
            }
            slot.carried.extend(outcome.handled);
        }
        Ok(false)
    }

    /// Watches the session's page: its dialogs answered by the policy, its
    /// cookie banners declined. A banner answered while no action runs is
    /// logged at once (action `watchdog`), and the next action's result
    /// reports it too.
    async fn watch(
        &self,
        id: &str,
        target: &str,
        page: &Page,
        policy: DialogPolicy,
    ) -> Result<Arc<Consent>> {
        self.manager.events(target, page).await?.set_policy(policy);
        let consent = Consent::install(page).await?;
        let mut changes = consent.changes();
        let watched = Arc::downgrade(&consent);
        let store = self.store.clone();
        let id = id.to_string();
        tokio::spawn(async move {
            // Ends with the page's watcher (its sender dropped).
            while changes.changed().await.is_ok() {
                let Some(handled) = watched.upgrade().map(|c| c.between_actions()) else {
                    break;
                };
                if handled.is_empty() {
                    continue;
                }
                tracing::info!(session = %id, count = handled.len(), "handled between actions");
                let outcome = Outcome {
                    ok: true,
                    data: None,
                    error: None,
                    retries: 0,
                    duration_ms: 0,
                    screenshot: None,
                    handled,
                    notices: Vec::new(),
                };
                let logged = store
                    .log_action(&NewAction {
                        session: &id,
                        action: "watchdog",
                        target: None,
                        input: None,
                        ok: true,
                        code: None,
                        result: serde_json::to_value(&outcome)
                            .unwrap_or_default()
                            .to_string(),
                        duration_ms: 0,
                        retries: 0,
                        screenshot: None,
                    })
                    .await;
                if let Err(e) = logged {
                    tracing::warn!(session = %id, error = %e, "logging what was handled between actions");
                }
            }
        });
        Ok(consent)
    }

    /// Closes the session's context, if it has one.
    async fn discard(&self, slot: &mut Slot) {
        if let Some(live) = slot.live.take() {
            self.manager.forget_tab(&live.target);
            if live.cdp.is_alive() {
                let _ = live
                    .cdp
                    .call(
                        "Target.disposeBrowserContext",
                        json!({ "browserContextId": live.context }),
                    )
                    .await;
            }
        } else if let (Some(context), Ok(cdp)) = (&slot.record.context, self.manager.connected()) {
            // A context an earlier backend made in this browser.
            let _ = cdp
                .call(
                    "Target.disposeBrowserContext",
                    json!({ "browserContextId": context }),
                )
                .await;
        }
    }

    /// Saves the session's URL, cookies and localStorage (and its
    /// profile's state file).
    async fn snapshot(&self, slot: &mut Slot) -> Result<()> {
        let Some(live) = &slot.live else {
            return Ok(());
        };
        let state = state::capture(&live.cdp, &live.context, &live.page, &slot.state).await?;
        let url = self.manager.target_url(&live.target).await?;
        let sealed = self.sealer.seal(&state);
        self.store
            .save_session(&slot.record.id, &live.context, &url, &sealed)
            .await
            .map_err(store_error)?;
        if let Some(profile) = &slot.record.profile {
            profiles::save(self.manager.home(), profile, &state, &self.sealer)?;
        }
        slot.record.url = url;
        slot.record.state = sealed;
        slot.record.saved_at = clawdis_store::now_iso();
        slot.state = state;
        Ok(())
    }

    async fn info(&self, slot: &mut Slot) -> SessionInfo {
        let mut info = recorded(slot);
        let Some(live) = &slot.live else { return info };
        if !live.cdp.is_alive() {
            info.target_id = None;
            return info;
        }
        let answered = self.probe(&live.page, &mut info).await;
        info.healthy = answered && slot.failures == 0;
        info
    }

    /// Reads the page's URL, title and ready state into `info` (or the
    /// dialog that holds it: a page waiting for someone is not broken);
    /// whether it answered.
    async fn probe(&self, page: &Page, info: &mut SessionInfo) -> bool {
        let Some(target) = info.target_id.clone() else {
            return false;
        };
        let pending = match self.manager.events(&target, page).await {
            Ok(events) => events.pending(),
            Err(_) => None,
        };
        if let Some(dialog) = pending {
            info.dialog = Some(dialog);
            return true;
        }
        let probe = crate::cdp::page_call_with(
            page,
            "Runtime.evaluate",
            json!({ "expression": "({ url: location.href, title: document.title, readyState: document.readyState })", "returnByValue": true }),
            Duration::from_secs(1),
        )
        .await;
        let Ok(v) = probe else { return false };
        let v = v.pointer("/result/value").cloned().unwrap_or_default();
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        info.url = text("url").unwrap_or(std::mem::take(&mut info.url));
        info.title = text("title");
        info.is_loading = text("readyState").map(|r| r != "complete");
        info.ready_state = text("readyState");
        true
    }

    /// Probes every live session every `interval`; three failures in a row
    /// mark a session for recreation at its next use (or at once).
    pub async fn run(self: Arc<Self>, interval: Duration) {
        loop {
            tokio::time::sleep(interval).await;
            for (_, slot) in self.all_slots() {
                // A session running an action is answering it: no probe.
                let Ok(mut slot) = slot.try_lock() else {
                    continue;
                };
                let Some(live) = &slot.live else { continue };
                let waiting = match self.manager.events(&live.target, &live.page).await {
                    Ok(events) => events.pending().is_some(),
                    Err(_) => false,
                };
                // A dialog waiting for a person is no failure.
                let ok = waiting
                    || live.cdp.is_alive()
                        && crate::cdp::page_call_with(
                            &live.page,
                            "Runtime.evaluate",
                            json!({ "expression": "1" }),
                            Duration::from_secs(1),
                        )
                        .await
                        .is_ok();
                if ok {
                    slot.failures = 0;
                    continue;
                }
                slot.failures += 1;
                tracing::warn!(session = %slot.record.id, failures = slot.failures, "session probe failed");
                if slot.failures >= PROBE_FAILURES
                    && let Err(e) = self.ensure(&mut slot).await
                {
                    tracing::warn!(session = %slot.record.id, error = %e, "recreating a session");
                }
            }
        }
    }

    /// Keeps the artifact directories of the newest sessions only.
    fn prune_artifacts(&self) {
        let root = self.manager.home().join("browser").join("artifacts");
        let Ok(entries) = std::fs::read_dir(&root) else {
            return;
        };
        let mut dirs: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        dirs.sort();
        let live: Vec<String> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        let excess = dirs.len().saturating_sub(KEEP_ARTIFACTS);
        for (_, dir) in dirs.into_iter().take(excess) {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !live.contains(&name) {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }

    /// The named profiles.
    pub fn profiles(&self) -> Result<Vec<ProfileInfo>> {
        profiles::list(self.manager.home(), &self.sealer)
    }

    /// Creates an empty named profile.
    pub fn create_profile(&self, name: &str) -> Result<ProfileInfo> {
        profiles::create(self.manager.home(), name, &self.sealer)
    }

    /// Deletes a named profile no session uses.
    pub async fn delete_profile(&self, name: &str) -> Result<()> {
        check_profile_name(name)?;
        if self.profile_in_use(name).await {
            return Err(BrowserError::Conflict(format!(
                "profile {name} is in use by a session"
            )));
        }
        profiles::delete(self.manager.home(), name)
    }

    /// A profile's saved state (`storageState` JSON).
    pub fn export_profile(&self, name: &str) -> Result<StorageState> {
        profiles::export(self.manager.home(), name, &self.sealer)
    }

    /// A session's last `limit` recorded actions, oldest first.
    pub async fn last_actions(
        &self,
        id: &str,
        limit: u32,
    ) -> Result<Vec<clawdis_store::ActionRecord>> {
        self.slot(id)?;
        self.store
            .last_actions(id, limit)
            .await
            .map_err(store_error)
    }

    /// A session's recorded actions after `after`.
    pub async fn trace(
        &self,
        id: &str,
        after: i64,
        limit: u32,
    ) -> Result<Vec<clawdis_store::ActionRecord>> {
        self.slot(id)?;
        self.store
            .actions_of(id, after, limit)
            .await
            .map_err(store_error)
    }
}

/// Replaces what was typed (which may be a password) with its length, at
/// each pointer of `paths` (`*`: every item of a list), so the action log
/// keeps no typed text.
fn redact(value: &mut Value, paths: &[&str]) {
    fn walk(v: &mut Value, parts: &[&str]) {
        match parts {
            [] => {
                let n = match &*v {
                    Value::String(s) => s.chars().count(),
                    Value::Null | Value::Bool(_) => return,
                    other => other.to_string().len(),
                };
                *v = json!(format!("<{n} characters>"));
            }
            ["*", rest @ ..] => {
                if let Value::Array(items) = v {
                    for item in items {
                        walk(item, rest);
                    }
                }
            }
            [key, rest @ ..] => {
                if let Some(next) = v.get_mut(*key) {
                    walk(next, rest);
                }
            }
        }
    }
    for path in paths {
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        walk(value, &parts);
    }
}

fn policy_name(p: DialogPolicy) -> &'static str {
    match p {
        DialogPolicy::Default => "default",
        DialogPolicy::Accept => "accept",
        DialogPolicy::Dismiss => "dismiss",
        DialogPolicy::Ask => "ask",
    }
}

fn store_error(e: clawdis_store::StoreError) -> BrowserError {
    BrowserError::Io(format!("the session store: {e}"))
}

async fn target_exists(cdp: &Cdp, target: &str) -> bool {
    cdp.call("Target.getTargetInfo", json!({ "targetId": target }))
        .await
        .is_ok()
}

/// The context (and its page) a session had, when this browser still has
/// both.
async fn adoptable(cdp: &Cdp, context: Option<&str>) -> Option<(String, String)> {
    let context = context?;
    let contexts = cdp
        .call("Target.getBrowserContexts", json!({}))
        .await
        .ok()?;
    let known = contexts
        .get("browserContextIds")
        .and_then(Value::as_array)?
        .iter()
        .any(|c| c.as_str() == Some(context));
    if !known {
        return None;
    }
    let targets = cdp.call("Target.getTargets", json!({})).await.ok()?;
    let target = targets
        .get("targetInfos")
        .and_then(Value::as_array)?
        .iter()
        .find(|t| {
            t.get("browserContextId").and_then(Value::as_str) == Some(context)
                && t.get("type").and_then(Value::as_str) == Some("page")
        })?
        .get("targetId")?
        .as_str()?
        .to_string();
    Some((context.to_string(), target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_is_not_logged() {
        let mut body = json!({ "selector": "#pw", "text": "hunter2", "fields": [{ "selector": "#a", "value": "x1" }, { "selector": "#b", "value": true }] });
        redact(&mut body, &["/text", "/fields/*/value"]);
        assert_eq!(
            body,
            json!({ "selector": "#pw", "text": "<7 characters>", "fields": [{ "selector": "#a", "value": "<2 characters>" }, { "selector": "#b", "value": true }] })
        );
    }
}
