//! Webhooks, black box: a real `clawdis serve` sends each event to a real
//! receiver that verifies every request with the reference Standard
//! Webhooks library; deliveries retry with the same `webhook-id`, are
//! listed and redelivered over HTTP, and survive `kill -9` of the backend.

use std::path::Path;
use std::time::{Duration, Instant};

use clawdis_e2e::control::{Client, Server, request, start_server_full};
use clawdis_e2e::webhooks::Receiver;
use clawdis_e2e::{clawdis_cli, run_tool};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// The home's signing secret, as `clawdis webhooks secret` prints it.
fn secret(home: &Path) -> String {
    let out = clawdis_cli(home, &["webhooks", "secret"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let secret = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(secret.starts_with("whsec_"), "{secret}");
    secret
}

/// Settings with `webhooks` and a short retry schedule.
fn settings(webhooks: Value) -> Value {
    json!({ "webhooks": webhooks, "webhookRetry": { "firstDelayMs": 50, "maxAttempts": 3 } })
}

fn serve(home: &Path, settings: Value) -> Server {
    start_server_full(home, settings, &["--no-browser"], &[])
}

/// A receiver, and a backend whose settings send `run.completed` to each
/// of its `paths`.
struct Rig {
    server: Server,
    receiver: Receiver,
    settings: Value,
    home: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

fn on_run_completed(paths: &[&str]) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let receiver = Receiver::start(&secret(&home));
    let hooks: Vec<Value> = paths
        .iter()
        .map(|path| json!({ "url": receiver.url(path), "events": ["run.completed"] }))
        .collect();
    let settings = settings(json!(hooks));
    Rig {
        server: serve(&home, settings.clone()),
        receiver,
        settings,
        home,
        _dir: dir,
    }
}

/// Every request was verified by the reference library.
fn verified(requests: &[Value]) {
    for r in requests {
        assert_eq!(r["verified"], true, "{r:#}");
    }
}

/// The request among `requests` to `path` of event `kind`.
fn find<'a>(requests: &'a [Value], path: &str, kind: &str) -> &'a Value {
    requests
        .iter()
        .find(|r| r["path"] == path && r["body"]["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} to {path} in {requests:#?}"))
}

