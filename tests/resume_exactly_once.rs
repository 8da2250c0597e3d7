//! Exactly-once resume: concurrent `lobster resume` calls with one token run
//! the remaining stages once; the loser gets a clear error.

use std::process::Stdio;

use clawdis_e2e::{envelope, lobster};

fn pause(state: &std::path::Path, work: &std::path::Path) -> String {
    let out = lobster(state)
        .current_dir(work)
        .args([
            "run",
            "--mode",
            "tool",
            "exec --json --shell 'echo [1,2]' | approve --prompt go? | exec --shell 'echo ran >> ran.txt; echo done'",
        ])
        .output()
        .unwrap();
    let env = envelope(&out);
    assert_eq!(env["status"], "needs_approval", "{env}");
    env["requiresApproval"]["resumeToken"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn concurrent_resumes_run_the_rest_once() {
    let dir = tempfile::tempdir().unwrap();
    let (state, work) = (dir.path().join("state"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    for round in 0..5 {
        let token = pause(&state, &work);
        let children: Vec<_> = (0..4)
            .map(|_| {
                lobster(&state)
                    .current_dir(&work)
                    .args(["resume", "--token", &token, "--approve", "yes"])
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outs: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let winners = outs.iter().filter(|o| o.status.success()).count();
        assert_eq!(winners, 1, "round {round}: exactly one resume succeeds");
        for o in outs.iter().filter(|o| !o.status.success()) {
            let env = envelope(o);
            assert_eq!(env["ok"], false);
            let msg = env["error"]["message"].as_str().unwrap();
            assert!(
                msg.starts_with("Pipeline resume state not found"),
                "clear loser error: {msg}"
            );
        }
        let ran = std::fs::read_to_string(work.join("ran.txt")).unwrap();
        assert_eq!(
            ran.lines().count(),
            round + 1,
            "the resumed stage ran exactly once per token"
        );
    }
}

#[test]
fn reused_token_is_refused_and_rejection_cancels() {
    let dir = tempfile::tempdir().unwrap();
    let (state, work) = (dir.path().join("state"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let token = pause(&state, &work);
    let no = lobster(&state)
        .current_dir(&work)
        .args(["resume", "--token", &token, "--approve", "no"])
        .output()
        .unwrap();
    assert_eq!(envelope(&no)["status"], "cancelled");
    let again = lobster(&state)
        .current_dir(&work)
        .args(["resume", "--token", &token, "--approve", "yes"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        envelope(&again)["error"]["message"],
        "Pipeline resume state not found"
    );
    assert!(
        !work.join("ran.txt").exists(),
        "a rejected run never executes its remaining stages"
    );
}

/// A workflow file gone since the pause used to fail the resume with the
/// read error. The run now resumes with the definition it paused with
/// (issue #34), so the file is not needed: it runs on, once, and the token
/// is used up.
#[test]
fn a_workflow_file_gone_since_the_pause_resumes_from_its_definition_once() {
    let dir = tempfile::tempdir().unwrap();
    let (state, work) = (dir.path().join("state"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let flow = work.join("flow.lobster");
    std::fs::write(
        &flow,
        "steps:\n  - id: gate\n    approval: go?\n  - id: after\n    run: echo ran >> ran.txt\n",
    )
    .unwrap();
    let out = lobster(&state)
        .current_dir(&work)
        .args(["run", "--mode", "tool", "flow.lobster"])
        .output()
        .unwrap();
    let env = envelope(&out);
    assert_eq!(env["status"], "needs_approval", "{env}");
    let token = env["requiresApproval"]["resumeToken"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_file(&flow).unwrap();

    let resumed = lobster(&state)
        .current_dir(&work)
        .args(["resume", "--token", &token, "--approve", "yes"])
        .output()
        .unwrap();
    assert_eq!(envelope(&resumed)["status"], "ok", "{}", envelope(&resumed));
    let again = lobster(&state)
        .current_dir(&work)
        .args(["resume", "--token", &token, "--approve", "yes"])
        .output()
        .unwrap();
    assert_eq!(
        envelope(&again)["error"]["message"],
        "Workflow resume state not found"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("ran.txt")).unwrap(),
        "ran\n",
        "the step after the gate ran once"
    );
}
