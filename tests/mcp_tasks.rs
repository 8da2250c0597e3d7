//! Issue #36: MCP tasks (SEP-2663) with the official Tasks client (npm
//! `@modelcontextprotocol/ext-tasks` 0.2.2 on `@modelcontextprotocol/client`
//! 2.4.0, installed by scripts/test), as an agent host would use it,
//! against a real `clawdis serve`. A call that waits for a person is a task
//! in `input_required` with the gate's prompt; the client's answer decides
//! nothing; the person's decision ends it; `tasks/cancel` cancels the run.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clawdis_e2e::control::{Client, Server, free_port, json, request, start_server_with};
use clawdis_e2e::{create_token, workspace_root};
use serde_json::{Value, json};

const SHIP: &str = "name: ship\nsteps:\n  - id: build\n    run: echo built\n  - id: gate\n    \
                    approval:\n      prompt: Ship it?\n      approvers: human\n  - id: ship\n    \
                    run: echo shipped\n";

/// A gate nobody decides, which its policy denies after two seconds.
const NIGHTLY: &str = "name: nightly\nsteps:\n  - id: gate\n    approval:\n      prompt: Run it?\n      \
                       approvers: human\n      expires_in: 2s\n      on_expiry: deny\n  - id: work\n    \
                       run: echo worked\n";

/// Two gates, one after the other.
const TWICE: &str = "name: twice\nsteps:\n  - id: first\n    approval:\n      prompt: First?\n      \
                     approvers: human\n  - id: second\n    approval:\n      prompt: Second?\n      \
                     approvers: human\n  - id: done\n    run: echo both\n";

/// A backend whose home has the workflows `ship` (a gate only a person
/// decides), `nightly` (one that expires) and `twice` (two gates).
fn server(dir: &Path) -> (std::path::PathBuf, Server) {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(home.join("workflows/ship.lobster"), SHIP).unwrap();
    std::fs::write(home.join("workflows/nightly.lobster"), NIGHTLY).unwrap();
    std::fs::write(home.join("workflows/twice.lobster"), TWICE).unwrap();
    let server = start_server_with(
        &home,
        json!({ "controlUrl": format!("http://127.0.0.1:{}", free_port()) }),
    );
    (home, server)
}

