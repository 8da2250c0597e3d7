//! Native notifications for paused runs, with Approve and Deny actions
//! (action keys `approve` and `deny`; a browser hand-off's are Take over,
//! `takeover`, and Decline; the body opens the Approvals window).
//! Follows the approvals bus, so runs paused by any process sharing the
//! home are announced.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use clawdis_approvals::{Approval, Approvals, Channel, Choice, Event, Gate, RunStatus};
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tokio::sync::broadcast::error::RecvError;

use clawdis_server::requests::Asked;

use super::{decider, tray, windows};

/// Follows the bus until the app quits: notifies each pause, withdraws the
/// notification once the run is decided anywhere, refreshes the tray's
/// status line and tells the windows (`approvals` event).
pub fn follow<R: Runtime>(app: AppHandle<R>, approvals: Arc<Approvals>) {
    // The runs already waiting first: the watcher may have told them
    // before this listens (seen in a full-suite run: of a backlog of five
    // at start-up, two were notified and none summarized).
    let (backlog, mut rx) = approvals.subscribe_with_pending();
    let mut backlog = backlog.into_iter();
    let shown = Shown::default();
    let live = Arc::new(AtomicUsize::new(0));
    let overflow = Arc::new(AtomicUsize::new(0));
    tauri::async_runtime::spawn(async move {
        loop {
            let next = match backlog.next() {
                Some(approval) => Ok(Event::Paused { approval }),
                None => rx.recv().await,
            };
            let event = match next {
                Ok(event) => event,
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "approvals bus: fell behind");
                    continue;
                }
                Err(RecvError::Closed) => return,
            };
            match &event {
                // A backlog (many runs pausing at once, or waiting when the
                // app starts) gets MAX_LIVE notifications and one summary.
                Event::Paused { approval } if live.load(Ordering::SeqCst) < MAX_LIVE => {
                    let slot = Slot::take(&live);
                    announce(
                        app.clone(),
                        approvals.clone(),
                        shown.clone(),
                        approval.clone(),
                        slot,
                    );
                }
                Event::Paused { .. } => {
                    overflow.fetch_add(1, Ordering::SeqCst);
                    summarize(app.clone(), overflow.clone());
                }
                Event::Changed { approval } if approval.status != RunStatus::Pending => {
                    withdraw(&shown, &approval.state_key).await;
                }
                Event::Changed { .. } => {}
            }
            tray::refresh(&app, approvals.pending_count());
            let _ = app.emit("approvals", &event);
        }
    });
}

/// Tells the windows (`requests` event) whenever what processes asked of
/// the person (approver tokens, pairings) changes, and notifies each new
/// request: one the person did not make is seen.
pub fn follow_requests<R: Runtime>(
    app: AppHandle<R>,
    requests: std::sync::Arc<clawdis_server::AppState>,
) {
    let mut changed = requests.requests.subscribe();
    tauri::async_runtime::spawn(async move {
        let mut seen = std::collections::HashSet::new();
        while changed.changed().await.is_ok() {
            let waiting = requests.requests.list();
            for request in &waiting {
                if seen.insert(request.id.clone()) {
                    ask_about(app.clone(), request.clone());
                }
            }
            let shown: Vec<serde_json::Value> = waiting
                .iter()
                .map(clawdis_server::requests::Request::for_a_person)
                .collect();
            let _ = app.emit("requests", &shown);
        }
    });
}

/// Tells the person of every device paired (however it was paired), so a
/// pairing they did not make is seen, and tells the windows (`devices`
/// event) whenever the devices change.
pub fn follow_devices<R: Runtime>(
    app: AppHandle<R>,
    state: std::sync::Arc<clawdis_server::AppState>,
) {
    let mut changed = state.devices.subscribe();
    tauri::async_runtime::spawn(async move {
        let live = |devices: &[clawdis_server::DeviceRecord]| -> std::collections::HashSet<String> {
            devices
                .iter()
                .filter(|d| d.revoked_at.is_none())
                .map(|d| d.name.clone())
                .collect()
        };
        let list = || async {
            match state.approvals().await {
                Ok(approvals) => approvals.store().list_devices().await.unwrap_or_default(),
                Err(_) => Vec::new(),
            }
        };
        let mut known = live(&list().await);
        while changed.changed().await.is_ok() {
            let devices = list().await;
            let now = live(&devices);
            for name in now.difference(&known) {
                let body = format!(
                    "{name:?} can now approve gates that need a person. If you did not pair it, \
                     revoke it in Devices & tokens."
                );
                if let Err(e) = show_plain("Clawdis: a device was paired", &body).await {
                    tracing::warn!(error = %e, "notifying a pairing");
                }
            }
            known = now;
            let _ = app.emit("devices", &devices);
        }
    });
}

