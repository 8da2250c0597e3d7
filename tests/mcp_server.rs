//! The MCP server, driven by the official Python SDK (`mcp` from PyPI,
//! through `support/mcp_driver.py`) over stdio (`clawdis mcp`, joined to a
//! real `clawdis serve`) and over streamable HTTP (`/mcp` with the bearer
//! token), in both protocol eras: `initialize` (2025-11-25) and 2026-07-28.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use clawdis_e2e::control::{
    Client, Server, fixture_server, free_port, read_until, start_server_with, subscribe,
};
use clawdis_e2e::{alive, bin, create_token, gone_within, test_python, workspace_root};
use serde_json::{Value, json};

/// One MCP client: the Python SDK in a driver process.
struct Driver {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<Value>,
}

impl Driver {
    fn start(args: &[&str]) -> Driver {
        let python = test_python(&["mcp", "httpx2"]);
        let script = workspace_root().join("tests/support/mcp_driver.py");
        let mut child = Command::new(python)
            .arg(script)
            .args(args)
            .env("CLAWDIS_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, answers) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("the driver wrote {line:?}: {e}"));
                if send.send(value).is_err() {
                    return;
                }
            }
        });
        Driver {
            child,
            stdin,
            answers,
        }
    }

    /// `clawdis mcp` for `home`, as an agent host spawns it.
    fn stdio(home: &Path, mode: &str) -> Driver {
        let clawdis = bin("clawdis");
        Driver::start(&[
            mode,
            "stdio",
            clawdis.to_str().unwrap(),
            "--home",
            home.to_str().unwrap(),
            "mcp",
        ])
    }

    /// `/mcp` of `server`, with its token.
    fn http(server: &Server, mode: &str) -> Driver {
        let url = format!("http://127.0.0.1:{}/mcp", server.port);
        Driver::start(&[mode, "http", &url, &server.token])
    }

    fn send(&mut self, command: Value) -> Value {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
        self.answers
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("no answer to {command}"))
    }

    fn tools(&mut self) -> Vec<String> {
        let listed = self.send(json!({ "op": "list" }));
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    fn call(&mut self, name: &str, args: Value) -> Value {
        self.send(json!({ "op": "call", "name": name, "args": args }))
    }

    /// A tool call that must succeed: its structured content.
    fn ok(&mut self, name: &str, args: Value) -> Value {
        let result = self.call(name, args.clone());
        assert_eq!(result["isError"], false, "{name} {args}: {result}");
        result["structured"].clone()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({ "op": "exit" }));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A home whose backend listens on a port its settings name (so that
/// `clawdis mcp` finds it), with `workflows/` ready.
fn home_with_server(dir: &Path) -> (PathBuf, Server) {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    let port = free_port();
    let server = start_server_with(
        &home,
        json!({ "controlUrl": format!("http://127.0.0.1:{port}") }),
    );
    (home, server)
}

/// Every (transport, era) a test runs in, each client connected when its
/// turn comes (so it hears nothing of the turns before).
fn drivers<'a>(home: &'a Path, server: &'a Server) -> impl Iterator<Item = (String, Driver)> + 'a {
    ["legacy", "2026-07-28"].into_iter().flat_map(move |mode| {
        ["stdio", "http"].into_iter().map(move |transport| {
            let driver = match transport {
                "stdio" => Driver::stdio(home, mode),
                _ => Driver::http(server, mode),
            };
            (format!("{transport} {mode}"), driver)
        })
    })
}

const SHIP: &str = "name: ship\nsteps:\n  - id: build\n    run: echo built\n  - id: gate\n    \
                    approval:\n      prompt: Ship it?\n      approvers: human\n  - id: ship\n    \
                    run: echo shipped\n";

#[test]
fn workflows_run_to_their_gates_and_resume_in_every_transport() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    std::fs::write(home.join("workflows/ship.lobster"), SHIP).unwrap();
    let approver = create_token(&home, "alice", "approver");
    let person = Client::with_token(server.port, &approver);
    for (how, mut mcp) in drivers(&home, &server) {
        let tools = mcp.tools();
        for fixed in [
            "lobster_run",
            "lobster_resume",
            "runs_list",
            "run_status",
            "approvals_list",
            "browser_open",
            "browser_snapshot",
            "browser_click",
            "browser_request_approval",
        ] {
            assert!(
                tools.iter().any(|t| t == fixed),
                "{how}: {fixed} in {tools:?}"
            );
        }
        for name in &tools {
            let valid = (1..=64).contains(&name.len())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
            assert!(valid, "{how}: {name} breaks MCP's naming rule");
        }
        // A pipeline pauses: needs_approval at once, with its runId.
        let paused = mcp.ok(
            "lobster_run",
            json!({ "pipeline": "exec --json 'echo [1,2]' | approve --prompt 'ok?'" }),
        );
        assert_eq!(paused["status"], "needs_approval", "{how}: {paused}");
        let run_id = paused["runId"].as_str().unwrap().to_string();
        let approval_id = paused["requiresApproval"]["approvalId"].as_str().unwrap();
        let resumed = mcp.ok(
            "lobster_resume",
            json!({ "approvalId": approval_id, "approve": true }),
        );
        assert_eq!(resumed["status"], "ok", "{how}: {resumed}");
        assert_eq!(resumed["output"], json!([1, 2]), "{how}: {resumed}");
        assert_eq!(resumed["runId"], run_id.as_str(), "{how}: {resumed}");
        // By token, denied.
        let paused = mcp.ok(
            "lobster_run",
            json!({ "pipeline": "exec --json 'echo [3]' | approve --prompt 'again?'" }),
        );
        let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
        let denied = mcp.ok(
            "lobster_resume",
            json!({ "token": token, "approve": false }),
        );
        assert_eq!(denied["status"], "cancelled", "{how}: {denied}");
        // Who started it is the credential's principal.
        let run = mcp.ok("run_status", json!({ "runId": run_id }));
        let expected = if how.starts_with("stdio") {
            "mcp:py-driver"
        } else {
            "owner"
        };
        assert_eq!(run["startedBy"], expected, "{how}: {run}");
        let page = mcp.ok("runs_list", json!({ "limit": 50 }));
        assert!(
            page["runs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["runId"] == run_id.as_str()),
            "{how}: {page}"
        );
        // A gate a person decides: the agent's resume is refused, the run
        // keeps waiting, and the person decides it over HTTP.
        let gated = mcp.ok("lobster_run", json!({ "workflow": "ship" }));
        assert_eq!(gated["status"], "needs_approval", "{how}: {gated}");
        let gate = gated["requiresApproval"]["approvalId"].as_str().unwrap();
        let refused = mcp.call(
            "lobster_resume",
            json!({ "approvalId": gate, "approve": true }),
        );
        assert_eq!(refused["isError"], true, "{how}: {refused}");
        assert!(
            refused["text"].as_str().unwrap().contains("person"),
            "{how}: {refused}"
        );
        let pending = mcp.ok("approvals_list", json!({ "status": "pending" }));
        assert!(
            pending["approvals"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["approvalId"] == gate),
            "{how}: {pending}"
        );
        // The refusal is in the ledger, as the MCP client's.
        let ledger = Client::new(&server).ok("GET", "/audit?limit=1", None);
        let refusal = &ledger["entries"][0];
        assert_eq!(
            (
                refusal["kind"].as_str(),
                refusal["subject"].as_str(),
                refusal["via"].as_str()
            ),
            (Some("gate.refused"), Some(gate), Some("mcp")),
            "{how}: {ledger}"
        );
        let (status, decided) = person.call("POST", &format!("/approvals/{gate}/approve"), None);
        assert_eq!(status, 200, "{how}: {decided}");
        let run = mcp.ok("run_status", json!({ "runId": gated["runId"] }));
        assert_eq!(run["status"], "ok", "{how}: {run}");
    }
}

#[test]
fn an_exposed_workflow_appears_and_disappears_as_its_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    let file = home.join("workflows/greet.lobster");
    for (n, (how, mut mcp)) in drivers(&home, &server).enumerate() {
        assert!(
            !mcp.tools().iter().any(|t| t.starts_with("workflow.")),
            "{how}"
        );
        std::fs::write(
            &file,
            format!(
                "description: Greet someone ({n})\nexpose_as_tool: true\nargs:\n  who:\n    type: string\n    description: whom\n  loud:\n    default: false\nsteps:\n  - id: hi\n    run: echo '{{\"hello\":\"${{who}}\"}}'\n"
            ),
        )
        .unwrap();
        assert_eq!(
            mcp.send(json!({ "op": "changed", "timeout": 20 })),
            json!({ "changed": true }),
            "{how}: no tools/list_changed after the file appeared"
        );
        let listed = mcp.send(json!({ "op": "list" }));
        let tool = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "workflow.greet")
            .unwrap_or_else(|| panic!("{how}: {listed}"))
            .clone();
        assert_eq!(tool["description"], format!("Greet someone ({n})"), "{how}");
        assert_eq!(
            tool["inputSchema"]["required"],
            json!(["who"]),
            "{how}: {tool}"
        );
        let greeted = mcp.ok("workflow.greet", json!({ "who": "bob" }));
        assert_eq!(
            greeted["output"],
            json!([{ "hello": "bob" }]),
            "{how}: {greeted}"
        );
        let missing = mcp.call("workflow.greet", json!({}));
        assert_eq!(missing["isError"], true, "{how}: {missing}");
        assert!(
            missing["text"].as_str().unwrap().contains("who"),
            "{how}: {missing}"
        );
        std::fs::remove_file(&file).unwrap();
        assert_eq!(
            mcp.send(json!({ "op": "changed", "timeout": 20 })),
            json!({ "changed": true }),
            "{how}: no tools/list_changed after the file went"
        );
        assert!(!mcp.tools().iter().any(|t| t == "workflow.greet"), "{how}");
    }
}

