//! Gobby's pipeline files (`type: pipeline`) run natively, black box:
//! through `clawdis serve`'s runs API and through `lobster`, with Gobby's
//! semantics: `exec` without a shell and its `{stdout, stderr, exit_code}`
//! output, `${{ … }}` references to inputs and earlier steps, a gate that
//! stops the run before its step, `invoke_pipeline`, and `outputs`.

use std::path::{Path, PathBuf};

use clawdis_e2e::control::{Client, start_server_full};
use clawdis_e2e::{envelope, lobster};
use serde_json::{Value, json};

/// Builds, asks before shipping; `ship` leaves a file, so a test can tell
/// whether it ran.
const BUILD: &str = r#"name: build
type: pipeline
version: "1.0"
description: Build and ship
inputs:
  target: world
  count: {type: integer, description: How many, default: 2}
outputs:
  greeting: ${{ steps.greet.output.stdout | trim }}
  n: ${{ steps.meta.output.n }}
  shipped: $ship.output.stdout
steps:
  - id: greet
    exec: echo "hello ${{ inputs.target }}"
  - id: meta
    exec: printf %s '{"n":${{ inputs.count }},"ok":true}'
  - id: skipped
    exec: echo never
    condition: ${{ inputs.count > 5 }}
  - id: ship
    exec: sh -c 'touch shipped && echo shipping ${{ meta.output.n }}'
    approval:
      required: true
      message: Ship ${{ inputs.target }}?
"#;

/// Calls `inner` with an argument from its first step.
const OUTER: &str = r#"name: outer
type: pipeline
steps:
  - id: first
    exec: printf %s '{"word":"deep"}'
  - id: call
    invoke_pipeline:
      name: inner
      arguments:
        word: ${{ steps.first.output.word }}
        times: 3
outputs:
  echoed: ${{ steps.call.output.output.said }}
  times: ${{ call.output.output.times }}
"#;

const INNER: &str = r#"name: inner
type: pipeline
inputs:
  word: {type: string}
  times: 1
outputs:
  said: ${{ steps.say.output.stdout | trim }}
  times: ${{ inputs.times }}
steps:
  - id: say
    exec: echo ${{ inputs.word }}
"#;

const FAILING: &str = r#"name: failing
type: pipeline
steps:
  - id: ok
    exec: "true"
  - id: boom
    exec: sh -c 'echo broken >&2; exit 3'
  - id: after
    exec: echo never
"#;

fn home_with(dir: &Path, pipelines: &[(&str, &str)]) -> PathBuf {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    for (name, text) in pipelines {
        std::fs::write(home.join("workflows").join(format!("{name}.yaml")), text).unwrap();
    }
    home
}

fn step<'a>(run: &'a Value, id: &str) -> &'a Value {
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no step {id} in {run:#}"))
}

#[test]
fn a_pipeline_stops_before_its_gated_step_and_goes_on_when_approved() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("build", BUILD)]);
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);

    // Listed with its inputs as args.
    let listed = c.ok("GET", "/workflows", None);
    let build = listed["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "build")
        .unwrap_or_else(|| panic!("{listed:#}"));
    assert_eq!(build["description"], "Build and ship");
    assert_eq!(
        build["argsSchema"]["properties"]["target"]["default"],
        "world"
    );
    assert_eq!(
        build["argsSchema"]["properties"]["count"]["type"],
        "integer"
    );

    let paused = c.ok(
        "POST",
        "/runs",
        Some(
            json!({"workflow": "build", "args": {"target": "moon"}, "cwd": work.to_str().unwrap()}),
        ),
    );
    assert_eq!(paused["status"], "needs_approval", "{paused:#}");
    assert_eq!(paused["requiresApproval"]["prompt"], "Ship moon?");
    assert!(
        !work.join("shipped").exists(),
        "the gated step ran before approval"
    );
    let id = paused["runId"].as_str().unwrap().to_string();
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(run["status"], "needs_approval");
    assert_eq!(step(&run, "greet")["status"], "ok");
    assert_eq!(step(&run, "greet")["output"]["stdout"], "hello moon\n");
    assert_eq!(step(&run, "greet")["output"]["exit_code"], 0);
    assert_eq!(
        step(&run, "meta")["output"]["n"],
        2,
        "JSON stdout is merged"
    );
    assert_eq!(step(&run, "meta")["output"]["ok"], true);
    assert_eq!(step(&run, "skipped")["status"], "skipped");
    assert_eq!(step(&run, "ship")["status"], "pending", "{run:#}");
    assert_eq!(step(&run, "ship")["startedAt"], Value::Null);

    let approval = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    let decided = c.ok(
        "POST",
        &format!("/approvals/{approval}/approve"),
        Some(json!({})),
    );
    let done = &decided["result"];
    assert_eq!(done["status"], "ok", "{decided:#}");
    assert_eq!(
        done["output"],
        json!([{"greeting": "hello moon", "n": 2, "shipped": "shipping 2\n"}])
    );
    assert!(work.join("shipped").exists());
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(run["status"], "ok");
    assert_eq!(step(&run, "ship")["status"], "ok");
    assert_eq!(step(&run, "ship")["output"]["stdout"], "shipping 2\n");
    assert_eq!(run["decisions"][0]["decision"], "approve", "{run:#}");
}

