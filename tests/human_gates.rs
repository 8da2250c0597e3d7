//! A gate whose policy is `approvers: human` is decided by a person only:
//! the app, its notification, or an approver token. `lobster resume`, an
//! agent token and the owner token are refused with an error that says
//! where a person decides, and the run keeps waiting for them.

use std::path::{Path, PathBuf};
use std::process::Output;

use base64::Engine;
use clawdis_e2e::control::{Client, start_server_full};
use clawdis_e2e::{clawdis_cli, create_token, envelope, lobster, run_tool};
use serde_json::json;

const SHIP: &str = "name: ship\nsteps:\n  - id: build\n    run: echo built\n  - id: gate\n    \
                    approval:\n      prompt: Ship it?\n      approvers: human\n  - id: ship\n    \
                    run: echo shipped >> shipped.txt; echo done\n";

/// A home, and a work directory holding workflow `name` with `text`; the
/// directory goes when the first value is dropped.
fn workspace(name: &str, text: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join(name), text).unwrap();
    (dir, home, work)
}

fn resume(home: &Path, work: &Path, args: &[&str]) -> Output {
    lobster(home)
        .current_dir(work)
        .arg("resume")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn only_a_person_decides_a_human_gate() {
    let (_dir, home, work) = workspace("ship.lobster", SHIP);
    let paused = run_tool(&home, &work, "ship.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let request = &paused["requiresApproval"];
    assert_eq!(request["approvers"], "human", "{request}");
    let resume_token = request["resumeToken"].as_str().unwrap().to_string();
    let approval_id = request["approvalId"].as_str().unwrap().to_string();

    // The agent's own CLI cannot approve it, by token or by id, whatever
    // identity variables it sets.
    for args in [
        vec!["--token", &resume_token, "--approve", "yes"],
        vec!["--id", &approval_id, "--approve", "yes"],
    ] {
        let out = lobster(&home)
            .current_dir(&work)
            .env("LOBSTER_APPROVAL_APPROVED_BY", "ann")
            .arg("resume")
            .args(&args)
            .output()
            .unwrap();
        let refused = envelope(&out);
        assert_eq!(out.status.code(), Some(1), "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("needs a person's approval")
                && message.contains("approver token")
                && message.contains("paired device's passkey in the inbox")
                && message.contains("clawdis devices pair"),
            "{message}"
        );
    }
    assert!(!work.join("shipped.txt").exists());

    // Over HTTP: the owner token and an agent token are refused with 403.
    let agent = create_token(&home, "agent", "agent");
    let person = create_token(&home, "ann", "approver");
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let owner = Client::new(&server);
    let id = owner.ok("GET", "/approvals", None)["approvals"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for client in [&owner, &Client::with_token(server.port, &agent)] {
        let (status, body) = client.call(
            "POST",
            &format!("/approvals/{id}"),
            Some(json!({"decision": "approve"})),
        );
        assert_eq!(status, 403, "{body}");
        // Without the app, the way that works is named (issue 44: only the
        // app and approver tokens were, and a token waits for the app too).
        let error = body["error"].as_str().unwrap();
        assert!(
            error.contains("approver token") && error.contains("passkey in the inbox"),
            "{body}"
        );
    }
    assert_eq!(
        owner.ok("GET", "/approvals", None)["approvals"][0]["status"],
        "pending",
        "still waiting for a person"
    );

    // A person's token decides it, once, on what it was shown.
    let ann = Client::with_token(server.port, &person);
    let shown = ann.ok("GET", &format!("/approvals/{id}"), None)["approval"]["digest"].clone();
    let decided = ann.ok(
        "POST",
        &format!("/approvals/{id}"),
        Some(json!({"decision": "approve", "digest": shown})),
    );
    let ledger = ann.ok("GET", "/audit?limit=1", None);
    assert_eq!(ledger["entries"][0]["kind"], "gate.approve", "{ledger}");
    assert_eq!(ledger["entries"][0]["digest"], shown, "{ledger}");
    assert_eq!(decided["result"]["status"], "ok", "{decided}");
    assert_eq!(
        std::fs::read_to_string(work.join("shipped.txt")).unwrap(),
        "shipped\n"
    );
    let run = &ann.ok("GET", "/approvals", None)["approvals"][0];
    assert_eq!(run["decidedBy"], "token:ann");
}

/// Denying or cancelling only stops the run: an agent may do either, never
/// approve (issue #34, item 1).
#[test]
fn an_agent_may_still_deny_or_cancel_a_human_gate() {
    for args in [&["--approve", "no"][..], &["--cancel"]] {
        let (_dir, home, work) = workspace("ship.lobster", SHIP);
        let paused = run_tool(&home, &work, "ship.lobster");
        let resume_token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
        let argv = [&["--token", resume_token][..], args].concat();
        let stopped = envelope(&resume(&home, &work, &argv));
        assert_eq!(stopped["ok"], true, "{args:?}: {stopped}");
        assert_eq!(stopped["status"], "cancelled", "{args:?}: {stopped}");
        assert!(!work.join("shipped.txt").exists());
    }
}

/// Lobster's legacy inline tokens carry their own state; one could be
/// written to skip the gate, so a file with a human gate never resumes
/// from one.
#[test]
fn an_inline_token_cannot_skip_a_human_gate() {
    let (_dir, home, work) = workspace("ship.lobster", SHIP);
    let forged = json!({
        "protocolVersion": 1,
        "v": 1,
        "kind": "workflow-file",
        "filePath": work.join("ship.lobster"),
        "resumeAtIndex": 2,
        "steps": {"build": {"id": "build", "stdout": "built\n"}},
        "approvalStepId": "gate",
    });
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(forged.to_string());
    let out = resume(&home, &work, &["--token", &token, "--approve", "yes"]);
    let refused = envelope(&out);
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("need a person's decision or the backend's"),
        "{refused}"
    );
    assert!(!work.join("shipped.txt").exists());

    // Any approval policy closes the door, several approvers or an expiry too.
    for policy in ["      min_approvals: 2\n", "      expires_in: 1h\n"] {
        std::fs::write(
            work.join("ship.lobster"),
            SHIP.replace("      approvers: human\n", policy),
        )
        .unwrap();
        let refused = envelope(&resume(
            &home,
            &work,
            &["--token", &token, "--approve", "yes"],
        ));
        assert_eq!(refused["ok"], false, "{policy}: {refused}");
    }
    assert!(!work.join("shipped.txt").exists());

    // The same forged token for a plain Lobster gate resumes, as in Lobster:
    // the refusal above is the policy's, not a broken token.
    std::fs::write(
        work.join("ship.lobster"),
        SHIP.replace("      approvers: human\n", ""),
    )
    .unwrap();
    let resumed = envelope(&resume(
        &home,
        &work,
        &["--token", &token, "--approve", "yes"],
    ));
    assert_eq!(resumed["status"], "ok", "{resumed}");
    assert_eq!(
        std::fs::read_to_string(work.join("shipped.txt")).unwrap(),
        "shipped\n"
    );
}

/// Issue #34, break 2: an agent edited the step after a `human` gate while
/// the person read the prompt; the person approved and the edited step
/// ran. The run now resumes with the definition it paused with, and the
/// approval says the file changed.
#[test]
fn what_runs_after_a_gate_is_what_paused_not_the_file_edited_since() {
    let (_dir, home, work) = workspace("ship.lobster", SHIP);
    let file = work.join("ship.lobster");
    let paused = run_tool(&home, &work, "ship.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");

    // The agent's edit: the step after the gate now does something else.
    std::fs::write(
        &file,
        SHIP.replace("echo shipped >> shipped.txt", "echo pwned >> pwned.txt"),
    )
    .unwrap();
    let person = create_token(&home, "ann", "approver");
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let ann = Client::with_token(server.port, &person);
    let approval = &ann.ok("GET", "/approvals", None)["approvals"][0];
    assert_eq!(approval["fileChanged"], true, "{approval}");
    let id = approval["id"].as_str().unwrap();
    let decided = ann.ok(
        "POST",
        &format!("/approvals/{id}"),
        Some(json!({"decision": "approve"})),
    );
    assert_eq!(decided["result"]["status"], "ok", "{decided}");
    assert_eq!(
        std::fs::read_to_string(work.join("shipped.txt")).unwrap(),
        "shipped\n",
        "the step the person was shown ran"
    );
    assert!(!work.join("pwned.txt").exists(), "the edited step ran");

    // A file left as it was is not reported as changed.
    std::fs::write(&file, SHIP).unwrap();
    let again = run_tool(&home, &work, "ship.lobster");
    assert_eq!(again["status"], "needs_approval", "{again}");
    let pending = ann.ok("GET", "/approvals?status=pending", None);
    assert_eq!(pending["approvals"][0]["fileChanged"], false, "{pending}");
}

/// Issue #34: the same holds for a plain Lobster gate resumed by `lobster
/// resume` (where the real Lobster re-reads the file; docs/lobster.md
/// says so).
#[test]
fn lobster_resume_runs_the_definition_it_paused_with() {
    let plain = SHIP.replace("      approvers: human\n", "");
    let (_dir, home, work) = workspace("ship.lobster", &plain);
    let file = work.join("ship.lobster");
    let paused = run_tool(&home, &work, "ship.lobster");
    let token = paused["requiresApproval"]["resumeToken"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(
        &file,
        plain.replace("echo shipped >> shipped.txt", "echo pwned >> pwned.txt"),
    )
    .unwrap();
    let out = resume(&home, &work, &["--token", &token, "--approve", "yes"]);
    assert_eq!(envelope(&out)["status"], "ok", "{}", envelope(&out));
    assert_eq!(
        std::fs::read_to_string(work.join("shipped.txt")).unwrap(),
        "shipped\n"
    );
    assert!(!work.join("pwned.txt").exists());
}

/// Issue #34: a program file in the workflow's directory that a step
/// after the gate runs (`./deploy.sh`) is bound to the pause too. Changed
/// since, the approval is refused with an error naming it, and the gate
/// keeps waiting: put back, the same token approves it.
#[test]
fn a_program_changed_after_the_pause_refuses_the_approval_by_name() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_dir, home, work) = workspace(
        "deploy.lobster",
        "name: deploy\nsteps:\n  - id: gate\n    approval: required\n  - id: deploy\n    run: ./deploy.sh\n",
    );
    let script = work.join("deploy.sh");
    let original = "#!/bin/sh\necho deployed >> out.txt\n";
    std::fs::write(&script, original).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let paused = run_tool(&home, &work, "deploy.lobster");
    let token = paused["requiresApproval"]["resumeToken"]
        .as_str()
        .unwrap()
        .to_string();

    std::fs::write(&script, "#!/bin/sh\necho pwned >> out.txt\n").unwrap();
    let out = resume(&home, &work, &["--token", &token, "--approve", "yes"]);
    let refused = envelope(&out);
    assert_ne!(out.status.code(), Some(0), "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("deploy.sh") && message.contains("changed"),
        "{refused}"
    );
    assert!(!work.join("out.txt").exists(), "the changed program ran");
    // Over HTTP the same: 403, naming the file, and the gate waits on.
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let owner = Client::new(&server);
    let id = owner.ok("GET", "/approvals", None)["approvals"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, body) = owner.call(
        "POST",
        &format!("/approvals/{id}"),
        Some(json!({"decision": "approve"})),
    );
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("deploy.sh"),
        "{body}"
    );
    assert!(!work.join("out.txt").exists(), "the changed program ran");

    std::fs::write(&script, original).unwrap();
    let out = resume(&home, &work, &["--token", &token, "--approve", "yes"]);
    assert_eq!(envelope(&out)["status"], "ok", "{}", envelope(&out));
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt")).unwrap(),
        "deployed\n"
    );
}

