//! `clawdis devices pair|list|revoke`: paired devices, which approve gates
//! that need a person with a passkey. They are asked of the running
//! backend, which keeps the pairing ceremonies.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::json;

use crate::backend::{Answer, ask_the_person, over_socket};

/// What to do with paired devices.
#[derive(Subcommand)]
pub enum DevicesAction {
    /// Print a one-time pairing link (valid 10 minutes) to open on the
    /// device; its page registers the device's passkey. Once a device is
    /// paired, the link comes only after the person confirms the pairing in
    /// the app (which shows this process).
    Pair {
        /// The device's name (1 to 64 of A-Z a-z 0-9 . _ -).
        #[arg(long)]
        name: String,
        /// Once a device is paired, how long to wait for the person to
        /// confirm this pairing in the app: 30s, 5m, 1h (at most 1h).
        #[arg(long, default_value = "5m", value_parser = crate::parse_wait)]
        wait: u64,
    },
    /// List devices: name, relying party, paired, last used, revoked.
    List,
    /// Revoke a device by name: it approves nothing after.
    Revoke {
        /// The device's name.
        name: String,
    },
}

/// Runs `clawdis devices …` against the backend of `home`.
pub fn devices(home: &Path, action: DevicesAction) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let ask = |method: hyper::Method, path: String, body| async move {
            over_socket(home, method, &path, body)
                .await?
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "no backend of {} is running: start the app (or `clawdis serve`) first",
                        home.display()
                    )
                })
        };
        match action {
            DevicesAction::Pair { name, wait } => {
                let body = json!({ "name": name, "waitSeconds": wait });
                let path = "/devices/pairings";
                let link =
                    ask_the_person(home, path, body, "a pairing of device", &name, wait).await?;
                let url = link["url"].as_str().unwrap_or_default();
                crate::print_line(url);
                if let Some(note) = only_here(url, home) {
                    crate::backend::tell(&note);
                }
                // The same link for the phone's camera, where a person
                // looks (stdout carries the link alone).
                if std::io::stderr().is_terminal()
                    && let Some(code) = clawdis_server::qr::terminal(url)
                {
                    crate::backend::tell(&code);
                }
            }
            DevicesAction::List => {
                let answer = expect(ask(hyper::Method::GET, "/devices".into(), None).await?, 200)?;
                let devices = answer["devices"].as_array().cloned().unwrap_or_default();
                if devices.is_empty() {
                    crate::backend::tell(
                        "No device is paired: pair one with `clawdis devices pair --name NAME`.",
                    );
                }
                for d in &devices {
                    let text = |k: &str| d[k].as_str().unwrap_or("-").to_string();
                    let state = d["revokedAt"]
                        .as_str()
                        .map_or("live".to_string(), |at| format!("revoked {at}"));
                    crate::print_line(&format!(
                        "{}\t{}\t{}\t{}\t{state}",
                        text("name"),
                        text("rpId"),
                        text("createdAt"),
                        text("lastUsedAt"),
                    ));
                }
            }
            DevicesAction::Revoke { name } => {
                expect(
                    ask(hyper::Method::DELETE, format!("/devices/{name}"), None).await?,
                    200,
                )?;
            }
        }
        Ok(())
    })
}

/// What a person pairing a phone needs to know of a link that opens only
/// on this machine (on `localhost`, as it is until `publicBaseUrl` is set).
fn only_here(url: &str, home: &Path) -> Option<String> {
    let authority = url.split_once("://")?.1.split('/').next()?;
    let host = authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host);
    matches!(host, "localhost" | "127.0.0.1" | "[::1]").then(|| {
        format!(
            "This link opens only on this machine ({host}). To pair a phone, set \
             \"publicBaseUrl\" in {} to an https:// address that reaches this backend \
             (a TLS tunnel or reverse proxy, such as `tailscale serve`), then pair again.",
            home.join("settings.json").display()
        )
    })
}

/// The answer's body when its status is `status`; else its error.
fn expect(answer: Answer, status: u16) -> Result<serde_json::Value> {
    if answer.status == status {
        return Ok(answer.body);
    }
    match answer.body["error"].as_str() {
        Some(error) => bail!("{error}"),
        None => bail!("the backend answered {}", answer.status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_on_this_machine_says_so_and_one_under_a_public_base_does_not() {
        let home = Path::new("/home/ann/.clawdis");
        let note = only_here("http://localhost:18791/pair/abc", home).expect("a note");
        assert!(note.contains("only on this machine (localhost)"), "{note}");
        assert!(note.contains("/home/ann/.clawdis/settings.json"), "{note}");
        assert!(only_here("http://127.0.0.1:18791/pair/abc", home).is_some());
        assert!(only_here("https://box.example.ts.net/pair/abc", home).is_none());
        assert!(only_here("https://localhost.example.com/pair/abc", home).is_none());
    }
}
