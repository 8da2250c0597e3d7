//! When a cron trigger fires: its occurrences in the local time zone (`TZ`,
//! else the system's) since its mark, and what its catch-up policy makes
//! of those it missed.

use chrono::{DateTime, TimeZone, Utc};
use clawdis_engine::workflow::Catchup;

/// An occurrence this late is still on time, not missed: the scheduler
/// wakes at each occurrence, so only a backend that was down or a machine
/// that slept is later than this.
pub(crate) const ON_TIME: chrono::TimeDelta = chrono::TimeDelta::seconds(30);

/// The most missed runs `catchup: all` starts at once; older ones are
/// skipped (a minutely schedule after a week away would be 10,080).
pub(crate) const MAX_CATCHUP: usize = 100;

/// What a schedule has due at `now`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Due {
    /// The occurrences to run, oldest first; each run moves the mark to
    /// its occurrence.
    pub fire: Vec<DateTime<Utc>>,
    /// Where the mark moves without a run (occurrences skipped).
    pub skip_to: Option<DateTime<Utc>>,
}

/// The occurrences of `cron` in time zone `zone` after `mark` up to `now`,
/// as `catchup` has them handled.
pub(crate) fn due<Tz: TimeZone>(
    cron: &croner::Cron,
    catchup: Catchup,
    mark: DateTime<Utc>,
    now: DateTime<Utc>,
    zone: &Tz,
) -> Due {
    let Ok(last) = cron.find_previous_occurrence(&now.with_timezone(zone), true) else {
        return Due::default();
    };
    let last = last.with_timezone(&Utc);
    if last <= mark {
        return Due::default();
    }
    match catchup {
        Catchup::None if now.signed_duration_since(last) <= ON_TIME => Due {
            fire: vec![last],
            skip_to: None,
        },
        Catchup::None => Due {
            fire: Vec::new(),
            skip_to: Some(last),
        },
        Catchup::One => Due {
            fire: vec![last],
            skip_to: None,
        },
        Catchup::All => {
            let mut fire: Vec<DateTime<Utc>> = std::iter::once(last)
                .chain(
                    cron.iter_before(last.with_timezone(zone))
                        .map(|t| t.with_timezone(&Utc)),
                )
                .take_while(|t| *t > mark)
                .take(MAX_CATCHUP)
                .collect();
            fire.reverse();
            Due {
                fire,
                skip_to: None,
            }
        }
    }
}

/// The next occurrence of `cron` in time zone `zone` after `now`.
pub(crate) fn next<Tz: TimeZone>(
    cron: &croner::Cron,
    now: DateTime<Utc>,
    zone: &Tz,
) -> Option<DateTime<Utc>> {
    cron.find_next_occurrence(&now.with_timezone(zone), false)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;
    use clawdis_engine::workflow::parse_cron;

    use super::*;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 26, h, m, s).unwrap()
    }

    #[test]
    fn nothing_is_due_before_the_next_occurrence() {
        let cron = parse_cron("0 * * * *").unwrap();
        assert_eq!(
            due(&cron, Catchup::All, at(9, 0, 0), at(9, 59, 59), &Utc),
            Due::default()
        );
        assert_eq!(next(&cron, at(9, 30, 0), &Utc), Some(at(10, 0, 0)));
    }

    #[test]
    fn an_occurrence_on_time_fires_whatever_the_policy() {
        let cron = parse_cron("0 * * * *").unwrap();
        for catchup in [Catchup::None, Catchup::One, Catchup::All] {
            assert_eq!(
                due(&cron, catchup, at(9, 0, 0), at(10, 0, 1), &Utc).fire,
                vec![at(10, 0, 0)],
                "{catchup:?}"
            );
        }
    }

    #[test]
    fn missed_occurrences_follow_the_catchup_policy() {
        let cron = parse_cron("0 * * * *").unwrap();
        let (mark, now) = (at(6, 0, 0), at(9, 30, 0));
        assert_eq!(
            due(&cron, Catchup::None, mark, now, &Utc),
            Due {
                fire: Vec::new(),
                skip_to: Some(at(9, 0, 0))
            }
        );
        assert_eq!(
            due(&cron, Catchup::One, mark, now, &Utc).fire,
            vec![at(9, 0, 0)]
        );
        assert_eq!(
            due(&cron, Catchup::All, mark, now, &Utc).fire,
            vec![at(7, 0, 0), at(8, 0, 0), at(9, 0, 0)]
        );
    }

    #[test]
    fn a_schedule_is_read_in_its_zone() {
        // 09:00 at UTC+05:45 is 03:15 UTC.
        let zone = chrono::FixedOffset::east_opt(5 * 3600 + 45 * 60).unwrap();
        let cron = parse_cron("0 9 * * *").unwrap();
        assert_eq!(next(&cron, at(0, 0, 0), &zone), Some(at(3, 15, 0)));
        assert_eq!(
            due(&cron, Catchup::One, at(0, 0, 0), at(3, 15, 5), &zone).fire,
            vec![at(3, 15, 0)]
        );
    }

    #[test]
    fn catching_up_all_is_bounded() {
        let cron = parse_cron("* * * * *").unwrap();
        let fire = due(&cron, Catchup::All, at(0, 0, 0), at(12, 0, 30), &Utc).fire;
        assert_eq!(fire.len(), MAX_CATCHUP);
        assert_eq!(fire.last(), Some(&at(12, 0, 0)));
        assert_eq!(fire.first(), Some(&at(10, 21, 0)), "the newest are kept");
    }
}
