//! The app's windows in their real web engine (WebKitGTK through
//! WebKitWebDriver) on a private Xvfb display and D-Bus session: each is
//! driven like a person would, and screenshotted to check it is not blank.

use std::path::Path;
use std::time::Duration;

use clawdis_approvals::{Approvals, Channel, Decision};
use clawdis_e2e::control::{Client, free_port};
use clawdis_e2e::desktop::Desktop;
use clawdis_e2e::webdriver::{Session, distinct_colours};
use clawdis_e2e::{MAIL_FLOW, Scratch, envelope};
use serde_json::{Value, json};

fn require() {
    clawdis_e2e::desktop::require();
    clawdis_e2e::webdriver::require();
}

fn write_settings(home: &Path, settings: Value) -> u16 {
    let port = free_port();
    let mut settings = settings;
    settings["controlUrl"] = format!("http://127.0.0.1:{port}").into();
    std::fs::create_dir_all(home).unwrap();
    std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
    port
}

/// The app for `s`'s home and state, started with `window` open, driven
/// through WebKitWebDriver.
fn open_window(desktop: &Desktop, s: &Scratch, window: &str) -> Session {
    let home = s.home.to_str().unwrap();
    Session::start(
        desktop,
        &[("LOBSTER_STATE_DIR", &s.state)],
        &["--home", home, "app", "--open", window],
    )
}

/// Clicks the first pending card's Approve once it is armed (a second
/// after the card shows).
fn approve_when_armed(app: &Session) {
    app.wait_for(
        "document.querySelector('.card.pending button.approve:not([disabled])')",
        json!(null),
        Duration::from_secs(10),
    );
    app.click(".card.pending button.approve");
}

/// The window is drawn (not blank), and each of its controls can be
/// reached by keyboard and has a name assistive technology reads (issue
/// #35): its label, `aria-label` or text.
fn assert_shown(session: &Session, window: &str) {
    let colours = distinct_colours(&session.picture());
    assert!(
        colours > 8,
        "the {window} window looks blank ({colours} colours)"
    );
    let unnamed = session.run(
        "return [...document.querySelectorAll('button, input, select, textarea, a[href], summary')]
           .filter((c) => c.type !== 'hidden')
           .filter((c) => {
             const name = (c.getAttribute('aria-label') || (c.labels && c.labels[0] && c.labels[0].textContent)
               || c.textContent || '').trim();
             return !name || c.tabIndex < 0;
           })
           .map((c) => c.outerHTML.slice(0, 120));",
        json!([]),
    );
    assert_eq!(
        unnamed,
        json!([]),
        "the {window} window has controls without a name or out of the keyboard's reach"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_approvals_window_approves_a_run_an_agent_paused() {
    require();
    let s = Scratch::new();
    let (home, state) = (&s.home, &s.state);
    write_settings(home, json!({"enabled": false}));
    let paused = s.run(MAIL_FLOW);
    assert_eq!(paused["status"], "needs_approval", "{paused}");

    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "approvals");
    let card = app.wait_for(
        "document.querySelector('.card.pending')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    let card = card.as_str().unwrap();
    assert!(
        card.contains("Send 2 mails?")
            && card.contains("2 items")
            && card.contains("\"to\": \"bob\""),
        "{card}"
    );
    // With its context (issue #35): what approving runs, who started it.
    assert!(
        card.contains("Approving runs")
            && card.contains("$ exec --shell 'echo sent >> sent.txt; echo done'")
            && card.contains("Started by")
            && card.contains("lobster")
            && !card.contains("needs a person"),
        "{card}"
    );
    assert_shown(&app, "approvals");

    approve_when_armed(&app);
    // The card passes through "running" while the rest of the run runs.
    let decided = app.wait_for(
        "[...document.querySelectorAll('.card.decided')].map(c => c.textContent).find(t => t.includes(arg))",
        json!("done: approve"),
        Duration::from_secs(10),
    );
    let decided = decided.as_str().unwrap();
    assert!(
        decided.contains("done: approve") && decided.contains("via app"),
        "{decided}"
    );
    assert!(
        app.run("return document.querySelector('.card.pending')", json!([]))
            .is_null(),
        "nothing pending any more"
    );

    let approvals = Approvals::open(state).await.unwrap();
    let run = approvals.list().await.unwrap().remove(0);
    assert_eq!(
        (
            run.decision.map(Decision::as_str),
            run.decided_via.map(Channel::as_str)
        ),
        (Some("approve"), Some("app"))
    );
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let resumed = s.resume(token, &["--approve", "no"]);
    assert_eq!(
        envelope(&resumed)["output"][0],
        "done",
        "the agent gets the recorded outcome"
    );
    assert_eq!(s.sent(), "sent\n");
}

/// Issue #34: a gate with `presence: verified` takes a paired device's
/// passkey or the operating system's check; this platform has no such
/// check, and a click in the window is refused (under X11 any program can
/// synthesize one). The gate keeps waiting.
#[test]
fn a_verified_gate_refuses_the_windows_click_on_linux() {
    require();
    let s = Scratch::new();
    write_settings(&s.home, json!({"enabled": false}));
    std::fs::write(
        s.work.join("wire.lobster"),
        "name: wire\nsteps:\n  - id: gate\n    approval:\n      prompt: Wire the money?\n      \
         presence: verified\n  - id: go\n    run: echo wired > wired.txt\n",
    )
    .unwrap();
    let paused = s.run("wire.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "approvals");
    approve_when_armed(&app);
    let said = app.wait_for(
        "document.getElementById('status').textContent",
        json!(null),
        Duration::from_secs(10),
    );
    let said = said.as_str().unwrap();
    assert!(
        said.contains("a click is not enough") && said.contains("passkey"),
        "{said}"
    );
    assert!(
        !app.run("return document.querySelector('.card.pending')", json!([]))
            .is_null(),
        "still waiting for a verified person"
    );
    assert!(!s.work.join("wired.txt").exists());
}

/// `clawdis token create --role approver` in `s`'s home, waiting up to a
/// minute for the person; its output once it exits.
fn ask_for_approver_token(s: &Scratch, name: &str) -> std::process::Child {
    // The app's backend listens on the home's socket once it has started.
    let socket = s.home.join("clawdis.sock");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the app's backend never listened"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::process::Command::new(clawdis_e2e::bin("clawdis"))
        .args(["--home", s.home.to_str().unwrap()])
        .args([
            "token", "create", "--name", name, "--role", "approver", "--wait", "1m",
        ])
        .env("LOBSTER_STATE_DIR", &s.state)
        .env("CLAWDIS_KEYCHAIN", "off")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Issue #34, break 1: an approver token is made only when the person
/// confirms it in the app, which shows the process that asked and its
/// parents; a refusal leaves the asking command with nothing.
#[test]
fn the_approvals_window_confirms_or_refuses_an_approver_token_request() {
    require();
    let s = Scratch::new();
    let port = write_settings(&s.home, json!({"enabled": false}));
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "approvals");

    let asking = ask_for_approver_token(&s, "phone");
    let pid = asking.id().to_string();
    let card = app.wait_for(
        "document.querySelector('.request')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    let card = card.as_str().unwrap();
    assert!(
        card.contains("\"phone\"")
            && card.contains(&format!("pid {pid}"))
            && card.contains("token create --name phone --role approver")
            && card.contains("with owner"),
        "{card}"
    );
    // Refuse comes first: the safe choice is the first one reached.
    let first = app.run(
        "return document.querySelector('.request .actions button').textContent",
        json!([]),
    );
    assert_eq!(first, "Refuse");
    assert_shown(&app, "approvals");
    app.click(".request button.confirm");
    let out = asking.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(token.starts_with("clawdis_"), "{token}");
    let person = Client::with_token(port, &token);
    assert_eq!(person.call("GET", "/approvals", None).0, 200);
    app.wait_for(
        "document.getElementById('requests').hidden",
        json!(null),
        Duration::from_secs(5),
    );

    let refused = ask_for_approver_token(&s, "laptop");
    app.wait_for(
        "document.querySelector('.request')",
        json!(null),
        Duration::from_secs(10),
    );
    app.click(".request button.refuse");
    let out = refused.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("was refused"), "{said}");

    // The ledger has both answers, by the person at the app.
    let owner = clawdis_e2e::clawdis_cli(&s.home, &["token"]);
    let owner = Client::with_token(port, &String::from_utf8_lossy(&owner.stdout));
    let ledger = owner.ok("GET", "/audit", None);
    let answers: Vec<(String, String, String)> = ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] != "token.requested")
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("-").to_string();
            (text("kind"), text("subject"), text("presence"))
        })
        .collect();
    assert_eq!(
        answers,
        [
            (
                "token.refused".into(),
                "laptop (approver)".into(),
                "click".into()
            ),
            (
                "token.issued".into(),
                "phone (approver)".into(),
                "click".into()
            ),
        ]
    );
}

