//! The app's windows, created when first asked for and focused after that.

use tauri::{AppHandle, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};

/// One of the app's windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    Settings,
    Approvals,
    Runs,
    Triggers,
    Deliveries,
    Ledger,
    Devices,
    Tabs,
}

impl Window {
    /// The window's label (capabilities in `tauri.conf.json` name these).
    pub fn label(self) -> &'static str {
        match self {
            Window::Settings => "settings",
            Window::Approvals => "approvals",
            Window::Runs => "runs",
            Window::Triggers => "triggers",
            Window::Deliveries => "deliveries",
            Window::Ledger => "ledger",
            Window::Devices => "devices",
            Window::Tabs => "tabs",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Window::Settings => "Clawdis Settings",
            Window::Approvals => "Clawdis Approvals",
            Window::Runs => "Clawdis Runs",
            Window::Triggers => "Clawdis Triggers",
            Window::Deliveries => "Clawdis Deliveries",
            Window::Ledger => "Clawdis Ledger",
            Window::Devices => "Clawdis Devices & tokens",
            Window::Tabs => "Clawdis Tabs",
        }
    }

    fn page(self) -> &'static str {
        match self {
            Window::Settings => "settings.html",
            Window::Approvals => "approvals.html",
            Window::Runs => "runs.html",
            Window::Triggers => "triggers.html",
            Window::Deliveries => "deliveries.html",
            Window::Ledger => "ledger.html",
            Window::Devices => "devices.html",
            Window::Tabs => "tabs.html",
        }
    }
}

impl From<clawdis_cli::WindowName> for Window {
    fn from(name: clawdis_cli::WindowName) -> Window {
        match name {
            clawdis_cli::WindowName::Settings => Window::Settings,
            clawdis_cli::WindowName::Approvals => Window::Approvals,
            clawdis_cli::WindowName::Runs => Window::Runs,
            clawdis_cli::WindowName::Triggers => Window::Triggers,
            clawdis_cli::WindowName::Deliveries => Window::Deliveries,
            clawdis_cli::WindowName::Ledger => Window::Ledger,
            clawdis_cli::WindowName::Devices => Window::Devices,
            clawdis_cli::WindowName::Tabs => Window::Tabs,
        }
    }
}

/// Shows `window`, creating it if it is not open.
pub fn open<R: Runtime>(app: &AppHandle<R>, window: Window) {
    if let Some(existing) = app.get_webview_window(window.label()) {
        let _ = existing.unminimize();
        let _ = existing.show();
        let _ = existing.set_focus();
        return;
    }
    let built =
        WebviewWindowBuilder::new(app, window.label(), WebviewUrl::App(window.page().into()))
            .title(window.title())
            .inner_size(720.0, 560.0)
            .min_inner_size(480.0, 360.0)
            .build();
    if let Err(e) = built {
        tracing::error!(window = window.label(), error = %e, "opening a window");
    }
}

/// The live view of a hand-off (a page of the backend's, at `url`), in a
/// window of its own: the person takes over a headless browser's page
/// there. A live view already open is replaced.
pub fn open_live_view<R: Runtime>(app: &AppHandle<R>, url: &str) {
    const LABEL: &str = "handoff";
    if let Some(existing) = app.get_webview_window(LABEL) {
        let _ = existing.destroy();
    }
    let url = match url.parse() {
        Ok(url) => url,
        Err(e) => {
            tracing::error!(error = %e, "a live view's address");
            return;
        }
    };
    let built = WebviewWindowBuilder::new(app, LABEL, WebviewUrl::External(url))
        .title("Clawdis Hand-off")
        .inner_size(1000.0, 760.0)
        .min_inner_size(480.0, 360.0)
        .build();
    match built {
        Ok(window) => {
            let _ = window.set_focus();
        }
        Err(e) => tracing::error!(error = %e, "opening the live view"),
    }
}

/// Takes over the hand-off waiting at `state_key` for the person at this
/// machine: a visible browser comes to the front on its page, a headless
/// one's page opens in the live view.
pub async fn take_over<R: Runtime>(
    app: &AppHandle<R>,
    state: &clawdis_server::AppState,
    state_key: &str,
) -> Result<(), clawdis_server::ApiError> {
    match clawdis_server::take_over(state, state_key).await? {
        clawdis_server::TakeOver::Focused => {
            tracing::info!(
                gate = state_key,
                "hand-off taken over: the browser's window is in front"
            );
        }
        clawdis_server::TakeOver::LiveView(url) => {
            tracing::info!(
                gate = state_key,
                "hand-off taken over: the live view opened"
            );
            open_live_view(app, &url);
        }
    }
    Ok(())
}
