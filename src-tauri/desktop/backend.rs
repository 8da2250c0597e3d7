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
    running: Mutex<Option<(oneshot::Sender<()>, JoinHandle<()>)>>,
}

impl Backend {
    /// Starts the control API (and so the browser, on the first call that
    /// needs it) with the settings in `<home>/settings.json`.
    pub fn start(home: PathBuf) -> anyhow::Result<Backend> {
        let clawdis_cli::Backend { addr, state } =
            clawdis_cli::backend(home.clone(), ServeArgs::default())?;
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let server_state = state.clone();
        let task = tauri::async_runtime::spawn(async move {
            let shutdown = async {
                let _ = stop_rx.await;
            };
            if let Err(e) = clawdis_server::serve(addr, server_state, shutdown).await {
                tracing::error!(%addr, error = %e, "the control API stopped");
            }
        });
        Ok(Backend {
            home,
            state,
            running: Mutex::new(Some((stop_tx, task))),
        })
    }

    /// Stops the control API and the browser, waiting for both; once only.
    pub fn stop(&self) {
        let running = self.running.lock().map(|mut r| r.take()).unwrap_or(None);
        if let Some((stop_tx, task)) = running {
            let _ = stop_tx.send(());
            let _ = tauri::async_runtime::block_on(task);
            tracing::info!("backend stopped");
        }
    }
}
