//! The clawd browser's HTTP control API: loopback-only, bearer-token
//! protected, JSON in and out. Routes not implemented yet answer 501.

mod security;
mod token;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router, middleware};
use clawdis_browser::launch::{LaunchOptions, running_as_root};
use clawdis_browser::process::{self, RunningBrowser};
use clawdis_browser::settings::Settings;
use clawdis_browser::{color, discovery, profile};
use serde_json::{Value, json};
use tokio::sync::Mutex;

pub use token::control_token;

/// Largest accepted JSON body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// What the server was started with.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The Clawdis home (settings, profile, token).
    pub home: PathBuf,
    /// Effective settings (file plus flags).
    pub settings: Settings,
    /// The bearer token every call must carry.
    pub token: String,
    /// `--no-browser`: never launch.
    pub no_browser: bool,
}

/// Shared server state.
pub struct AppState {
    config: ServerConfig,
    browser: Mutex<Option<RunningBrowser>>,
}

/// A JSON error response `{error}`.
pub fn json_error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

impl AppState {
    /// New state for `config`.
    pub fn new(config: ServerConfig) -> Arc<AppState> {
        Arc::new(AppState {
            config,
            browser: Mutex::new(None),
        })
    }

    fn user_data_dir(&self) -> PathBuf {
        profile::user_data_dir(&self.config.home, "clawd")
    }

    async fn status(&self) -> Value {
        let mut guard = self.browser.lock().await;
        if guard.as_mut().is_some_and(|b| !b.is_running()) {
            *guard = None;
        }
        let s = &self.config.settings;
        let control_port = clawdis_browser::settings::parse_control_url(&s.control_url)
            .map(|(_, p)| p)
            .ok();
        json!({
            "enabled": s.enabled && !self.config.no_browser,
            "running": guard.is_some(),
            "pid": guard.as_ref().map(|b| b.pid),
            "chosenBrowser": guard.as_ref().map(|b| b.executable.display().to_string()),
            "userDataDir": self.user_data_dir().display().to_string(),
            "attachOnly": s.attach_only,
            "headless": s.headless,
            "color": s.accent_color,
            "ports": { "control": control_port, "cdp": s.cdp_port },
            "cdpUrl": format!("http://127.0.0.1:{}", s.cdp_port),
        })
    }
}

async fn status(State(state): State<Arc<AppState>>) -> Response {
    Json(state.status().await).into_response()
}

async fn start(State(state): State<Arc<AppState>>) -> Response {
    let s = state.config.settings.clone();
    if !s.enabled || state.config.no_browser {
        return json_error(StatusCode::CONFLICT, "Browser disabled in settings");
    }
    if s.connect_only() {
        return json_error(
            StatusCode::BAD_REQUEST,
            "attach-only profile: Clawdis connects to this browser, never launches it",
        );
    }
    let mut guard = state.browser.lock().await;
    if guard.as_mut().is_some_and(|b| b.is_running()) {
        drop(guard);
        return Json(state.status().await).into_response();
    }
    let opts = LaunchOptions {
        user_data_dir: state.user_data_dir(),
        cdp_port: s.cdp_port,
        headless: s.headless,
        no_sandbox: running_as_root(),
    };
    let argb = color::parse_hex(&s.accent_color)
        .map(color::signed_argb)
        .unwrap_or(-47872);
    let launched = tokio::task::spawn_blocking(move || {
        let exe = discovery::find_executable(
            s.executable_path.as_deref(),
            std::env::var("PATH").ok().as_deref(),
            None,
        )?;
        process::prepare_profile(&exe, &opts, "clawd", argb)?;
        process::start(&exe, &opts, Duration::from_secs(30))
    })
    .await;
    match launched {
        Ok(Ok(browser)) => {
            *guard = Some(browser);
            drop(guard);
            Json(state.status().await).into_response()
        }
        Ok(Err(e)) => json_error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(e) => json_error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// Stops a launched browser off the async threads (it waits for the exit).
async fn stop_browser(browser: RunningBrowser) -> Result<(), String> {
    match tokio::task::spawn_blocking(move || browser.stop(Duration::from_secs(5))).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

async fn stop(State(state): State<Arc<AppState>>) -> Response {
    let browser = state.browser.lock().await.take();
    let stopped = browser.is_some();
    if let Some(b) = browser
        && let Err(e) = stop_browser(b).await
    {
        return json_error(StatusCode::INTERNAL_SERVER_ERROR, e);
    }
    Json(json!({ "ok": true, "stopped": stopped })).into_response()
}

async fn not_implemented(method: Method, uri: Uri) -> Response {
    json_error(
        StatusCode::NOT_IMPLEMENTED,
        format!("not implemented: {method} {}", uri.path()),
    )
}

/// The control API router.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(status))
        .route("/start", post(start))
        .route("/stop", post(stop))
        .fallback(not_implemented)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            security::guard,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// Serves the API on `addr` until the process ends; stops the browser on exit.
pub async fn serve(
    addr: SocketAddr,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "control API listening");
    axum::serve(listener, router(state.clone()))
        .with_graceful_shutdown(shutdown)
        .await?;
    if let Some(b) = state.browser.lock().await.take()
        && let Err(e) = stop_browser(b).await
    {
        tracing::warn!(error = %e, "stopping the browser on shutdown");
    }
    Ok(())
}
