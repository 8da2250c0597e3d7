//! The workflow policies, through the `lobster` binary: `retry`,
//! `on_error`, `timeout_ms`, `when`, `for_each` and `parallel`, and which
//! failures bypass retries and `on_error` (a pipeline halted at a gate it
//! cannot pause at, decided by the error's kind, never by its wording).

use std::process::Output;
use std::time::{Duration, Instant};

use clawdis_e2e::{alive, envelope, lobster};
use serde_json::{Value, json};

/// A workflow run in its own directory.
struct Run {
    dir: tempfile::TempDir,
    out: Output,
}

impl Run {
    /// Writes `wf.lobster` and runs `lobster run --mode tool wf.lobster`.
    fn new(workflow: &str) -> Run {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("wf.lobster"), workflow).unwrap();
        let out = lobster(&dir.path().join("state"))
            .current_dir(dir.path())
            .args(["run", "--mode", "tool", "wf.lobster"])
            .output()
            .unwrap();
        Run { dir, out }
    }

    fn envelope(&self) -> Value {
        envelope(&self.out)
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    fn retry_lines(&self) -> Vec<String> {
        self.stderr()
            .lines()
            .filter(|l| l.starts_with("[RETRY] "))
            .map(str::to_string)
            .collect()
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }
}

/// A shell line that fails until its `n`th run, counting runs in `count`.
fn fails_until(n: u32) -> String {
    format!(
        "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; \
         if [ $n -lt {n} ]; then echo not-yet-$n >&2; exit 1; fi; echo ok-after-$n"
    )
}

fn ok_output(run: &Run) -> Value {
    let env = run.envelope();
    assert_eq!(env["ok"], true, "{env} {}", run.stderr());
    env["output"].clone()
}

fn error_message(run: &Run) -> String {
    let env = run.envelope();
    assert_eq!(env["ok"], false, "{env}");
    env["error"]["message"].as_str().unwrap().to_string()
}

#[test]
fn retry_runs_a_failing_step_again_until_it_succeeds() {
    let run = Run::new(&format!(
        "steps:\n  - id: flaky\n    run: {}\n    retry:\n      max: 4\n      delay_ms: 0\n",
        serde_json::to_string(&fails_until(3)).unwrap()
    ));
    assert_eq!(ok_output(&run), json!(["ok-after-3\n"]));
    assert_eq!(run.read("count"), "3\n");
    assert_eq!(
        run.retry_lines(),
        [
            "[RETRY] Step 'flaky' failed (attempt 1/4): workflow command failed (1): not-yet-1. Retrying in 0ms...",
            "[RETRY] Step 'flaky' failed (attempt 2/4): workflow command failed (1): not-yet-2. Retrying in 0ms...",
        ]
    );
}

#[test]
fn retry_gives_up_after_its_last_attempt() {
    let run = Run::new(&format!(
        "steps:\n  - id: flaky\n    run: {}\n    retry:\n      max: 2\n      delay_ms: 0\n",
        serde_json::to_string(&fails_until(5)).unwrap()
    ));
    assert_eq!(
        error_message(&run),
        "workflow command failed (1): not-yet-2"
    );
    assert_eq!(run.read("count"), "2\n");
    assert_eq!(run.retry_lines().len(), 1);
}

#[test]
fn on_error_continue_records_the_failure_and_goes_on() {
    let run = Run::new(
        "steps:\n  - id: bad\n    run: echo boom >&2; exit 3\n    on_error: continue\n  \
         - id: next\n    run: echo \"error=$bad.error msg=$bad.errorMessage\"\n",
    );
    assert_eq!(
        ok_output(&run),
        json!(["error=true msg=workflow command failed (3): boom\n"])
    );
}

#[test]
fn on_error_skip_rest_ends_the_run_at_the_last_completed_step() {
    let run = Run::new(
        "steps:\n  - id: first\n    run: echo first\n  - id: bad\n    run: exit 4\n    \
         on_error: skip_rest\n  - id: third\n    run: touch third-ran\n",
    );
    assert_eq!(ok_output(&run), json!(["first\n"]));
    assert!(
        !run.path("third-ran").exists(),
        "skip_rest skipped the rest"
    );
}

#[test]
fn on_error_stop_is_the_default_and_fails_the_run() {
    let run = Run::new(
        "steps:\n  - id: bad\n    run: echo boom >&2; exit 3\n  - id: never\n    run: touch never-ran\n",
    );
    assert_eq!(error_message(&run), "workflow command failed (3): boom");
    assert!(!run.path("never-ran").exists());
}