#[test]
fn bad_input_is_a_tool_error_and_an_unknown_tool_invalid_params() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    for (how, mut mcp) in drivers(&home, &server) {
        let unknown = mcp.call("no_such_tool", json!({}));
        assert_eq!(unknown["code"], -32602, "{how}: {unknown}");
        let wrong_type = mcp.call("run_status", json!({ "runId": 42 }));
        assert_eq!(wrong_type["isError"], true, "{how}: {wrong_type}");
        assert!(
            wrong_type["text"].as_str().unwrap().contains("/runId"),
            "{how}: {wrong_type}"
        );
        let extra = mcp.call("runs_list", json!({ "colour": "red" }));
        assert_eq!(extra["isError"], true, "{how}: {extra}");
        let nothing = mcp.call("lobster_run", json!({}));
        assert_eq!(nothing["isError"], true, "{how}: {nothing}");
        assert!(
            nothing["text"]
                .as_str()
                .unwrap()
                .contains("pipeline or workflow"),
            "{how}: {nothing}"
        );
        let no_session = mcp.call(
            "browser_click",
            json!({ "sessionId": "nope", "selector": "#a" }),
        );
        assert_eq!(no_session["isError"], true, "{how}: {no_session}");
        assert!(
            no_session["text"]
                .as_str()
                .unwrap()
                .contains("no session nope"),
            "{how}: {no_session}"
        );
        let no_run = mcp.call("run_status", json!({ "runId": "missing" }));
        assert_eq!(no_run["isError"], true, "{how}: {no_run}");
        // The connection still answers.
        assert!(!mcp.tools().is_empty(), "{how}");
    }
}