/// Issue #34, item 2: the person pairs a device from Devices & tokens with no other
/// confirmation; once one is paired, a pairing a shell asks for waits for
/// the person in the Approvals window, which shows the asking process.
#[test]
fn the_app_pairs_a_device_and_confirms_a_pairing_a_shell_asked_for() {
    require();
    let s = Scratch::new();
    let port = write_settings(&s.home, json!({"enabled": false}));
    let desktop = Desktop::start();
    let settings = open_window(&desktop, &s, "devices");
    settings.fill("#device-name", "phone");
    settings.click("#pair-form button");
    let url = settings.wait_for(
        "document.querySelector('.pairing-url')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    let url = url.as_str().unwrap().to_string();
    assert!(
        !settings
            .run(
                "return document.querySelector('svg.pairing-qr[aria-label=\"QR code of the pairing link\"]')",
                json!([])
            )
            .is_null(),
        "the link's QR code is shown"
    );
    let prefix = format!("http://localhost:{port}/pair/");
    assert!(url.starts_with(&prefix), "{url}");
    let (status, page) = clawdis_e2e::control::request(
        port,
        "GET",
        &url[prefix.len() - 6..],
        &[("Host", "localhost")],
        "",
    );
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Pair this device as"), "{page}");
    drop(settings);

    // A device is paired (as the link's page would record it): from now on
    // a shell's pairing waits for the person.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = clawdis_store::Store::open_dir(&s.state).await.unwrap();
        let person = clawdis_store::Issuer::cli();
        assert!(
            store
                .insert_device("tablet", "localhost", "{}", &person)
                .await
                .unwrap()
        );
    });
    let app = open_window(&desktop, &s, "approvals");
    let socket = s.home.join("clawdis.sock");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the app's backend never listened"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let asking = std::process::Command::new(clawdis_e2e::bin("clawdis"))
        .args(["--home", s.home.to_str().unwrap()])
        .args(["devices", "pair", "--name", "laptop", "--wait", "1m"])
        .env("LOBSTER_STATE_DIR", &s.state)
        .env("CLAWDIS_KEYCHAIN", "off")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let card = app.wait_for(
        "document.querySelector('.request')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    let card = card.as_str().unwrap();
    assert!(
        card.contains("pair a device named \"laptop\"")
            && card.contains(&format!("pid {}", asking.id()))
            && card.contains("devices pair --name laptop"),
        "{card}"
    );
    app.click(".request button.confirm");
    let out = asking.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let link = String::from_utf8(out.stdout).unwrap();
    assert!(link.trim().starts_with(&prefix), "{link}");
}