/// Issue #34, item 5: every refused attempt on a `human` gate, every
/// decision and every token goes into a hash-chained ledger that `clawdis
/// audit` lists and verifies; an entry edited in the SQLite file breaks it
/// there.
#[test]
fn refusals_decisions_and_tokens_are_in_a_ledger_that_shows_an_edit() {
    let (_dir, home, work) = workspace("ship.lobster", SHIP);
    let paused = run_tool(&home, &work, "ship.lobster");
    let request = &paused["requiresApproval"];
    let token = request["resumeToken"].as_str().unwrap().to_string();
    let approval_id = request["approvalId"].as_str().unwrap().to_string();

    // Refused: lobster resume, the CLI, the owner token, an agent token.
    let out = lobster(&home)
        .current_dir(&work)
        .env("LOBSTER_APPROVAL_APPROVED_BY", "ann")
        .args(["resume", "--token", &token, "--approve", "yes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", envelope(&out));
    let cli = clawdis_cli(&home, &["approvals", "approve", &approval_id]);
    assert!(!cli.status.success());
    let agent = create_token(&home, "agent", "agent");
    let person = create_token(&home, "ann", "approver");
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    for bearer in [server.token.trim(), agent.as_str()] {
        let (status, body) = Client::with_token(server.port, bearer).call(
            "POST",
            &format!("/approvals/{approval_id}"),
            Some(json!({"decision": "approve"})),
        );
        assert_eq!(status, 403, "{body}");
    }
    // A person decides.
    Client::with_token(server.port, &person).ok(
        "POST",
        &format!("/approvals/{approval_id}"),
        Some(json!({"decision": "approve"})),
    );

    let listed = clawdis_cli(&home, &["audit", "list"]);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let mut entries: Vec<(String, String, String, String)> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("-").to_string();
            (text("kind"), text("subject"), text("by"), text("presence"))
        })
        .collect();
    entries.reverse();
    let gate = |kind: &str, by: &str, presence: &str| {
        (
            kind.to_string(),
            approval_id.clone(),
            by.to_string(),
            presence.to_string(),
        )
    };
    let token = |kind: &str, subject: &str| {
        (
            kind.to_string(),
            subject.to_string(),
            "-".to_string(),
            "-".to_string(),
        )
    };
    assert_eq!(
        entries,
        [
            gate("gate.refused", "lobster resume (says ann)", "-"),
            gate("gate.refused", "cli", "-"),
            token("token.issued", "agent (agent)"),
            (
                "token.issued".to_string(),
                "ann (approver)".to_string(),
                "person".to_string(),
                "click".to_string()
            ),
            gate("gate.refused", "owner", "-"),
            gate("gate.refused", "token:agent", "-"),
            gate("gate.approve", "token:ann", "token"),
        ]
    );
    // The same over HTTP, with the head.
    let page = Client::new(&server).ok("GET", "/audit?limit=2", None);
    assert_eq!(page["entries"].as_array().unwrap().len(), 2);
    assert_eq!(page["head"]["seq"], 7, "{page}");
    assert_eq!(page["head"], listed["head"]);
    let verified = clawdis_cli(&home, &["audit", "verify"]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );

    // An agent with a shell rewrites who decided, in the SQLite file.
    drop(server);
    let db = home.join("clawdis.db");
    let edit = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); \
             c.execute(\"UPDATE audit SET by='token:agent' WHERE seq=7\"); c.commit()",
            db.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        edit.status.success(),
        "{}",
        String::from_utf8_lossy(&edit.stderr)
    );
    let broken = clawdis_cli(&home, &["audit", "verify"]);
    assert_eq!(broken.status.code(), Some(1));
    let said = String::from_utf8_lossy(&broken.stderr);
    assert!(said.contains("entry 7 was changed"), "{said}");
}

