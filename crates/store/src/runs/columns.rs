//! The `runs` table's enumerated columns: each value has one stored
//! spelling, parsed in one place. A spelling no version of Clawdis wrote
//! is [`StoreError::Corrupt`](crate::StoreError::Corrupt) when read.

use crate::spelled::spelled;

spelled! {
    /// Where a paused run stands.
    pub enum RunStatus {
        /// Waiting for a decision.
        Pending = "pending",
        /// Claimed by a resume that is executing it.
        Running = "running",
        /// Resumed to completion (or to its next gate).
        Done = "done",
        /// Rejected or cancelled.
        Cancelled = "cancelled",
        /// The resume failed while executing.
        Failed = "failed",
    }
}

spelled! {
    /// What paused: a workflow file or a tool-mode pipeline. The spelling
    /// is also the resume token's `kind`.
    pub enum RunKind {
        /// A workflow file (`workflow-file`).
        Workflow = "workflow-file",
        /// A tool-mode pipeline (`pipeline-resume`).
        Pipeline = "pipeline-resume",
    }
}

spelled! {
    /// Which gate a run paused at.
    pub enum Gate {
        /// An approval gate (`needs_approval`).
        Approval = "approval",
        /// An input request (`needs_input`).
        Input = "input",
    }
}

spelled! {
    /// The decision a resume took.
    pub enum Decision {
        /// Approved.
        Approve = "approve",
        /// Denied.
        Reject = "reject",
        /// Answered an input request.
        Respond = "respond",
        /// Cancelled.
        Cancel = "cancel",
        /// The gate expired; its policy's `on_expiry` was applied.
        Expire = "expire",
    }
}

spelled! {
    /// The channel a decision came through.
    pub enum Channel {
        /// `lobster resume`.
        Cli = "cli",
        /// The app's approvals window.
        App = "app",
        /// A desktop notification's button.
        Notification = "notification",
        /// The control server's HTTP API.
        Http = "http",
        /// The backend, when a gate expired.
        Expiry = "expiry",
        /// A signed approval link a webhook carried.
        Link = "link",
        /// A tool call of the MCP server.
        Mcp = "mcp",
        /// A paired device, with its passkey.
        Device = "device",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_reads_back_as_its_value() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(
            all: &[T],
            spell: fn(T) -> &'static str,
            parse: fn(&str) -> Option<T>,
        ) {
            for &v in all {
                assert_eq!(parse(spell(v)), Some(v));
            }
            assert_eq!(parse("no such value"), None);
        }
        check(RunStatus::ALL, RunStatus::as_str, RunStatus::parse);
        check(RunKind::ALL, RunKind::as_str, RunKind::parse);
        check(Gate::ALL, Gate::as_str, Gate::parse);
        check(Decision::ALL, Decision::as_str, Decision::parse);
        check(Channel::ALL, Channel::as_str, Channel::parse);
    }
}
