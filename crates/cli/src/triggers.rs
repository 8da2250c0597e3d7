//! `clawdis triggers list|pause|resume`: the workflows' triggers, read
//! from the workflow library and the store the backend fires them from.

use std::path::Path;

use anyhow::{Context, Result};
use clap::Subcommand;
use clawdis_approvals::{Approvals, Triggers};
use clawdis_browser::settings::Settings;
use clawdis_engine::context::{process_env, state_dir_in};

use crate::print_line;

/// What to do with triggers.
#[derive(Subcommand)]
pub enum TriggersAction {
    /// Print `{triggers: [...]}`: every trigger of the workflow library,
    /// with its next fire time and whether it is paused.
    List,
    /// Pause trigger ID: it fires nothing until resumed.
    Pause {
        /// The trigger's id (from `clawdis triggers list`).
        id: String,
    },
    /// Resume trigger ID; what it would have done while paused is skipped.
    Resume {
        /// The trigger's id.
        id: String,
    },
}

/// Runs `action` on the triggers of `home`'s workflows.
pub fn triggers(home: &Path, action: TriggersAction) -> Result<()> {
    let dirs = Settings::load(home)?.workflow_dirs(home);
    let state_dir = state_dir_in(&process_env(), home);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let approvals = Approvals::open(&state_dir)
            .await
            .with_context(|| format!("opening the store in {}", state_dir.display()))?;
        // Nothing fires here: the backend does.
        let triggers = Triggers::new(approvals, dirs);
        let answer = match action {
            TriggersAction::List => serde_json::json!({ "triggers": triggers.list().await? }),
            TriggersAction::Pause { id } => {
                serde_json::json!({ "trigger": triggers.pause(&id).await? })
            }
            TriggersAction::Resume { id } => {
                serde_json::json!({ "trigger": triggers.resume(&id).await? })
            }
        };
        print_line(&serde_json::to_string_pretty(&answer)?);
        Ok(())
    })
}
