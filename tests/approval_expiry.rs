//! A gate with `expires_in` is decided by its policy's `on_expiry` when it
//! expires: by the backend on time, or by the first resume that comes
//! late. Either way the decision is recorded as made by `expiry`.

use std::path::Path;
use std::time::{Duration, Instant};

use clawdis_e2e::control::{Client, start_server_full};
use clawdis_e2e::{clawdis_cli, envelope, lobster, run_tool};
use serde_json::{Value, json};

fn flow(on_expiry: &str) -> String {
    format!(
        "name: nightly\nsteps:\n  - id: gate\n    approval:\n      prompt: Run it?\n      \
         expires_in: 1s\n      on_expiry: {on_expiry}\n  - id: work\n    \
         run: echo worked >> worked.txt; echo done\n"
    )
}

fn pause(home: &Path, work: &Path) -> Value {
    let paused = run_tool(home, work, "nightly.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    paused
}

#[test]
fn the_backend_applies_on_expiry_when_the_gate_expires() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("nightly.lobster"), flow("approve")).unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    // The watcher starts with the approvals.
    assert_eq!(c.call("GET", "/approvals", None).0, 200);
    let paused = pause(&home, &work);
    let request = &paused["requiresApproval"];
    assert_eq!(request["onExpiry"], "approve", "{request}");
    let id = request["approvalId"].as_str().unwrap();
    let shown = &c.ok("GET", &format!("/approvals/{id}"), None)["approval"];
    assert_eq!(shown["policy"]["onExpiry"], "approve", "{shown}");
    assert_eq!(shown["policy"]["expiresAt"], request["expiresAt"]);

    // Wait for the backend's decision (an expiry 1 s out, checked every 100 ms).
    let deadline = Instant::now() + Duration::from_secs(15);
    let decided = loop {
        let now = c.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
        if now["runStatus"] == "done" {
            assert_eq!(now["status"], "expired", "{now}");
            break now;
        }
        assert!(Instant::now() < deadline, "not expired in time: {now}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        (
            decided["decision"].as_str(),
            decided["decidedBy"].as_str(),
            decided["decidedVia"].as_str()
        ),
        (Some("expire"), Some("expiry"), Some("expiry")),
        "{decided}"
    );
    assert_eq!(decided["result"]["status"], "ok", "{decided}");
    assert_eq!(
        std::fs::read_to_string(work.join("worked.txt")).unwrap(),
        "worked\n"
    );
}

#[test]
fn a_late_resume_gets_the_expiry_not_its_decision() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("nightly.lobster"), flow("cancel")).unwrap();
    let paused = pause(&home, &work);
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let expires_at = paused["requiresApproval"]["expiresAt"]
        .as_str()
        .unwrap()
        .to_string();
    // No backend runs: wait for the deadline to pass, then resume late.
    let deadline = Instant::now() + Duration::from_secs(10);
    while chrono_now() <= expires_at {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = lobster(&home)
        .current_dir(&work)
        .args(["resume", "--token", token, "--approve", "yes"])
        .output()
        .unwrap();
    // The late resume is told how the expiry ended the run.
    let late = envelope(&out);
    assert_eq!(late["status"], "cancelled", "{late}");
    assert!(!work.join("worked.txt").exists(), "the expiry cancelled it");
    let listed = clawdis_cli(&home, &["approvals", "list", "--status", "decided"]);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let run = &listed["approvals"][0];
    assert_eq!(
        (
            run["decision"].as_str(),
            run["decidedBy"].as_str(),
            run["status"].as_str(),
            run["runStatus"].as_str()
        ),
        (
            Some("expire"),
            Some("expiry"),
            Some("expired"),
            Some("cancelled")
        ),
        "{listed}"
    );
}

/// Now as RFC 3339 UTC with milliseconds, the format expiries are kept in.
fn chrono_now() -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%S.%3NZ"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}