/// The pid a run's command wrote to `file`, once it is there.
fn pid_in(file: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} never written",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn lobster_run_keeps_openclaws_limits() {
    let dir = tempfile::tempdir().unwrap();
    let (_home, server) = home_with_server(dir.path());
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut mcp = Driver::http(&server, "legacy");
    // timeout_ms stops the run and kills its commands.
    let pid_file = work.join("pid");
    let slow = mcp.call(
        "lobster_run",
        json!({
            "pipeline": format!("exec --shell 'echo $$ > {}; exec sleep 60'", pid_file.display()),
            "timeout_ms": 1500,
        }),
    );
    assert_eq!(slow["isError"], true, "{slow}");
    assert_eq!(slow["structured"]["ok"], false, "{slow}");
    assert!(
        slow["text"]
            .as_str()
            .unwrap()
            .contains("timed out after 1500 ms"),
        "{slow}"
    );
    let run_id = slow["structured"]["runId"].as_str().unwrap();
    let pid = pid_in(&pid_file);
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "the run's command {pid} outlived its timeout"
    );
    let run = mcp.ok("run_status", json!({ "runId": run_id }));
    assert_eq!(run["status"], "cancelled", "{run}");
    // max_stdout_bytes bounds the serialised envelope.
    let big = mcp.call(
        "lobster_run",
        json!({
            "pipeline": "exec --json 'python3 -c \"import json; print(json.dumps([\\\"x\\\" * 100] * 100))\"'",
            "max_stdout_bytes": 2048,
        }),
    );
    assert_eq!(big["isError"], true, "{big}");
    assert!(
        big["text"].as_str().unwrap().contains("max_stdout_bytes"),
        "{big}"
    );
    // lobster_path: only an absolute, real executable called lobster.
    let lobster = bin("lobster");
    let elsewhere = dir.path().join("bin");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&lobster, elsewhere.join("lobster")).unwrap();
    std::fs::copy(&lobster, elsewhere.join("not-lobster")).unwrap();
    for (path, why) in [
        ("lobster".to_string(), "absolute"),
        (
            elsewhere.join("not-lobster").display().to_string(),
            "called lobster",
        ),
        (
            elsewhere.join("lobster").display().to_string(),
            "symlink out of its directory",
        ),
    ] {
        let refused = mcp.call(
            "lobster_run",
            json!({ "pipeline": "exec --json 'echo [1]'", "lobster_path": path }),
        );
        assert_eq!(refused["isError"], true, "{path}: {refused}");
        assert!(
            refused["text"].as_str().unwrap().contains(why),
            "{path}: {refused}"
        );
    }
    let spawned = mcp.ok(
        "lobster_run",
        json!({
            "pipeline": "exec --json 'echo [7]' | approve --prompt 'spawned?'",
            "lobster_path": lobster.display().to_string(),
        }),
    );
    assert_eq!(spawned["status"], "needs_approval", "{spawned}");
    // The spawned lobster keeps its run where the service sees it.
    let approval_id = spawned["requiresApproval"]["approvalId"].as_str().unwrap();
    let resumed = mcp.ok(
        "lobster_resume",
        json!({ "approvalId": approval_id, "approve": true }),
    );
    assert_eq!(resumed["output"], json!([7]), "{resumed}");
}