#[test]
fn the_settings_window_validates_next_to_the_field_and_saves() {
    require();
    let s = Scratch::new();
    let home = &s.home;
    write_settings(home, json!({"enabled": false}));
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "settings");
    app.wait_for(
        "document.querySelector('#controlUrl').value",
        json!(null),
        Duration::from_secs(10),
    );
    assert_shown(&app, "settings");
    let issue = |field: &str, kind: &str| {
        let check =
            format!("document.querySelector('.issue[data-field={field}] .{kind}')?.textContent");
        app.wait_for(&check, json!(null), Duration::from_secs(5))
            .as_str()
            .unwrap()
            .to_string()
    };

    app.fill("#executablePath", "bin/chromium");
    app.click("button[type=submit]");
    assert!(issue("executablePath", "error").contains("absolute"));

    app.fill("#executablePath", "");
    app.fill("#controlUrl", "http://127.0.0.1:9222");
    app.click("button[type=submit]");
    assert!(issue("controlUrl", "error").contains("9222"));
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("settings.json")).unwrap())
            .unwrap();
    assert_ne!(
        saved["controlUrl"], "http://127.0.0.1:9222",
        "refused values are not saved"
    );

    app.fill("#controlUrl", "http://10.1.2.3:18791");
    app.click("button[type=submit]");
    assert!(issue("controlUrl", "warning").contains("only connect"));
    app.wait_for(
        "document.querySelector('#status').textContent === 'Saved.'",
        json!(null),
        Duration::from_secs(5),
    );
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(saved["controlUrl"], "http://10.1.2.3:18791");
}

#[test]
fn the_tabs_window_follows_the_browser_and_closes_a_tab() {
    require();
    let s = Scratch::new();
    let home = &s.home;
    let port = write_settings(
        home,
        json!({"enabled": true, "headless": true, "cdpPort": free_port()}),
    );
    let pages = clawdis_e2e::control::fixture_server();
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "tabs");
    app.wait_for(
        "document.querySelector('#tabs tr')",
        json!(null),
        Duration::from_secs(10),
    );
    let c = Client::for_home(port, home);

    let url = format!("http://127.0.0.1:{pages}/greeting.html");
    let tab = c.ok("POST", "/tabs/open", Some(json!({"url": url})));
    let target = tab["targetId"].as_str().unwrap().to_string();
    // The window shows the page within 1 s (the tab may be the first,
    // blank one, navigated: wait for its URL, not just its row).
    let row = format!(
        "document.querySelector('tr[data-target=\"{target}\"]')?.textContent.includes(arg)"
    );
    app.wait_for(&row, json!(url), Duration::from_secs(1));
    assert_shown(&app, "tabs");

    // A second tab becomes the active one; Focus makes the first active again.
    let second = c.ok(
        "POST",
        "/tabs/open",
        Some(json!({"url": format!("http://127.0.0.1:{pages}/form.html"), "newTab": true})),
    );
    let second = second["targetId"].as_str().unwrap().to_string();
    let active = |id: &str| format!("document.querySelector('tr[data-target=\"{id}\"] .badge')");
    app.wait_for(&active(&second), json!(null), Duration::from_secs(1));
    app.click(&format!("tr[data-target=\"{target}\"] button:first-child"));
    app.wait_for(&active(&target), json!(null), Duration::from_secs(1));
    let tabs = c.ok("GET", "/tabs", None);
    let focused = tabs["tabs"]
        .as_array()
        .or(tabs.as_array())
        .unwrap()
        .iter()
        .find(|t| t["targetId"] == target.as_str())
        .cloned();
    assert_eq!(focused.unwrap()["isActive"], true, "{tabs}");

    app.click(&format!("tr[data-target=\"{target}\"] button:last-child"));
    app.wait_for(
        &format!("!document.querySelector('tr[data-target=\"{target}\"]')"),
        json!(null),
        Duration::from_secs(5),
    );
    let tabs = c.ok("GET", "/tabs", None);
    assert!(
        !tabs.to_string().contains(&target),
        "closed in the browser too: {tabs}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_input_gate_gets_a_form_built_from_its_schema() {
    require();
    let s = Scratch::new();
    let (home, state, work) = (&s.home, &s.state, &s.work);
    write_settings(home, json!({"enabled": false}));
    std::fs::write(
        work.join("ask.lobster"),
        "name: ask\nsteps:\n  - id: who\n    input:\n      prompt: Who gets the report?\n      responseSchema:\n        type: object\n        properties:\n          name: {type: string}\n          copies: {type: integer}\n          urgent: {type: boolean}\n        required: [name]\n  - id: send\n    command: echo sending >> log.txt\n",
    )
    .unwrap();
    assert_eq!(s.run("ask.lobster")["status"], "needs_input");

    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "approvals");
    app.wait_for(
        "document.querySelector('.card.pending form')",
        json!(null),
        Duration::from_secs(10),
    );
    let labels = app.run(
        "return [...document.querySelectorAll('.card.pending label')].map(l => l.textContent)",
        json!([]),
    );
    assert_eq!(labels, json!(["name *", "copies", "urgent"]));
    // A refused call shows the backend's message (the command answers a
    // serialised error, `{error, kind}`).
    app.run(
        "decide(document.querySelector('.card.pending').dataset.id, 'maybe'); return null",
        json!([]),
    );
    let shown = app.wait_for(
        "document.querySelector('#status').textContent.includes('unknown choice') && document.querySelector('#status').textContent",
        json!(null),
        Duration::from_secs(5),
    );
    assert!(!shown.as_str().unwrap().contains("[object"), "{shown}");
    app.fill(".card.pending input[name=name]", "ann");
    // Another run pausing re-renders the window: the half-filled form stays.
    let other = s.run("exec --json --shell 'echo [1]' | approve --prompt other");
    assert_eq!(other["status"], "needs_approval");
    app.wait_for(
        "document.querySelectorAll('.card.pending').length === 2",
        json!(null),
        Duration::from_secs(5),
    );
    assert_eq!(
        app.run(
            "return document.querySelector('.card.pending input[name=name]').value",
            json!([])
        ),
        "ann"
    );
    app.fill(".card.pending input[name=copies]", "3");
    app.click(".card.pending input[name=urgent]");
    app.click(".card.pending button[type=submit]");
    // The card passes through "running" while the rest of the run runs.
    let decided = app.wait_for(
        "[...document.querySelectorAll('.card.decided')].map(c => c.textContent).find(t => t.includes(arg))",
        json!("done: respond"),
        Duration::from_secs(10),
    );
    assert!(
        decided.as_str().unwrap().contains("done: respond"),
        "{decided}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("log.txt")).unwrap(),
        "sending\n"
    );
    let approvals = Approvals::open(state).await.unwrap();
    let runs = approvals.list().await.unwrap();
    let run = runs.iter().find(|a| a.gate.as_str() == "input").unwrap();
    assert_eq!(
        (
            run.decision.map(Decision::as_str),
            run.decided_via.map(Channel::as_str)
        ),
        (Some("respond"), Some("app"))
    );
}