#[test]
fn a_denied_gate_cancels_the_pipeline_and_its_step_never_runs() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("build", BUILD)]);
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let paused = c.ok(
        "POST",
        "/runs",
        Some(json!({"workflow": "build", "cwd": work.to_str().unwrap()})),
    );
    assert_eq!(paused["requiresApproval"]["prompt"], "Ship world?");
    let approval = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    let denied = c.ok(
        "POST",
        &format!("/approvals/{approval}/deny"),
        Some(json!({"reason": "not today"})),
    );
    assert_eq!(denied["result"]["status"], "cancelled", "{denied:#}");
    let run = c.ok(
        "GET",
        &format!("/runs/{}", paused["runId"].as_str().unwrap()),
        None,
    );
    assert_eq!(run["status"], "cancelled");
    assert_ne!(step(&run, "ship")["status"], "ok");
    assert!(!work.join("shipped").exists());
}

#[test]
fn a_pipeline_invokes_another_by_name_and_reads_its_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("outer", OUTER), ("inner", INNER)]);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let done = c.ok("POST", "/runs", Some(json!({"workflow": "outer"})));
    assert_eq!(done["status"], "ok", "{done:#}");
    assert_eq!(done["output"], json!([{"echoed": "deep", "times": 3}]));
    let run = c.ok(
        "GET",
        &format!("/runs/{}", done["runId"].as_str().unwrap()),
        None,
    );
    assert_eq!(step(&run, "call")["output"]["pipeline"], "inner");
    assert_eq!(step(&run, "call")["output"]["status"], "completed");
}

#[test]
fn a_failing_command_fails_the_pipeline_with_its_exit_code_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("failing", FAILING)]);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let failed = c.ok("POST", "/runs", Some(json!({"workflow": "failing"})));
    assert_eq!(failed["ok"], false, "{failed:#}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Step 'boom' failed with exit code 3: broken"),
        "{message}"
    );
    let run = c.ok(
        "GET",
        &format!("/runs/{}", failed["runId"].as_str().unwrap()),
        None,
    );
    assert_eq!(run["status"], "failed");
    assert_eq!(step(&run, "ok")["status"], "ok");
    assert_eq!(step(&run, "boom")["status"], "failed");
    assert_eq!(
        step(&run, "after")["status"],
        "skipped",
        "steps after a failure never run"
    );
    assert_eq!(step(&run, "after")["startedAt"], Value::Null);
}

#[test]
fn lobster_runs_and_resumes_a_pipeline_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("build.yaml");
    std::fs::write(&file, BUILD).unwrap();
    let state = dir.path().join("state");
    let run = |args: &[&str]| {
        envelope(
            &lobster(&state)
                .current_dir(dir.path())
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let paused = run(&[
        "run",
        "--mode",
        "tool",
        "--file",
        file.to_str().unwrap(),
        "--args-json",
        r#"{"count": 1}"#,
    ]);
    assert_eq!(paused["status"], "needs_approval", "{paused:#}");
    assert!(!dir.path().join("shipped").exists());
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let done = run(&["resume", "--token", token, "--approve", "yes"]);
    assert_eq!(done["status"], "ok", "{done:#}");
    assert_eq!(done["output"][0]["n"], 1);
    assert!(dir.path().join("shipped").exists());

    // A bad file is an error envelope naming the problem.
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "type: pipeline\nsteps:\n  - id: a\n    mcp: {server: s, tool: t}\n",
    )
    .unwrap();
    let refused = run(&["run", "--mode", "tool", "--file", bad.to_str().unwrap()]);
    assert_eq!(refused["ok"], false);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("uses mcp"),
        "{refused:#}"
    );
}
