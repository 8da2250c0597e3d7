//! The pictures in the README (issue #35, item 5): every window of the
//! real app, and the link, pairing and inbox pages in real Chromium, with
//! real data (runs paused by an agent's token and by `lobster`, a trigger,
//! webhook deliveries, the ledger, a named token). `scripts/screenshots`
//! runs this with `CLAWDIS_SCREENSHOTS=docs/screenshots`; the suite runs it
//! into a scratch directory, so the script keeps working and no picture
//! comes out blank.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use clawdis_e2e::control::{Client, free_port};
use clawdis_e2e::desktop::Desktop;
use clawdis_e2e::webdriver::{Session, distinct_colours};
use clawdis_e2e::webhooks::Receiver;
use clawdis_e2e::{Scratch, run_tool};
use serde_json::json;

const DEPLOY: &str = "name: deploy\nargs:\n  env: {default: production}\nsteps:\n  \
    - id: build\n    run: echo '[{\"version\":\"1.2.0\",\"files\":14}]'\n  \
    - id: gate\n    approval:\n      prompt: Deploy 1.2.0 to production?\n      approvers: human\n      \
    min_approvals: 1\n  - id: deploy\n    run: ./deploy.sh --env ${env} --version $build.json.0.version\n    \
    env:\n      DEPLOY_TOKEN: kept-out-of-sight\n";

const NOTES: &str = "name: notes\nsteps:\n  - id: list\n    run: echo '[\"notes.txt\"]'\n  \
    - id: gate\n    approval:\n      prompt: \"Publish notes to \u{202E}txt.exe\u{202C} the list?\"\n  \
    - id: publish\n    run: echo published\n";

const NIGHTLY: &str = "name: nightly\ntriggers:\n  - {cron: '0 9 * * 1-5'}\nsteps:\n  \
    - id: report\n    run: echo report\n";

/// Where the pictures go.
fn out_dir(scratch: &Path) -> PathBuf {
    let dir = std::env::var_os("CLAWDIS_SCREENSHOTS")
        .map_or_else(|| scratch.join("screenshots"), PathBuf::from);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn save(dir: &Path, name: &str, png: &[u8]) {
    let colours = distinct_colours(png);
    assert!(colours > 8, "{name} looks blank ({colours} colours)");
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// The app with `window` open, its runs in `s`'s state directory, on a
/// desktop of its own. The app of the window before must be gone (a menu-bar
/// app outlives its windows, not its display): a second launch would hand
/// its window to the first (one app a home) and leave WebDriver waiting.
fn window(s: &Scratch, name: &str, port: u16) -> (Session, Desktop) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the app before still listens on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let desktop = Desktop::start();
    let session = Session::start(
        &desktop,
        &[("LOBSTER_STATE_DIR", &s.state)],
        &["--home", s.home.to_str().unwrap(), "app", "--open", name],
    );
    // And its control API listens.
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline + Duration::from_secs(20),
            "the app never listened on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (session, desktop)
}

/// `url` as headless Chromium draws it, 720 pixels wide.
fn page(dir: &Path, name: &str, url: &str) {
    let chromium = clawdis_browser::discovery::find_executable(
        None,
        std::env::var("PATH").ok().as_deref(),
        None,
    )
    .expect("Chromium is installed (scripts/test installs it)");
    let profile = tempfile::tempdir().unwrap();
    let file = profile.path().join("shot.png");
    let out = Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=720,900",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", file.display()))
        .arg(url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let png = std::fs::read(&file).unwrap_or_else(|e| panic!("{name}: {e}: {out:?}"));
    save(dir, name, &png);
}

