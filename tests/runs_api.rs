//! The runs API of `clawdis serve`: `POST /runs` (waiting or not), the
//! history with every step and decision (`GET /runs`, `GET /runs/{id}`),
//! cancel and export, against the real binary on loopback with a real
//! SQLite file, real subprocesses and `kill -9` of the backend.

use std::time::{Duration, Instant};

use clawdis_e2e::control::{Client, read_until, start_server_full, subscribe};
use clawdis_e2e::{create_token, envelope, home_with, lobster, signal};
use serde_json::{Value, json};

/// Waits until `GET /runs/{id}` satisfies `done`, and returns it.
fn run_until(c: &Client, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let run = c.ok("GET", &format!("/runs/{id}"), None);
        if done(&run) {
            return run;
        }
        assert!(Instant::now() < deadline, "never {what}: {run}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

const THREE_STEPS: &str = concat!(
    "name: three\n",
    "args:\n  who:\n    type: string\n  times:\n    default: 2\n",
    "steps:\n",
    "  - id: greet\n    run: echo hello $LOBSTER_ARG_WHO\n",
    "  - id: skip\n    when: false\n    run: echo never\n",
    "  - id: flaky\n    run: test -f tried || { touch tried; exit 1; }\n    retry:\n      max: 3\n      delay_ms: 0\n",
    "  - id: count\n    run: echo '[3]'\n",
);

#[test]
fn a_workflow_runs_to_its_end_and_its_steps_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("three", THREE_STEPS)]);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);

    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let done = c.ok(
        "POST",
        "/runs",
        Some(json!({"workflow": "three", "args": {"who": "ann"}, "cwd": work.to_str().unwrap()})),
    );
    assert_eq!(
        (done["ok"].as_bool(), done["status"].as_str()),
        (Some(true), Some("ok")),
        "{done}"
    );
    assert_eq!(done["output"], json!([3]), "{done}");
    assert_eq!(done["protocolVersion"], 1);
    let id = done["runId"].as_str().expect("runId").to_string();

    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(
        (
            run["runId"].as_str(),
            run["workflow"].as_str(),
            run["status"].as_str(),
            run["startedBy"].as_str()
        ),
        (Some(id.as_str()), Some("three"), Some("ok"), Some("owner")),
        "{run}"
    );
    assert!(
        run["startedAt"].is_string() && run["finishedAt"].is_string(),
        "{run}"
    );
    let steps = run["steps"].as_array().unwrap();
    let shape: Vec<(&str, &str)> = steps
        .iter()
        .map(|s| (s["id"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        shape,
        [
            ("greet", "ok"),
            ("skip", "skipped"),
            ("flaky", "ok"),
            ("count", "ok")
        ],
        "{run}"
    );
    assert_eq!(
        steps[2]["attempts"], 2,
        "a retried step counts its attempts"
    );
    let greet = &steps[0];
    assert_eq!(greet["attempts"], 1);
    assert!(
        greet["durationMs"].is_u64()
            && greet["startedAt"].is_string()
            && greet["finishedAt"].is_string(),
        "{greet}"
    );
    assert_eq!(greet["output"]["stdout"], "hello ann\n", "{greet}");
    assert_eq!(run["decisions"], json!([]));
    assert_eq!(run["args"], json!({"who": "ann"}));
    assert_eq!(run["cwd"], work.to_str().unwrap());

    // The export holds the definition as it ran.
    let export = c.ok("GET", &format!("/runs/{id}/export"), None);
    assert_eq!(export["definition"]["text"], THREE_STEPS, "{export}");
    assert_eq!(export["run"]["steps"], run["steps"]);
    // And the audit ledger's head, as `GET /audit` says it (issue #34).
    assert_eq!(
        export["auditHead"],
        c.ok("GET", "/audit?limit=1", None)["head"],
        "{export}"
    );

    // Bad input: the field is named, nothing runs.
    for (body, status, says) in [
        (json!({"workflow": "nope"}), 404, "nope"),
        (
            json!({"workflow": "relative/path.lobster"}),
            400,
            "relative",
        ),
        (
            json!({"pipeline": "exec --json 'echo [1]'", "workflow": "three"}),
            400,
            "either",
        ),
        (json!({}), 400, "pipeline or workflow"),
        (
            json!({"workflow": "three", "args": {"who": "a"}, "cwd": "not/absolute"}),
            400,
            "cwd",
        ),
        (
            json!({"workflow": "three", "args": {"who": "a"}, "wait": "no"}),
            400,
            "wait",
        ),
    ] {
        let (got, answer) = c.call("POST", "/runs", Some(body.clone()));
        assert_eq!(got, status, "{body} → {answer}");
        let error = answer["error"].as_str().unwrap_or_default();
        assert!(
            error.contains(says),
            "{body}: {error:?} should name {says:?}"
        );
    }
    // What the document cannot tell (a pipeline's syntax, the args a
    // workflow takes) is a 400 with Lobster's `parse_error` as its code,
    // naming the field (issue 44: it was a 200 envelope with ok: false):
    // nothing runs, and nothing is recorded.
    for (body, says) in [
        (json!({"workflow": "three", "args": {"who": 7}}), "args/who"),
        (json!({"workflow": "three"}), "who"),
        (
            json!({"workflow": "three", "args": {"who": "a", "typo": 1}}),
            "typo",
        ),
        (json!({"pipeline": "exec 'unterminated"}), "quote"),
    ] {
        let (status, answer) = c.call("POST", "/runs", Some(body.clone()));
        assert_eq!(
            (status, answer["code"].as_str()),
            (400, Some("parse_error")),
            "{body} → {answer}"
        );
        let message = answer["error"].as_str().unwrap_or_default();
        assert!(
            message.contains(says),
            "{body}: {message:?} should name {says:?}"
        );
        assert!(answer.get("runId").is_none(), "{answer}");
    }
    assert_eq!(
        c.call(
            "POST",
            "/runs",
            Some(json!({"workflow": "three", "cwd": "/no/such/dir"}))
        )
        .0,
        404
    );
    assert_eq!(c.call("GET", "/runs/no-such-run", None).0, 404);
    assert_eq!(c.call("POST", "/runs/no-such-run/cancel", None).0, 404);
    assert_eq!(c.call("GET", "/runs/no-such-run/export", None).0, 404);
    assert_eq!(c.call("GET", "/runs?status=asleep", None).0, 400);
    assert_eq!(c.call("GET", "/runs?cursor=xyz", None).0, 400);
    assert_eq!(
        c.ok("GET", "/runs", None)["runs"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn a_paused_run_records_each_decision_and_goes_on_where_it_stopped() {
    let flow = "name: deploy\nsteps:\n  - id: build\n    run: echo built\n  - id: gate\n    approval:\n      \
prompt: Ship it?\n      approvers: human\n  - id: ship\n    run: echo shipped >> shipped.txt; echo shipped\n";
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("deploy", flow)]);
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let agent = Client::with_token(server.port, &create_token(&home, "bot", "agent"));
    let person = Client::with_token(server.port, &create_token(&home, "ann", "approver"));

    let cwd = work.to_str().unwrap();
    let paused = agent.ok(
        "POST",
        "/runs",
        Some(json!({"workflow": "deploy", "cwd": cwd})),
    );
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let id = paused["runId"].as_str().unwrap().to_string();
    let approval = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(
        (run["status"].as_str(), run["startedBy"].as_str()),
        (Some("needs_approval"), Some("token:bot"))
    );
    let shape = |run: &Value| -> Vec<(String, String)> {
        run["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["id"].as_str().unwrap().into(),
                    s["status"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        shape(&run),
        [s("build", "ok"), s("gate", "ok"), s("ship", "pending")]
    );
    // The approval knows its run.
    let shown = c.ok("GET", &format!("/approvals/{approval}"), None);
    assert_eq!(shown["approval"]["runId"], id.as_str(), "{shown}");

    // The agent that started it cannot approve a human gate; a person can.
    let (refused, said) = agent.call("POST", &format!("/approvals/{approval}/approve"), None);
    assert_eq!(refused, 403, "{said}");
    let approved = person.ok(
        "POST",
        &format!("/approvals/{approval}/approve"),
        Some(json!({"comment": "go"})),
    );
    assert_eq!(approved["result"]["status"], "ok", "{approved}");
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(run["status"], "ok", "{run}");
    assert_eq!(
        shape(&run),
        [s("build", "ok"), s("gate", "ok"), s("ship", "ok")]
    );
    assert_eq!(run["steps"][2]["output"]["stdout"], "shipped\n");
    let decisions = run["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 1, "{run}");
    assert_eq!(
        (
            decisions[0]["approvalId"].as_str(),
            decisions[0]["decision"].as_str(),
            decisions[0]["by"].as_str(),
            decisions[0]["via"].as_str(),
            decisions[0]["comment"].as_str()
        ),
        (
            Some(approval.as_str()),
            Some("approve"),
            Some("token:ann"),
            Some("http"),
            Some("go")
        )
    );
    assert!(decisions[0]["at"].is_string());
    assert_eq!(
        std::fs::read_to_string(work.join("shipped.txt")).unwrap(),
        "shipped\n"
    );

    // Denied: the steps it never reached are cancelled; the reason is kept.
    let paused = agent.ok(
        "POST",
        "/runs",
        Some(json!({"workflow": "deploy", "cwd": cwd})),
    );
    let id = paused["runId"].as_str().unwrap().to_string();
    let approval = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    person.ok(
        "POST",
        &format!("/approvals/{approval}/deny"),
        Some(json!({"reason": "not today"})),
    );
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(run["status"], "cancelled", "{run}");
    assert_eq!(shape(&run)[2], s("ship", "cancelled"));
    assert_eq!(
        (
            run["decisions"][0]["decision"].as_str(),
            run["decisions"][0]["comment"].as_str()
        ),
        (Some("deny"), Some("not today"))
    );

    // Cancelled through the run: its gate is cancelled by the caller.
    let paused = agent.ok(
        "POST",
        "/runs",
        Some(json!({"workflow": "deploy", "cwd": cwd})),
    );
    let id = paused["runId"].as_str().unwrap().to_string();
    let cancelled = agent.ok("POST", &format!("/runs/{id}/cancel"), None);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(
        (
            cancelled["decisions"][0]["decision"].as_str(),
            cancelled["decisions"][0]["by"].as_str()
        ),
        (Some("cancel"), Some("token:bot"))
    );
    let (again, said) = c.call("POST", &format!("/runs/{id}/cancel"), None);
    assert_eq!(again, 409, "{said}");
    assert_eq!(
        std::fs::read_to_string(work.join("shipped.txt")).unwrap(),
        "shipped\n",
        "no step ran twice"
    );
}

#[test]
fn a_gate_resumed_by_lobster_goes_on_in_the_same_history() {
    let flow = "name: ask\nsteps:\n  - id: gate\n    approval: Proceed?\n  - id: after\n    run: echo after\n";
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("ask", flow)]);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let paused = c.ok("POST", "/runs", Some(json!({"workflow": "ask"})));
    let id = paused["runId"].as_str().unwrap().to_string();
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let out = lobster(&home)
        .env("LOBSTER_APPROVAL_APPROVED_BY", "cli-user")
        .args(["resume", "--token", token, "--approve", "yes"])
        .output()
        .unwrap();
    assert_eq!(envelope(&out)["output"], json!(["after\n"]), "{out:?}");
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(run["status"], "ok", "{run}");
    assert_eq!(run["steps"][1]["status"], "ok", "{run}");
    assert_eq!(
        (
            run["decisions"][0]["via"].as_str(),
            run["decisions"][0]["by"].as_str()
        ),
        (Some("cli"), Some("cli-user"))
    );
}

#[test]
fn runs_page_newest_first_and_filter_by_status_and_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(
        dir.path(),
        &[
            ("quick", "steps:\n  - id: a\n    run: echo a\n"),
            ("asks", "steps:\n  - id: g\n    approval: ok?\n"),
        ],
    );
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let mut started = Vec::new();
    for i in 0..7 {
        let body = match i % 3 {
            0 => json!({"workflow": "asks"}),
            1 => json!({"workflow": "quick"}),
            _ => json!({"pipeline": "exec --json --shell 'echo [1]'"}),
        };
        started.push(
            c.ok("POST", "/runs", Some(body))["runId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(next) => format!("/runs?limit=3&cursor={next}"),
            None => "/runs?limit=3".to_string(),
        };
        let page = c.ok("GET", &path, None);
        let runs = page["runs"].as_array().unwrap();
        assert!(runs.len() <= 3);
        seen.extend(
            runs.iter()
                .map(|r| r["runId"].as_str().unwrap().to_string()),
        );
        match page["next"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => {
                assert!(page["next"].is_null());
                break;
            }
        }
    }
    started.reverse();
    assert_eq!(seen, started, "every run once, newest first");

    let asks = c.ok("GET", "/runs?workflow=asks", None)["runs"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(asks.len(), 3);
    assert!(
        asks.iter()
            .all(|r| r["status"] == "needs_approval" && r["workflow"] == "asks")
    );
    let waiting = c.ok("GET", "/runs?status=needs_approval", None)["runs"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(waiting, 3);
    let pipelines_ok = c.ok("GET", "/runs?status=ok", None)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "pipeline")
        .count();
    assert_eq!(pipelines_ok, 2);
}

#[test]
fn a_run_not_waited_for_goes_on_and_can_be_cancelled_mid_step() {
    let flow = "name: slow\nsteps:\n  - id: first\n    run: echo first\n  - id: nap\n    \
run: echo $$ > nap.pid; sleep 30; echo woke > woke.txt\n  - id: never\n    run: echo never\n";
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("slow", flow)]);
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let (status, started) = c.call(
        "POST",
        "/runs",
        Some(json!({"workflow": "slow", "wait": false, "cwd": work.to_str().unwrap()})),
    );
    assert_eq!(status, 202, "{started}");
    assert_eq!(started["status"], "running");
    let id = started["runId"].as_str().unwrap().to_string();
    let napping = run_until(&c, &id, "napping", |r| {
        r["steps"][1]["status"] == "running" && work.join("nap.pid").exists()
    });
    assert_eq!(napping["status"], "running");
    assert_eq!(napping["steps"][0]["status"], "ok");
    let listed = c.ok("GET", "/runs?status=running", None);
    assert_eq!(listed["runs"][0]["runId"], id.as_str());

    let cancelled = c.ok("POST", &format!("/runs/{id}/cancel"), None);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let steps: Vec<&str> = cancelled["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["ok", "cancelled", "cancelled"], "{cancelled}");
    assert!(cancelled["finishedAt"].is_string());
    // Its process was killed.
    let pid: i32 = std::fs::read_to_string(work.join("nap.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        clawdis_e2e::gone_within(pid, Duration::from_secs(5)),
        "the step's shell {pid} outlived the cancel"
    );
    assert!(!work.join("woke.txt").exists());
    assert_eq!(c.call("POST", &format!("/runs/{id}/cancel"), None).0, 409);
}

#[test]
fn a_killed_backend_loses_no_acknowledged_run() {
    let flow = "name: slow\nsteps:\n  - id: nap\n    run: sleep 30\n";
    let gated =
        "name: gated\nsteps:\n  - id: g\n    approval: ok?\n  - id: after\n    run: echo after\n";
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("slow", flow), ("gated", gated)]);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let paused = c.ok("POST", "/runs", Some(json!({"workflow": "gated"})));
    let gated_id = paused["runId"].as_str().unwrap().to_string();
    let approval = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, running) = c.call(
        "POST",
        "/runs",
        Some(json!({"workflow": "slow", "wait": false})),
    );
    let slow_id = running["runId"].as_str().unwrap().to_string();
    run_until(&c, &slow_id, "napping", |r| {
        r["steps"][0]["status"] == "running"
    });

    signal(server.child.id() as i32, libc::SIGKILL);
    drop(server);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let slow = c.ok("GET", &format!("/runs/{slow_id}"), None);
    assert_eq!(slow["status"], "failed", "{slow}");
    assert!(
        slow["result"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{slow}"
    );
    assert_eq!(slow["steps"][0]["status"], "skipped", "{slow}");
    let gated = c.ok("GET", &format!("/runs/{gated_id}"), None);
    assert_eq!(gated["status"], "needs_approval", "{gated}");
    let approved = c.ok("POST", &format!("/approvals/{approval}/approve"), None);
    assert_eq!(
        approved["result"]["output"],
        json!(["after\n"]),
        "{approved}"
    );
    assert_eq!(
        c.ok("GET", &format!("/runs/{gated_id}"), None)["status"],
        "ok"
    );
}

#[test]
fn the_principal_that_started_a_run_cannot_approve_it_when_the_gate_forbids_it() {
    let flow = "name: pay\nsteps:\n  - id: gate\n    approval:\n      prompt: Pay?\n      \
                forbid_self_approval: true\n  - id: paid\n    run: echo paid\n";
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("pay", flow)]);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let owner = Client::new(&server);
    let bot = Client::with_token(server.port, &create_token(&home, "bot", "agent"));

    let paused = bot.ok("POST", "/runs", Some(json!({"workflow": "pay"})));
    let approval = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    let shown = owner.ok("GET", &format!("/approvals/{approval}"), None);
    assert_eq!(
        shown["approval"]["policy"]["forbidSelfApproval"], true,
        "{shown}"
    );
    let (status, said) = bot.call("POST", &format!("/approvals/{approval}/approve"), None);
    assert_eq!(status, 403, "{said}");
    assert!(
        said["error"]
            .as_str()
            .unwrap()
            .contains("token:bot started this run"),
        "{said}"
    );
    // Denying or cancelling one's own run stays open; another principal approves.
    let approved = owner.ok("POST", &format!("/approvals/{approval}/approve"), None);
    assert_eq!(
        approved["result"]["output"],
        json!(["paid\n"]),
        "{approved}"
    );

    let paused = owner.ok("POST", "/runs", Some(json!({"workflow": "pay"})));
    let approval = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        owner
            .call("POST", &format!("/approvals/{approval}/approve"), None)
            .0,
        403
    );
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let out = lobster(&home)
        .args(["resume", "--token", token, "--approve", "yes"])
        .output()
        .unwrap();
    let refused = envelope(&out);
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("forbids self-approval"),
        "{refused}"
    );
    let denied = bot.ok("POST", &format!("/approvals/{approval}/deny"), None);
    assert_eq!(denied["result"]["status"], "cancelled", "{denied}");
}

