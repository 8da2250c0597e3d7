//! `clawdis`: the menu-bar app, and `clawdis serve` (the same backend with
//! no window). With no subcommand it runs the app; the backend's parts live
//! in the Tauri-free crates under `crates/`, and this shell only wires them
//! to the tray, windows and notifications.

#[cfg(feature = "desktop")]
mod desktop;

use clap::Parser;
use clawdis_cli::{AppArgs, Cli, Command};

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    clawdis_cli::init_tracing(cli.command.as_ref());
    let home = cli.home();
    match cli.command.unwrap_or(Command::App(AppArgs::default())) {
        #[cfg(feature = "desktop")]
        Command::App(args) => desktop::run(home, args),
        command => clawdis_cli::run(home, command),
    }
}
