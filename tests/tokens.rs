//! Named tokens (`clawdis token create|list|revoke`): shown once, kept only
//! as digests, accepted by the control API until revoked, and the principal
//! a decision is recorded under.

use std::path::Path;
use std::process::Output;

use clawdis_e2e::control::{Client, request, start_server_full};
use clawdis_e2e::{clawdis_cli, run_tool};
use serde_json::json;

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file under `dir`, read whole.
fn files(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, bytes));
        }
    }
    out
}

#[test]
fn named_tokens_are_shown_once_kept_hashed_and_revocable() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let created = stdout(&clawdis_cli(
        &home,
        &["token", "create", "--name", "ci-agent", "--role", "agent"],
    ));
    let token = created.trim_end().to_string();
    assert_eq!(created, format!("{token}\n"), "the token and nothing else");
    assert!(token.starts_with("clawdis_") && token.len() > 40, "{token}");

    let again = clawdis_cli(
        &home,
        &[
            "token", "create", "--name", "ci-agent", "--role", "approver",
        ],
    );
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("exists already"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let bad = clawdis_cli(
        &home,
        &["token", "create", "--name", "no spaces", "--role", "agent"],
    );
    assert!(!bad.status.success());

    let listed = stdout(&clawdis_cli(&home, &["token", "list"]));
    assert!(listed.starts_with("ci-agent\tagent\t"), "{listed}");
    assert!(listed.trim_end().ends_with("live"), "{listed}");
    assert!(!listed.contains(&token));
    for (path, bytes) in files(&home) {
        assert!(
            !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
            "{} holds the token in clear",
            path.display()
        );
    }

    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let agent = Client::with_token(server.port, &token);
    assert_eq!(agent.call("GET", "/approvals", None).0, 200);
    let wrong = Client::with_token(server.port, "clawdis_not_a_token");
    assert_eq!(wrong.call("GET", "/approvals", None).0, 401);

    stdout(&clawdis_cli(&home, &["token", "revoke", "ci-agent"]));
    assert_eq!(agent.call("GET", "/approvals", None).0, 401, "revoked");
    let listed = stdout(&clawdis_cli(&home, &["token", "list"]));
    assert!(listed.contains("\trevoked "), "{listed}");
    let twice = clawdis_cli(&home, &["token", "revoke", "ci-agent"]);
    assert!(!twice.status.success(), "only a live token is revoked");
    // The owner's token is untouched by all this.
    let (status, _) = request(
        server.port,
        "GET",
        "/approvals",
        &[("Authorization", &format!("Bearer {}", server.token.trim()))],
        "",
    );
    assert_eq!(status, 200);
}

#[test]
fn a_decision_is_recorded_under_the_tokens_name_whatever_the_body_says() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let token = stdout(&clawdis_cli(
        &home,
        &["token", "create", "--name", "ann", "--role", "approver"],
    ));
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let paused = run_tool(
        &home,
        &work,
        "exec --json --shell 'echo [1]' | approve --prompt 'Go?'",
    );
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let ann = Client::with_token(server.port, &token);
    let id = ann.ok("GET", "/approvals", None)["approvals"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let decided = ann.ok(
        "POST",
        &format!("/approvals/{id}"),
        Some(json!({"decision": "approve", "by": "someone-else"})),
    );
    assert_eq!(decided["result"]["status"], "ok", "{decided}");
    let run = &ann.ok("GET", "/approvals", None)["approvals"][0];
    assert_eq!(
        (run["decidedBy"].as_str(), run["decidedVia"].as_str()),
        (Some("token:ann"), Some("http"))
    );
}
