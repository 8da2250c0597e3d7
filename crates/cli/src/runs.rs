//! `clawdis runs list|show|cancel|export`: the workflow service's history,
//! read from the store the backend writes.

use std::path::Path;

use anyhow::{Result, bail};
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
    /// Cancel run ID: the gate it waits at is cancelled (recorded as
    /// `cli`); a run executing in the home's backend is stopped there.
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
                    presence: None,
                    seen: None,
                    comment: None,
                };
                match runs.cancel(&id, decider).await {
                    Ok(view) => serde_json::to_value(view)?,
                    Err(ApprovalsError::Elsewhere(why)) => {
                        let home = home.to_path_buf();
                        tokio::task::spawn_blocking(move || cancel_in_backend(&home, &id, why))
                            .await??
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            RunsAction::Export { id } => runs.export(&id).await?,
        };
        print_line(&serde_json::to_string_pretty(&answer)?);
        Ok(())
    })
}

/// Asks the home's backend to stop run `id`, which executes there (`why`
/// says so); the backend records the cancel as the home's owner over HTTP.
fn cancel_in_backend(home: &Path, id: &str, why: String) -> Result<serde_json::Value> {
    let path = format!("/runs/{}/cancel", path_segment(id));
    let Some(answer) = crate::backend::post(home, &path)? else {
        // No backend listens: the process running it is another one.
        return Err(ApprovalsError::Elsewhere(why).into());
    };
    if answer.status == 200 {
        return Ok(answer.body);
    }
    let error = answer.body["error"]
        .as_str()
        .map_or_else(|| answer.body.to_string(), str::to_string);
    bail!(
        "the backend refused to cancel run {id} ({}): {error}",
        answer.status
    )
}

/// `text` as one URL path segment: every byte outside the unreserved set
/// percent-encoded.
fn path_segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_path_segment_keeps_no_separator() {
        assert_eq!(super::path_segment("a1-b_c.d~e"), "a1-b_c.d~e");
        assert_eq!(super::path_segment("../x?y#z /"), "..%2Fx%3Fy%23z%20%2F");
    }
}
