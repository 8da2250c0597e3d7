//! Shell steps see what a login shell sets up, whether a step gets its own
//! `sh -lc` or the replayed profile environment.

use clawdis_e2e::plain_system::on_plain_system;
use clawdis_e2e::{envelope, lobster};

fn run(profile: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".profile"), profile).unwrap();
    std::fs::write(
        dir.path().join("wf.lobster"),
        "steps:\n  - id: a\n    run: echo \"a=$FROM_PROFILE\"\n  - id: b\n    run: echo \"b=$FROM_PROFILE\"\n  - id: c\n    run: echo \"c=$FROM_PROFILE\"\n  - id: all\n    run: printf '%s%s%s' \"$a.stdout\" \"$b.stdout\" \"$c.stdout\"\n",
    )
    .unwrap();
    let out = lobster(&dir.path().join("state"))
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .args(["run", "--mode", "tool", "wf.lobster"])
        .output()
        .unwrap();
    envelope(&out)
}

#[test]
fn every_step_sees_the_profile_environment() {
    let env = run("export FROM_PROFILE=yes\n");
    assert_eq!(env["output"][0], "a=yes\nb=yes\nc=yes\n");
}

#[test]
fn chatty_profiles_print_before_every_step() {
    let env = run("echo hi\nexport FROM_PROFILE=yes\n");
    // The last step prints the greeting too, before the collected outputs.
    assert_eq!(env["output"][0], "hi\nhi\na=yes\nhi\nb=yes\nhi\nc=yes\n");
}

/// One `lobster` process per pipeline, as an agent runs them: the first
/// ones learn the profile, later ones replay it, and an edit to the profile
/// reaches the very next process.
#[test]
fn later_processes_see_the_profile_and_its_edits() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // Only plain profiles are remembered, so the machine's must be too.
    let pipeline = |call: usize| {
        let mut cmd = lobster(&state);
        cmd.current_dir(dir.path())
            .env("HOME", dir.path())
            .env("CALL_ID", call.to_string())
            .args([
                "run",
                "--mode",
                "tool",
                "exec --shell 'echo \"$FROM_PROFILE $CALL_ID\"'",
            ]);
        envelope(&on_plain_system(&cmd).output().unwrap())["output"].clone()
    };
    std::fs::write(dir.path().join(".profile"), "export FROM_PROFILE=one\n").unwrap();
    for call in 0..4 {
        assert_eq!(pipeline(call), serde_json::json!([format!("one {call}")]));
    }
    assert!(
        state.join("login-env.json").exists(),
        "the profile's effect is remembered"
    );
    std::fs::write(dir.path().join(".profile"), "export FROM_PROFILE=two\n").unwrap();
    assert_eq!(pipeline(4), serde_json::json!(["two 4"]));
    std::fs::write(
        dir.path().join(".profile"),
        "echo hi\nexport FROM_PROFILE=three\n",
    )
    .unwrap();
    for call in 5..8 {
        assert_eq!(
            pipeline(call),
            serde_json::json!(["hi", format!("three {call}")]),
            "a chatty profile keeps its login shell"
        );
    }
}