/// Issue #34, item 4: an agent with a shell rewrote the definition a
/// paused run keeps, in the SQLite file, after the person was shown the
/// gate. The person's approval names the digest of what they saw; the gate
/// shows another now, so the approval is refused (409) and the gate waits
/// for a new look. A decision on what is shown is recorded with its digest.
#[test]
fn an_approval_on_a_gate_changed_since_it_was_shown_is_refused() {
    let (_dir, home, work) = workspace("ship.lobster", SHIP);
    let paused = run_tool(&home, &work, "ship.lobster");
    let id = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    let person = create_token(&home, "ann", "approver");
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let ann = Client::with_token(server.port, &person);
    let shown = ann.ok("GET", &format!("/approvals/{id}"), None)["approval"]["digest"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        shown.len() == 64 && shown.bytes().all(|b| b.is_ascii_hexdigit()),
        "{shown}"
    );

    // The agent edits the kept definition: the step after the gate now
    // does something else.
    let edit = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); \
             c.execute(\"UPDATE runs SET state_json=replace(state_json,'echo shipped','echo pwned') \
             WHERE status='pending'\"); c.commit(); print(c.total_changes)",
            home.join("clawdis.db").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&edit.stdout).trim(),
        "1",
        "{edit:?}"
    );

    let (status, body) = ann.call(
        "POST",
        &format!("/approvals/{id}/approve"),
        Some(json!({"digest": shown})),
    );
    assert_eq!(status, 409, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("changed since it was shown"),
        "{body}"
    );
    let now = ann.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    assert_eq!(now["status"], "pending", "{now}");
    assert_ne!(now["digest"], shown.as_str());
    assert!(!work.join("shipped.txt").exists());
    // A digest that is not one is a bad request.
    let (status, _) = ann.call(
        "POST",
        &format!("/approvals/{id}/approve"),
        Some(json!({"digest": "not-a-digest"})),
    );
    assert_eq!(status, 400);

    // Denying needs no look again: it only stops the run. It is recorded
    // with the digest of the gate as it is.
    ann.ok(
        "POST",
        &format!("/approvals/{id}/deny"),
        Some(json!({"reason": "it changed"})),
    );
    let ledger = ann.ok("GET", "/audit", None);
    let decision = &ledger["entries"][0];
    assert_eq!(decision["kind"], "gate.reject", "{ledger}");
    assert_eq!(decision["digest"], now["digest"], "{ledger}");
}