/// The deliveries the backend lists, once `done` holds for them.
fn deliveries_when(c: &Client, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let listed = c.ok("GET", "/webhooks/deliveries", None)["deliveries"]
            .as_array()
            .unwrap()
            .clone();
        if done(&listed) {
            return listed;
        }
        assert!(Instant::now() < deadline, "deliveries: {listed:#?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_pause_made_while_the_backend_was_down_is_sent_signed_and_its_decision_and_end_follow() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let receiver = Receiver::start(&secret(&home));
    std::fs::write(
        work.join("deploy.lobster"),
        format!(
            "name: deploy\nwebhooks:\n  on_approval_pending: {{url: '{p}'}}\n  \
             on_complete: {{url: '{p}'}}\nsteps:\n  - id: gate\n    approval: Ship it?\n  \
             - id: ship\n    run: echo shipped\n",
            p = receiver.url("/ok/workflow")
        ),
    )
    .unwrap();
    // A `lobster` pauses the run while no backend runs: the event waits in
    // the database for the backend.
    let paused = run_tool(&home, &work, "deploy.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let approval_id = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();

    let server = serve(
        &home,
        settings(json!([{ "url": receiver.url("/ok/everything") }])),
    );
    let pending = receiver.take(2, WAIT);
    verified(&pending);
    for path in ["/ok/workflow", "/ok/everything"] {
        let r = find(&pending, path, "approval.pending");
        let data = &r["body"]["data"];
        assert_eq!(data["approvalId"], approval_id.as_str(), "{r:#}");
        assert_eq!(data["prompt"], "Ship it?", "{r:#}");
        assert_eq!(data["workflow"], "deploy", "{r:#}");
        assert!(r["body"]["timestamp"].is_string(), "{r:#}");
        assert!(r["id"].as_str().unwrap().starts_with("msg_"), "{r:#}");
        let body = r["body"].to_string();
        assert!(
            !body.contains("resumeToken"),
            "a payload never carries a token: {body}"
        );
    }
    assert_ne!(
        pending[0]["id"], pending[1]["id"],
        "one delivery per receiver"
    );

    let c = Client::new(&server);
    let decided = c.ok(
        "POST",
        &format!("/approvals/{approval_id}/approve"),
        Some(json!({})),
    );
    assert_eq!(decided["result"]["status"], "ok", "{decided}");
    // The decision goes to the global receiver only (the workflow asked for
    // no on_approval_decided); the end to both.
    let after = receiver.take(3, WAIT);
    verified(&after);
    let decision = find(&after, "/ok/everything", "approval.decided");
    assert_eq!(
        decision["body"]["data"]["decision"], "approve",
        "{decision:#}"
    );
    assert_eq!(
        decision["body"]["data"]["decidedVia"], "http",
        "{decision:#}"
    );
    for path in ["/ok/workflow", "/ok/everything"] {
        let end = find(&after, path, "run.completed");
        assert_eq!(end["body"]["data"]["status"], "ok", "{end:#}");
    }
    let listed = deliveries_when(&c, |d| {
        d.len() == 5 && d.iter().all(|d| d["status"] == "delivered")
    });
    assert!(listed.iter().all(|d| d["attempts"] == 1), "{listed:#?}");
}

#[test]
fn a_failing_receiver_is_retried_with_the_same_id_then_given_up_and_redelivered() {
    let Rig {
        server, receiver, ..
    } = &on_run_completed(&["/fail/2/flaky", "/fail/9/down"]);
    let c = Client::new(server);
    let run = c.ok(
        "POST",
        "/runs",
        Some(json!({ "pipeline": "exec --json --shell 'echo [1]'" })),
    );
    assert_eq!(run["status"], "ok", "{run}");
    // flaky: two 500s then 200; down: three 500s (maxAttempts 3), given up.
    let requests = receiver.take(6, WAIT);
    verified(&requests);
    for path in ["/fail/2/flaky", "/fail/9/down"] {
        let tries: Vec<&Value> = requests.iter().filter(|r| r["path"] == path).collect();
        assert_eq!(tries.len(), 3, "{path}: {requests:#?}");
        assert!(
            tries.iter().all(|r| r["id"] == tries[0]["id"]),
            "a retry keeps its webhook-id: {tries:#?}"
        );
        assert!(
            tries
                .iter()
                .all(|r| r["body"]["data"]["runId"] == run["runId"]),
            "{tries:#?}"
        );
    }
    let listed = deliveries_when(&c, |d| {
        d.len() == 2 && d.iter().all(|d| d["status"] != "pending")
    });
    let by_url = |path: &str| {
        listed
            .iter()
            .find(|d| d["url"] == receiver.url(path))
            .unwrap()
            .clone()
    };
    let (flaky, down) = (by_url("/fail/2/flaky"), by_url("/fail/9/down"));
    assert_eq!(
        (&flaky["status"], &flaky["attempts"]),
        (&json!("delivered"), &json!(3))
    );
    assert_eq!(
        (&down["status"], &down["attempts"]),
        (&json!("failed"), &json!(3))
    );
    assert_eq!(down["type"], "run.completed");
    assert!(
        down["lastError"].as_str().unwrap().contains("HTTP 500"),
        "{down:#}"
    );
    let id = down["id"].as_str().unwrap();
    let detail = &c.ok("GET", &format!("/webhooks/deliveries/{id}"), None)["delivery"];
    let codes: Vec<&Value> = detail["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["statusCode"])
        .collect();
    assert_eq!(codes, [&json!(500), &json!(500), &json!(500)], "{detail:#}");

    // Redelivered: the same id and body, a fresh set of attempts.
    let again = c.ok(
        "POST",
        &format!("/webhooks/deliveries/{id}/redeliver"),
        None,
    );
    assert_eq!(again["delivery"]["status"], "pending", "{again}");
    let first_again = receiver.take(1, WAIT);
    assert_eq!(first_again[0]["id"], id, "{first_again:#?}");
    assert_eq!(
        first_again[0]["body"],
        requests.iter().find(|r| r["id"] == id).unwrap()["body"]
    );
    verified(&first_again);

    let (status, body) = c.call("POST", "/webhooks/deliveries/msg_nope/redeliver", None);
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("msg_nope"),
        "{body}"
    );
    let (status, body) = c.call("GET", "/webhooks/deliveries?limit=0", None);
    assert_eq!(status, 400, "{body}");
}

#[test]
fn a_receiver_that_hangs_never_holds_up_a_run_or_other_deliveries() {
    let Rig {
        server, receiver, ..
    } = &on_run_completed(&["/hang/99/stuck"]);
    let c = Client::new(server);
    let first = c.ok("POST", "/runs", Some(json!({ "pipeline": "json" })));
    assert_eq!(first["status"], "ok", "{first}");
    let held = receiver.take(1, WAIT);
    assert_eq!(held[0]["path"], "/hang/99/stuck");
    // While that request hangs, runs go on and their deliveries go out.
    for _ in 0..3 {
        let run = c.ok("POST", "/runs", Some(json!({ "pipeline": "json" })));
        assert_eq!(run["status"], "ok", "{run}");
    }
    let more = receiver.take(3, WAIT);
    let ids: std::collections::HashSet<&str> =
        more.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 3, "each run's delivery, in parallel: {more:#?}");
}

#[test]
fn a_delivery_in_flight_when_the_backend_is_killed_is_sent_again_after_a_restart() {
    let mut rig = on_run_completed(&["/hang/1/crash"]);
    let receiver = &rig.receiver;
    let c = Client::new(&rig.server);
    let run = c.ok("POST", "/runs", Some(json!({ "pipeline": "json" })));
    let first = receiver.take(1, WAIT);
    assert_eq!(first[0]["answer"], Value::Null, "held: {first:#?}");
    // kill -9 while the receiver holds the request.
    rig.server.child.kill().unwrap();
    rig.server.child.wait().unwrap();

    let server = serve(&rig.home, rig.settings.clone());
    let again = receiver.take(1, WAIT);
    verified(&again);
    assert_eq!(again[0]["id"], first[0]["id"], "the same delivery");
    assert_eq!(again[0]["body"]["data"]["runId"], run["runId"]);
    assert_eq!(again[0]["answer"], 200);
    let c = Client::new(&server);
    let listed = deliveries_when(&c, |d| d.len() == 1 && d[0]["status"] == "delivered");
    assert_eq!(listed[0]["id"], first[0]["id"]);
}

#[test]
fn bad_webhook_settings_stop_the_backend_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("settings.json"),
        json!({ "webhooks": [{ "url": "ftp://nowhere" }] }).to_string(),
    )
    .unwrap();
    let out = clawdis_cli(&home, &["serve", "--no-browser", "--port", "1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("webhooks[0].url"), "{err}");
}

#[test]
fn a_signed_link_shows_a_human_gate_and_only_its_own_form_denies_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let receiver = Receiver::start(&secret(&home));
    let public = "approve.example.test";
    let mut hooks = settings(json!([
        { "url": receiver.url("/ok/phone"), "events": ["approval.pending"] },
    ]));
    hooks["publicBaseUrl"] = json!(format!("https://{public}/"));
    let server = serve(&home, hooks);
    std::fs::write(
        work.join("publish.lobster"),
        "name: publish\nsteps:\n  - id: gate\n    approval:\n      prompt: \"Publish <v2> \u{202E}txt.exe\u{202C} to p\u{0430}ypal?\"\n      \
         approvers: human\n  - id: go\n    run: echo published\n",
    )
    .unwrap();
    let paused = run_tool(&home, &work, "publish.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let approval_id = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    let sent = receiver.take(1, WAIT);
    verified(&sent);
    let link = sent[0]["body"]["data"]["approvalUrl"].as_str().unwrap();
    let prefix = format!("https://{public}/approve/");
    assert!(link.starts_with(&prefix), "{link}");
    let path = format!("/approve/{}", &link[prefix.len()..]);

    let port = server.port;
    let from_public = |method: &str, path: &str, origin: &str, body: &str| {
        let mut headers = vec![("Host", public)];
        if !origin.is_empty() {
            headers.push(("Origin", origin));
        }
        if method == "POST" {
            headers.push(("Content-Type", "application/x-www-form-urlencoded"));
        }
        request(port, method, path, &headers, body)
    };
    // Opening the link shows the gate (escaped for HTML, and its hidden
    // characters shown with a warning: issue #35) and decides nothing.
    let (status, page) = from_public("GET", &path, "", "");
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("Publish &lt;v2&gt; ⟨U+202E⟩txt.exe⟨U+202C⟩ to p\u{0430}ypal?")
            && page.contains("reads as &quot;paypal&quot;")
            && page.contains("role=alert>⚠ This text holds 2 hidden")
            && !page.contains('\u{202E}'),
        "{page}"
    );
    assert!(!page.contains("value=approve"), "{page}");
    assert!(page.contains("value=deny"), "{page}");
    let c = Client::new(&server);
    let gate = || c.ok("GET", &format!("/approvals/{approval_id}"), None)["approval"].clone();
    assert_eq!(gate()["status"], "pending");
    // The public host reaches nothing else, with or without a token.
    let (status, _) = from_public("GET", "/approvals", "", "");
    assert_eq!(status, 403);
    // A form posted from another site, or a forged link, decides nothing.
    let (status, _) = from_public("POST", &path, "https://evil.test", "decision=approve");
    assert_eq!(status, 403);
    let forged = format!("{}x", &path[..path.len() - 1]);
    let (status, page) = from_public(
        "POST",
        &forged,
        &format!("https://{public}"),
        "decision=approve",
    );
    assert_eq!(status, 403, "{page}");
    assert_eq!(gate()["status"], "pending");

    // A link by itself shows no person: even its own form cannot approve a
    // `human` gate, and the attempt leaves the link unspent (issue #34).
    let origin = format!("https://{public}");
    let (status, page) = from_public("POST", &path, &origin, "decision=approve&comment=ship+it");
    assert_eq!(status, 403, "{page}");
    assert!(page.contains("cannot approve this gate"), "{page}");
    assert_eq!(gate()["status"], "pending");
    // The attempt is in the ledger, as the link's.
    let listed = clawdis_cli(&home, &["audit", "list"]);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let refused = &listed["entries"][0];
    assert_eq!(
        (
            refused["kind"].as_str(),
            refused["subject"].as_str(),
            refused["via"].as_str()
        ),
        (Some("gate.refused"), Some(approval_id), Some("link")),
        "{listed}"
    );
    assert!(
        refused["by"].as_str().unwrap().starts_with("link:"),
        "{listed}"
    );
    // Its own form denies, through the link.
    let (status, page) = from_public("POST", &path, &origin, "decision=deny&comment=not+today");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Denied"), "{page}");
    let decided = gate();
    assert_eq!(decided["decidedVia"], "link", "{decided:#}");
    assert_eq!(decided["decision"], "reject", "{decided:#}");
    assert_eq!(decided["comment"], "not today", "{decided:#}");
    // Once.
    let (status, page) = from_public("POST", &path, &origin, "decision=deny");
    assert_eq!(status, 410, "{page}");
    assert!(page.contains("already used"), "{page}");

    // A gate anyone may decide (Lobster's own) is approved through its
    // link, as a webhook's receiver would.
    std::fs::write(
        work.join("notes.lobster"),
        "name: notes\nsteps:\n  - id: gate\n    approval: Post the notes?\n  - id: go\n    \
         run: echo posted\n",
    )
    .unwrap();
    let paused = run_tool(&home, &work, "notes.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let sent = receiver.take(1, WAIT);
    let link = sent[0]["body"]["data"]["approvalUrl"].as_str().unwrap();
    let path = format!("/approve/{}", &link[prefix.len()..]);
    let (status, page) = from_public("GET", &path, "", "");
    assert!(status == 200 && page.contains("value=approve"), "{page}");
    // The page carries the digest of what it shows; a gate changed since
    // (another digest) is refused and the link stays usable.
    let digest = c.ok("GET", "/approvals", None)["approvals"][0]["digest"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        page.contains(&format!("name=digest value=\"{digest}\"")),
        "{page}"
    );
    let stale = format!("decision=approve&digest={}", "0".repeat(64));
    let (status, page) = from_public("POST", &path, &origin, &stale);
    assert_eq!(status, 409, "{page}");
    let (status, page) = from_public(
        "POST",
        &path,
        &origin,
        &format!("decision=approve&digest={digest}"),
    );
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Approved"), "{page}");
}

/// Issue #34, break 3: the signed approval link sat in clear in the
/// SQLite outbox, where an agent with a shell read it and decided the gate
/// through the loopback host. A delivery now keeps only what it needs to
/// sign a link when it is sent: the file holds no usable link, before or
/// after a redelivery (which sends a fresh one), nor does the API show one.
#[test]
fn no_usable_approval_link_is_kept_in_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let receiver = Receiver::start(&secret(&home));
    let mut hooks = settings(json!([
        { "url": receiver.url("/ok/phone"), "events": ["approval.pending"] },
    ]));
    hooks["publicBaseUrl"] = json!("https://approve.example.test/");
    // A token issued first: the ledger has a head for the payload to carry.
    clawdis_e2e::create_token(&home, "ann", "approver");
    let server = serve(&home, hooks);
    std::fs::write(
        work.join("publish.lobster"),
        "name: publish\nsteps:\n  - id: gate\n    approval:\n      prompt: Publish?\n      \
         approvers: human\n  - id: go\n    run: echo published\n",
    )
    .unwrap();
    let paused = run_tool(&home, &work, "publish.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let c = Client::new(&server);
    let first = receiver.take(1, WAIT);
    verified(&first);
    let id = first[0]["id"].as_str().unwrap().to_string();
    c.ok(
        "POST",
        &format!("/webhooks/deliveries/{id}/redeliver"),
        None,
    );
    let again = receiver.take(1, WAIT);
    verified(&again);

    let token = |sent: &Value| {
        let link = sent["body"]["data"]["approvalUrl"].as_str().unwrap();
        link.rsplit_once("/approve/").unwrap().1.to_string()
    };
    // Each payload carries the audit ledger's head (issue #34).
    let head = c.ok("GET", "/audit", None)["head"].clone();
    assert_eq!(head["seq"], 1, "{head}");
    assert_eq!(first[0]["body"]["auditHead"], head);
    let (one, two) = (token(&first[0]), token(&again[0]));
    assert_ne!(one, two, "each attempt signs its own link");
    // What an agent with a shell reads: every byte of the store's files
    // (the database, its write-ahead log), and every answer of the API.
    let mut stored = Vec::new();
    for entry in std::fs::read_dir(&home).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("clawdis.db")
        {
            stored.extend(std::fs::read(&path).unwrap());
        }
    }
    assert!(!stored.is_empty(), "the store's files are in the home");
    let api = [
        c.ok("GET", "/webhooks/deliveries", None),
        c.ok("GET", &format!("/webhooks/deliveries/{id}"), None),
    ];
    for link in [&one, &two] {
        let signature = link.rsplit_once('.').unwrap().1;
        assert!(
            !stored
                .windows(signature.len())
                .any(|w| w == signature.as_bytes()),
            "a link's signature is in the store"
        );
        for answer in &api {
            assert!(!answer.to_string().contains(signature), "{answer}");
        }
    }
}