/// Presses `keys` on whatever has the focus and returns whether they
/// started a decision in the window: `decide` clears `#status` before it
/// calls the app, in the same task as the key that pressed its button.
fn press_and_see_if_it_decided(app: &Session, keys: &str) -> bool {
    app.run(
        "document.querySelector('#status').textContent = 'untouched'; return null;",
        json!([]),
    );
    app.press(keys);
    app.run(
        "return document.querySelector('#status').textContent !== 'untouched';",
        json!([]),
    ) == json!(true)
}

/// A person types an answer into an input gate's form while another run
/// pauses: the window re-renders, and the rest of what they type still
/// goes into the field. Before, re-inserting the kept card took the focus
/// out of the field and the render put it on the other gate's Deny: the
/// rest of the answer was lost ("a" instead of "ann" in a run of
/// an_input_gate_gets_a_form_built_from_its_schema), and the space typed
/// next pressed Deny on a gate the person never meant to decline.
#[tokio::test(flavor = "multi_thread")]
async fn typing_into_an_input_gate_while_another_run_pauses_keeps_the_focus() {
    require();
    let s = Scratch::new();
    write_settings(&s.home, json!({"enabled": false}));
    std::fs::write(
        s.work.join("ask.lobster"),
        "name: ask\nsteps:\n  - id: who\n    input:\n      prompt: Who gets the report?\n      responseSchema:\n        type: object\n        properties:\n          name: {type: string}\n        required: [name]\n  - id: send\n    run: echo \"$who.response.name\" > answer.txt\n",
    )
    .unwrap();
    assert_eq!(s.run("ask.lobster")["status"], "needs_input");
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "approvals");
    app.wait_for(
        "document.querySelector('.card.pending form')",
        json!(null),
        Duration::from_secs(10),
    );
    // The person types the start of the answer in the field...
    app.fill(".card.pending input[name=name]", "ann");
    // ...another run pauses, which re-renders the window...
    let other = s.run("exec --json --shell 'echo [1]' | approve --prompt other");
    assert_eq!(other["status"], "needs_approval", "{other}");
    app.wait_for(
        "document.querySelectorAll('.card.pending').length === 2 \
           && document.querySelector('.card.pending button.deny')",
        json!(null),
        Duration::from_secs(10),
    );
    // ...and they type the rest on the keyboard, where the focus is.
    let decided = press_and_see_if_it_decided(&app, " lee");
    let field = app.run(
        "const f = document.querySelector('.card.pending input[name=name]'); \
         return {value: f.value, focused: document.activeElement === f, \
                 on: document.activeElement.outerHTML.slice(0, 80)};",
        json!([]),
    );
    assert_eq!(
        (&field["value"], &field["focused"], decided),
        (&json!("ann lee"), &json!(true), false),
        "the field, whether it kept the focus, and whether the keys decided a gate: {field:#}"
    );
    let approvals = Approvals::open(&s.state).await.unwrap();
    let gates = approvals.list().await.unwrap();
    assert_eq!(gates.len(), 2, "{gates:?}");
    assert!(
        gates.iter().all(|g| g.decision.is_none()),
        "no gate was decided: {gates:?}"
    );
    // The whole answer is what the gate gets.
    app.click(".card.pending button[type=submit]");
    app.wait_for(
        "[...document.querySelectorAll('.card.decided')].map(c => c.textContent).find(t => t.includes(arg))",
        json!("done: respond"),
        Duration::from_secs(10),
    );
    let gates = approvals.list().await.unwrap();
    let asked = gates.iter().find(|g| g.gate.as_str() == "input").unwrap();
    assert_eq!(asked.decision, Some(Decision::Respond), "{asked:?}");
    assert_eq!(
        std::fs::read_to_string(s.work.join("answer.txt")).unwrap(),
        "ann lee\n"
    );
    let other = gates
        .iter()
        .find(|g| g.gate.as_str() == "approval")
        .unwrap();
    assert_eq!(other.decision, None, "{other:?}");
}

/// The window opens with the focus on the first card's Deny (nothing had
/// it). A person typing a reason in a card that is then decided elsewhere
/// keeps no focus on another card: it stays on the body, so the Space and
/// Enter they type next decide no other gate.
#[tokio::test(flavor = "multi_thread")]
async fn a_card_decided_elsewhere_hands_its_focus_to_no_other_gate() {
    require();
    let s = Scratch::new();
    let port = write_settings(&s.home, json!({"enabled": false}));
    let first = s.run("exec --json --shell 'echo [1]' | approve --prompt first");
    let second = s.run("exec --json --shell 'echo [2]' | approve --prompt second");
    let first = first["requiresApproval"]["approvalId"].as_str().unwrap();
    assert!(
        second["requiresApproval"]["approvalId"].is_string(),
        "{second}"
    );
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "approvals");
    let focused = app.wait_for(
        "document.querySelectorAll('.card.pending').length === 2 \
           && document.activeElement.className === 'deny' \
           && document.activeElement.closest('.card') === document.querySelector('.card.pending')",
        json!(null),
        Duration::from_secs(10),
    );
    assert_eq!(focused, true, "the focus starts on the first card's Deny");
    let card = format!(".card.pending[data-id=\"{first}\"]");
    app.fill(&format!("{card} input.reason-text"), "not this");
    let c = Client::for_home(port, &s.home);
    c.ok(
        "POST",
        &format!("/approvals/{first}/deny"),
        Some(json!({"reason": "decided elsewhere"})),
    );
    let focus = app.wait_for(
        "document.querySelectorAll('.card.pending').length === 1 \
           && document.activeElement.outerHTML.slice(0, 80)",
        json!(null),
        Duration::from_secs(10),
    );
    assert!(
        focus.as_str().unwrap().starts_with("<body"),
        "the focus went to {focus}"
    );
    assert!(
        !press_and_see_if_it_decided(&app, " \u{E007}"),
        "Space and Enter decided a gate"
    );
    // Another render (the age ticker, another run) leaves it there too.
    let third = s.run("exec --json --shell 'echo [3]' | approve --prompt third");
    assert_eq!(third["status"], "needs_approval", "{third}");
    let focus = app.wait_for(
        "document.querySelectorAll('.card.pending').length === 2 \
           && document.activeElement.outerHTML.slice(0, 80)",
        json!(null),
        Duration::from_secs(10),
    );
    assert!(
        focus.as_str().unwrap().starts_with("<body"),
        "the focus went to {focus}"
    );
    assert!(
        !press_and_see_if_it_decided(&app, " \u{E007}"),
        "Space and Enter decided a gate"
    );
    let approvals = Approvals::open(&s.state).await.unwrap();
    let decided: Vec<_> = approvals
        .list()
        .await
        .unwrap()
        .into_iter()
        .filter(|g| g.decision.is_some())
        .map(|g| g.approval_id)
        .collect();
    assert_eq!(
        decided,
        vec![Some(first.to_string())],
        "only the first was decided"
    );
}

