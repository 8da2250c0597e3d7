//! The menu-bar icon and its menu: a status line, the windows, Start/Stop
//! Browser and Quit.

use tauri::image::Image;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime};

use super::Backend;
use super::windows::{self, Window};

const TRAY_ID: &str = "clawdis";

/// The menu items whose text changes with the backend's state.
pub struct TrayItems<R: Runtime> {
    status: MenuItem<R>,
    browser: MenuItem<R>,
}

/// Puts the icon in the menu bar.
pub fn create<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let status = MenuItem::with_id(app, "status", "Browser stopped", false, None::<&str>)?;
    let browser = MenuItem::with_id(app, "browser", "Start Browser", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &status,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(app, "settings", "Open Settings…", true, None::<&str>)?,
            &MenuItem::with_id(app, "approvals", "Approvals…", true, None::<&str>)?,
            &MenuItem::with_id(app, "runs", "Runs…", true, None::<&str>)?,
            &MenuItem::with_id(app, "triggers", "Triggers…", true, None::<&str>)?,
            &MenuItem::with_id(app, "deliveries", "Deliveries…", true, None::<&str>)?,
            &MenuItem::with_id(app, "ledger", "Ledger…", true, None::<&str>)?,
            &MenuItem::with_id(app, "devices", "Devices and tokens…", true, None::<&str>)?,
            &MenuItem::with_id(app, "tabs", "Tabs…", true, None::<&str>)?,
            &PredefinedMenuItem::separator(app)?,
            &browser,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(app, "quit", "Quit Clawdis", true, None::<&str>)?,
        ],
    )?;
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(Image::from_bytes(include_bytes!("../../icons/tray.png"))?)
        .icon_as_template(false)
        .tooltip("Clawdis")
        .menu(&menu)
        .on_menu_event(|app, event| on_menu(app, event.id().as_ref()))
        .build(app)?;
    app.manage(TrayItems { status, browser });
    refresh(app, 0);
    Ok(())
}

fn on_menu<R: Runtime>(app: &AppHandle<R>, id: &str) {
    match id {
        "settings" => windows::open(app, Window::Settings),
        "approvals" => windows::open(app, Window::Approvals),
        "runs" => windows::open(app, Window::Runs),
        "triggers" => windows::open(app, Window::Triggers),
        "deliveries" => windows::open(app, Window::Deliveries),
        "ledger" => windows::open(app, Window::Ledger),
        "devices" => windows::open(app, Window::Devices),
        "tabs" => windows::open(app, Window::Tabs),
        "browser" => {
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                let manager = app.state::<Backend>().state.manager.clone();
                let result = if manager.status().running {
                    manager.stop().await.map(|_| ())
                } else {
                    manager.start(None).await.map(|_| ())
                };
                if let Err(e) = result {
                    tracing::warn!(error = %e, "tray: start/stop browser");
                }
                let pending = app
                    .try_state::<super::ApprovalsState>()
                    .map_or(0, |a| a.pending_count());
                refresh(&app, pending);
            });
        }
        "quit" => {
            tracing::info!("quitting from the menu");
            app.exit(0);
        }
        _ => {}
    }
}

/// Rewrites the status line and the browser item from the backend's state.
pub fn refresh<R: Runtime>(app: &AppHandle<R>, pending: usize) {
    let (Some(items), Some(backend)) =
        (app.try_state::<TrayItems<R>>(), app.try_state::<Backend>())
    else {
        return;
    };
    let running = backend.state.manager.status().running;
    let line = match &backend.api_error {
        Some(error) => format!("{} · {error}", status_line(running, pending)),
        None => status_line(running, pending),
    };
    let _ = items.status.set_text(line);
    // The count beside the icon (the menu bar's title on macOS, the
    // indicator's label on Linux), and in its tooltip.
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_title((pending > 0).then(|| pending.to_string()));
        let _ = tray.set_tooltip(Some(match pending {
            0 => "Clawdis".to_string(),
            n => format!("Clawdis · {n} waiting for you"),
        }));
    }
    let _ = items.browser.set_text(if running {
        "Stop Browser"
    } else {
        "Start Browser"
    });
}

/// "Browser running · 2 approvals pending".
pub fn status_line(running: bool, pending: usize) -> String {
    let browser = if running {
        "Browser running"
    } else {
        "Browser stopped"
    };
    match pending {
        0 => format!("{browser} · no approvals pending"),
        1 => format!("{browser} · 1 approval pending"),
        n => format!("{browser} · {n} approvals pending"),
    }
}

#[cfg(test)]
mod tests {
    use super::status_line;

    #[test]
    fn the_status_line_names_the_browser_and_the_pending_count() {
        assert_eq!(
            status_line(false, 0),
            "Browser stopped · no approvals pending"
        );
        assert_eq!(status_line(true, 1), "Browser running · 1 approval pending");
        assert_eq!(
            status_line(true, 3),
            "Browser running · 3 approvals pending"
        );
    }
}
