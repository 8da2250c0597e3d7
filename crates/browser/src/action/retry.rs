//! Playwright's two retry schedules, without jitter: waiting longer at
//! random helps against contention on a server, not against a page that is
//! still rendering.

use std::time::Duration;

use tokio::time::Instant;

/// Waits before each re-resolution of the target (0, 20, 50, 100, 100,
/// then 500 ms).
pub(crate) const RESOLVE: &[u64] = &[0, 20, 50, 100, 100, 500];
/// Waits before each retry on the same element (0, 20, 100, 100, then
/// 500 ms).
pub(crate) const RECHECK: &[u64] = &[0, 20, 100, 100, 500];

/// The wait before try `n` (from 0) of `schedule`.
pub(crate) fn delay(schedule: &[u64], n: usize) -> Duration {
    Duration::from_millis(schedule.get(n).or(schedule.last()).copied().unwrap_or(0))
}

/// Sleeps before try `n`; false (without sleeping) when that try would
/// start at or after `deadline`.
pub(crate) async fn pause(schedule: &[u64], n: usize, deadline: Instant) -> bool {
    let wait = delay(schedule, n);
    if Instant::now() + wait >= deadline {
        return false;
    }
    tokio::time::sleep(wait).await;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules() {
        let waits: Vec<u64> = (0..8)
            .map(|n| delay(RESOLVE, n).as_millis() as u64)
            .collect();
        assert_eq!(waits, [0, 20, 50, 100, 100, 500, 500, 500]);
        let waits: Vec<u64> = (0..7)
            .map(|n| delay(RECHECK, n).as_millis() as u64)
            .collect();
        assert_eq!(waits, [0, 20, 100, 100, 500, 500, 500]);
    }
}