/// Tells the windows (`runs` event) of every run started or changed, so
/// the Runs window follows the history as it is written.
pub fn follow_runs<R: Runtime>(app: AppHandle<R>, state: std::sync::Arc<clawdis_server::AppState>) {
    tauri::async_runtime::spawn(async move {
        let mut events = match state.runs().await {
            Ok(runs) => runs.subscribe(),
            Err(e) => {
                tracing::warn!(error = ?e, "following the runs");
                return;
            }
        };
        loop {
            match events.recv().await {
                Ok(event) => {
                    let _ = app.emit("runs", &event);
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            }
        }
    });
}

/// A notification about a request; its body opens the Approvals window,
/// where the person confirms or refuses it (never from the notification:
/// they should see the whole process chain first).
fn ask_about<R: Runtime>(app: AppHandle<R>, request: clawdis_server::requests::Request) {
    tauri::async_runtime::spawn(async move {
        let process = request
            .process
            .as_ref()
            .map(|p| format!("{} (pid {})", p.exe.as_deref().unwrap_or(&p.name), p.pid))
            .unwrap_or_else(|| "an unknown process".to_string());
        let (title, what) = match request.kind {
            Asked::ApproverToken => ("A process asks for an approver token", "approver token"),
            Asked::Pairing => ("A process asks to pair a device", "a pairing of device"),
        };
        let body = format!(
            "{process} asks for {what} {:?}. Open Approvals to confirm or refuse it.",
            request.name
        );
        match show_plain(title, &body).await {
            Ok(true) => windows::open(&app, windows::Window::Approvals),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "notifying a token request"),
        }
    });
}

/// How many runs get a notification of their own at a time.
const MAX_LIVE: usize = 3;

/// One of the MAX_LIVE places, given back when its notification ends.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(live: &Arc<AtomicUsize>) -> Slot {
        live.fetch_add(1, Ordering::SeqCst);
        Slot(live.clone())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The notifications on screen, by run id.
#[cfg(all(unix, not(target_os = "macos")))]
type Shown = Arc<
    tokio::sync::Mutex<std::collections::HashMap<String, Arc<notify_rust::NotificationHandle>>>,
>;
#[cfg(target_os = "macos")]
type Shown = Arc<()>;

/// Shows one notification and acts on its answer.
fn announce<R: Runtime>(
    app: AppHandle<R>,
    approvals: Arc<Approvals>,
    shown: Shown,
    approval: Approval,
    slot: Slot,
) {
    tauri::async_runtime::spawn(async move {
        let shown = show(&approval, &shown).await;
        // The notification is gone: its place is free while the run resumes.
        drop(slot);
        let action = match shown {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(error = %e, id = %approval.state_key, "showing the approval notification");
                return;
            }
        };
        tracing::debug!(id = %approval.state_key, ?action, "notification answered");
        // The notification offers Approve and Deny (a hand-off: Take over
        // and Decline); "default" is a click on its body.
        let choice = match action.as_deref() {
            Some("default") => return windows::open(&app, windows::Window::Approvals),
            Some("takeover") => {
                let backend = app.state::<super::Backend>();
                if let Err(e) = windows::take_over(&app, &backend.state, &approval.state_key).await
                {
                    tracing::warn!(id = %approval.state_key, error = %e.message(), "taking over a hand-off");
                }
                return;
            }
            Some(key) => match Choice::parse(key, None) {
                Ok(choice @ (Choice::Approve | Choice::Deny)) => choice,
                _ => return,
            },
            None => return,
        };
        // Decided on what the notification showed: a gate changed since is
        // refused, and waits for a look in the window.
        let decider = clawdis_approvals::Decider {
            seen: Some(approval.digest.clone()),
            ..decider(Channel::Notification)
        };
        match approvals.decide(&approval.state_key, choice, decider).await {
            Ok(envelope) => {
                tracing::info!(id = %approval.state_key, status = %envelope["status"], "decided from a notification");
            }
            Err(e) => {
                tracing::warn!(id = %approval.state_key, error = %e, "deciding from a notification");
            }
        }
    });
}

