//! A workflow file's `triggers:` block: cron schedules (`{cron, args?,
//! catchup?}`) and file watches (`{watch, args?}`) that the backend runs
//! the workflow on. The engine reads and checks the block; the backend's
//! scheduler fires them.

use std::str::FromStr as _;

use crate::error::{Error, Result};
use crate::value::{Object, Value};

/// What happens to the runs of a schedule missed while no backend ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Catchup {
    /// Skip them.
    None,
    /// Run once for all of them (the default).
    #[default]
    One,
    /// Run once for each of them.
    All,
}

/// When a trigger fires.
#[derive(Clone, Debug)]
pub enum TriggerKind {
    /// On a five-field cron schedule, in the local time zone.
    Cron {
        /// The schedule.
        schedule: Box<croner::Cron>,
        /// Missed runs.
        catchup: Catchup,
    },
    /// When files matching a glob (`~/inbox/*.json`) appear or change.
    Watch,
}

/// One trigger of a workflow.
#[derive(Clone, Debug)]
pub struct Trigger {
    /// Its cron expression or glob, as written.
    pub spec: String,
    /// When it fires.
    pub kind: TriggerKind,
    /// The args each run gets (a watch adds `paths`).
    pub args: Object,
}

impl PartialEq for Trigger {
    fn eq(&self, other: &Self) -> bool {
        self.spec == other.spec
            && self.args == other.args
            && match (&self.kind, &other.kind) {
                (TriggerKind::Cron { catchup: a, .. }, TriggerKind::Cron { catchup: b, .. }) => {
                    a == b
                }
                (TriggerKind::Watch, TriggerKind::Watch) => true,
                _ => false,
            }
    }
}

impl Trigger {
    /// `cron` or `watch`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            TriggerKind::Cron { .. } => "cron",
            TriggerKind::Watch => "watch",
        }
    }
}

/// Reads a `triggers:` value (`None`: the file has none).
pub fn parse_triggers(value: Option<&Value>) -> Result<Vec<Trigger>> {
    let list = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => {
            return Err(Error::runtime(
                "triggers must be a list of {cron, args?, catchup?} and {watch, args?}",
            ));
        }
    };
    list.iter()
        .enumerate()
        .map(|(i, entry)| parse_one(entry).map_err(|e| Error::runtime(format!("triggers[{i}]{e}"))))
        .collect()
}

/// One entry; the error starts with the field (`.cron: …`).
fn parse_one(entry: &Value) -> std::result::Result<Trigger, String> {
    let Value::Object(obj) = entry else {
        return Err(" must be {cron, args?, catchup?} or {watch, args?}".into());
    };
    for (key, _) in obj.iter() {
        if !["cron", "watch", "args", "catchup"].contains(&key) {
            return Err(format!(
                ".{key}: unknown field (cron, watch, args, catchup)"
            ));
        }
    }
    let args = match obj.get("args") {
        None | Some(Value::Null) => Object::new(),
        Some(Value::Object(args)) => args.clone(),
        Some(_) => return Err(".args must be an object".into()),
    };
    let text = |key: &str| match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
        Some(_) => Err(format!(".{key} must be a non-empty string")),
    };
    match (text("cron")?, text("watch")?) {
        (Some(spec), None) => {
            let catchup = match text("catchup")?.as_deref() {
                None | Some("one") => Catchup::One,
                Some("none") => Catchup::None,
                Some("all") => Catchup::All,
                Some(other) => {
                    return Err(format!(".catchup: {other:?} is not none, one or all"));
                }
            };
            Ok(Trigger {
                kind: TriggerKind::Cron {
                    schedule: Box::new(parse_cron(&spec).map_err(|e| format!(".cron: {e}"))?),
                    catchup,
                },
                spec,
                args,
            })
        }
        (None, Some(spec)) => {
            if obj.get("catchup").is_some() {
                return Err(".catchup: only a cron trigger catches up".into());
            }
            if args.get("paths").is_some() {
                return Err(".args.paths: a watch passes the changed paths itself".into());
            }
            Ok(Trigger {
                kind: TriggerKind::Watch,
                spec,
                args,
            })
        }
        (Some(_), Some(_)) => Err(" has both cron and watch; give one".into()),
        (None, None) => Err(" needs cron or watch".into()),
    }
}

