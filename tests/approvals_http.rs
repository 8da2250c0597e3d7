//! Approvals over `clawdis serve`'s HTTP API (no app, no notification):
//! list, follow as server-sent events, decide once (recorded as `http`).

use std::time::{Duration, Instant};

use clawdis_e2e::control::{Client, read_until, start_server_full, subscribe};
use clawdis_e2e::{envelope, lobster, signal};
use serde_json::json;

const FLOW: &str = "exec --json --shell 'echo [1,2]' | approve --prompt 'Ship it?' | exec --shell 'echo shipped >> shipped.txt; echo done'";

#[test]
fn serve_lists_streams_and_decides_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    assert_eq!(c.ok("GET", "/approvals", None), json!({"approvals": []}));
    let mut events = subscribe(server.port, server.token.trim(), "/approvals/events");

    // An agent's lobster pauses in the same home: the stream tells within 1 s.
    let out = lobster(&home)
        .current_dir(&work)
        .args(["run", "--mode", "tool", FLOW])
        .output()
        .unwrap();
    let paused = envelope(&out);
    assert_eq!(paused["status"], "needs_approval");
    let seen = read_until(&mut events, "Ship it?", Duration::from_secs(1));
    assert!(seen.contains("event: paused"), "{seen}");

    let listed = c.ok("GET", "/approvals", None);
    let approval = &listed["approvals"][0];
    assert_eq!(
        (
            approval["status"].as_str(),
            approval["prompt"].as_str(),
            approval["itemCount"].as_i64()
        ),
        (Some("pending"), Some("Ship it?"), Some(2))
    );
    let id = approval["id"].as_str().unwrap().to_string();

    assert_eq!(
        c.call(
            "POST",
            &format!("/approvals/{id}"),
            Some(json!({"decision": "maybe"}))
        )
        .0,
        400
    );
    assert_eq!(
        c.call(
            "POST",
            "/approvals/workflow_resume_nope",
            Some(json!({"decision": "approve"}))
        )
        .0,
        404
    );
    // A `by` in the body names nobody: the decision is the credential's
    // (issue #22: an agent holding a token could approve "as" anyone).
    let decided = c.ok(
        "POST",
        &format!("/approvals/{id}"),
        Some(json!({"decision": "approve", "by": "ops@example.com"})),
    );
    assert_eq!(decided["result"]["status"], "ok", "{decided}");
    assert_eq!(decided["result"]["output"][0], "done");
    let (status, again) = c.call(
        "POST",
        &format!("/approvals/{id}"),
        Some(json!({"decision": "deny"})),
    );
    assert_eq!(status, 409, "{again}");
    assert!(
        again["error"].as_str().unwrap().contains("already decided"),
        "{again}"
    );

    let changed = read_until(
        &mut events,
        "\"runStatus\":\"done\"",
        Duration::from_secs(1),
    );
    assert!(
        changed.contains("event: changed") && changed.contains("\"decidedVia\":\"http\""),
        "{changed}"
    );
    let run = &c.ok("GET", "/approvals", None)["approvals"][0];
    assert_eq!(
        (run["decidedBy"].as_str(), run["decidedVia"].as_str()),
        (Some("owner"), Some("http"))
    );
    assert_eq!(
        std::fs::read_to_string(work.join("shipped.txt")).unwrap(),
        "shipped\n",
        "ran once, where it paused"
    );

    // Without the token: refused like every other route.
    let (status, _) = clawdis_e2e::control::request(server.port, "GET", "/approvals", &[], "");
    assert_eq!(status, 401);

    // An open event stream does not hold up shutdown: it ends with the server.
    let mut server = server;
    signal(server.child.id() as i32, libc::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "serve did not exit with an event stream open"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(events);
}
