//! The `history` tables' enumerated columns.

use crate::spelled::spelled;

spelled! {
    /// Where a service run stands; the envelope's `status`, plus `running`
    /// and `failed`.
    pub enum HistoryStatus {
        /// Executing steps (first run, or a resume).
        Running = "running",
        /// Finished; its envelope holds the output.
        Ok = "ok",
        /// Paused at an approval gate.
        NeedsApproval = "needs_approval",
        /// Paused at an input gate.
        NeedsInput = "needs_input",
        /// Denied or cancelled.
        Cancelled = "cancelled",
        /// Ended with an error envelope.
        Failed = "failed",
    }
}

impl HistoryStatus {
    /// Whether the run has ended for good (no gate waits, nothing runs).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            HistoryStatus::Ok | HistoryStatus::Cancelled | HistoryStatus::Failed
        )
    }
}

spelled! {
    /// What a service run runs.
    pub enum HistoryKind {
        /// A workflow file.
        Workflow = "workflow",
        /// A pipeline.
        Pipeline = "pipeline",
    }
}

spelled! {
    /// Where one step of a service run stands.
    pub enum StepStatus {
        /// Not reached (yet).
        Pending = "pending",
        /// Executing.
        Running = "running",
        /// Done.
        Ok = "ok",
        /// Failed (its error is recorded).
        Failed = "failed",
        /// Skipped by `when`, `on_error: skip_rest`, or an earlier failure.
        Skipped = "skipped",
        /// Not run because the run was denied or cancelled.
        Cancelled = "cancelled",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_reads_back_as_its_value() {
        for &s in HistoryStatus::ALL {
            assert_eq!(HistoryStatus::parse(s.as_str()), Some(s));
        }
        for &k in HistoryKind::ALL {
            assert_eq!(HistoryKind::parse(k.as_str()), Some(k));
        }
        for &s in StepStatus::ALL {
            assert_eq!(StepStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(StepStatus::parse("done"), None);
    }
}
