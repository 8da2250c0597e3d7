//! `kill -9` at any point loses no paused run and leaves nothing
//! half-written; signals stop a run and its child processes.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use clawdis_e2e::{alive, envelope, lobster, signal};
use clawdis_store::{RunStatus, Store};

/// Polls `cond` every 10 ms until it holds or `timeout` passes.
fn wait_for(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    cond()
}

fn open_store(state: &Path) -> (tokio::runtime::Runtime, Store) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(Store::open_dir(state)).unwrap();
    (rt, store)
}

#[test]
fn kill_9_while_pausing_never_leaves_a_partial_run() {
    let dir = tempfile::tempdir().unwrap();
    let (state, work) = (dir.path().join("state"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("wf.lobster"),
        "steps:\n  - id: a\n    run: echo '[1,2,3]'\n  - id: b\n    pipeline: where 0>=0\n    stdin: $a.json\n  - id: gate\n    approval: Go?\n    stdin: $b.json\n  - id: after\n    run: echo done\n",
    )
    .unwrap();
    // Warm the database so kills land in every phase, including the insert.
    let first = lobster(&state)
        .current_dir(&work)
        .args(["run", "--mode", "tool", "wf.lobster"])
        .output()
        .unwrap();
    assert_eq!(envelope(&first)["status"], "needs_approval");
    let mut printed = 1;
    for i in 0..40u64 {
        let child = lobster(&state)
            .current_dir(&work)
            .args(["run", "--mode", "tool", "wf.lobster"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(500 * (i % 30)));
        signal(child.id() as i32, libc::SIGKILL);
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            printed += 1;
        }
    }
    let (rt, store) = open_store(&state);
    assert!(
        rt.block_on(store.integrity_check()).unwrap(),
        "database passes integrity_check"
    );
    let runs = rt.block_on(store.list_runs(None, 1000)).unwrap();
    assert!(runs.len() >= printed, "every printed token has its run");
    for run in &runs {
        assert_eq!(run.status, RunStatus::Pending);
        assert!(
            serde_json::from_str::<serde_json::Value>(&run.state_json).is_ok(),
            "state is whole JSON"
        );
        let id = run.approval_id.clone().expect("approval id");
        let out = lobster(&state)
            .current_dir(&work)
            .args(["resume", "--id", &id, "--approve", "yes"])
            .output()
            .unwrap();
        assert_eq!(
            envelope(&out)["output"][0],
            "done\n",
            "every recorded pause resumes"
        );
    }
}

#[test]
fn kill_9_during_resume_keeps_the_run_resumable() {
    let dir = tempfile::tempdir().unwrap();
    let (state, work) = (dir.path().join("state"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("wf.lobster"),
        "steps:\n  - id: gate\n    approval: Go?\n  - id: slow\n    run: if [ -f first ]; then echo done >> log; else touch first; echo $$ > pid; echo started >> log; sleep 30; fi\n",
    )
    .unwrap();
    let out = lobster(&state)
        .current_dir(&work)
        .args(["run", "--mode", "tool", "wf.lobster"])
        .output()
        .unwrap();
    let token = envelope(&out)["requiresApproval"]["resumeToken"]
        .as_str()
        .unwrap()
        .to_string();

    let mut resume = lobster(&state)
        .current_dir(&work)
        .args(["resume", "--token", &token, "--approve", "yes"])
        .spawn()
        .unwrap();
    // The step has written its line, not only opened the file (a kill
    // between the two lost "started": a flake seen on a loaded machine).
    assert!(wait_for(Duration::from_secs(10), || work
        .join("pid")
        .exists()
        && std::fs::read_to_string(work.join("log"))
            .is_ok_and(|l| l == "started\n")));
    signal(resume.id() as i32, libc::SIGKILL);
    resume.wait().unwrap();
    let sh: i32 = std::fs::read_to_string(work.join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    signal(-sh, libc::SIGKILL);

    let again = lobster(&state)
        .current_dir(&work)
        .args(["resume", "--token", &token, "--approve", "yes"])
        .output()
        .unwrap();
    assert_eq!(
        envelope(&again)["status"],
        "ok",
        "a run whose resumer died is resumed, not lost"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("log")).unwrap(),
        "started\ndone\n"
    );
    let third = lobster(&state)
        .current_dir(&work)
        .args(["resume", "--token", &token, "--approve", "yes"])
        .output()
        .unwrap();
    assert_eq!(
        envelope(&third)["error"]["message"],
        "Workflow resume state not found"
    );
}

#[test]
fn sigterm_stops_the_run_and_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let (state, work) = (dir.path().join("state"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let mut child = lobster(&state)
        .current_dir(&work)
        .args([
            "run",
            "--mode",
            "tool",
            "exec --shell 'echo $$ > pid; sleep 30'",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for(Duration::from_secs(10), || {
        std::fs::read_to_string(work.join("pid")).is_ok_and(|s| s.ends_with('\n'))
    }));
    let sh: i32 = std::fs::read_to_string(work.join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    signal(child.id() as i32, libc::SIGTERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "exit code is 128 + SIGTERM");
    assert!(
        wait_for(Duration::from_secs(2), || !alive(sh)),
        "the child shell was terminated"
    );
}

/// A `lobster` process leaves its SQLite connection to its exit instead of
/// closing it; what it committed must be all there for the next process,
/// and the write-ahead log must still be checkpointed once it grows long.
#[test]
fn processes_that_exit_without_closing_lose_nothing_and_keep_the_log_short() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let flow = "exec --json --shell 'echo [1]' | approve --prompt 'keep?' | json";
    let mut ids = Vec::new();
    for _ in 0..80 {
        let out = lobster(&state)
            .current_dir(dir.path())
            .args(["run", "--mode", "tool", flow])
            .output()
            .unwrap();
        ids.push(
            envelope(&out)["requiresApproval"]["approvalId"]
                .as_str()
                .expect("approval id")
                .to_string(),
        );
    }
    // 80 commits of a few pages each: without checkpoints the log would
    // hold well over the 64 pages a closing process leaves behind.
    let wal = std::fs::metadata(state.join(format!("{}-wal", clawdis_store::DB_FILE)))
        .map_or(0, |m| m.len());
    assert!(
        wal <= 64 * 4120 + 32,
        "the log is checkpointed as it grows ({wal} bytes)"
    );
    let (rt, store) = open_store(&state);
    assert!(
        rt.block_on(store.integrity_check()).unwrap(),
        "database passes integrity_check"
    );
    for id in &ids {
        let run = rt
            .block_on(store.get_run_by_approval_id(id))
            .unwrap()
            .expect("every pause is recorded");
        assert_eq!(run.status, RunStatus::Pending);
    }
}