#[test]
fn answers_are_bounded_for_hosts_that_cap_tool_output() {
    let dir = tempfile::tempdir().unwrap();
    let (_home, server) = home_with_server(dir.path());
    let mut mcp = Driver::http(&server, "legacy");
    let big = mcp.call(
        "lobster_run",
        json!({
            "pipeline": "exec --json 'python3 -c \"import json; print(json.dumps([\\\"x\\\" * 1000] * 400))\"'",
            "max_stdout_bytes": 5_000_000,
        }),
    );
    assert_eq!(big["isError"], false, "{}", &big.to_string()[..500]);
    let structured = big["structured"].to_string();
    assert!(
        structured.chars().count() <= 100_000,
        "structured content of {} characters",
        structured.chars().count()
    );
    assert!(structured.contains("cut"), "no marker in the cut answer");
    assert_eq!(big["structured"]["status"], "ok");
    assert!(big["text"].as_str().unwrap().chars().count() <= 100_000);
}

/// The session's page from the fixture server.
fn page(port: u16, name: &str) -> String {
    format!("http://127.0.0.1:{port}/{name}")
}

#[test]
fn a_browser_session_opens_and_acts_in_every_transport() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    let pages = fixture_server();
    for (how, mut mcp) in drivers(&home, &server) {
        let opened = mcp.ok("browser_open", json!({ "url": page(pages, "form.html") }));
        let session = opened["sessionId"].as_str().unwrap().to_string();
        let listed = mcp.ok("browser_list", json!({}));
        assert!(
            listed["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["sessionId"] == session.as_str()),
            "{how}: {listed}"
        );
        // The snapshot is the text; its refs drive the actions.
        let snap = mcp.call("browser_snapshot", json!({ "sessionId": session }));
        assert_eq!(snap["isError"], false, "{how}: {snap}");
        let text = snap["text"].as_str().unwrap();
        assert!(text.contains("Sign up"), "{how}: {text}");
        let name_ref = text
            .lines()
            .find(|l| l.contains("textbox \"Name\""))
            .and_then(|l| l.split("[ref=").nth(1))
            .and_then(|r| r.split(']').next())
            .unwrap_or_else(|| panic!("{how}: no Name textbox in {text}"))
            .to_string();
        let typed = mcp.ok(
            "browser_type",
            json!({ "sessionId": session, "ref": name_ref, "text": "Ada" }),
        );
        assert_eq!(typed["ok"], true, "{how}: {typed}");
        // Without sessionId: the session just opened is the default.
        let clicked = mcp.ok("browser_click", json!({ "selector": "#submit" }));
        assert_eq!(clicked["ok"], true, "{how}: {clicked}");
        let read = mcp.call("browser_extract_text", json!({ "selector": "#out" }));
        assert_eq!(read["text"], "Hello Ada", "{how}: {read}");
        let key = mcp.ok(
            "browser_press_key",
            json!({ "sessionId": session, "key": "Tab" }),
        );
        assert_eq!(key["ok"], true, "{how}: {key}");
        let shot = mcp.call("browser_screenshot", json!({ "sessionId": session }));
        assert_eq!(shot["isError"], false, "{how}: {shot}");
        assert_eq!(shot["images"], 1, "{how}: {shot}");
        assert!(shot["imageBytes"].as_u64().unwrap() > 1000, "{how}: {shot}");
        let failed = mcp.call(
            "browser_click",
            json!({ "sessionId": session, "selector": "#nothing-here", "timeout": 500 }),
        );
        assert_eq!(failed["isError"], true, "{how}: {failed}");
        assert_eq!(
            failed["structured"]["error"]["code"], "not_found",
            "{how}: {failed}"
        );
        let tabs = mcp.ok("browser_tabs", json!({ "sessionId": session }));
        assert!(
            tabs["tabs"][0]["url"]
                .as_str()
                .unwrap()
                .ends_with("form.html"),
            "{how}: {tabs}"
        );
        mcp.ok("browser_close", json!({ "sessionId": session }));
        let gone = mcp.call("browser_state", json!({ "sessionId": session }));
        assert_eq!(gone["isError"], true, "{how}: {gone}");
    }
}