/// The agent host: tests/support/mcp_tasks_client.mjs calling one tool,
/// each line it prints an event.
struct Host {
    child: Child,
    lines: mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl Host {
    /// Calls `tool` with `args` as `token`, answering elicitations with
    /// `action` (`cancel`: answers, then cancels the task).
    fn call(
        dir: &Path,
        server: &Server,
        token: &str,
        tool: &str,
        args: Value,
        action: &str,
    ) -> Host {
        let modules = workspace_root().join("target/test-npm/node_modules");
        let arch = match std::env::consts::ARCH {
            "aarch64" => "arm64",
            _ => "x64",
        };
        let node = modules.join(format!("node-linux-{arch}/bin/node"));
        assert!(
            node.is_file()
                && modules
                    .join("@modelcontextprotocol/ext-tasks/package.json")
                    .is_file(),
            "the MCP Tasks client or its Node.js is missing: run ./scripts/test, which installs them"
        );
        // Node resolves the packages from the script's directory up.
        let script = dir.join("mcp_tasks_client.mjs");
        if !script.exists() {
            std::fs::copy(
                workspace_root().join("tests/support/mcp_tasks_client.mjs"),
                &script,
            )
            .unwrap();
            std::os::unix::fs::symlink(&modules, dir.join("node_modules")).unwrap();
        }
        let mut child = Command::new(node)
            .arg(&script)
            .arg(format!("http://127.0.0.1:{}/mcp", server.port))
            .arg(token)
            .arg(tool)
            .arg(args.to_string())
            .arg(action)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let (send, lines) = mpsc::channel();
        let out = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let event = serde_json::from_str(&line)
                    .unwrap_or_else(|_| json!({ "event": "text", "text": line }));
                if send.send(event).is_err() {
                    return;
                }
            }
        });
        Host {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Runs workflow `name` with `lobster_run` as the server's owner.
    fn workflow(dir: &Path, server: &Server, name: &str, action: &str) -> Host {
        let args = json!({ "workflow": name });
        Host::call(dir, server, &server.token, "lobster_run", args, action)
    }

    /// The next event `wanted` accepts, within a minute.
    fn until(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(event) => {
                    self.seen.push(event.clone());
                    if wanted(&event) {
                        return event;
                    }
                }
                Err(_) => panic!("no {what}; the host saw: {:#?}", self.seen),
            }
        }
    }

    /// The next event named `name`.
    fn event(&mut self, name: &str) -> Value {
        self.until(name, |e| e["event"] == name)
    }

    /// The next task state `status`.
    fn status(&mut self, status: &str) -> Value {
        self.until(&format!("task status {status}"), |e| {
            e["event"] == "task" && e["status"] == status
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The run a task's outcome ended, as the runs API has it.
fn run_of(owner: &Client, outcome: &Value) -> Value {
    let run_id = outcome["result"]["structuredContent"]["runId"]
        .as_str()
        .unwrap_or_else(|| panic!("no run: {outcome}"));
    owner.ok("GET", &format!("/runs/{run_id}"), None)
}

/// `person` decides gate `id` with `verb` (`approve` or `deny`).
fn decide(person: &Client, id: &str, verb: &str) {
    let (status, body) = person.call("POST", &format!("/approvals/{id}/{verb}"), None);
    assert_eq!(status, 200, "{verb} {id}: {body}");
}

/// The one pending approval.
fn pending(owner: &Client) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let listed = owner.ok("GET", "/approvals?status=pending", None);
        if let Some(first) = listed["approvals"].get(0) {
            return first.clone();
        }
        assert!(Instant::now() < deadline, "no pending approval");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The latest run once it has ended, within half a minute.
fn settled(owner: &Client) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let runs = owner.ok("GET", "/runs?limit=1", None);
        let run = runs["runs"][0].clone();
        if run["finishedAt"].is_string() {
            return run;
        }
        assert!(Instant::now() < deadline, "never ended: {run}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Calls `method` with `params` on `/mcp` as a 2026-07-28 client that
/// declares tasks, with `token`; the JSON-RPC response.
fn raw_call(server: &Server, token: &str, method: &str, params: Value) -> Value {
    raw_call_with(server, token, method, params, json!({}))
}

/// [`raw_call`], the client declaring `capabilities` besides tasks.
fn raw_call_with(
    server: &Server,
    token: &str,
    method: &str,
    mut params: Value,
    mut capabilities: Value,
) -> Value {
    capabilities["extensions"] = json!({ "io.modelcontextprotocol/tasks": {} });
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = params
        .get("taskId")
        .or_else(|| params.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string();
    let auth = format!("Bearer {token}");
    let (_, text) = request(
        server.port,
        "POST",
        "/mcp",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", &name),
        ],
        &body,
    );
    let data = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|l| !l.is_empty());
    json(data.unwrap_or(&text))
}

#[test]
fn a_run_at_a_human_gate_is_a_task_that_only_the_persons_decision_ends() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = server(dir.path());
    let person = Client::with_token(server.port, &create_token(&home, "alice", "approver"));
    let owner = Client::new(&server);
    let mut host = Host::workflow(dir.path(), &server, "ship", "accept");
    let call = host.event("call");
    assert_eq!(call["kind"], "task", "{call}");
    // The gate is asked of the host with its prompt; the host accepts.
    let asked = host.event("elicitation");
    let message = asked["message"].as_str().unwrap();
    assert!(message.contains("Ship it?"), "{message}");
    assert!(
        message.contains("Answering here decides nothing"),
        "{message}"
    );
    let waiting = host.status("input_required");
    assert!(
        waiting["statusMessage"]
            .as_str()
            .unwrap()
            .contains("Ship it?"),
        "{waiting}"
    );
    assert_eq!(waiting["ttlMs"], 86_400_000, "{waiting}");
    assert_eq!(waiting["pollIntervalMs"], 1000, "{waiting}");
    // Answered, the task waits on for the person: the gate is undecided.
    host.status("working");
    let gate = pending(&owner);
    assert_eq!(gate["prompt"], "Ship it?");
    assert!(gate["decision"].is_null(), "{gate}");
    // Nor does the agent's own token decide it.
    let id = gate["approvalId"].as_str().unwrap();
    let (status, _) = owner.call("POST", &format!("/approvals/{id}/approve"), None);
    assert_eq!(status, 403);
    decide(&person, id, "approve");
    let outcome = host.event("outcome");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    let envelope = &outcome["result"]["structuredContent"];
    assert_eq!(envelope["status"], "ok", "{outcome}");
    assert!(envelope["runId"].is_string(), "{outcome}");
    assert_eq!(outcome["result"]["isError"], false, "{outcome}");
    drop(host);

    // The task follows its run through every gate, each asked in turn.
    let mut host = Host::workflow(dir.path(), &server, "twice", "accept");
    for prompt in ["First?", "Second?"] {
        let asked = host.event("elicitation");
        assert!(
            asked["message"].as_str().unwrap().contains(prompt),
            "{asked}"
        );
        host.status("working");
        let gate = pending(&owner);
        assert_eq!(gate["prompt"], prompt);
        decide(&person, gate["approvalId"].as_str().unwrap(), "approve");
    }
    let outcome = host.event("outcome");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(
        outcome["result"]["structuredContent"]["status"], "ok",
        "{outcome}"
    );
}

#[test]
fn a_denied_or_expired_gate_completes_the_task_and_tasks_cancel_cancels_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = server(dir.path());
    let person = Client::with_token(server.port, &create_token(&home, "alice", "approver"));
    let owner = Client::new(&server);
    // Denied by the person: the task completes with the run's end.
    let mut host = Host::workflow(dir.path(), &server, "ship", "decline");
    host.status("input_required");
    decide(
        &person,
        pending(&owner)["approvalId"].as_str().unwrap(),
        "deny",
    );
    let outcome = host.event("outcome");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    let run = run_of(&owner, &outcome);
    assert_eq!(run["status"], "cancelled", "{run}");
    assert_eq!(run["decisions"][0]["decision"], "deny", "{run}");
    drop(host);

    // Expired: the task completes with the run its policy denied.
    let mut host = Host::workflow(dir.path(), &server, "nightly", "accept");
    host.status("input_required");
    let outcome = host.event("outcome");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    let run = run_of(&owner, &outcome);
    assert_eq!(run["decisions"][0]["by"], "expiry", "{run}");
    assert_eq!(run["decisions"][0]["decision"], "expire", "{run}");
    assert_eq!(run["status"], "cancelled", "{run}");
    drop(host);

    // Cancelled by the host: the run is cancelled, by the caller, via MCP.
    let mut host = Host::workflow(dir.path(), &server, "ship", "cancel");
    host.status("input_required");
    let outcome = host.event("outcome");
    assert_eq!(outcome["status"], "cancelled", "{outcome}");
    // tasks/cancel is acknowledged at once; the task then cancels its run.
    let run = settled(&owner);
    assert_eq!(run["status"], "cancelled", "{run}");
    let decision = &run["decisions"][0];
    assert_eq!(
        (
            &decision["decision"],
            &decision["via"],
            &decision["comment"]
        ),
        (&json!("cancel"), &json!("mcp"), &json!("tasks/cancel")),
        "{run}"
    );
    assert_eq!(
        owner.ok("GET", "/approvals?status=pending", None)["approvals"],
        json!([])
    );
}

#[test]
fn a_run_without_a_gate_answers_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_home, server) = server(dir.path());
    let mut host = Host::call(
        dir.path(),
        &server,
        &server.token,
        "lobster_run",
        json!({ "pipeline": "exec --json 'echo [4,2]'" }),
        "accept",
    );
    assert_eq!(host.event("call")["kind"], "immediate");
    let outcome = host.event("outcome");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(
        outcome["result"]["structuredContent"]["output"],
        json!([4, 2]),
        "{outcome}"
    );
}

