//! The browser's counters for `GET /metrics` (Prometheus text format):
//! actions by action and outcome, their retries and latency, and session
//! lifecycle events.

use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder,
};

/// Latency buckets, in seconds: 5 ms to 60 s.
const BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// The counters of one backend.
pub struct Metrics {
    registry: Registry,
    actions: IntCounterVec,
    retries: IntCounterVec,
    sessions: IntCounterVec,
    latency: HistogramVec,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Fresh counters.
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let c = IntCounterVec::new(Opts::new(name, help), labels)
                .unwrap_or_else(|e| unreachable!("a fixed metric definition: {e}"));
            registry
                .register(Box::new(c.clone()))
                .unwrap_or_else(|e| unreachable!("registered once: {e}"));
            c
        };
        let actions = counter(
            "actions_total",
            "Browser actions run, by action and outcome (ok, or the failure code).",
            &["action", "outcome"],
        );
        let retries = counter(
            "retries_total",
            "Re-resolutions and retries browser actions took, by action.",
            &["action"],
        );
        let sessions = counter(
            "sessions_total",
            "Browser session lifecycle events, by status (created, deleted, restored, recreated).",
            &["status"],
        );
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "action_duration_seconds",
                "How long browser actions took, by action.",
            )
            .buckets(BUCKETS.to_vec()),
            &["action"],
        )
        .unwrap_or_else(|e| unreachable!("a fixed metric definition: {e}"));
        registry
            .register(Box::new(latency.clone()))
            .unwrap_or_else(|e| unreachable!("registered once: {e}"));
        Metrics {
            registry,
            actions,
            retries,
            sessions,
            latency,
        }
    }

    /// Counts an action: `outcome` is `ok` or its failure code.
    pub fn action(&self, action: &str, outcome: &str, retries: u32, took: Duration) {
        self.actions.with_label_values(&[action, outcome]).inc();
        self.retries
            .with_label_values(&[action])
            .inc_by(u64::from(retries));
        self.latency
            .with_label_values(&[action])
            .observe(took.as_secs_f64());
    }

    /// Counts a session lifecycle event.
    pub fn session(&self, status: &str) {
        self.sessions.with_label_values(&[status]).inc();
    }

    /// Everything, in the Prometheus text format (a comment heads it, so an
    /// answer before the first action is not empty).
    pub fn render(&self) -> String {
        let mut out = b"# Clawdis: the clawd browser's actions and sessions\n".to_vec();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!(error = %e, "encoding metrics");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_histograms() {
        let m = Metrics::new();
        m.action("click", "ok", 2, Duration::from_millis(30));
        m.action("click", "covered", 0, Duration::from_millis(5000));
        m.session("created");
        let text = m.render();
        for line in [
            "actions_total{action=\"click\",outcome=\"ok\"} 1",
            "actions_total{action=\"click\",outcome=\"covered\"} 1",
            "retries_total{action=\"click\"} 2",
            "sessions_total{status=\"created\"} 1",
            "action_duration_seconds_count{action=\"click\"} 2",
            "action_duration_seconds_bucket{action=\"click\",le=\"0.05\"} 1",
        ] {
            assert!(text.contains(line), "{line} in\n{text}");
        }
    }
}