#[test]
fn a_browser_approval_waits_for_a_person_with_progress() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    let approver = create_token(&home, "alice", "approver");
    let person = Client::with_token(server.port, &approver);
    let owner = Client::new(&server);
    for mode in ["legacy", "2026-07-28"] {
        for mut mcp in [Driver::stdio(&home, mode), Driver::http(&server, mode)] {
            let opened = mcp.ok("browser_open", json!({}));
            let session = opened["sessionId"].as_str().unwrap().to_string();
            let started = mcp.send(json!({
                "op": "call", "id": "ask", "name": "browser_request_approval",
                "args": { "sessionId": session, "message": "Buy the thing?" },
            }));
            assert_eq!(started, json!({ "started": "ask" }));
            // Progress comes while it waits (at least every 10 s).
            let heard =
                mcp.send(json!({ "op": "progress", "id": "ask", "count": 1, "timeout": 12 }));
            let progress = heard["progress"].as_array().unwrap();
            assert!(!progress.is_empty(), "{mode}: no progress while waiting");
            // The request is a pending approval like any other; an agent's
            // token cannot decide it, a person's can.
            let pending = owner.ok("GET", "/approvals?status=pending", None);
            let ask = pending["approvals"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["prompt"] == "Buy the thing?")
                .unwrap_or_else(|| panic!("{mode}: {pending}"))
                .clone();
            let id = ask["approvalId"].as_str().unwrap();
            let (status, _) = owner.call("POST", &format!("/approvals/{id}/approve"), None);
            assert_eq!(
                status, 403,
                "{mode}: the owner token decided a person's gate"
            );
            let (status, body) = person.call("POST", &format!("/approvals/{id}/approve"), None);
            assert_eq!(status, 200, "{mode}: {body}");
            let answer = mcp.send(json!({ "op": "result", "id": "ask", "timeout": 30 }));
            assert_eq!(answer["isError"], false, "{mode}: {answer}");
            assert_eq!(answer["structured"]["approved"], true, "{mode}: {answer}");
            assert_eq!(
                answer["structured"]["decidedBy"], "token:alice",
                "{mode}: {answer}"
            );
            // Nobody decides: after timeout_ms, not approved.
            let timed_out = mcp.ok(
                "browser_request_approval",
                json!({ "sessionId": session, "message": "Nobody?", "timeout_ms": 1500 }),
            );
            assert_eq!(timed_out["approved"], false, "{mode}: {timed_out}");
            assert_eq!(timed_out["reason"], "timeout", "{mode}: {timed_out}");
            mcp.ok("browser_close", json!({ "sessionId": session }));
        }
    }
}

/// Issue #36: rmcp 3.11 refuses the methods of a capability a server does
/// not declare; each method of one it declares is served, and a prompt or
/// resource it does not have is invalid params, not an unknown method
/// (`prompts/get` was "method not found").
#[test]
fn every_declared_capability_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    for mut mcp in [
        Driver::stdio(&home, "legacy"),
        Driver::http(&server, "2026-07-28"),
    ] {
        let served = mcp.send(json!({ "op": "served" }));
        assert_eq!(
            served,
            json!({
                "prompts/list": "ok",
                "prompts/get": -32602,
                "resources/list": "ok",
                "resources/templates/list": "ok",
                "resources/read": -32602,
                "logging/setLevel": "ok",
            })
        );
    }
}

/// Issue #36: `browser_handoff` waits for the person with progress, as
/// `browser_request_approval` does, and answers how the hand-off ended.
#[test]
fn a_hand_off_waits_for_the_person_with_progress() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    let approver = create_token(&home, "alice", "approver");
    let person = Client::with_token(server.port, &approver);
    let owner = Client::new(&server);
    let mut mcp = Driver::http(&server, "2026-07-28");
    assert!(mcp.tools().iter().any(|t| t == "browser_handoff"));
    let opened = mcp.ok("browser_open", json!({}));
    let session = opened["sessionId"].as_str().unwrap().to_string();
    let started = mcp.send(json!({
        "op": "call", "id": "handoff", "name": "browser_handoff",
        "args": { "sessionId": session, "reason": "log in for me" },
    }));
    assert_eq!(started, json!({ "started": "handoff" }));
    let heard = mcp.send(json!({ "op": "progress", "id": "handoff", "count": 1, "timeout": 12 }));
    assert!(
        !heard["progress"].as_array().unwrap().is_empty(),
        "no progress while waiting"
    );
    // The agent's actions wait for the person.
    let (status, refused) = owner.call(
        "POST",
        &format!("/sessions/{session}/click"),
        Some(json!({ "selector": "body" })),
    );
    assert_eq!(
        (status, refused["code"].as_str()),
        (409, Some("handed_off")),
        "{refused}"
    );
    // The person hands back (here with their approver token).
    let pending = owner.ok("GET", "/approvals?status=pending", None);
    let id = pending["approvals"][0]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        pending["approvals"][0]["prompt"],
        "The agent needs you: log in for me"
    );
    let (status, body) = person.call("POST", &format!("/approvals/{id}/approve"), None);
    assert_eq!(status, 200, "{body}");
    let answer = mcp.send(json!({ "op": "result", "id": "handoff", "timeout": 30 }));
    assert_eq!(answer["isError"], false, "{answer}");
    assert_eq!(answer["structured"]["done"], true, "{answer}");
    assert_eq!(answer["structured"]["url"], "about:blank", "{answer}");
    let timed_out = mcp.ok(
        "browser_handoff",
        json!({ "sessionId": session, "reason": "nobody?", "timeout_ms": 1500 }),
    );
    assert_eq!(timed_out, json!({ "done": false, "reason": "timeout" }));
    mcp.ok("browser_close", json!({ "sessionId": session }));
}

#[test]
fn an_abandoned_approval_request_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    let mut events = subscribe(server.port, &server.token, "/approvals/events");
    let mut mcp = Driver::stdio(&home, "legacy");
    let opened = mcp.ok("browser_open", json!({}));
    let started = mcp.send(json!({
        "op": "call", "id": "ask", "name": "browser_request_approval",
        "args": { "sessionId": opened["sessionId"], "message": "Left alone?" },
    }));
    assert_eq!(started, json!({ "started": "ask" }));
    read_until(&mut events, "Left alone?", Duration::from_secs(20));
    // The agent host goes away mid-call: the driver and its `clawdis mcp`.
    let _ = mcp.child.kill();
    let _ = mcp.child.wait();
    let cancelled = read_until(
        &mut events,
        "\"decision\":\"cancel\"",
        Duration::from_secs(15),
    );
    assert!(cancelled.contains("abandoned"), "{cancelled}");
}

