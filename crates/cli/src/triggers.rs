//! `clawdis triggers list|pause|resume`: the workflows' triggers, read
//! from the workflow library and the store the backend fires them from.

use std::path::Path;

use anyhow::Result;
use clap::Subcommand;
use clawdis_approvals::Triggers;
use clawdis_browser::settings::Settings;

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
    crate::on_approvals(home, async |approvals| {
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