#[test]
fn turning_the_browser_off_in_settings_stops_it() {
    require();
    let s = Scratch::new();
    let home = &s.home;
    let port = write_settings(
        home,
        json!({"enabled": true, "headless": true, "cdpPort": free_port()}),
    );
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "settings");
    app.wait_for(
        "document.querySelector('input[name=enabled]').checked",
        json!(null),
        Duration::from_secs(10),
    );
    let c = Client::for_home(port, home);
    assert_eq!(c.call("POST", "/start", Some(json!({}))).0, 200);
    assert_eq!(c.call("GET", "/", None).1["running"], true);

    app.click("input[name=enabled]");
    app.click("button[type=submit]");
    app.wait_for(
        "document.querySelector('#status').textContent === 'Saved.'",
        json!(null),
        Duration::from_secs(10),
    );
    assert_eq!(
        c.call("GET", "/", None).1["running"],
        false,
        "stopped when turned off"
    );
    let (status, body) = c.call(
        "POST",
        "/tabs/open",
        Some(json!({"url": "http://127.0.0.1:9/"})),
    );
    assert!(
        status >= 400
            && body["error"]
                .as_str()
                .unwrap()
                .contains("Browser disabled in settings"),
        "{status} {body}"
    );
}

/// Issue #35: `Publish notes to \u{202E}txt.exe\u{202C} the list?` read
/// "exe.txt" in the Approvals window. Now hidden and direction-changing
/// characters show as escapes and a word with a Cyrillic look-alike is
/// named, with warnings above; the card fails closed (the focus on Deny,
/// Approve armed a second after it shows, Enter and Escape approve
/// nothing); and Deny's reason reaches the agent's envelope.
#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_that_hides_characters_is_shown_escaped_and_fails_closed() {
    require();
    let s = Scratch::new();
    write_settings(&s.home, json!({"enabled": false}));
    std::fs::write(
        s.work.join("notes.lobster"),
        "name: notes\nsteps:\n  - id: gate\n    approval:\n      prompt: \"Publish notes to \u{202E}txt.exe\u{202C} the p\u{0430}ypal list?\"\n  - id: go\n    run: echo published > published.txt\n",
    )
    .unwrap();
    let paused = s.run("notes.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let id = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "approvals");
    // Shown unarmed, with the focus on Deny.
    let shown = app.wait_for(
        "(() => { const c = document.querySelector('.card.pending'); \
           return c && c.querySelector('button.approve').disabled \
             && {text: c.textContent, focused: document.activeElement.className, \
                 alerts: [...c.querySelectorAll('[role=alert]')].map(a => a.textContent)}; })()",
        json!(null),
        Duration::from_secs(10),
    );
    let text = shown["text"].as_str().unwrap();
    assert!(
        text.contains("Publish notes to ⟨U+202E⟩txt.exe⟨U+202C⟩ the p\u{0430}ypal list?")
            && !text.contains('\u{202E}'),
        "{shown:#}"
    );
    let alerts = shown["alerts"].to_string();
    assert!(
        alerts.contains("2 hidden") && alerts.contains("reads as \\\"paypal\\\""),
        "{shown:#}"
    );
    assert_eq!(shown["focused"], "deny", "{shown:#}");
    // Armed, Approve still takes no Enter (nor Escape).
    app.wait_for(
        "document.querySelector('.card.pending button.approve:not([disabled])')",
        json!(null),
        Duration::from_secs(10),
    );
    app.run(
        "document.querySelector('.card.pending button.approve').focus(); return null;",
        json!([]),
    );
    app.press("\u{E007}\u{E00C}");
    // Denied with a reason; had Enter approved, this would find the gate
    // decided already.
    app.run(
        "document.querySelector('.card.pending select.reason').value = 'Wrong target or recipient'; return null;",
        json!([]),
    );
    app.fill(".card.pending input.reason-text", "it is an .exe");
    app.click(".card.pending button.deny");
    app.wait_for(
        "[...document.querySelectorAll('.card.decided')].map(c => c.textContent).find(t => t.includes(arg))",
        json!("reject"),
        Duration::from_secs(10),
    );
    let approvals = Approvals::open(&s.state).await.unwrap();
    let gate = approvals.get(&id).await.unwrap();
    assert_eq!(gate.decision, Some(Decision::Reject), "{gate:?}");
    let result: Value = serde_json::from_str(gate.result.as_ref().unwrap().get()).unwrap();
    let reason = result["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("Wrong target or recipient: it is an .exe")
            && reason.contains("A denial means stop"),
        "{result:#}"
    );
    assert!(!s.work.join("published.txt").exists());
}

