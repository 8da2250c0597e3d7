//! A gate with `min_approvals: N` resumes on the Nth distinct approver's
//! approval; each approver counts once, told apart by their credential.

use clawdis_e2e::control::{Client, start_server_full};
use clawdis_e2e::{create_token, envelope, lobster, run_tool};
use serde_json::json;

fn flow(approvers: &str) -> String {
    format!(
        "name: release\nsteps:\n  - id: gate\n    approval:\n      prompt: Release?\n      \
         approvers: {approvers}\n      min_approvals: 2\n  - id: release\n    \
         run: echo released >> released.txt; echo done\n"
    )
}

#[test]
fn two_people_must_approve_and_each_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("release.lobster"), flow("human")).unwrap();
    let paused = run_tool(&home, &work, "release.lobster");
    assert_eq!(paused["requiresApproval"]["minApprovals"], 2, "{paused}");
    let short = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    let (ann, bob) = (
        create_token(&home, "ann", "approver"),
        create_token(&home, "bob", "approver"),
    );
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let ann = Client::with_token(server.port, &ann);
    let bob = Client::with_token(server.port, &bob);

    let shown = &ann.ok("GET", &format!("/approvals/{short}"), None)["approval"];
    assert_eq!(
        shown["policy"],
        json!({"approvers": "human", "presence": "any", "minApprovals": 2}),
        "{shown}"
    );
    assert_eq!(shown["runId"], shown["id"]);
    let first = ann.ok("POST", &format!("/approvals/{short}/approve"), None);
    assert_eq!(
        (
            first["result"]["status"].as_str(),
            first["result"]["requiresApproval"]["approvals"].as_i64()
        ),
        (Some("needs_approval"), Some(1)),
        "{first}"
    );
    let (status, again) = ann.call("POST", &format!("/approvals/{short}/approve"), None);
    assert_eq!(status, 409, "{again}");
    assert!(
        again["error"]
            .as_str()
            .unwrap()
            .contains("approved this already"),
        "{again}"
    );
    // The owner token is no person's, whatever the count.
    let (status, _) =
        Client::new(&server).call("POST", &format!("/approvals/{short}/approve"), None);
    assert_eq!(status, 403);
    assert!(
        !work.join("released.txt").exists(),
        "one approval is not enough"
    );

    let second = bob.ok("POST", &format!("/approvals/{short}/approve"), None);
    assert_eq!(second["result"]["status"], "ok", "{second}");
    assert_eq!(
        std::fs::read_to_string(work.join("released.txt")).unwrap(),
        "released\n"
    );
    let decided = &bob.ok("GET", &format!("/approvals/{short}"), None)["approval"];
    assert_eq!(
        decided["decidedBy"], "token:bob",
        "the count's last approver claims the run"
    );
    let who: Vec<(&str, &str)> = decided["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["decision"].as_str().unwrap(), d["by"].as_str().unwrap()))
        .collect();
    assert_eq!(
        who,
        [("approve", "token:ann"), ("approve", "token:bob")],
        "each approver's decision once: {decided}"
    );
    assert_eq!(decided["status"], "decided");
}

#[test]
fn lobster_resume_does_not_count_toward_min_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("release.lobster"), flow("any")).unwrap();
    let paused = run_tool(&home, &work, "release.lobster");
    let resume_token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    for who in ["ann", "bob"] {
        let out = lobster(&home)
            .current_dir(&work)
            .env("LOBSTER_APPROVAL_APPROVED_BY", who)
            .args(["resume", "--token", resume_token, "--approve", "yes"])
            .output()
            .unwrap();
        let refused = envelope(&out);
        assert_eq!(refused["ok"], false, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("told apart by their credentials"),
            "{refused}"
        );
    }
    assert!(!work.join("released.txt").exists());
    // With `approvers: any`, the owner and an agent token are two approvers.
    let agent = create_token(&home, "agent", "agent");
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let short = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    let owner = Client::new(&server).ok("POST", &format!("/approvals/{short}/approve"), None);
    assert_eq!(owner["result"]["status"], "needs_approval", "{owner}");
    let agent = Client::with_token(server.port, &agent).ok(
        "POST",
        &format!("/approvals/{short}/approve"),
        None,
    );
    assert_eq!(agent["result"]["status"], "ok", "{agent}");
    assert_eq!(
        std::fs::read_to_string(work.join("released.txt")).unwrap(),
        "released\n"
    );
}