/// An agent's approve of a human gate that races its own cancel is refused
/// (403, or 409 once the cancel is in); it never answers 200 with the
/// cancelled end, as if the approve had been taken (found by the red team
/// of issue #36: 2 to 6 of a dozen racing approves answered 200).
#[test]
fn an_approve_racing_a_cancel_is_refused_never_answered_with_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(home.join("workflows/ship.lobster"), SHIP).unwrap();
    let server = start_server_full(&home, json!({}), &[], &[]);
    let agent = create_token(&home, "racer", "agent");
    for round in 0..5 {
        let client = Client::with_token(server.port, &agent);
        let paused = client.ok("POST", "/runs", Some(json!({ "workflow": "ship" })));
        let run_id = paused["runId"].as_str().unwrap().to_string();
        let approval = paused["requiresApproval"]["approvalId"]
            .as_str()
            .unwrap()
            .to_string();
        let start = std::sync::Arc::new(std::sync::Barrier::new(13));
        let racers: Vec<_> = (0..13)
            .map(|i| {
                let (start, agent) = (start.clone(), agent.clone());
                let (run_id, approval) = (run_id.clone(), approval.clone());
                let port = server.port;
                std::thread::spawn(move || {
                    let client = Client::with_token(port, &agent);
                    start.wait();
                    if i == 0 {
                        client.call("POST", &format!("/runs/{run_id}/cancel"), None)
                    } else {
                        client.call("POST", &format!("/approvals/{approval}/approve"), None)
                    }
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        let (cancelled, approves) = racers.split_first().unwrap();
        assert_eq!(cancelled.0, 200, "round {round}: {:?}", cancelled.1);
        for (status, body) in approves {
            assert!(
                *status == 403 || *status == 409,
                "round {round}: an approve answered {status}: {body}"
            );
        }
        let run = client.ok("GET", &format!("/runs/{run_id}"), None);
        assert_eq!(run["status"], "cancelled", "{run}");
    }
}
