//! An approval carries its context (issue #35, item 1): what the gate
//! unlocks as it will run, what ran before it, who started the run (and,
//! for a run a `lobster` process paused, that process), and where its
//! policy stands. For a workflow gate, a pipeline gate and a Gobby
//! pipeline's approval, read through `GET /approvals/{id}`.

use std::path::Path;

use clawdis_e2e::control::{Client, start_server_full};
use clawdis_e2e::{create_token, run_tool};
use serde_json::{Value, json};

/// Builds, then asks before deploying with a secret in the environment.
const DEPLOY: &str = "name: deploy\nargs:\n  env: {default: prod}\nsteps:\n  \
    - id: build\n    run: echo '[{\"v\":\"1.2\"}]'\n  \
    - id: gate\n    approval:\n      prompt: Deploy?\n      approvers: human\n      min_approvals: 2\n  \
    - id: go\n    run: ./deploy.sh --env ${env} --version $build.json.0.v\n    \
    env:\n      TOKEN: s3cret-value\n    stdin: $build.stdout\n";

/// A home whose library has `deploy` (and its program).
fn home(dir: &Path) -> std::path::PathBuf {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(home.join("workflows/deploy.lobster"), DEPLOY).unwrap();
    std::fs::write(
        home.join("workflows/deploy.sh"),
        "#!/bin/sh\necho deployed\n",
    )
    .unwrap();
    home
}

fn context_of(c: &Client, id: &str) -> Value {
    let approval = c.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    assert!(
        !approval.to_string().contains("s3cret-value"),
        "an environment value is never shown: {approval:#}"
    );
    approval["context"].clone()
}

#[test]
fn a_workflow_gate_shows_what_it_unlocks_what_ran_and_who_started_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let agent = create_token(&home, "agent", "agent");
    let paused = Client::with_token(server.port, &agent).ok(
        "POST",
        "/runs",
        Some(json!({"workflow": "deploy"})),
    );
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let c = Client::new(&server);
    let context = context_of(&c, paused["runId"].as_str().unwrap());

    // What approving runs, as it will run: the args and the earlier step's
    // output filled in; the environment's names, never its values.
    assert_eq!(
        context["unlocks"].as_array().unwrap().len(),
        1,
        "{context:#}"
    );
    let go = &context["unlocks"][0];
    assert_eq!(
        (
            go["id"].as_str(),
            go["kind"].as_str(),
            go["command"].as_str()
        ),
        (
            Some("go"),
            Some("shell"),
            Some("./deploy.sh --env prod --version 1.2")
        ),
        "{context:#}"
    );
    assert_eq!(go["env"], json!(["TOKEN"]));
    assert_eq!(go["stdin"], "$build.stdout");
    // What ran before, with its duration and output.
    let build = &context["before"][0];
    assert_eq!(
        (
            build["id"].as_str(),
            build["status"].as_str(),
            build["output"].as_str()
        ),
        (Some("build"), Some("ok"), Some("[{\"v\":\"1.2\"}]\n")),
        "{context:#}"
    );
    assert!(build["durationMs"].is_u64(), "{context:#}");
    // The step whose gate it is.
    assert_eq!(context["step"], "gate", "{context:#}");
    // Who started it: the agent's token.
    assert_eq!(
        context["startedBy"]["principal"], "token:agent",
        "{context:#}"
    );
    // Where the policy stands.
    assert_eq!(
        context["policy"],
        json!({"approvers": "human", "presence": "any", "votes": 0, "needed": 2,
               "expiresAt": null, "onExpiry": null}),
    );
}

#[test]
fn a_gate_a_lobster_process_paused_names_that_process() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    let work = home.join("workflows");
    let paused = run_tool(&home, &work, "deploy.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let id = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    let context = context_of(&c, id);
    let started = &context["startedBy"];
    assert_eq!(started["principal"], "lobster", "{context:#}");
    let process = &started["process"];
    assert!(
        process["exe"].as_str().unwrap().ends_with("lobster")
            && process["args"]
                .as_array()
                .unwrap()
                .contains(&json!("deploy.lobster"))
            && process["cwd"].as_str() == work.canonicalize().unwrap().to_str(),
        "{process:#}"
    );
    // Its parents (the agent that spawned it): executables and
    // directories, never their arguments, which may hold their secrets.
    let parents = process["parents"].as_array().unwrap();
    assert!(!parents.is_empty(), "{process:#}");
    assert!(
        parents.iter().all(|p| p["args"] == json!([])),
        "{process:#}"
    );
}

#[test]
fn a_pipeline_gate_and_a_gobby_approval_show_what_they_unlock() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    std::fs::write(
        home.join("workflows/ship.yaml"),
        "name: ship\ntype: pipeline\nsteps:\n  - id: greet\n    exec: echo hello\n  \
         - id: ship\n    exec: sh -c 'echo shipping'\n    approval:\n      required: true\n      \
         message: Ship it?\n",
    )
    .unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);

    let paused = c.ok(
        "POST",
        "/runs",
        Some(json!({"pipeline": "exec --json --shell 'echo [1]' | approve --prompt 'Go?' | exec --shell 'echo sent'"})),
    );
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let context = context_of(&c, paused["runId"].as_str().unwrap());
    assert_eq!(
        context["unlocks"],
        json!([{"id": "3", "kind": "exec", "command": "exec --shell 'echo sent'",
                "cwd": null, "env": [], "stdin": null, "when": null}]),
        "{context:#}"
    );
    assert_eq!(
        context["before"][0]["command"],
        "exec --json --shell 'echo [1]'"
    );

    // A Gobby gate stops before its own step: that step is what it unlocks.
    let paused = c.ok("POST", "/runs", Some(json!({"workflow": "ship"})));
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let context = context_of(&c, paused["runId"].as_str().unwrap());
    let ship = &context["unlocks"][0];
    assert_eq!(ship["id"], "ship", "{context:#}");
    assert!(
        ship["command"].as_str().unwrap().contains("echo shipping"),
        "{context:#}"
    );
    assert_eq!(context["before"][0]["id"], "greet", "{context:#}");
}