/// Issue #35: a gate decided anywhere leaves every pending view within a
/// second. Here it is denied over HTTP while the Approvals window shows it
/// and dunst (the real daemon) shows its notification: both let go of it
/// within a second of the answer.
#[test]
fn a_gate_decided_over_http_leaves_the_window_and_dunst_within_a_second() {
    require();
    let s = Scratch::new();
    let port = write_settings(&s.home, json!({"enabled": false}));
    let desktop = Desktop::start();
    let dunst = clawdis_e2e::desktop::Dunst::start(&desktop);
    let app = open_window(&desktop, &s, "approvals");
    let paused = s.run(MAIL_FLOW);
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let id = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    app.wait_for(
        "document.querySelector('.card.pending')",
        json!(null),
        Duration::from_secs(10),
    );
    dunst.wait_displayed(1, Duration::from_secs(10));
    let c = Client::for_home(port, &s.home);
    let denied = c.ok(
        "POST",
        &format!("/approvals/{id}/deny"),
        Some(json!({"reason": "decided elsewhere"})),
    );
    assert_eq!(denied["result"]["status"], "cancelled", "{denied}");
    let answered = std::time::Instant::now();
    app.wait_for(
        "!document.querySelector('.card.pending') && document.querySelector('.card.decided')",
        json!(null),
        Duration::from_secs(1),
    );
    dunst.wait_displayed(0, Duration::from_secs(1).saturating_sub(answered.elapsed()));
}

/// Issue #35: the Runs window is the history a person reads instead of
/// `curl`: runs appear as they start, filter by status, open as a timeline
/// of their steps, and a waiting one is cancelled there (recorded as the
/// app's decision).
#[test]
fn the_runs_window_lists_filters_opens_and_cancels_runs() {
    require();
    let s = Scratch::new();
    let port = write_settings(&s.home, json!({"enabled": false}));
    std::fs::create_dir_all(s.home.join("workflows")).unwrap();
    std::fs::write(
        s.home.join("workflows/ship.lobster"),
        "name: ship\nsteps:\n  - id: build\n    run: echo built\n  - id: gate\n    approval:\n      \
         prompt: Ship?\n  - id: go\n    run: echo shipped\n",
    )
    .unwrap();
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "runs");
    app.wait_for(
        "document.querySelector('#runs .empty')",
        json!(null),
        Duration::from_secs(10),
    );
    let c = Client::for_home(port, &s.home);
    let paused = c.ok("POST", "/runs", Some(json!({"workflow": "ship"})));
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let id = paused["runId"].as_str().unwrap().to_string();
    // It appears as it starts (the `runs` event), with who started it.
    let listed = app.wait_for(
        "document.querySelector(`tr.run[data-run=\"${arg}\"] .state.needs_approval`)?.closest('tr').textContent",
        json!(id),
        Duration::from_secs(10),
    );
    assert!(listed.as_str().unwrap().contains("by owner"), "{listed}");
    // Filtered to failed runs, it goes; back to any, it returns.
    app.run(
        "const f = document.getElementById('status-filter'); f.value = 'failed'; \
         f.dispatchEvent(new Event('change', {bubbles: true})); return null;",
        json!([]),
    );
    app.wait_for(
        "document.querySelector('#runs .empty')",
        json!(null),
        Duration::from_secs(10),
    );
    app.run(
        "const f = document.getElementById('status-filter'); f.value = ''; \
         f.dispatchEvent(new Event('change', {bubbles: true})); return null;",
        json!([]),
    );
    // Opened: its steps as a timeline.
    app.wait_for(
        "document.querySelector(`tr.run[data-run=\"${arg}\"] button`)",
        json!(id),
        Duration::from_secs(10),
    );
    app.click(&format!("tr.run[data-run=\"{id}\"] button"));
    let steps = app.wait_for(
        "document.querySelector('#run li.step[data-step=build] .state.ok') && \
         [...document.querySelectorAll('#run li.step')].map(li => li.dataset.step + ':' + li.querySelector('.state').textContent)",
        json!(null),
        Duration::from_secs(10),
    );
    assert_eq!(steps, json!(["build:ok", "gate:ok", "go:pending"]));
    assert_shown(&app, "runs");
    // Cancelled there: the app's decision.
    app.click("#run button.cancel");
    app.wait_for(
        "document.querySelector(`tr.run[data-run=\"${arg}\"] .state.cancelled`)",
        json!(id),
        Duration::from_secs(10),
    );
    let run = c.ok("GET", &format!("/runs/{id}"), None);
    assert_eq!(run["status"], "cancelled", "{run:#}");
    // Its decision says through which channel and how a person was there.
    assert_eq!(
        (
            run["decisions"][0]["via"].as_str(),
            run["decisions"][0]["presence"].as_str()
        ),
        (Some("app"), Some("click")),
        "{run:#}"
    );
    let shown = app.wait_for(
        "document.querySelector('#run li.decision')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    assert!(
        shown.as_str().unwrap().starts_with("cancel by ")
            && shown.as_str().unwrap().contains("via app (click)"),
        "{shown}"
    );
}

/// Issue #35: the Ledger window shows the audit entries and whether the
/// chain holds; an entry an agent with a shell rewrote in the SQLite file
/// shows it broken there, naming the entry.
#[test]
fn the_ledger_window_shows_the_entries_and_a_rewrite() {
    require();
    let s = Scratch::new();
    write_settings(&s.home, json!({"enabled": false}));
    let paused = s.run(MAIL_FLOW);
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    assert_eq!(
        envelope(&s.resume(token, &["--approve", "no"]))["status"],
        "cancelled"
    );
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "ledger");
    let verdict = app.wait_for(
        "document.querySelector('#verify.holds')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    assert!(
        verdict
            .as_str()
            .unwrap()
            .starts_with("The ledger holds: 1 entry,"),
        "{verdict}"
    );
    let row = app.wait_for(
        "document.querySelector('#entries tr[data-seq=\"1\"]')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    assert!(row.as_str().unwrap().contains("gate.reject"), "{row}");
    assert_shown(&app, "ledger");
    let edit = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); \
             c.execute(\"UPDATE audit SET by='someone else' WHERE seq=1\"); c.commit()",
            s.state.join("clawdis.db").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(edit.status.success(), "{edit:?}");
    app.refresh();
    let broken = app.wait_for(
        "document.querySelector('#verify.broken')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    assert!(
        broken.as_str().unwrap().contains("broken at entry 1"),
        "{broken}"
    );
}

