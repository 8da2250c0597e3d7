//! The backend inside the app: the same control API and browser manager as
//! `clawdis serve`, run on Tauri's async runtime until the app quits.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use clawdis_cli::ServeArgs;
use clawdis_server::AppState;
use tauri::async_runtime::JoinHandle;
use tokio::sync::oneshot;

/// The running backend, managed as Tauri state.
pub struct Backend {
    /// The Clawdis home (settings, token, runs).
    pub home: PathBuf,
    /// The control API's state; its manager owns the clawd browser.
    pub state: Arc<AppState>,
    /// Why the control API is not listening (its port is taken, say); the
    /// rest of the app (approvals, windows) runs regardless.
    pub api_error: Option<String>,
    running: Mutex<Option<(oneshot::Sender<()>, JoinHandle<()>)>>,
}

impl Backend {
    /// Starts the control API (and so the browser, on the first call that
    /// needs it) with the settings in `<home>/settings.json`.
    pub fn start(home: PathBuf) -> anyhow::Result<Backend> {
        let clawdis_cli::Backend { addr, state, .. } =
            clawdis_cli::backend(home.clone(), ServeArgs::default())?;
        let listener = match tauri::async_runtime::block_on(tokio::net::TcpListener::bind(addr)) {
            Ok(listener) => listener,
            Err(e) => {
                let api_error = format!("control API off: {addr} {e}");
                tracing::error!("{api_error}");
                return Ok(Backend {
                    home,
                    state,
                    api_error: Some(api_error),
                    running: Mutex::new(None),
                });
            }
        };
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let server_state = state.clone();
        let task = tauri::async_runtime::spawn(async move {
            let shutdown = async {
                let _ = stop_rx.await;
            };
            if let Err(e) = clawdis_server::serve_on(listener, server_state, shutdown).await {
                tracing::error!(%addr, error = %e, "the control API stopped");
            }
        });
        Ok(Backend {
            home,
            state,
            api_error: None,
            running: Mutex::new(Some((stop_tx, task))),
        })
    }

    /// Stops the control API and the browser, waiting for both; once only.
    pub fn stop(&self) {
        let running = self.running.lock().map(|mut r| r.take()).unwrap_or(None);
        if let Some((stop_tx, task)) = running {
            let _ = stop_tx.send(());
            let _ = tauri::async_runtime::block_on(task);
        } else if let Err(e) = tauri::async_runtime::block_on(self.state.manager.stop()) {
            tracing::warn!(error = %e, "stopping the browser");
        }
        tracing::info!("backend stopped");
    }
}

#[cfg(test)]
mod tests {
    use super::Backend;

    #[test]
    fn a_taken_control_port_is_reported_not_fatal() {
        let home = tempfile::tempdir().unwrap();
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let settings =
            serde_json::json!({"controlUrl": format!("http://127.0.0.1:{port}"), "enabled": false});
        std::fs::write(home.path().join("settings.json"), settings.to_string()).unwrap();
        let backend = Backend::start(home.path().to_path_buf()).unwrap();
        let error = backend.api_error.clone().expect("the port is taken");
        assert!(error.contains(&port.to_string()), "{error}");
        backend.stop();
    }
}
