//! Native notifications for paused runs, with Approve and Deny actions
//! (action keys `approve` and `deny`; the body opens the Approvals window).
//! Follows the approvals bus, so runs paused by any process sharing the
//! home are announced.

use std::sync::Arc;

use clawdis_approvals::{Approval, Approvals, Choice, Event};
use tauri::{AppHandle, Emitter, Runtime};
use tokio::sync::broadcast::error::RecvError;

use super::{decider, tray, windows};

/// Follows the bus until the app quits: notifies each pause, refreshes the
/// tray's status line and tells the windows (`approvals` event).
pub fn follow<R: Runtime>(app: AppHandle<R>, approvals: Arc<Approvals>) {
    let mut rx = approvals.subscribe();
    tauri::async_runtime::spawn(async move {
        loop {
            let event = match rx.recv().await {
                Ok(event) => event,
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "approvals bus: fell behind");
                    continue;
                }
                Err(RecvError::Closed) => return,
            };
            if let Event::Paused { approval } = &event {
                announce(app.clone(), approvals.clone(), approval.clone());
            }
            tray::refresh(&app, approvals.pending_count());
            let _ = app.emit("approvals", &event);
        }
    });
}

/// Shows one notification and acts on its answer.
fn announce<R: Runtime>(app: AppHandle<R>, approvals: Arc<Approvals>, approval: Approval) {
    tauri::async_runtime::spawn(async move {
        let started = std::time::Instant::now();
        let action = match show(&approval).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(error = %e, id = %approval.id, "showing the approval notification");
                return;
            }
        };
        tracing::debug!(id = %approval.id, ?action, elapsed = ?started.elapsed(), "notification answered");
        let choice = match action.as_deref() {
            Some("approve") => Choice::Approve,
            Some("deny") => Choice::Deny,
            Some("default") => return windows::open(&app, windows::Window::Approvals),
            _ => return,
        };
        match approvals
            .decide(&approval.id, choice, decider("notification"))
            .await
        {
            Ok(envelope) => {
                tracing::info!(id = %approval.id, status = %envelope["status"], "decided from a notification")
            }
            Err(e) => tracing::warn!(id = %approval.id, error = %e, "deciding from a notification"),
        }
    });
}

/// Sends the notification; resolves with the action the person picked
/// (`None` when it was dismissed).
#[cfg(all(unix, not(target_os = "macos")))]
async fn show(approval: &Approval) -> Result<Option<String>, String> {
    use notify_rust::{Hint, Notification, Timeout};
    let mut note = Notification::new();
    note.appname("Clawdis")
        .summary(&title(approval))
        .body(&approval.summary())
        .hint(Hint::Resident(true))
        .hint(Hint::Category("im".into()))
        .timeout(Timeout::Never)
        .action("default", "Open Approvals");
    if approval.gate == "approval" {
        note.action("approve", "Approve").action("deny", "Deny");
    }
    let handle = note.show_async().await.map_err(|e| e.to_string())?;
    tracing::info!(id = %approval.id, notification = handle.id(), "approval notification shown");
    tokio::task::spawn_blocking(move || {
        let mut picked = None;
        handle.wait_for_action(|action| {
            if action != "__closed" {
                picked = Some(action.to_string());
            }
        });
        picked
    })
    .await
    .map_err(|e| e.to_string())
}

/// macOS: notify-rust has no action buttons there; the notification says
/// what waits and the Approvals window takes the decision.
#[cfg(target_os = "macos")]
async fn show(approval: &Approval) -> Result<Option<String>, String> {
    notify_rust::Notification::new()
        .summary(&title(approval))
        .body(&approval.summary())
        .show()
        .map_err(|e| e.to_string())?;
    Ok(None)
}

fn title(approval: &Approval) -> String {
    match approval.gate.as_str() {
        "input" => "Clawdis: input needed".to_string(),
        _ => "Clawdis: approval needed".to_string(),
    }
}