#[test]
fn the_screenshots_render() {
    clawdis_e2e::desktop::require();
    clawdis_e2e::webdriver::require();
    let s = Scratch::new();
    let dir = out_dir(s.dir.path());
    let secret = clawdis_e2e::clawdis_cli(&s.home, &["webhooks", "secret"]);
    let receiver = Receiver::start(String::from_utf8_lossy(&secret.stdout).trim());
    let port = free_port();
    std::fs::create_dir_all(s.home.join("workflows")).unwrap();
    std::fs::write(
        s.home.join("settings.json"),
        json!({
            "enabled": false,
            "controlUrl": format!("http://127.0.0.1:{port}"),
            "publicBaseUrl": format!("http://localhost:{port}/"),
            "webhooks": [
                { "url": receiver.url("/ok/phone"), "events": ["approval.pending"] },
                { "url": receiver.url("/fail/99/chat"), "events": ["run.completed"] },
            ],
            "webhookRetry": { "firstDelayMs": 50, "maxAttempts": 2 },
        })
        .to_string(),
    )
    .unwrap();
    for (name, text) in [("deploy.lobster", DEPLOY), ("nightly.lobster", NIGHTLY)] {
        std::fs::write(s.home.join("workflows").join(name), text).unwrap();
    }
    std::fs::write(
        s.home.join("workflows/deploy.sh"),
        "#!/bin/sh\necho deployed\n",
    )
    .unwrap();
    std::fs::write(s.work.join("notes.lobster"), NOTES).unwrap();

    let (approvals, desktop) = window(&s, "approvals", port);
    // The app's backend has its store open once the window lists nothing.
    approvals.wait_for(
        "document.querySelector('#pending .empty')",
        json!(null),
        Duration::from_secs(20),
    );
    // The data: a gate an agent's token reached, one `lobster` paused with
    // a prompt that hides characters, a run that finished (its delivery
    // fails), a named token.
    let made = s.clawdis(&["token", "create", "--name", "ci-agent", "--role", "agent"]);
    assert!(made.status.success(), "{made:?}");
    let agent = String::from_utf8(made.stdout).unwrap().trim().to_string();
    let as_agent = Client::with_token(port, &agent);
    let paused = as_agent.ok("POST", "/runs", Some(json!({"workflow": "deploy"})));
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let link = receiver.take(1, Duration::from_secs(20))[0]["body"]["data"]["approvalUrl"]
        .as_str()
        .unwrap()
        .to_string();
    let notes = run_tool(&s.state, &s.work, "notes.lobster");
    assert_eq!(notes["status"], "needs_approval", "{notes}");
    let done = as_agent.ok(
        "POST",
        "/runs",
        Some(json!({"pipeline": "exec --json --shell 'echo [1,2,3]'"})),
    );
    assert_eq!(done["status"], "ok", "{done}");

    approvals.wait_for(
        "document.querySelectorAll('.card.pending').length === 2 && \
         !document.querySelector('.card.pending button.approve[disabled]')",
        json!(null),
        Duration::from_secs(20),
    );
    save(&dir, "approvals", &approvals.picture());
    drop((approvals, desktop));

    let (runs, desktop) = window(&s, "runs", port);
    runs.wait_for(
        "document.querySelectorAll('tr.run').length === 3",
        json!(null),
        Duration::from_secs(20),
    );
    runs.click(&format!(
        "tr.run[data-run=\"{}\"] button",
        paused["runId"].as_str().unwrap()
    ));
    runs.wait_for(
        "document.querySelector('#run li.step')",
        json!(null),
        Duration::from_secs(20),
    );
    save(&dir, "runs", &runs.picture());
    drop((runs, desktop));

    for (name, ready) in [
        ("triggers", "document.querySelector('tr.trigger .when')"),
        ("deliveries", "document.querySelector('tr.delivery.failed')"),
        ("ledger", "document.querySelector('#verify.holds')"),
        ("devices", "document.querySelector('tr.token')"),
        ("settings", "document.querySelector('#controlUrl').value"),
    ] {
        // The window goes before its display (a tuple drops in order).
        let open = window(&s, name, port);
        let w = &open.0;
        w.wait_for(ready, json!(null), Duration::from_secs(20));
        if name == "deliveries" {
            w.click("tr.delivery.failed button");
            w.wait_for(
                "document.querySelector('#detail li.attempt')",
                json!(null),
                Duration::from_secs(20),
            );
        }
        save(&dir, name, &w.picture());
    }

    // The pages a phone opens: the approval link, a pairing link, the
    // inbox (before its passkey sign-in), served by the app, kept open.
    let app = window(&s, "tabs", port);
    app.0.wait_for(
        "document.getElementById('tabs')",
        json!(null),
        Duration::from_secs(20),
    );
    page(&dir, "link", &link);
    let pair = s.clawdis(&["devices", "pair", "--name", "phone"]);
    assert!(pair.status.success(), "{pair:?}");
    page(
        &dir,
        "pairing",
        String::from_utf8(pair.stdout).unwrap().trim(),
    );
    page(&dir, "inbox", &format!("http://localhost:{port}/inbox"));
}
