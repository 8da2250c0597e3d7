//! Triggers, black box: a real `clawdis serve` fires its workflows' cron
//! schedules on time and catches up what it missed while it was killed as
//! each trigger's `catchup` says, runs a workflow when files matching a
//! watch appear (passing them as `paths`), and lists, pauses and resumes
//! triggers over HTTP and from `clawdis triggers`. Missed time is made by
//! moving the triggers' marks back in the real SQLite file while the
//! backend is down.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clawdis_e2e::clawdis_cli;
use clawdis_e2e::control::{Client, Server, start_server_full};
use serde_json::{Value, json};

/// `clawdis serve` on `home` with the local time zone `tz`.
fn serve(home: &Path, tz: &str) -> Server {
    start_server_full(home, json!({}), &["--no-browser"], &[("TZ", Path::new(tz))])
}

/// Writes workflow `name` into the home's library.
fn workflow(home: &Path, name: &str, text: &str) {
    let dir = home.join("workflows");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.lobster")), text).unwrap();
}

/// `GET /triggers`.
fn triggers(client: &Client) -> Vec<Value> {
    client.ok("GET", "/triggers", None)["triggers"]
        .as_array()
        .unwrap()
        .clone()
}

/// The id of the trigger whose args have `which`.
fn id_of(list: &[Value], which: &str) -> String {
    list.iter()
        .find(|t| t["args"]["which"] == which)
        .unwrap_or_else(|| panic!("no trigger {which} in {list:#?}"))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The runs of workflow `name`, oldest first.
fn runs_of(client: &Client, name: &str) -> Vec<Value> {
    let mut runs = client.ok("GET", &format!("/runs?workflow={name}&limit=500"), None)["runs"]
        .as_array()
        .unwrap()
        .clone();
    runs.reverse();
    runs
}

/// Waits until `done` holds of workflow `name`'s runs, then returns them.
fn wait_runs(
    client: &Client,
    name: &str,
    within: Duration,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + within;
    loop {
        let runs = runs_of(client, name);
        if done(&runs) {
            return runs;
        }
        assert!(
            Instant::now() < deadline,
            "runs of {name} never came: {runs:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Moves trigger `id`'s mark back by `by` in the home's database (the
/// backend is down), as if it had been down that long.
fn rewind(home: &Path, id: &str, by: chrono::TimeDelta) {
    let db = home.join("clawdis.db");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        use sqlx::Connection as _;
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
            .await
            .unwrap();
        let mark: String = sqlx::query_scalar("SELECT mark FROM triggers WHERE id = ?")
            .bind(id)
            .fetch_one(&mut conn)
            .await
            .unwrap();
        let earlier = chrono::DateTime::parse_from_rfc3339(&mark).unwrap() - by;
        let earlier = earlier
            .with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        sqlx::query("UPDATE triggers SET mark = ? WHERE id = ?")
            .bind(&earlier)
            .bind(id)
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
    });
}

fn kill9(mut server: Server) {
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    // Drop's SIGTERM finds no process.
}

fn started_by(run: &Value) -> &str {
    run["startedBy"].as_str().unwrap()
}

#[test]
fn schedules_are_listed_with_their_next_time_in_the_local_zone_and_pause_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    workflow(
        &home,
        "morning",
        "args:\n  which: {default: x}\ntriggers:\n  - {cron: '0 9 * * 1-5', args: {which: weekdays}}\n  \
         - {cron: '30 7 * * *', catchup: all, args: {which: daily}}\nsteps:\n  - id: s\n    run: echo hi\n",
    );
    // POSIX TZ: local time is UTC+05:45, with no zone database needed.
    let server = serve(&home, "XYZ-5:45");
    let client = Client::new(&server);
    let list = triggers(&client);
    assert_eq!(list.len(), 2, "{list:#?}");
    let weekdays = list
        .iter()
        .find(|t| t["args"]["which"] == "weekdays")
        .unwrap();
    assert_eq!(weekdays["workflow"], "morning");
    assert_eq!(weekdays["kind"], "cron");
    assert_eq!(weekdays["spec"], "0 9 * * 1-5");
    assert_eq!(weekdays["catchup"], "one", "the default catch-up");
    assert_eq!(weekdays["paused"], false);
    assert_eq!(weekdays["lastFiredAt"], Value::Null);
    let next = weekdays["next"].as_str().unwrap();
    assert!(next.ends_with("T09:00:00+05:45"), "{next}");
    let next = chrono::DateTime::parse_from_rfc3339(next).unwrap();
    assert!(next > chrono::Utc::now(), "{next}");
    assert!(
        chrono::Datelike::weekday(&next).number_from_monday() <= 5,
        "{next}"
    );
    let daily = list.iter().find(|t| t["args"]["which"] == "daily").unwrap();
    assert_eq!(daily["catchup"], "all");
    assert!(daily["next"].as_str().unwrap().ends_with("T07:30:00+05:45"));

    // Paused over HTTP: no next time, and the CLI sees it.
    let id = weekdays["id"].as_str().unwrap();
    let paused = client.ok("POST", &format!("/triggers/{id}/pause"), None);
    assert_eq!(paused["trigger"]["paused"], true, "{paused}");
    assert_eq!(paused["trigger"]["next"], Value::Null);
    let out = clawdis_cli(&home, &["triggers", "list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen = listed["triggers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap();
    assert_eq!(seen["paused"], true);

    // Resumed from the CLI: the backend sees it.
    let out = clawdis_cli(&home, &["triggers", "resume", id]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let resumed = triggers(&client);
    let resumed = resumed.iter().find(|t| t["id"] == id).unwrap();
    assert_eq!(resumed["paused"], false);
    assert!(resumed["next"].is_string());

    // Unknown triggers: 404 with {error}, and a failing CLI.
    for action in ["pause", "resume"] {
        let (status, body) = client.call("POST", &format!("/triggers/0123456789ab/{action}"), None);
        assert_eq!(status, 404, "{body}");
        assert!(
            body["error"].as_str().unwrap().contains("no such trigger"),
            "{body}"
        );
    }
    let out = clawdis_cli(&home, &["triggers", "pause", "nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such trigger"));
}

#[test]
fn missed_occurrences_are_caught_up_as_each_trigger_says_and_fire_once() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // A daily time about twelve hours from now: the last occurrence is
    // long past, whatever the hour the test runs at.
    let hour = (chrono::Timelike::hour(&chrono::Utc::now()) + 12) % 24;
    let cron = format!("0 {hour} * * *");
    workflow(
        &home,
        "nightly",
        &format!(
            "args:\n  which: {{default: x}}\ntriggers:\n  \
             - {{cron: '{cron}', catchup: none, args: {{which: none}}}}\n  \
             - {{cron: '{cron}', catchup: all, args: {{which: all}}}}\n  \
             - {{cron: '{cron}', args: {{which: one}}}}\n\
             steps:\n  - id: say\n    run: echo $LOBSTER_ARG_WHICH\n"
        ),
    );
    let server = serve(&home, "UTC");
    let client = Client::new(&server);
    let list = triggers(&client);
    let ids: Vec<String> = ["none", "all", "one"]
        .iter()
        .map(|w| id_of(&list, w))
        .collect();
    kill9(server);

    // Down for three days (and an hour): three occurrences missed.
    for id in &ids {
        rewind(&home, id, chrono::TimeDelta::hours(73));
    }
    let server = serve(&home, "UTC");
    let client = Client::new(&server);
    let runs = wait_runs(&client, "nightly", Duration::from_secs(30), |r| {
        r.len() >= 4
    });
    let by = |id: &str| -> Vec<&Value> {
        runs.iter()
            .filter(|r| started_by(r) == format!("trigger:{id}"))
            .collect()
    };
    assert_eq!(
        by(&ids[1]).len(),
        3,
        "all: one run per missed occurrence: {runs:#?}"
    );
    assert_eq!(by(&ids[2]).len(), 1, "one: a single run: {runs:#?}");
    assert!(by(&ids[0]).is_empty(), "none: no run: {runs:#?}");
    assert_eq!(runs.len(), 4, "{runs:#?}");
    let done = wait_runs(&client, "nightly", Duration::from_secs(30), |r| {
        r.iter().all(|r| r["status"] == "ok")
    });
    let export = client.ok(
        "GET",
        &format!("/runs/{}/export", by(&ids[2])[0]["runId"].as_str().unwrap()),
        None,
    );
    assert_eq!(export["run"]["args"]["which"], "one", "{export:#}");
    assert_eq!(done.len(), 4);
    let listed = triggers(&client);
    let none = listed.iter().find(|t| t["id"] == ids[0].as_str()).unwrap();
    assert_eq!(none["lastFiredAt"], Value::Null, "{none}");
    let all = listed.iter().find(|t| t["id"] == ids[1].as_str()).unwrap();
    assert!(all["lastFiredAt"].is_string(), "{all}");

    // Killed again and restarted: the occurrences already run are not run
    // again. The `one` trigger, last in the file, is set back a day more,
    // so its new run shows the restarted scheduler has looked at them all.
    kill9(server);
    rewind(&home, &ids[2], chrono::TimeDelta::hours(24));
    let server = serve(&home, "UTC");
    let client = Client::new(&server);
    let runs = wait_runs(&client, "nightly", Duration::from_secs(30), |r| {
        r.len() >= 5
    });
    let by = |id: &str| {
        runs.iter()
            .filter(|r| started_by(r) == format!("trigger:{id}"))
            .count()
    };
    assert_eq!(
        (by(&ids[0]), by(&ids[1]), by(&ids[2])),
        (0, 3, 2),
        "{runs:#?}"
    );
    drop(server);
}

#[test]
fn a_schedule_fires_on_the_minute_and_a_paused_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    workflow(
        &home,
        "minutely",
        "args:\n  which: {default: x}\ntriggers:\n  - {cron: '* * * * *', args: {which: live}}\n  \
         - {cron: '* * * * *', args: {which: paused}}\nsteps:\n  - id: s\n    run: echo $LOBSTER_ARG_WHICH\n",
    );
    // Paused from the CLI before any backend runs. Listing arms both
    // triggers: the first occurrence either may fire for is the first
    // minute after this.
    let armed = chrono::Utc::now();
    let out = clawdis_cli(&home, &["triggers", "list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = list["triggers"].as_array().unwrap().clone();
    let (live, paused) = (id_of(&list, "live"), id_of(&list, "paused"));
    let out = clawdis_cli(&home, &["triggers", "pause", &paused]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let server = serve(&home, "UTC");
    let client = Client::new(&server);
    let next = triggers(&client)
        .into_iter()
        .find(|t| t["id"] == live.as_str())
        .unwrap()["next"]
        .as_str()
        .unwrap()
        .to_string();
    let next = chrono::DateTime::parse_from_rfc3339(&next).unwrap();
    assert!(next > chrono::Utc::now(), "{next}");
    let runs = wait_runs(&client, "minutely", Duration::from_secs(75), |r| {
        !r.is_empty()
    });
    // It started on a minute, one that came after the triggers were armed.
    let started: chrono::DateTime<chrono::Utc> =
        runs[0]["startedAt"].as_str().unwrap().parse().unwrap();
    let minute =
        chrono::DurationRound::duration_trunc(started, chrono::TimeDelta::minutes(1)).unwrap();
    assert!(
        minute > armed,
        "started at {started}, for a minute before {armed}"
    );
    assert!(
        started.signed_duration_since(minute) < chrono::TimeDelta::seconds(5),
        "started at {started}, late for {minute}"
    );
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(started_by(&runs[0]), format!("trigger:{live}"));
    let listed = triggers(&client);
    let paused_now = listed.iter().find(|t| t["id"] == paused.as_str()).unwrap();
    assert_eq!(paused_now["paused"], true);
    assert_eq!(paused_now["lastFiredAt"], Value::Null, "{paused_now}");
}

/// Files of `runs`' `paths` arg, by file name.
fn names(client: &Client, run: &Value) -> Vec<String> {
    let export = client.ok(
        "GET",
        &format!("/runs/{}/export", run["runId"].as_str().unwrap()),
        None,
    );
    export["run"]["args"]["paths"]
        .as_array()
        .unwrap_or_else(|| panic!("no paths in {export:#}"))
        .iter()
        .map(|p| {
            PathBuf::from(p.as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn a_watch_runs_its_workflow_with_the_changed_files_and_catches_up_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let inbox = dir.path().join("inbox");
    std::fs::create_dir_all(&inbox).unwrap();
    let later = dir.path().join("later");
    workflow(
        &home,
        "intake",
        &format!(
            "args:\n  paths: {{default: []}}\ntriggers:\n  - {{watch: '{}/*.json'}}\n\
             steps:\n  - id: s\n    run: echo got\n",
            inbox.display()
        ),
    );
    workflow(
        &home,
        "late",
        &format!(
            "args:\n  paths: {{default: []}}\ntriggers:\n  - {{watch: '{}/*.json'}}\n\
             steps:\n  - id: s\n    run: echo got\n",
            later.display()
        ),
    );
    let server = serve(&home, "UTC");
    let client = Client::new(&server);
    let list = triggers(&client);
    let intake = list.iter().find(|t| t["workflow"] == "intake").unwrap();
    assert_eq!(intake["kind"], "watch");
    assert_eq!(intake["next"], Value::Null);
    let id = intake["id"].as_str().unwrap().to_string();

    // Two files written together: one run with both; other names: none.
    std::fs::write(inbox.join("b.json"), "{}").unwrap();
    std::fs::write(inbox.join("a.json"), "{}").unwrap();
    std::fs::write(inbox.join("notes.txt"), "").unwrap();
    let runs = wait_runs(&client, "intake", Duration::from_secs(20), |r| {
        !r.is_empty()
    });
    assert_eq!(names(&client, &runs[0]), ["a.json", "b.json"]);
    assert_eq!(started_by(&runs[0]), format!("trigger:{id}"));

    // A file dropped while the backend is down is run after the restart.
    kill9(server);
    std::fs::write(inbox.join("c.json"), "{}").unwrap();
    let server = serve(&home, "UTC");
    let client = Client::new(&server);
    let runs = wait_runs(&client, "intake", Duration::from_secs(20), |r| r.len() >= 2);
    assert_eq!(names(&client, &runs[1]), ["c.json"]);

    // Paused: what changes meanwhile is skipped, not caught up on resume.
    client.ok("POST", &format!("/triggers/{id}/pause"), None);
    std::fs::write(inbox.join("d.json"), "{}").unwrap();
    // Not a wait for the backend: d.json must be older than the resume by
    // more than the grain of the kernel's file clock, to be "before" it.
    std::thread::sleep(Duration::from_millis(100));
    client.ok("POST", &format!("/triggers/{id}/resume"), None);
    std::fs::write(inbox.join("e.json"), "{}").unwrap();
    let runs = wait_runs(&client, "intake", Duration::from_secs(20), |r| r.len() >= 3);
    assert_eq!(names(&client, &runs[2]), ["e.json"]);

    // A watched directory that does not exist yet: the trigger says so,
    // and starts when it appears.
    let late = triggers(&client)
        .into_iter()
        .find(|t| t["workflow"] == "late")
        .unwrap();
    let error = late["error"].as_str().unwrap_or_default();
    assert!(error.contains("not a directory"), "{late}");
    std::fs::create_dir_all(&later).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while triggers(&client)
        .iter()
        .any(|t| t["workflow"] == "late" && !t["error"].is_null())
    {
        assert!(Instant::now() < deadline, "the watch never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::write(later.join("x.json"), "{}").unwrap();
    let runs = wait_runs(&client, "late", Duration::from_secs(20), |r| !r.is_empty());
    assert_eq!(names(&client, &runs[0]), ["x.json"]);
    assert_eq!(runs_of(&client, "intake").len(), 3, "nothing else fired");

    // A workflow added while the backend runs is watched at once (well
    // before the backend would read its directories again on its own).
    let added = dir.path().join("added");
    std::fs::create_dir_all(&added).unwrap();
    workflow(
        &home,
        "added",
        &format!(
            "args:\n  paths: {{default: []}}\ntriggers:\n  - {{watch: '{}/*.json'}}\n\
             steps:\n  - id: s\n    run: echo got\n",
            added.display()
        ),
    );
    assert!(triggers(&client).iter().any(|t| t["workflow"] == "added"));
    std::fs::write(added.join("y.json"), "{}").unwrap();
    let runs = wait_runs(&client, "added", Duration::from_secs(10), |r| !r.is_empty());
    assert_eq!(names(&client, &runs[0]), ["y.json"]);
}