/// Issue #35: the Triggers window shows each schedule with its next time,
/// and pauses and resumes it (as `POST /triggers/{id}/pause` does).
#[test]
fn the_triggers_window_pauses_and_resumes_a_schedule() {
    require();
    let s = Scratch::new();
    let port = write_settings(&s.home, json!({"enabled": false}));
    std::fs::create_dir_all(s.home.join("workflows")).unwrap();
    std::fs::write(
        s.home.join("workflows/nightly.lobster"),
        "name: nightly\ntriggers:\n  - {cron: '0 9 * * 1-5'}\nsteps:\n  - id: hello\n    run: echo hi\n",
    )
    .unwrap();
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "triggers");
    let row = app.wait_for(
        "document.querySelector('tr.trigger .when')?.textContent.startsWith('next') && \
         document.querySelector('tr.trigger').textContent",
        json!(null),
        Duration::from_secs(10),
    );
    assert!(
        row.as_str().unwrap().contains("nightly") && row.as_str().unwrap().contains("0 9 * * 1-5"),
        "{row}"
    );
    assert_shown(&app, "triggers");
    let c = Client::for_home(port, &s.home);
    app.click("tr.trigger button.pause");
    app.wait_for(
        "document.querySelector('tr.trigger.paused button.resume')",
        json!(null),
        Duration::from_secs(10),
    );
    assert_eq!(
        c.ok("GET", "/triggers", None)["triggers"][0]["paused"],
        true
    );
    app.click("tr.trigger button.resume");
    app.wait_for(
        "document.querySelector('tr.trigger:not(.paused) button.pause')",
        json!(null),
        Duration::from_secs(10),
    );
    assert_eq!(
        c.ok("GET", "/triggers", None)["triggers"][0]["paused"],
        false
    );
}

/// Issue #35: the Deliveries window shows a webhook delivery that failed,
/// with its attempts, and Redeliver sends it again to the receiver (the
/// reference Standard Webhooks verifier).
#[test]
fn the_deliveries_window_shows_attempts_and_redelivers() {
    require();
    let s = Scratch::new();
    let secret = clawdis_e2e::clawdis_cli(&s.home, &["webhooks", "secret"]);
    let receiver =
        clawdis_e2e::webhooks::Receiver::start(String::from_utf8_lossy(&secret.stdout).trim());
    let port = write_settings(
        &s.home,
        json!({
            "enabled": false,
            "webhooks": [{ "url": receiver.url("/fail/99/down"), "events": ["run.completed"] }],
            "webhookRetry": { "firstDelayMs": 50, "maxAttempts": 2 },
        }),
    );
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "deliveries");
    let c = Client::for_home(port, &s.home);
    let run = c.ok(
        "POST",
        "/runs",
        Some(json!({ "pipeline": "exec --json --shell 'echo [1]'" })),
    );
    assert_eq!(run["status"], "ok", "{run}");
    assert_eq!(receiver.take(2, Duration::from_secs(20)).len(), 2);
    // Given up after its two attempts; the window shows it (it follows the
    // runs, and looks again while one is pending).
    app.wait_for(
        "document.querySelector('tr.delivery.failed button')",
        json!(null),
        Duration::from_secs(20),
    );
    app.click("tr.delivery.failed button");
    let attempts = app.wait_for(
        "document.querySelectorAll('#detail li.attempt').length === 2 && \
         [...document.querySelectorAll('#detail li.attempt')].map(li => li.textContent)",
        json!(null),
        Duration::from_secs(10),
    );
    assert!(
        attempts
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a.as_str().unwrap().contains("HTTP 500")),
        "{attempts}"
    );
    assert_shown(&app, "deliveries");
    app.click("#detail button.redeliver");
    // Sent again, with a fresh set of attempts.
    let again = receiver.take(2, Duration::from_secs(20));
    assert!(
        again.iter().all(|r| r["path"] == "/fail/99/down"),
        "{again:#?}"
    );
}

/// Issue #35: Devices & tokens lists the named tokens (never a token) and
/// revokes one there: it stops at once, and the ledger records the app's
/// revocation.
#[test]
fn the_devices_and_tokens_window_revokes_a_token() {
    require();
    let s = Scratch::new();
    let port = write_settings(&s.home, json!({"enabled": false}));
    // Made in the store the app reads (its runs' state directory).
    let made = s.clawdis(&["token", "create", "--name", "agent", "--role", "agent"]);
    assert!(made.status.success(), "{made:?}");
    let agent = String::from_utf8(made.stdout).unwrap().trim().to_string();
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "devices");
    let row = app.wait_for(
        "document.querySelector('tr.token[data-token=agent]')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    assert!(
        row.as_str().unwrap().contains("agent") && !row.as_str().unwrap().contains(&agent),
        "{row}"
    );
    assert_shown(&app, "devices");
    let as_agent = Client::with_token(port, &agent);
    assert_eq!(as_agent.call("GET", "/runs", None).0, 200);
    app.click("tr.token[data-token=agent] button.revoke-token");
    app.wait_for(
        "document.querySelector('tr.token.revoked[data-token=agent]')",
        json!(null),
        Duration::from_secs(10),
    );
    assert_eq!(as_agent.call("GET", "/runs", None).0, 401);
    let ledger = Client::for_home(port, &s.home).ok("GET", "/audit?limit=1", None);
    let entry = &ledger["entries"][0];
    assert_eq!(
        (
            entry["kind"].as_str(),
            entry["subject"].as_str(),
            entry["via"].as_str()
        ),
        (Some("token.revoked"), Some("agent"), Some("app")),
        "{ledger:#}"
    );
}

/// Issue #35: the windows take the `accentColor` setting.
#[test]
fn the_windows_take_the_accent_colour_setting() {
    require();
    let s = Scratch::new();
    write_settings(&s.home, json!({"enabled": false, "accentColor": "#0A84FF"}));
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "runs");
    let accent = app.wait_for(
        "getComputedStyle(document.documentElement).getPropertyValue('--accent').trim() === arg && \
         getComputedStyle(document.querySelector('h1'), '::before').backgroundColor",
        json!("#0A84FF"),
        Duration::from_secs(10),
    );
    assert_eq!(accent, "rgb(10, 132, 255)");
}

