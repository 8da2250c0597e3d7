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
        &["token", "create", "--name", "ci-agent", "--role", "agent"],
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
    let token = clawdis_e2e::create_token(&home, "ann", "approver");
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

/// Over the home's local socket: `method path` with `body`, as this test
/// process (not the one that asked). The status and the JSON answer.
fn over_socket(
    home: &Path,
    token: &str,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    use std::io::{Read, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(home.join("clawdis.sock")).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let json = answer
        .split_once("\r\n\r\n")
        .and_then(|(_, b)| serde_json::from_str(b).ok())
        .unwrap_or_default();
    (status, json)
}

/// Issue #34, break 1: an agent with a shell ran `clawdis token create
/// --role approver` and approved its own `human` gate with the token. An
/// approver token now waits for the person to confirm it in the app, which
/// shows the asking process; the agent cannot confirm it, nor take the
/// token of a request someone else made, through any interface.
#[test]
fn an_approver_token_waits_for_a_person_and_no_agent_confirms_it() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // Without a backend there is no one to ask.
    let alone = clawdis_cli(
        &home,
        &["token", "create", "--name", "mine", "--role", "approver"],
    );
    assert_eq!(alone.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&alone.stderr).contains("needs a person to confirm it"),
        "{}",
        String::from_utf8_lossy(&alone.stderr)
    );

    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    // Another user on the machine cannot reach the socket at all.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(home.join("clawdis.sock"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let mut asking = std::process::Command::new(clawdis_e2e::bin("clawdis"))
        .args(["--home", home.to_str().unwrap()])
        .args([
            "token", "create", "--name", "mine", "--role", "approver", "--wait", "4s",
        ])
        .env("CLAWDIS_KEYCHAIN", "off")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut told = String::new();
    std::io::BufReader::new(asking.stderr.take().unwrap())
        .read_line(&mut told)
        .unwrap();
    let id = told
        .split_once("(request ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(id, _)| id.to_string())
        .unwrap_or_else(|| panic!("a request id in {told:?}"));

    // Everything an agent holding the owner token can try, while the
    // request waits: take its token over TCP or from another process on
    // the socket, confirm it through a route, ask over TCP (where the
    // person could not see who asks).
    let owner = Client::new(&server);
    let (status, body) = owner.call("GET", &format!("/requests/{id}"), None);
    assert_eq!(status, 403, "{body}");
    let (status, body) = over_socket(&home, &server.token, "GET", &format!("/requests/{id}"), "");
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("only the process that asked"),
        "{body}"
    );
    for path in [
        format!("/requests/{id}"),
        format!("/requests/{id}/confirm"),
        format!("/tokens/requests/{id}/confirm"),
        format!("/tokens/requests/{id}/approve"),
    ] {
        let (status, body) = owner.call("POST", &path, Some(json!({"decision": "confirm"})));
        assert!(status == 404 || status == 405, "{path}: {status} {body}");
    }
    let (status, body) = owner.call("POST", "/tokens/requests", Some(json!({"name": "other"})));
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("local socket"),
        "{body}"
    );

    // Nobody answers: the command fails and prints no token.
    let out = asking.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let listed = stdout(&clawdis_cli(&home, &["token", "list"]));
    assert!(!listed.contains("mine"), "{listed}");
    // The request, and that it ran out, are in the ledger.
    let ledger = owner.ok("GET", "/audit", None);
    let kinds: Vec<(&str, &str)> = ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["kind"].as_str().unwrap(), e["subject"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("token.expired", "mine (approver)"),
            ("token.requested", "mine (approver)")
        ],
        "{ledger}"
    );
    assert_eq!(ledger["entries"][1]["by"], "owner");
}