/// A five-field cron expression: minute, hour, day of month, month, day of
/// week (names allowed).
pub fn parse_cron(spec: &str) -> std::result::Result<croner::Cron, String> {
    let fields = spec.split_whitespace().count();
    if fields != 5 {
        return Err(format!(
            "{spec:?} has {fields} fields; a schedule has five (minute hour day month weekday)"
        ));
    }
    croner::Cron::from_str(spec).map_err(|e| format!("{spec:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::workflow::file::{Workflow, from_value, parse_yaml};

    fn load(yaml: &str) -> Result<Workflow> {
        from_value(&parse_yaml(yaml)?, Path::new("/w/flow.lobster"))
    }

    const STEPS: &str = "steps:\n  - id: a\n    run: echo a\n";

    #[test]
    fn cron_and_watch_triggers_read_with_their_args_and_catchup() {
        let flow = load(&format!(
            "args:\n  who: {{default: me}}\n  paths: {{default: []}}\ntriggers:\n  \
             - {{cron: '0 9 * * 1-5', args: {{who: team}}}}\n  \
             - {{cron: '*/15 * * * SUN', catchup: all}}\n  - {{watch: '~/inbox/*.json'}}\n{STEPS}"
        ))
        .unwrap();
        let t = &flow.triggers;
        assert_eq!(t.len(), 3);
        assert_eq!(
            (t[0].kind_name(), t[0].spec.as_str()),
            ("cron", "0 9 * * 1-5")
        );
        assert!(matches!(
            t[0].kind,
            TriggerKind::Cron {
                catchup: Catchup::One,
                ..
            }
        ));
        assert_eq!(t[0].args.get("who"), Some(&Value::from("team")));
        assert!(matches!(
            t[1].kind,
            TriggerKind::Cron {
                catchup: Catchup::All,
                ..
            }
        ));
        assert_eq!(
            (t[2].kind_name(), t[2].spec.as_str()),
            ("watch", "~/inbox/*.json")
        );
        assert!(load(STEPS).unwrap().triggers.is_empty());
    }

    #[test]
    fn a_bad_trigger_is_an_error_naming_its_field() {
        for (block, needle) in [
            ("triggers: {cron: '* * * * *'}", "triggers must be a list"),
            (
                "triggers: [{cron: '* * * *'}]",
                "triggers[0].cron: \"* * * *\" has 4 fields",
            ),
            ("triggers: [{cron: '0 0 * * * *'}]", "has 6 fields"),
            ("triggers: [{cron: '61 * * * *'}]", "triggers[0].cron"),
            ("triggers: [{cron: '* * * * *', catchup: some}]", ".catchup"),
            (
                "triggers: [{cron: '* * * * *', watch: '/x'}]",
                "both cron and watch",
            ),
            (
                "triggers: [{every: 5m}]",
                "triggers[0].every: unknown field",
            ),
            ("triggers: [{}]", "needs cron or watch"),
            ("triggers: [{watch: '/x/*'}]", "declare it in args"),
            (
                "triggers: [{cron: '* * * * *', args: {nope: 1}}]",
                "triggers[0].args.nope",
            ),
            (
                "triggers: [{cron: '* * * * *', args: [1]}]",
                "args must be an object",
            ),
        ] {
            let err = load(&format!("{block}\n{STEPS}")).unwrap_err().message;
            assert!(err.contains(needle), "{block}: {err}");
        }
    }

    #[test]
    fn a_schedule_finds_its_next_time() {
        use chrono::TimeZone as _;
        let cron = parse_cron("30 9 * * MON-FRI").unwrap();
        // Saturday 2026-11-28 10:00 UTC → Monday 2026-11-30 09:30.
        let sat = chrono::Utc
            .with_ymd_and_hms(2026, 11, 28, 10, 0, 0)
            .unwrap();
        let next = cron.find_next_occurrence(&sat, false).unwrap();
        assert_eq!(
            next,
            chrono::Utc
                .with_ymd_and_hms(2026, 11, 30, 9, 30, 0)
                .unwrap()
        );
    }
}