/// Sends the notification; resolves with the action the person picked
/// (`None` when it was dismissed or withdrawn).
#[cfg(all(unix, not(target_os = "macos")))]
async fn show(approval: &Approval, shown: &Shown) -> Result<Option<String>, String> {
    use notify_rust::{Hint, Notification, Timeout};
    let summary = clawdis_approvals::legible(&approval.summary());
    let mut note = Notification::new();
    note.appname("Clawdis")
        .summary(&title(approval))
        .body(&as_body(&summary.plain()).await)
        .hint(Hint::Resident(true))
        .hint(Hint::Category("im".into()))
        .timeout(Timeout::Never)
        .action("default", "Open Approvals");
    if approval.is_handoff() {
        // A hand-off is taken over, then handed back from where the person
        // works (the live view, the Approvals window).
        note.action("takeover", "Take over")
            .action("deny", "Decline");
    } else {
        // Text that hides characters or imitates other words is approved
        // only in the window, where all of it shows.
        if approval.gate == Gate::Approval && !summary.is_suspect() {
            note.action("approve", "Approve");
        }
        if approval.gate == Gate::Approval {
            note.action("deny", "Deny");
        }
    }
    let handle = Arc::new(note.show_async().await.map_err(|e| e.to_string())?);
    tracing::info!(run = %approval.state_key, notification = handle.id(), "approval notification shown");
    shown
        .lock()
        .await
        .insert(approval.state_key.clone(), Arc::clone(&handle));
    let picked = picked_action(&handle).await;
    shown.lock().await.remove(&approval.state_key);
    if picked.is_some() {
        // Resident: the server keeps it up after an action until it is
        // closed, and nothing listens to it any more.
        handle.close_async().await;
    }
    Ok(picked)
}

/// `text` as a notification's body: where the server reads markup (dunst
/// does, by default), `<`, `>` and `&` are escaped, so a prompt cannot
/// style text away (`<span size="1">`).
#[cfg(all(unix, not(target_os = "macos")))]
async fn as_body(text: &str) -> String {
    static MARKUP: tokio::sync::OnceCell<bool> = tokio::sync::OnceCell::const_new();
    let markup = *MARKUP
        .get_or_init(|| async {
            tokio::task::spawn_blocking(|| {
                notify_rust::get_capabilities()
                    .is_ok_and(|caps| caps.iter().any(|c| c == "body-markup"))
            })
            .await
            .unwrap_or(true)
        })
        .await;
    if markup {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    } else {
        text.to_string()
    }
}

/// Waits until the notification is answered or closed; the action picked,
/// `None` when it was dismissed or withdrawn. Notification servers send
/// `ActionInvoked` and `NotificationClosed` to the connection that sent the
/// notification, not to the whole bus, so this listens on that connection
/// (the handle's), never on a new one (issue #20: with dunst, Approve did
/// nothing).
#[cfg(all(unix, not(target_os = "macos")))]
async fn picked_action(handle: &notify_rust::NotificationHandle) -> Option<String> {
    use notify_rust::NotificationResponse;
    let mut picked = None;
    handle
        .wait_for_action_async(|response| {
            picked = match response {
                NotificationResponse::Default => Some("default".to_string()),
                NotificationResponse::Action(action) => Some(action.clone()),
                _ => None,
            }
        })
        .await;
    picked
}

/// Takes a decided run's notification off the screen.
#[cfg(all(unix, not(target_os = "macos")))]
async fn withdraw(shown: &Shown, id: &str) {
    if let Some(handle) = shown.lock().await.remove(id) {
        tracing::debug!(run = %id, notification = handle.id(), "withdrawing the notification");
        handle.close_async().await;
    }
}

/// macOS: notify-rust has no action buttons there; the notification says
/// what waits and the Approvals window takes the decision.
#[cfg(target_os = "macos")]
async fn show(approval: &Approval, _shown: &Shown) -> Result<Option<String>, String> {
    notify_rust::Notification::new()
        .summary(&title(approval))
        .body(&clawdis_approvals::legible(&approval.summary()).plain())
        .show()
        .map_err(|e| e.to_string())?;
    Ok(None)
}

#[cfg(target_os = "macos")]
async fn withdraw(_shown: &Shown, _id: &str) {}

