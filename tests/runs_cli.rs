//! `clawdis runs list|show|cancel|export` read and change the same history
//! the backend's runs API writes.

use clawdis_e2e::control::{Client, start_server_full};
use clawdis_e2e::{clawdis_cli, stdout_json};
use serde_json::json;

#[test]
fn the_cli_lists_shows_cancels_and_exports_service_runs() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(
        home.join("workflows/ask.lobster"),
        "name: ask\nsteps:\n  - id: gate\n    approval: Go?\n  - id: after\n    run: echo after\n",
    )
    .unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let done = c.ok(
        "POST",
        "/runs",
        Some(json!({"pipeline": "exec --json --shell 'echo [7]'"})),
    );
    let paused = c.ok("POST", "/runs", Some(json!({"workflow": "ask"})));
    let (done_id, paused_id) = (
        done["runId"].as_str().unwrap(),
        paused["runId"].as_str().unwrap(),
    );

    let listed = stdout_json(&clawdis_cli(&home, &["runs", "list"]));
    let ids: Vec<&str> = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["runId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [paused_id, done_id], "newest first");
    let waiting = stdout_json(&clawdis_cli(
        &home,
        &["runs", "list", "--status", "needs_approval"],
    ));
    assert_eq!(waiting["runs"].as_array().unwrap().len(), 1);
    let page = stdout_json(&clawdis_cli(&home, &["runs", "list", "--limit", "1"]));
    let next = page["next"].as_str().expect("a second page");
    let second = stdout_json(&clawdis_cli(
        &home,
        &["runs", "list", "--limit", "1", "--cursor", next],
    ));
    assert_eq!(second["runs"][0]["runId"], done_id);

    let shown = stdout_json(&clawdis_cli(&home, &["runs", "show", done_id]));
    assert_eq!(shown["result"]["output"], json!([7]), "{shown}");
    assert_eq!(
        shown,
        c.ok("GET", &format!("/runs/{done_id}"), None),
        "the same run as over HTTP"
    );
    let exported = stdout_json(&clawdis_cli(&home, &["runs", "export", paused_id]));
    assert!(
        exported["definition"]["text"]
            .as_str()
            .unwrap()
            .contains("approval: Go?"),
        "{exported}"
    );

    let cancelled = stdout_json(&clawdis_cli(&home, &["runs", "cancel", paused_id]));
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(
        (
            cancelled["decisions"][0]["via"].as_str(),
            cancelled["decisions"][0]["decision"].as_str()
        ),
        (Some("cli"), Some("cancel"))
    );
    assert_eq!(
        c.ok("GET", &format!("/runs/{paused_id}"), None)["status"],
        "cancelled"
    );

    for args in [
        &["runs", "show", "no-such-run"][..],
        &["runs", "cancel", done_id],
        &["runs", "list", "--status", "asleep"],
    ] {
        let out = clawdis_cli(&home, args);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(!out.stderr.is_empty(), "{args:?} says why");
    }
}