/// Issue #35: closing the Approvals window while a gate waits decides
/// nothing: the gate stays pending, and the agent's own later denial is
/// the decision recorded.
#[tokio::test(flavor = "multi_thread")]
async fn closing_the_approvals_window_decides_nothing() {
    require();
    let s = Scratch::new();
    write_settings(&s.home, json!({"enabled": false}));
    let paused = s.run(MAIL_FLOW);
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "approvals");
    app.wait_for(
        "document.querySelector('.card.pending button.approve:not([disabled])')",
        json!(null),
        Duration::from_secs(10),
    );
    app.close_window();
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let denied = envelope(&s.resume(token, &["--approve", "no"]));
    assert_eq!(denied["status"], "cancelled", "{denied}");
    let approvals = Approvals::open(&s.state).await.unwrap();
    let id = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    let gate = approvals.get(id).await.unwrap();
    assert_eq!(gate.decided_via, Some(Channel::Cli), "{gate:?}");
    assert_eq!(s.sent(), "", "nothing after the gate ran");
}

/// Issue #36: a browser hand-off's card shows the page and offers Take
/// over, Done and Decline (no Approve); Done hands the page back to the
/// waiting agent.
#[test]
fn a_hand_off_card_takes_over_and_hands_back() {
    require();
    let s = Scratch::new();
    let home = &s.home;
    let port = write_settings(
        home,
        json!({"enabled": true, "headless": true, "cdpPort": free_port()}),
    );
    let pages = clawdis_e2e::control::fixture_server();
    let desktop = Desktop::start();
    let app = open_window(&desktop, &s, "approvals");
    app.wait_for(
        "document.querySelector('.empty')",
        json!(null),
        Duration::from_secs(10),
    );
    let c = Client::for_home(port, home);
    let (status, session) = c.call(
        "POST",
        "/sessions",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/form.html") })),
    );
    assert_eq!(status, 201, "{session}");
    let id = session["sessionId"].as_str().unwrap().to_string();
    let (tx, answer) = std::sync::mpsc::channel();
    let agent = Client::for_home(port, home);
    std::thread::spawn(move || {
        let _ = tx.send(agent.call(
            "POST",
            &format!("/sessions/{id}/handoff"),
            Some(json!({ "reason": "enter the code we texted you" })),
        ));
    });
    let card = app.wait_for(
        "document.querySelector('.card.pending')?.textContent",
        json!(null),
        Duration::from_secs(10),
    );
    let card = card.as_str().unwrap();
    assert!(
        card.contains("The agent needs you: enter the code we texted you")
            && card.contains("form.html"),
        "{card}"
    );
    let buttons = app.run(
        "return [...document.querySelectorAll('.card.pending .actions button')].map((b) => b.textContent);",
        json!([]),
    );
    assert_eq!(
        buttons,
        json!(["Decline", "Take over", "Done — continue the agent"]),
        "{buttons}"
    );
    assert_shown(&app, "approvals");
    // Take over opens the live view of the headless browser's page.
    app.click(".card.pending button.takeover");
    desktop.wait_window(&["--name", "Clawdis Hand-off"]);
    app.click(".card.pending button.approve");
    let (status, ended) = answer.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(status, 200, "{ended}");
    assert_eq!(ended["done"], true, "{ended}");
    assert!(
        ended["url"].as_str().unwrap().ends_with("/form.html"),
        "{ended}"
    );
}

/// The apps of `s`'s home that run now.
fn running_apps(s: &Scratch) -> Vec<i32> {
    let home = s.home.to_str().unwrap().to_string();
    clawdis_e2e::processes(|args| args.contains(&home) && args.iter().any(|a| a == "app"))
        .into_iter()
        .filter(|pid| clawdis_e2e::alive(*pid))
        .collect()
}

/// Issue #44: a window's session, once dropped, leaves no app running, so
/// the next window a test opens on the same desktop is an app of its own,
/// as when a person quits the app and starts it again. (WebKitWebDriver
/// stops the app only after it answers the session's deletion, and a
/// driver stopped at once left the app running; the next app then handed
/// its window to it and exited, and its session never started: CI of the
/// pairing test above waited 121 s.)
#[test]
fn windows_opened_in_turn_on_one_desktop_are_apps_of_their_own() {
    require();
    let s = Scratch::new();
    write_settings(&s.home, json!({"enabled": false}));
    let desktop = Desktop::start();
    for window in ["devices", "approvals", "runs"] {
        let session = open_window(&desktop, &s, window);
        session.wait_for(
            "document.readyState === 'complete' && document.querySelector('h1')",
            json!(null),
            Duration::from_secs(10),
        );
        drop(session);
        assert_eq!(
            running_apps(&s),
            Vec::<i32>::new(),
            "the {window} window's app outlived its session"
        );
    }
}

/// Issue #44: an app started while another runs on the same desktop hands
/// its window to the running one, as a person's second launch does (the
/// app is single-instance), and exits; WebKitWebDriver then never answers
/// the request for its session. The rig fails such a session at once and
/// says why, instead of after the request's 120 s.
#[test]
fn a_second_app_on_one_desktop_fails_its_session_at_once() {
    require();
    let s = Scratch::new();
    write_settings(&s.home, json!({"enabled": false}));
    let desktop = Desktop::start();
    let first = open_window(&desktop, &s, "devices");
    let started = std::time::Instant::now();
    let second = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        open_window(&desktop, &s, "runs")
    }));
    let message = match second {
        Ok(_) => panic!("a second app on the desktop got a session of its own"),
        Err(e) => e.downcast_ref::<String>().cloned().unwrap_or_default(),
    };
    assert!(
        message.contains("exited before WebKitWebDriver"),
        "{message}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the failed session took {:?}",
        started.elapsed()
    );
    // The running app opened the window the second launch asked for.
    desktop.wait_window(&["--name", "^Clawdis Runs$"]);
    drop(first);
    assert_eq!(running_apps(&s), Vec::<i32>::new());
}
