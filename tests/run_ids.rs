//! One run, one id (issue #33): the `runId` that `POST /runs` answers, or
//! that a paused `lobster` run is recorded under, is what every route that
//! takes a run accepts: `GET /runs/{id}`, `/approvals/{id}` and its
//! decisions, the CLI; a gate's 8-hex `approvalId` decides exactly that
//! gate, input gates included. Before, the approvals API named each gate by
//! its state key, which `GET /runs/{id}` did not know, and answered 404 to
//! the run id; an input gate started with `POST /runs` could not be
//! answered at all.

use std::time::{Duration, Instant};

use clawdis_e2e::control::{Client, read_until, start_server_full, subscribe};
use clawdis_e2e::{clawdis_cli, envelope, home_with, lobster, stdout_json};
use serde_json::{Value, json};

/// A workflow with an approval gate, then an input gate.
const TWO_GATES: &str = concat!(
    "name: two\n",
    "steps:\n",
    "  - id: build\n    run: echo built\n",
    "  - id: ok\n    approval: Ship it?\n",
    "  - id: note\n    input:\n      prompt: Release note?\n      responseSchema:\n",
    "        type: object\n        properties:\n          text: {type: string}\n        required: [text]\n",
    "  - id: ship\n    run: echo shipped $note.response.text\n",
);

fn is_approval_id(id: &Value) -> bool {
    id.as_str()
        .is_some_and(|id| id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Every approval listed names a run that `GET /runs/{id}` knows.
fn every_listed_run_is_known(c: &Client) {
    let listed = c.ok("GET", "/approvals", None);
    for approval in listed["approvals"].as_array().unwrap() {
        assert_eq!(approval["id"], approval["runId"], "{approval}");
        let id = approval["id"].as_str().unwrap();
        let (status, run) = c.call("GET", &format!("/runs/{id}"), None);
        assert_eq!(status, 200, "GET /runs/{id} for {approval}: {run}");
    }
}

#[test]
fn a_service_run_is_decided_by_its_run_id_at_every_gate() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("two", TWO_GATES)]);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let mut events = subscribe(server.port, &server.token, "/events");

    let paused = c.ok("POST", "/runs", Some(json!({"workflow": "two"})));
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let id = paused["runId"].as_str().unwrap().to_string();

    let gate = c.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    assert_eq!(
        (
            gate["id"].as_str(),
            gate["runId"].as_str(),
            gate["gate"].as_str()
        ),
        (Some(id.as_str()), Some(id.as_str()), Some("approval")),
        "{gate}"
    );
    assert_eq!(gate["approvalId"], paused["requiresApproval"]["approvalId"]);
    // The bus names the run by the same id.
    let heard = read_until(&mut events, "approval.paused", Duration::from_secs(10));
    assert!(heard.contains(&format!("\"id\":\"{id}\"")), "{heard}");
    every_listed_run_is_known(&c);

    // Approved by the run id, the run goes on to its input gate.
    let asked = c.ok("POST", &format!("/approvals/{id}/approve"), None)["result"].clone();
    assert_eq!(asked["status"], "needs_input", "{asked}");
    let input = c.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    assert_eq!(
        (input["gate"].as_str(), input["status"].as_str()),
        (Some("input"), Some("pending")),
        "{input}"
    );
    // An input gate has a short id of its own, though Lobster's envelope
    // shows none; the run's status says it waits for input.
    assert!(is_approval_id(&input["approvalId"]), "{input}");
    assert!(
        asked["requiresInput"].get("approvalId").is_none(),
        "{asked}"
    );
    assert_eq!(
        c.ok("GET", &format!("/runs/{id}"), None)["status"],
        "needs_input"
    );
    every_listed_run_is_known(&c);

    // A response that the gate's schema refuses is a 400 naming the path
    // (issue 44), and leaves the gate waiting.
    let (status, refused) = c.call(
        "POST",
        &format!("/approvals/{id}/respond"),
        Some(json!({"response": {"text": 3}})),
    );
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("/text"),
        "{refused}"
    );
    let done = c.ok(
        "POST",
        &format!("/approvals/{id}/respond"),
        Some(json!({"response": {"text": "v2"}})),
    )["result"]
        .clone();
    assert_eq!(done["output"], json!(["shipped v2\n"]), "{done}");
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(run["status"], "ok", "{run}");
    // Its gates: each decided once, in order.
    let decisions: Vec<&str> = run["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["approve", "respond"], "{run}");
    // The run has ended: another decision is a conflict, not a new gate.
    assert_eq!(
        c.call("POST", &format!("/approvals/{id}/approve"), None).0,
        409
    );
    // The CLI lists and shows the same id.
    let listed = stdout_json(&clawdis_cli(&home, &["approvals", "list"]));
    assert!(
        listed["approvals"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["id"] == id.as_str()),
        "{listed}"
    );
    let shown = stdout_json(&clawdis_cli(&home, &["runs", "show", &id]));
    assert_eq!(shown["runId"], id.as_str());
}