#[test]
fn a_hand_off_and_a_browser_approval_are_tasks_until_the_person_ends_them() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = server(dir.path());
    let person = Client::with_token(server.port, &create_token(&home, "alice", "approver"));
    let owner = Client::new(&server);
    let (status, opened) = owner.call("POST", "/sessions", Some(json!({})));
    assert_eq!(status, 201, "{opened}");
    let session = opened["sessionId"].as_str().unwrap().to_string();

    let mut host = Host::call(
        dir.path(),
        &server,
        &server.token,
        "browser_handoff",
        json!({ "sessionId": session, "reason": "log in for me" }),
        "accept",
    );
    assert_eq!(host.event("call")["kind"], "task");
    let asked = host.event("elicitation");
    assert!(
        asked["message"].as_str().unwrap().contains("log in for me"),
        "{asked}"
    );
    host.status("input_required");
    host.status("working");
    // Still handed off: the agent's actions wait for the person.
    let (status, refused) = owner.call(
        "POST",
        &format!("/sessions/{session}/click"),
        Some(json!({ "selector": "body" })),
    );
    assert_eq!(
        (status, refused["code"].as_str()),
        (409, Some("handed_off"))
    );
    decide(
        &person,
        pending(&owner)["approvalId"].as_str().unwrap(),
        "approve",
    );
    // Its last state says how it ended, not that it waits.
    let done = host.status("completed");
    assert!(
        done["statusMessage"]
            .as_str()
            .unwrap()
            .starts_with("ended: the person handed the page back"),
        "{done}"
    );
    let outcome = host.event("outcome");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(
        outcome["result"]["structuredContent"]["done"], true,
        "{outcome}"
    );
    drop(host);

    let mut host = Host::call(
        dir.path(),
        &server,
        &server.token,
        "browser_request_approval",
        json!({ "sessionId": session, "message": "buy the red one?" }),
        "accept",
    );
    assert_eq!(host.event("call")["kind"], "task");
    host.status("input_required");
    decide(
        &person,
        pending(&owner)["approvalId"].as_str().unwrap(),
        "deny",
    );
    let outcome = host.event("outcome");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(
        outcome["result"]["structuredContent"]["approved"], false,
        "{outcome}"
    );
    drop(host);

    // A hand-off cancelled by the host gives the page back to the agent.
    let mut host = Host::call(
        dir.path(),
        &server,
        &server.token,
        "browser_handoff",
        json!({ "sessionId": session, "reason": "never mind" }),
        "cancel",
    );
    host.status("input_required");
    assert_eq!(host.event("outcome")["status"], "cancelled");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = owner.call(
            "POST",
            &format!("/sessions/{session}/navigate"),
            Some(json!({ "url": "about:blank" })),
        );
        if status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still handed off: {status} {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A task is its caller's: another agent token can neither read, answer
/// nor cancel it, even knowing its id.
#[test]
fn another_agent_cannot_see_answer_or_cancel_a_task() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = server(dir.path());
    let other = create_token(&home, "mallory", "agent");
    let created = raw_call(
        &server,
        &server.token,
        "tools/call",
        json!({ "name": "lobster_run", "arguments": { "workflow": "ship" } }),
    );
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_string();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    for (method, params) in [
        ("tasks/get", json!({ "taskId": task })),
        (
            "tasks/update",
            json!({ "taskId": task, "inputResponses": { "gate-1": { "action": "accept" } } }),
        ),
        ("tasks/cancel", json!({ "taskId": task })),
    ] {
        let refused = raw_call(&server, &other, method, params);
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("unknown task"),
            "{method}: {refused}"
        );
    }
    // Its caller still has it, waiting.
    let got = raw_call(
        &server,
        &server.token,
        "tasks/get",
        json!({ "taskId": task }),
    );
    assert_eq!(got["result"]["status"], "working", "{got}");
    let owner = Client::new(&server);
    assert_eq!(
        owner.ok("GET", "/approvals?status=pending", None)["approvals"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// A task asks with a form elicitation only a client that takes forms:
/// one that declared URL elicitations alone, or none, is asked nothing
/// (from the red team of issue #36, which was sent a form).
#[test]
fn a_client_that_takes_no_form_is_asked_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (_home, server) = server(dir.path());
    let call = json!({ "name": "lobster_run", "arguments": { "workflow": "ship" } });
    for (capabilities, asked) in [
        (json!({ "elicitation": { "url": {} } }), false),
        (json!({}), false),
        (json!({ "elicitation": {} }), true),
        (json!({ "elicitation": { "form": {}, "url": {} } }), true),
    ] {
        let created = raw_call_with(
            &server,
            &server.token,
            "tools/call",
            call.clone(),
            capabilities.clone(),
        );
        let task = created["result"]["taskId"].as_str().unwrap().to_string();
        // A task asks as it starts: asked, it is input_required at once;
        // else it says, with its status message, who decides.
        let got = raw_call(
            &server,
            &server.token,
            "tasks/get",
            json!({ "taskId": task }),
        );
        let status = if asked { "input_required" } else { "working" };
        assert_eq!(got["result"]["status"], status, "{capabilities}: {got}");
        assert!(
            got["result"]["statusMessage"]
                .as_str()
                .unwrap()
                .contains("Ship it?"),
            "{got}"
        );
        if asked {
            let request = &got["result"]["inputRequests"]["gate-1"];
            assert_eq!(request["method"], "elicitation/create", "{got}");
            assert_eq!(request["params"]["mode"], "form", "{got}");
        }
        raw_call(
            &server,
            &server.token,
            "tasks/cancel",
            json!({ "taskId": task }),
        );
    }
}