#[test]
fn clawdis_mcp_starts_the_backend_of_its_home_when_none_runs() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    let port = free_port();
    std::fs::write(
        home.join("settings.json"),
        json!({ "controlUrl": format!("http://127.0.0.1:{port}"), "headless": true, "cdpPort": free_port() })
            .to_string(),
    )
    .unwrap();
    let backend = {
        let mut mcp = Driver::stdio(&home, "legacy");
        let paused = mcp.ok(
            "lobster_run",
            json!({ "pipeline": "exec --json 'echo [1]' | approve --prompt 'kept?'" }),
        );
        assert_eq!(paused["status"], "needs_approval", "{paused}");
        backend_pid(&home).expect("no clawdis serve for the home")
    };
    // It outlives the client, serves HTTP, and holds the paused run.
    assert!(alive(backend), "the backend stopped with its client");
    let token = std::fs::read_to_string(home.join("secrets/control-token")).unwrap();
    let http = Client::with_token(port, &token);
    let pending = http.ok("GET", "/approvals?status=pending", None);
    assert_eq!(
        pending["approvals"].as_array().unwrap().len(),
        1,
        "{pending}"
    );
    // A second client uses it instead of starting another.
    {
        let mut again = Driver::stdio(&home, "legacy");
        again.ok("runs_list", json!({}));
    }
    assert_eq!(backend_pid(&home), Some(backend));
    clawdis_e2e::signal(backend, libc::SIGTERM);
    assert!(gone_within(backend, Duration::from_secs(15)));
}

/// The `clawdis serve` process of `home`, found in /proc.
fn backend_pid(home: &Path) -> Option<i32> {
    let home = home.to_str()?;
    let mut found = clawdis_e2e::processes(|args| {
        args.iter().any(|a| a == "serve") && args.iter().any(|a| a == home)
    });
    assert!(found.len() <= 1, "several backends for {home}: {found:?}");
    found.pop()
}