/// Waits until process `pid` is gone; false if it outlives `within`.
fn gone(pid: i32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while alive(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn timeout_kills_the_step_and_is_a_failure_that_retries_and_on_error_see() {
    let run = Run::new(
        "steps:\n  - id: slow\n    run: echo $$ >> pids; exec sleep 30\n    timeout_ms: 300\n    \
         retry:\n      max: 2\n      delay_ms: 0\n    on_error: continue\n  \
         - id: report\n    run: echo \"msg=$slow.errorMessage\"\n",
    );
    assert_eq!(
        ok_output(&run),
        json!(["msg=Step 'slow' timed out after 300ms\n"])
    );
    assert_eq!(
        run.retry_lines(),
        [
            "[RETRY] Step 'slow' failed (attempt 1/2): Step 'slow' timed out after 300ms. Retrying in 0ms..."
        ]
    );
    let pids: Vec<i32> = run
        .read("pids")
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "two attempts");
    for pid in pids {
        assert!(
            gone(pid, Duration::from_secs(5)),
            "the timed-out command {pid} was killed"
        );
    }
}

#[test]
fn when_skips_a_step_whose_condition_is_false() {
    let run = Run::new(
        "steps:\n  - id: a\n    run: echo '{\"go\":false}'\n  - id: b\n    run: touch b-ran\n    \
         when: $a.json.go == true\n  - id: c\n    run: echo \"skipped=$b.skipped\"\n    \
         when: $a.json.go == false\n",
    );
    assert_eq!(ok_output(&run), json!(["skipped=true\n"]));
    assert!(!run.path("b-ran").exists());
}

#[test]
fn for_each_runs_its_steps_once_per_item() {
    let run = Run::new(
        "steps:\n  - id: list\n    run: echo '[\"a\", \"b\", \"c\"]'\n  - id: loop\n    \
         for_each: $list.json\n    steps:\n      - id: say\n        \
         run: echo \"$item.json$index.json\" >> seen; echo \"$item.json\"\n",
    );
    assert_eq!(
        ok_output(&run),
        json!([
            {"item": "a", "index": 0, "say": "a\n"},
            {"item": "b", "index": 1, "say": "b\n"},
            {"item": "c", "index": 2, "say": "c\n"},
        ])
    );
    assert_eq!(run.read("seen"), "a0\nb1\nc2\n");
}

#[test]
fn parallel_waits_for_every_branch_and_fails_with_any() {
    let run = Run::new(
        "steps:\n  - id: fan\n    parallel:\n      branches:\n        - id: left\n          \
         run: echo '{\"v\":1}'\n        - id: right\n          run: echo '{\"v\":2}'\n  \
         - id: join\n    run: echo \"$left.json.v+$right.json.v\"\n",
    );
    assert_eq!(ok_output(&run), json!(["1+2\n"]));

    let run = Run::new(
        "steps:\n  - id: fan\n    parallel:\n      branches:\n        - id: good\n          \
         run: echo ok\n        - id: bad\n          run: echo nope >&2; exit 5\n",
    );
    assert_eq!(
        error_message(&run),
        "Parallel branch failed: workflow command failed (5): nope"
    );
}

/// A pipeline step that halts at an approval fails the run at once: no
/// retry, no `on_error`. That is decided by the failure's kind: a command
/// whose own error text reads the same is retried like any other.
#[test]
fn a_halted_pipeline_bypasses_retry_and_on_error_whatever_the_text_says() {
    let run = Run::new(
        "steps:\n  - id: gated\n    pipeline: exec --json --shell 'echo [1]' | approve --prompt ok\n    \
         retry:\n      max: 3\n      delay_ms: 0\n    on_error: continue\n  \
         - id: after\n    run: touch after-ran\n",
    );
    assert!(
        error_message(&run)
            .starts_with("Workflow step gated halted for approval inside pipeline stage approve"),
        "{}",
        run.envelope()
    );
    assert!(run.retry_lines().is_empty(), "{}", run.stderr());
    assert!(!run.path("after-ran").exists());

    let run = Run::new(
        "steps:\n  - id: lookalike\n    \
         run: echo 'Workflow step x halted for approval inside pipeline stage y' >&2; exit 1\n    \
         retry:\n      max: 2\n      delay_ms: 0\n    on_error: continue\n  \
         - id: after\n    run: echo after\n",
    );
    assert_eq!(ok_output(&run), json!(["after\n"]));
    assert_eq!(run.retry_lines().len(), 1, "{}", run.stderr());
}
