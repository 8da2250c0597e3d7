//! Identifies the process that holds a claim, so a claim left behind by a
//! killed process can be recognised as stale.

use std::fmt;

/// A process identity that survives pid reuse: pid plus start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessOwner {
    /// Process id.
    pub pid: u32,
    /// Start time in clock ticks since boot (Linux), or 0 where unknown.
    pub start: u64,
}

impl fmt::Display for ProcessOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.pid, self.start)
    }
}

impl ProcessOwner {
    /// Parses the `pid:start` form.
    pub fn parse(s: &str) -> Option<ProcessOwner> {
        let (pid, start) = s.split_once(':')?;
        Some(ProcessOwner {
            pid: pid.parse().ok()?,
            start: start.parse().ok()?,
        })
    }

    /// Whether this process is still running.
    pub fn is_alive(&self) -> bool {
        let Ok(pid) = libc::pid_t::try_from(self.pid) else {
            return false;
        };
        // SAFETY: kill with signal 0 only checks for existence and permission.
        let exists = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !exists {
            return false;
        }
        match (self.start, start_time(self.pid)) {
            (0, _) | (_, None) => true,
            (want, Some(have)) => want == have,
        }
    }
}

/// The identity of this process (read once: it does not change).
pub fn current_owner() -> ProcessOwner {
    static OWNER: std::sync::OnceLock<ProcessOwner> = std::sync::OnceLock::new();
    *OWNER.get_or_init(|| {
        let pid = std::process::id();
        ProcessOwner {
            pid,
            start: start_time(pid).unwrap_or(0),
        }
    })
}

/// Process start time from `/proc/<pid>/stat` (field 22), Linux only.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces; fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_and_round_trips() {
        let me = current_owner();
        assert!(me.is_alive());
        assert_eq!(ProcessOwner::parse(&me.to_string()), Some(me));
        if me.start != 0 {
            assert!(
                !ProcessOwner {
                    start: me.start + 1,
                    ..me
                }
                .is_alive()
            );
        }
    }
}