#[test]
fn a_client_that_goes_away_leaves_no_browser_context() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    let owner = Client::new(&server);
    let count = || {
        owner.ok("GET", "/sessions", None)["sessions"]
            .as_array()
            .unwrap()
            .len()
    };
    for (how, connect) in [
        (
            "stdio",
            Box::new(|| Driver::stdio(&home, "legacy")) as Box<dyn Fn() -> Driver>,
        ),
        ("http", Box::new(|| Driver::http(&server, "legacy"))),
    ] {
        {
            let mut mcp = connect();
            mcp.ok("browser_open", json!({}));
            // Its default, opened on first use once the first is closed.
            let first = mcp.ok("browser_state", json!({}))["sessionId"].clone();
            mcp.ok("browser_close", json!({ "sessionId": first }));
            mcp.ok("browser_state", json!({}));
            mcp.ok("browser_open", json!({}));
            assert_eq!(count(), 2, "{how}");
        }
        // The client is gone (stdio: its pipe closed; HTTP: its session
        // deleted): so are the sessions it opened.
        let deadline = Instant::now() + Duration::from_secs(20);
        while count() > 0 {
            assert!(
                Instant::now() < deadline,
                "{how}: sessions outlived their client"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn the_pipe_is_only_for_the_homes_own_token() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    let agent = create_token(&home, "ci", "agent");
    let (status, body) = Client::with_token(server.port, &agent).call("GET", "/mcp/pipe", None);
    assert_eq!(status, 403, "{body}");
    assert!(body["error"].as_str().unwrap().contains("/mcp"), "{body}");
    let (status, _) = Client::with_token(server.port, "wrong").call("GET", "/mcp/pipe", None);
    assert_eq!(status, 401);
    // The named token's own identity holds on /mcp.
    let mut mcp = Driver::start(&[
        "legacy",
        "http",
        &format!("http://127.0.0.1:{}/mcp", server.port),
        &agent,
    ]);
    let paused = mcp.ok(
        "lobster_run",
        json!({ "pipeline": "exec --json 'echo [1]' | approve --prompt 'mine?'" }),
    );
    let run = mcp.ok("run_status", json!({ "runId": paused["runId"] }));
    assert_eq!(run["startedBy"], "token:ci", "{run}");
}

#[test]
fn a_run_whose_caller_goes_away_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    let pid_file = dir.path().join("pid");
    let mut mcp = Driver::stdio(&home, "legacy");
    let started = mcp.send(json!({
        "op": "call", "id": "long", "name": "lobster_run",
        "args": {
            "pipeline": format!("exec --shell 'echo $$ > {}; exec sleep 120'", pid_file.display()),
            "timeout_ms": 120_000,
        },
    }));
    assert_eq!(started, json!({ "started": "long" }));
    let pid = pid_in(&pid_file);
    // The agent host goes away mid-call.
    let _ = mcp.child.kill();
    let _ = mcp.child.wait();
    assert!(
        gone_within(pid, Duration::from_secs(15)),
        "the run's command {pid} outlived its caller"
    );
    // The kill lands before the cancel is recorded: wait for the record.
    let client = Client::new(&server);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let runs = client.ok("GET", "/runs", None);
        if runs["runs"][0]["status"] == "cancelled" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never recorded as cancelled: {runs}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_typescript_sdk_connects_runs_and_hears_tool_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (home, server) = home_with_server(dir.path());
    let modules = workspace_root().join("target/test-npm/node_modules");
    assert!(
        modules
            .join("@modelcontextprotocol/sdk/package.json")
            .is_file(),
        "the MCP TypeScript SDK is missing: run ./scripts/test, which installs it"
    );
    // Node resolves the SDK from the script's directory up: the script runs
    // beside a link to the installed modules.
    let script = dir.path().join("mcp_ts_client.mjs");
    std::fs::copy(
        workspace_root().join("tests/support/mcp_ts_client.mjs"),
        &script,
    )
    .unwrap();
    std::os::unix::fs::symlink(&modules, dir.path().join("node_modules")).unwrap();
    let workflows = home.join("workflows");
    let clawdis = bin("clawdis");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    for args in [
        ["stdio", clawdis.to_str().unwrap(), home.to_str().unwrap()],
        ["http", &url, &server.token],
    ] {
        let out = Command::new("node")
            .arg(&script)
            .args(args)
            .arg(&workflows)
            .env("CLAWDIS_LOG", "warn")
            .output()
            .unwrap();
        let how = args[0];
        assert!(
            out.status.success(),
            "{how}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let seen: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{how}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(seen["server"]["name"], "clawdis", "{how}: {seen}");
        assert!(
            seen["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == "browser_snapshot"),
            "{how}: {seen}"
        );
        assert_eq!(seen["paused"]["status"], "needs_approval", "{how}: {seen}");
        assert!(
            seen["pausedText"].as_str().unwrap().contains("approvalId"),
            "{how}: {seen}"
        );
        assert!(
            seen["changed"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t == "workflow.from_ts")),
            "{how}: no tools/list_changed with the new tool: {seen}"
        );
        assert_eq!(seen["ran"]["output"], json!([42]), "{how}: {seen}");
    }
}

#[test]
fn every_browser_tool_does_what_its_route_does() {
    let dir = tempfile::tempdir().unwrap();
    let (home, _server) = home_with_server(dir.path());
    let pages = fixture_server();
    let mut mcp = Driver::stdio(&home, "2026-07-28");
    let text = |mcp: &mut Driver, selector: &str| {
        mcp.call("browser_extract_text", json!({ "selector": selector }))["text"].clone()
    };
    mcp.ok("browser_open", json!({ "url": page(pages, "form.html") }));
    let filled = mcp.ok(
        "browser_fill_form",
        json!({ "fields": [{ "selector": "#name", "value": "Bo" }, { "selector": "#agree", "value": true }] }),
    );
    assert_eq!(filled["ok"], true, "{filled}");
    assert_eq!(
        mcp.ok(
            "browser_evaluate",
            json!({ "script": "document.querySelector('#agree').checked" })
        )["data"]["result"],
        true
    );
    mcp.ok(
        "browser_select",
        json!({ "selector": "#color", "value": "blue" }),
    );
    assert_eq!(text(&mut mcp, "#changed"), "changed to blue");
    mcp.ok("browser_hover", json!({ "selector": "#submit" }));
    mcp.ok("browser_wait", json!({ "text": "Sign up" }));
    let options = mcp.ok(
        "browser_extract_all",
        json!({ "selector": "#color option", "attrs": ["value"] }),
    );
    assert_eq!(
        options["data"]["items"].as_array().map(Vec::len),
        Some(2),
        "{options}"
    );
    let content = mcp.call("browser_get_content", json!({}));
    let read = content["text"].as_str().unwrap();
    assert!(
        read.starts_with("Form\n") && read.contains("changed to blue"),
        "{content}"
    );
    mcp.ok(
        "browser_navigate",
        json!({ "url": page(pages, "long.html") }),
    );
    mcp.ok(
        "browser_scroll",
        json!({ "direction": "down", "amount": 100 }),
    );
    assert_eq!(
        mcp.ok("browser_evaluate", json!({ "script": "window.scrollY" }))["data"]["result"],
        100
    );
    // The page's console and requests.
    mcp.ok(
        "browser_navigate",
        json!({ "url": page(pages, "console.html") }),
    );
    let console = mcp.call("browser_console", json!({}));
    assert!(
        console["text"].as_str().unwrap().contains("hello"),
        "{console}"
    );
    let network = mcp.call("browser_network", json!({ "filter": "console" }));
    assert!(
        network["text"].as_str().unwrap().contains("console.html"),
        "{network}"
    );
    // Uploads only from <home>/browser/uploads.
    let uploads = home.join("browser/uploads");
    std::fs::create_dir_all(&uploads).unwrap();
    std::fs::write(uploads.join("a.txt"), "a").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
    mcp.ok(
        "browser_navigate",
        json!({ "url": page(pages, "upload.html") }),
    );
    mcp.ok(
        "browser_upload_file",
        json!({ "selector": "#file", "paths": ["a.txt"] }),
    );
    assert_eq!(text(&mut mcp, "#out"), "a.txt");
    let escape = mcp.call(
        "browser_upload_file",
        json!({ "selector": "#file", "paths": [dir.path().join("secret.txt").display().to_string()] }),
    );
    assert_eq!(escape["isError"], true, "{escape}");
    // A session that asks: the dialog waits for browser_handle_dialog.
    let asking = mcp.ok(
        "browser_open",
        json!({ "url": page(pages, "dialog.html"), "dialogs": "ask" }),
    );
    let sid = asking["sessionId"].as_str().unwrap().to_string();
    let clicked = mcp.call(
        "browser_click",
        json!({ "sessionId": sid, "selector": { "type": "text", "text": "Confirm" } }),
    );
    assert_eq!(
        clicked["structured"]["error"]["code"], "dialog",
        "{clicked}"
    );
    let handled = mcp.ok(
        "browser_handle_dialog",
        json!({ "sessionId": sid, "accept": true }),
    );
    assert_eq!(handled["ok"], true, "{handled}");
    let out = mcp.call(
        "browser_extract_text",
        json!({ "sessionId": sid, "selector": "#out" }),
    );
    assert_eq!(out["text"], "confirmed", "{out}");
    let restored = mcp.ok("browser_restore", json!({ "sessionId": sid }));
    assert!(
        restored["url"].as_str().unwrap().ends_with("dialog.html"),
        "{restored}"
    );
    drop(mcp);
    // evaluateEnabled: false takes browser_evaluate away.
    let locked = dir.path().join("locked");
    let port = free_port();
    let server = start_server_with(
        &locked,
        json!({ "controlUrl": format!("http://127.0.0.1:{port}"), "evaluateEnabled": false }),
    );
    let mut mcp = Driver::http(&server, "legacy");
    assert!(!mcp.tools().iter().any(|t| t == "browser_evaluate"));
    let refused = mcp.call("browser_evaluate", json!({ "script": "1" }));
    assert_eq!(refused["code"], -32602, "{refused}");
}

/// Sends one request on the keep-alive connection `stream` and reads its
/// chunked answer to the end; returns the head and the milliseconds from the
/// end of the head to the end of the body.
fn streamed_call(
    stream: &mut std::net::TcpStream,
    port: u16,
    token: &str,
    body: &str,
    session: Option<&str>,
) -> (String, f64) {
    use std::io::Read;
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    if let Some(id) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    stream
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .unwrap();
    let mut raw = Vec::new();
    let mut byte = [0u8; 4096];
    let mut headed: Option<(usize, Instant)> = None;
    loop {
        let n = stream.read(&mut byte).unwrap();
        assert!(
            n > 0,
            "the connection closed: {}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&byte[..n]);
        let text = String::from_utf8_lossy(&raw);
        if headed.is_none()
            && let Some(at) = text.find("\r\n\r\n")
        {
            headed = Some((at + 4, Instant::now()));
        }
        if let Some((at, when)) = headed {
            let head = text[..at].to_ascii_lowercase();
            let done = if head.contains("transfer-encoding: chunked") {
                text[at..].ends_with("0\r\n\r\n")
            } else {
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                raw.len() >= at + length
            };
            if done {
                return (
                    text[..at].to_string(),
                    when.elapsed().as_secs_f64() * 1000.0,
                );
            }
        }
    }
}

/// Issue #33: an MCP answer over HTTP came 40 ms after its headers, every
/// time: the last small write of the event stream waited (Nagle's
/// algorithm) for the client's delayed ACK of the one before. Now the end
/// of every streamed answer follows its head at once.
#[test]
fn a_streamed_answer_is_not_held_back_behind_its_headers() {
    let dir = tempfile::tempdir().unwrap();
    let (_home, server) = home_with_server(dir.path());
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let (head, _) = streamed_call(
        &mut stream,
        server.port,
        &server.token,
        &init.to_string(),
        None,
    );
    let session = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session in {head}"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    streamed_call(
        &mut stream,
        server.port,
        &server.token,
        &initialized.to_string(),
        Some(&session),
    );
    let mut gaps: Vec<f64> = (1..=15)
        .map(|id| {
            let list = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
            let (head, gap) = streamed_call(
                &mut stream,
                server.port,
                &server.token,
                &list.to_string(),
                Some(&session),
            );
            assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            gap
        })
        .collect();
    gaps.sort_by(f64::total_cmp);
    // Held back, every gap is the peer's delayed ACK (40 ms or more on
    // Linux); sent at once, it is the time to write the rest of the body.
    assert!(
        gaps[gaps.len() / 2] < 20.0,
        "the end of the answer trails its head: {gaps:?} ms"
    );
}
