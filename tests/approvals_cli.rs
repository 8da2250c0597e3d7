//! `clawdis approvals list|approve|deny` on the store `lobster` pauses in:
//! decided once, recorded as `cli`, and never a person's decision.

use std::path::Path;
use std::process::Output;

use clawdis_e2e::{clawdis_cli, run_tool};
use serde_json::Value;

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn pause(home: &Path, work: &Path, flow: &str) -> Value {
    run_tool(home, work, flow)
}

#[test]
fn the_command_line_lists_and_decides_once() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let paused = pause(
        &home,
        &work,
        "exec --json --shell 'echo [1]' | approve --prompt 'Go?' | exec --shell 'echo went >> log.txt; echo went'",
    );
    let short = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    let listed = json(&clawdis_cli(
        &home,
        &["approvals", "list", "--status", "pending"],
    ));
    assert_eq!(listed["approvals"][0]["approvalId"], short, "{listed}");

    let approved = json(&clawdis_cli(
        &home,
        &["approvals", "approve", short, "--comment", "fine"],
    ));
    assert_eq!(approved["status"], "ok", "{approved}");
    assert_eq!(
        std::fs::read_to_string(work.join("log.txt")).unwrap(),
        "went\n"
    );
    let again = clawdis_cli(&home, &["approvals", "deny", short]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already decided"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let decided = json(&clawdis_cli(
        &home,
        &["approvals", "list", "--status", "decided"],
    ));
    let run = &decided["approvals"][0];
    assert_eq!(
        (
            run["decidedBy"].as_str(),
            run["decidedVia"].as_str(),
            run["comment"].as_str()
        ),
        (Some("cli"), Some("cli"), Some("fine"))
    );
    assert_eq!(
        json(&clawdis_cli(
            &home,
            &["approvals", "list", "--status", "pending"]
        ))["approvals"],
        serde_json::json!([])
    );

    // A gate that needs a person is not decided from a terminal.
    std::fs::write(
        work.join("human.lobster"),
        "steps:\n  - id: gate\n    approval:\n      prompt: Publish?\n      approvers: human\n",
    )
    .unwrap();
    let human = pause(&home, &work, "human.lobster");
    let id = human["requiresApproval"]["approvalId"].as_str().unwrap();
    let refused = clawdis_cli(&home, &["approvals", "approve", id]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("needs a person's approval") && said.contains("passkey in the inbox"),
        "{said}"
    );
}
