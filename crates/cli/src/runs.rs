//! `clawdis runs list|show|cancel|export`: the workflow service's history,
//! read from the store the backend writes.

use std::path::Path;

use anyhow::Result;
use clap::Subcommand;
use clawdis_approvals::{ApprovalsError, Channel, Decider, HistoryStatus, RunQuery, Runs};

use crate::print_line;

/// What to do with runs.
#[derive(Subcommand)]
pub enum RunsAction {
    /// Print `{runs, next}`: runs started through the service, newest first.
    List {
        /// Only runs in this status (running, ok, needs_approval, needs_input, cancelled, failed).
        #[arg(long)]
        status: Option<String>,
        /// Only runs of this workflow.
        #[arg(long)]
        workflow: Option<String>,
        /// How many (default 50, at most 500).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// The `next` of the previous page.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Print run ID with its steps and decisions.
    Show {
        /// The run id.
        id: String,
    },
    /// Cancel run ID: the gate it waits at is cancelled (recorded as `cli`).
    Cancel {
        /// The run id.
        id: String,
    },
    /// Print run ID as one self-contained JSON document.
    Export {
        /// The run id.
        id: String,
    },
}

/// Runs `action` on the runs of `home`.
pub fn runs(home: &Path, action: RunsAction) -> Result<()> {
    crate::on_approvals(home, async |approvals| {
        // Nothing is started here, so no workflow library is needed.
        let runs = Runs::open(approvals, Vec::new()).await?;
        let answer = match action {
            RunsAction::List {
                status,
                workflow,
                limit,
                cursor,
            } => {
                let status = match status.as_deref() {
                    None => None,
                    Some(word) => Some(HistoryStatus::parse(word).ok_or_else(|| {
                        ApprovalsError::Invalid(format!(
                            "--status must be running, ok, needs_approval, needs_input, cancelled or failed, not {word:?}"
                        ))
                    })?),
                };
                let query = RunQuery {
                    status,
                    workflow,
                    limit,
                    cursor,
                };
                serde_json::to_value(runs.list(&query).await?)?
            }
            RunsAction::Show { id } => serde_json::to_value(runs.get(&id).await?)?,
            RunsAction::Cancel { id } => {
                // This terminal is where agents run too: never proof of a person.
                let decider = Decider {
                    by: Some("cli".to_string()),
                    via: Channel::Cli,
                    human: false,
                    comment: None,
                };
                serde_json::to_value(runs.cancel(&id, decider).await?)?
            }
            RunsAction::Export { id } => runs.export(&id).await?,
        };
        print_line(&serde_json::to_string_pretty(&answer)?);
        Ok(())
    })
}