/// Shows (or updates) the one summary of the runs beyond MAX_LIVE; opening
/// it opens the Approvals window. The count starts again once it is gone.
fn summarize<R: Runtime>(app: AppHandle<R>, overflow: Arc<AtomicUsize>) {
    tauri::async_runtime::spawn(async move {
        match show_summary(&overflow).await {
            // Replaced by a newer count, whose call listens from then on.
            Ok(None) => return,
            Ok(Some(true)) => windows::open(&app, windows::Window::Approvals),
            Ok(Some(false)) => {}
            Err(e) => tracing::warn!(error = %e, "showing the approvals summary"),
        }
        overflow.store(0, Ordering::SeqCst);
    });
}

/// The summary on screen: its notification id (0 for none), the count it
/// shows, and how to stop the call that listens for its answer. Locked
/// while it is shown or replaced, so a burst of pauses makes one summary.
#[cfg(all(unix, not(target_os = "macos")))]
static SUMMARY: tokio::sync::Mutex<(u32, usize, Option<Arc<tokio::sync::Notify>>)> =
    tokio::sync::Mutex::const_new((0, 0, None));

/// Shows the summary; resolves `Some(opened)` once it is gone, `None` when
/// it was replaced by a newer count (whose call listens from then on: the
/// server answers the connection that sent the latest version).
#[cfg(all(unix, not(target_os = "macos")))]
async fn show_summary(overflow: &AtomicUsize) -> Result<Option<bool>, String> {
    use notify_rust::{Notification, Timeout};
    let mut current = SUMMARY.lock().await;
    let more = overflow.load(Ordering::SeqCst);
    if current.0 != 0 && current.1 == more {
        return Ok(None);
    }
    let mut note = Notification::new();
    note.appname("Clawdis")
        .summary(&summary_text(more))
        .body("Open Approvals to see them all.")
        .timeout(Timeout::Never)
        .action("default", "Open Approvals");
    if current.0 != 0 {
        note.id(current.0);
    }
    let handle = note.show_async().await.map_err(|e| e.to_string())?;
    let replaced = Arc::new(tokio::sync::Notify::new());
    if let Some(earlier) = current.2.replace(Arc::clone(&replaced)) {
        earlier.notify_one();
    }
    (current.0, current.1) = (handle.id(), more);
    drop(current);
    tokio::select! {
        picked = picked_action(&handle) => {
            *SUMMARY.lock().await = (0, 0, None);
            Ok(Some(picked.as_deref() == Some("default")))
        }
        () = replaced.notified() => Ok(None),
    }
}

#[cfg(target_os = "macos")]
async fn show_summary(overflow: &AtomicUsize) -> Result<Option<bool>, String> {
    notify_rust::Notification::new()
        .summary(&summary_text(overflow.load(Ordering::SeqCst)))
        .body("Open Approvals to see them all.")
        .show()
        .map_err(|e| e.to_string())?;
    Ok(Some(false))
}

/// A notification whose body opens the Approvals window; resolves
/// `true` once it was opened, `false` when it was dismissed.
#[cfg(all(unix, not(target_os = "macos")))]
async fn show_plain(summary: &str, body: &str) -> Result<bool, String> {
    use notify_rust::{Notification, Timeout};
    let body = as_body(&clawdis_approvals::legible(body).plain()).await;
    let handle = Notification::new()
        .appname("Clawdis")
        .summary(summary)
        .body(&body)
        .timeout(Timeout::Never)
        .action("default", "Open Approvals")
        .show_async()
        .await
        .map_err(|e| e.to_string())?;
    Ok(picked_action(&handle).await.as_deref() == Some("default"))
}

#[cfg(target_os = "macos")]
async fn show_plain(summary: &str, body: &str) -> Result<bool, String> {
    notify_rust::Notification::new()
        .summary(summary)
        .body(&clawdis_approvals::legible(body).plain())
        .show()
        .map_err(|e| e.to_string())?;
    Ok(false)
}

/// "Clawdis: 2 more approvals waiting".
fn summary_text(more: usize) -> String {
    match more {
        1 => "Clawdis: 1 more approval waiting".to_string(),
        n => format!("Clawdis: {n} more approvals waiting"),
    }
}

fn title(approval: &Approval) -> String {
    if approval.is_handoff() {
        return "Clawdis: the agent needs you".to_string();
    }
    match approval.gate {
        Gate::Input => "Clawdis: input needed".to_string(),
        Gate::Approval => "Clawdis: approval needed".to_string(),
    }
}
