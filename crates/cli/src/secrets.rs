//! `clawdis secrets set|delete NAME`: the secrets a person gives Clawdis
//! (the LLM's API key), kept in the keychain. A value is read from
//! standard input, never from the command line (which other processes
//! and the shell's history see).

use std::io::Read as _;
use std::path::Path;

use anyhow::{Result, bail};
use clap::Subcommand;
use clawdis_secrets::{Location, Secrets};

use crate::print_line;

/// The secrets a person sets; the others Clawdis makes itself.
const SETTABLE: [&str; 1] = [clawdis_approvals::LLM_KEY_SECRET];

/// What to do with a secret.
#[derive(Subcommand)]
pub enum SecretsAction {
    /// Store secret NAME (llm-api-key), read from standard input.
    Set {
        /// The secret's name.
        name: String,
    },
    /// Remove secret NAME.
    Delete {
        /// The secret's name.
        name: String,
    },
}

fn settable(name: &str) -> Result<()> {
    if !SETTABLE.contains(&name) {
        bail!(
            "{name:?} is not a secret you set (you can set: {})",
            SETTABLE.join(", ")
        );
    }
    Ok(())
}

/// Runs `action` on the secrets of `home`.
pub fn secrets(home: &Path, action: SecretsAction) -> Result<()> {
    let store = Secrets::new(home);
    match action {
        SecretsAction::Set { name } => {
            settable(&name)?;
            let mut value = String::new();
            std::io::stdin().read_to_string(&mut value)?;
            // One line from a pipe or a terminal: without its line end.
            let value = value.trim_end_matches(['\n', '\r']);
            if value.trim().is_empty() {
                bail!(
                    "no value on standard input (e.g. `printf %s \"$KEY\" | clawdis secrets set {name}`)"
                );
            }
            let place = match store.set(&name, value)? {
                Location::Keychain => "the keychain",
                Location::File => "a file only you can read (no keychain here)",
            };
            print_line(&format!("{name} stored in {place}"));
        }
        SecretsAction::Delete { name } => {
            settable(&name)?;
            store.delete(&name)?;
        }
    }
    Ok(())
}