#[test]
fn events_follow_runs_and_their_gates_whoever_decides() {
    let flow = "name: ask\nsteps:\n  - id: gate\n    approval: Proceed?\n  - id: after\n    run: echo after\n";
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("ask", flow)]);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let mut events = subscribe(server.port, server.token.trim(), "/events");

    let paused = c.ok("POST", "/runs", Some(json!({"workflow": "ask"})));
    let id = paused["runId"].as_str().unwrap().to_string();
    let seen = read_until(&mut events, "\"needs_approval\"", Duration::from_secs(5));
    assert!(seen.contains("event: run.started"), "{seen}");
    assert!(seen.contains(&id), "{seen}");
    let seen = read_until(
        &mut events,
        "event: approval.paused",
        Duration::from_secs(5),
    );
    assert!(seen.contains("Proceed?"), "{seen}");

    // Decided by another process: the backend still tells.
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let out = lobster(&home)
        .args(["resume", "--token", token, "--approve", "yes"])
        .output()
        .unwrap();
    assert_eq!(envelope(&out)["status"], "ok");
    // The run's own fields come first: its id, kind, workflow, status.
    let ended = format!(
        "event: run.changed\ndata: {{\"type\":\"run.changed\",\"run\":{{\"runId\":\"{id}\",\
         \"kind\":\"workflow\",\"workflow\":\"ask\",\"status\":\"ok\""
    );
    read_until(&mut events, &ended, Duration::from_secs(5));
}
