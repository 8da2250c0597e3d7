//! `clawdis`: the Clawdis backend without a window.
//!
//! `clawdis serve` runs the clawd browser's control API on loopback (Linux
//! servers, CI); `clawdis token` prints the bearer token clients must send.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use clawdis_browser::settings::{Settings, is_loopback_host, parse_control_url};
use clawdis_engine::context::clawdis_home;
use clawdis_server::{AppState, ServerConfig, control_token};

#[derive(Parser)]
#[command(
    name = "clawdis",
    version,
    about = "Local companion for AI agents: workflows, the clawd browser, approvals"
)]
struct Cli {
    /// Clawdis home (settings, browser profile, token). Default: $CLAWDIS_HOME or ~/.clawdis.
    #[arg(long, global = true)]
    home: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the backend headless: the browser control API on loopback.
    Serve {
        /// Control API port (default: from settings, 18791).
        #[arg(long)]
        port: Option<u16>,
        /// Never launch a browser (the API still answers).
        #[arg(long)]
        no_browser: bool,
        /// Launch Chromium headless.
        #[arg(long)]
        headless: bool,
    },
    /// Print the control API bearer token.
    Token,
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CLAWDIS_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let home = cli
        .home
        .unwrap_or_else(|| clawdis_home(&std::env::vars().collect()));
    match cli.command {
        Command::Token => {
            println!("{}", control_token(&home)?);
            Ok(())
        }
        Command::Serve {
            port,
            no_browser,
            headless,
        } => serve(home, port, no_browser, headless),
    }
}

fn serve(home: PathBuf, port: Option<u16>, no_browser: bool, headless: bool) -> Result<()> {
    let mut settings = Settings::load(&home)?;
    settings.headless |= headless;
    let errors: Vec<String> = settings
        .validate()
        .into_iter()
        .filter(|i| !i.warning)
        .map(|i| format!("{}: {}", i.field, i.message))
        .collect();
    if !errors.is_empty() {
        bail!(
            "invalid settings in {}:\n  {}",
            Settings::path(&home).display(),
            errors.join("\n  ")
        );
    }
    let (host, configured_port) = parse_control_url(&settings.control_url)?;
    if !is_loopback_host(&host) {
        bail!("the control API only listens on loopback; controlUrl host {host} is remote");
    }
    let port = port.unwrap_or(configured_port);
    let token = control_token(&home)
        .with_context(|| format!("creating the control token in {}", home.display()))?;
    let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
    let state = AppState::new(ServerConfig {
        home,
        settings,
        token,
        no_browser,
        control_port: port,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let shutdown = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {},
                        _ = term.recv() => {},
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "no SIGTERM handler; stop with Ctrl-C");
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
            tracing::info!("shutting down");
        };
        clawdis_server::serve(addr, state, shutdown)
            .await
            .with_context(|| format!("serving on {addr}"))
    })
}
