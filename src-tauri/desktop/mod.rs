//! The menu-bar app: starts the backend in this process, puts the tray icon
//! up and opens the windows on demand. Everything it shows comes from the
//! backend's crates; this module only wires them to Tauri.

mod backend;
mod command_error;
mod commands;
mod notify;
mod tray;
mod windows;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use clawdis_approvals::{Approvals, Channel, Decider};
use clawdis_cli::{AppArgs, Cli, Command, WindowName};
use tauri::Manager;

pub use backend::Backend;

/// Runs the app until Quit.
pub fn run(home: PathBuf, args: AppArgs) -> anyhow::Result<()> {
    #[cfg(target_os = "linux")]
    skip_gtk_gl();
    let app = commands::register(tauri::Builder::default())
        .plugin(tauri_plugin_single_instance::init(|app, argv, _cwd| {
            // A second launch opens the window it names (`--open`), else
            // the first one's approvals.
            let wanted = match Cli::try_parse_from(argv).map(|cli| cli.command) {
                Ok(Some(Command::App(AppArgs { open: Some(window) }))) => window,
                _ => WindowName::Approvals,
            };
            windows::open(app, wanted.into());
        }))
        .setup(move |app| {
            #[cfg(target_os = "macos")]
            app.set_activation_policy(tauri::ActivationPolicy::Accessory);
            let backend = Backend::start(home.clone()).context("starting the backend")?;
            // The backend's approvals, watched once: the windows, the
            // notifications and the control API follow the same bus.
            let approvals = tauri::async_runtime::block_on(backend.state.approvals())
                .map_err(|e| anyhow::anyhow!("opening the approvals store: {}", e.message()))?;
            notify::follow_requests(app.handle().clone(), backend.state.clone());
            notify::follow_devices(app.handle().clone(), backend.state.clone());
            notify::follow_runs(app.handle().clone(), backend.state.clone());
            app.manage(backend);
            notify::follow(app.handle().clone(), approvals.clone());
            app.manage(approvals);
            tray::create(app.handle())?;
            quit_on_signal(app.handle().clone());
            if let Some(window) = args.open {
                windows::open(app.handle(), window.into());
            }
            Ok(())
        })
        .build(tauri::generate_context!())
        .context("building the app")?;
    app.run(|app, event| {
        // Closing the last window keeps a menu-bar app running.
        if let tauri::RunEvent::ExitRequested {
            code: None, api, ..
        } = &event
        {
            api.prevent_exit();
        }
        if let tauri::RunEvent::Exit = event {
            app.state::<Backend>().stop();
        }
    });
    Ok(())
}

/// SIGTERM or Ctrl-C quits like the menu's Quit: the browser is stopped.
fn quit_on_signal<R: tauri::Runtime>(app: tauri::AppHandle<R>) {
    tauri::async_runtime::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut term) = signal(SignalKind::terminate()) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("quitting on a signal");
        app.exit(0);
    });
}

/// A decision made by this machine's user through `via`.
fn decider(via: Channel) -> Decider {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok();
    Decider {
        by: user.filter(|u| !u.is_empty()),
        via,
        // The app's windows and notifications are a person's click.
        presence: Some(clawdis_approvals::Presence::Click),
        seen: None,
        comment: None,
    }
}

/// The approvals, as managed state.
type ApprovalsState = Arc<Approvals>;

/// Keeps GTK from loading OpenGL on Linux (unless `GDK_GL` is set): its
/// probe maps the GL driver (under Xvfb, Mesa's llvmpipe and libLLVM, about
/// 48 MiB) into a process whose windows are a few forms and lists, which
/// WebKitGTK draws as well without it.
#[cfg(target_os = "linux")]
fn skip_gtk_gl() {
    if std::env::var_os("GDK_GL").is_none() {
        // SAFETY: called first thing in `run`, before GTK, Tauri or the
        // backend start any thread, so nothing reads the environment
        // concurrently.
        unsafe { std::env::set_var("GDK_GL", "disable") };
    }
}