#[test]
fn an_input_gate_is_answered_by_its_own_short_id() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("two", TWO_GATES)]);
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);
    let paused = c.ok("POST", "/runs", Some(json!({"workflow": "two"})));
    let id = paused["runId"].as_str().unwrap();
    let short = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    c.ok("POST", &format!("/approvals/{short}/approve"), None);
    let input = c.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    let input_id = input["approvalId"].as_str().unwrap();
    assert_ne!(input_id, short);
    // The first gate's id still names the first gate, decided.
    let first = c.ok("GET", &format!("/approvals/{short}"), None)["approval"].clone();
    assert_eq!(
        (first["gate"].as_str(), first["decision"].as_str()),
        (Some("approval"), Some("approve"))
    );
    let (status, again) = c.call("POST", &format!("/approvals/{short}/approve"), None);
    assert_eq!(status, 409, "{again}");
    let done = c.ok(
        "POST",
        &format!("/approvals/{input_id}/respond"),
        Some(json!({"response": {"text": "by id"}})),
    )["result"]
        .clone();
    assert_eq!(done["output"], json!(["shipped by id\n"]), "{done}");
    // `lobster resume --id` knows approval gates only, as Lobster's index.
    let out = lobster(&home)
        .args([
            "resume",
            "--id",
            input_id,
            "--response-json",
            "{\"text\":\"x\"}",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(envelope(&out)["error"]["type"], "parse_error");
}

#[test]
fn a_paused_lobster_run_is_a_run_the_service_knows() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[]);
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("two.lobster"), TWO_GATES).unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);

    // OpenClaw's call, unchanged: the envelope is Lobster's, with no runId.
    let out = lobster(&home)
        .current_dir(&work)
        .args(["run", "--mode", "tool", "two.lobster"])
        .output()
        .unwrap();
    let paused = envelope(&out);
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    assert!(paused.get("runId").is_none(), "{paused}");
    let short = paused["requiresApproval"]["approvalId"].as_str().unwrap();

    let gate = c.ok("GET", &format!("/approvals/{short}"), None)["approval"].clone();
    let id = gate["runId"].as_str().unwrap().to_string();
    assert!(
        id.len() == 36 && !id.contains("resume"),
        "a run id, not a state key: {gate}"
    );
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(
        (
            run["status"].as_str(),
            run["workflow"].as_str(),
            run["startedBy"].as_str()
        ),
        (Some("needs_approval"), Some("two"), Some("lobster")),
        "{run}"
    );
    let steps: Vec<(&str, &str)> = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        steps,
        [
            ("build", "ok"),
            ("ok", "ok"),
            ("note", "pending"),
            ("ship", "pending")
        ],
        "{run}"
    );
    every_listed_run_is_known(&c);

    // Decided by the run id over HTTP, then answered by lobster: one run.
    let asked = c.ok("POST", &format!("/approvals/{id}/approve"), None)["result"].clone();
    assert_eq!(asked["status"], "needs_input", "{asked}");
    let token = asked["requiresInput"]["resumeToken"].as_str().unwrap();
    let out = lobster(&home)
        .current_dir(&work)
        .args([
            "resume",
            "--token",
            token,
            "--response-json",
            "{\"text\":\"cli\"}",
        ])
        .output()
        .unwrap();
    assert_eq!(
        envelope(&out)["output"],
        json!(["shipped cli\n"]),
        "{out:?}"
    );
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(run["status"], "ok", "{run}");
    assert_eq!(run["steps"][3]["status"], "ok", "{run}");

    // A pipeline paused by lobster is a run too.
    let out = lobster(&home)
        .current_dir(&work)
        .args([
            "run",
            "--mode",
            "tool",
            "exec --json --shell 'echo [1]' | approve --prompt Go?",
        ])
        .output()
        .unwrap();
    let short = envelope(&out)["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    let gate = c.ok("GET", &format!("/approvals/{short}"), None)["approval"].clone();
    let pipeline = c.ok(
        "GET",
        &format!("/runs/{}", gate["runId"].as_str().unwrap()),
        None,
    );
    assert_eq!(
        (pipeline["kind"].as_str(), pipeline["status"].as_str()),
        (Some("pipeline"), Some("needs_approval")),
        "{pipeline}"
    );
    // A lobster run that never pauses is not recorded.
    let before = c.ok("GET", "/runs", None)["runs"].as_array().unwrap().len();
    let out = lobster(&home)
        .current_dir(&work)
        .args(["run", "--mode", "tool", "exec --json --shell 'echo [2]'"])
        .output()
        .unwrap();
    assert_eq!(envelope(&out)["status"], "ok");
    assert_eq!(
        c.ok("GET", "/runs", None)["runs"].as_array().unwrap().len(),
        before
    );
}

/// Issue #33: `clawdis runs cancel` refused a run executing in the backend
/// ("cancel it there"); it now asks the backend, which stops it.
#[test]
fn the_cli_cancels_a_run_executing_in_the_backend() {
    let flow = "name: slow\nsteps:\n  - id: nap\n    run: echo $$ > nap.pid; sleep 30; echo woke > woke.txt\n";
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), &[("slow", flow)]);
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let port = clawdis_e2e::control::free_port();
    let server = start_server_full(
        &home,
        json!({"controlUrl": format!("http://127.0.0.1:{port}")}),
        &["--no-browser"],
        &[],
    );
    assert_eq!(server.port, port);
    let c = Client::new(&server);
    let (status, started) = c.call(
        "POST",
        "/runs",
        Some(json!({"workflow": "slow", "wait": false, "cwd": work.to_str().unwrap()})),
    );
    assert_eq!(status, 202, "{started}");
    let id = started["runId"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !work.join("nap.pid").exists() {
        assert!(Instant::now() < deadline, "the step never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let cancelled = stdout_json(&clawdis_cli(&home, &["runs", "cancel", &id]));
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["steps"][0]["status"], "cancelled", "{cancelled}");
    let pid: i32 = std::fs::read_to_string(work.join("nap.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        clawdis_e2e::gone_within(pid, Duration::from_secs(5)),
        "the step's shell {pid} outlived the cancel"
    );
    assert_eq!(
        c.ok("GET", &format!("/runs/{id}"), None)["status"],
        "cancelled"
    );
    // Once ended, the CLI says so, with the backend's reason.
    let again = clawdis_cli(&home, &["runs", "cancel", &id]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("has ended"),
        "{again:?}"
    );
}
