//! Hand-offs (issue #36, item 1): an agent hands a browser session's page
//! to the person and waits; the person takes over through the live view
//! (a second, real Chromium drives the page the webhook's link opens),
//! their clicks and typing reach the page, and Done gives the page back
//! with its new URL. Meanwhile the agent's actions on it answer 409
//! `handed_off`, and reading it still works.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use chromiumoxide::layout::Point;
use clawdis_e2e::clawdis_cli;
use clawdis_e2e::control::{Client, Server, fixture_server, free_port, start_server_full};
use clawdis_e2e::phone::{Phone, WAIT};
use clawdis_e2e::webhooks::Receiver;
use serde_json::{Value, json};

/// A backend with the browser whose public base URL is its own loopback
/// port (the live view on this machine), sending hand-off events to a
/// receiver.
fn backend(home: &Path) -> (Server, Receiver) {
    let secret = clawdis_cli(home, &["webhooks", "secret"]);
    let receiver = Receiver::start(String::from_utf8_lossy(&secret.stdout).trim());
    let port = free_port();
    let server = start_server_full(
        home,
        json!({
            "controlUrl": format!("http://127.0.0.1:{port}"),
            "publicBaseUrl": format!("http://127.0.0.1:{port}/"),
            "webhooks": [{ "url": receiver.url("/person"), "events": ["handoff.requested", "handoff.ended"] }],
        }),
        &[],
        &[],
    );
    (server, receiver)
}

/// Asks for a hand-off on another thread; its answer comes on the channel.
fn hand_off(server: &Server, session: &str, body: Value) -> mpsc::Receiver<(u16, Value)> {
    let (tx, rx) = mpsc::channel();
    let c = Client::new(server);
    let path = format!("/sessions/{session}/handoff");
    std::thread::spawn(move || {
        let _ = tx.send(c.call("POST", &path, Some(body)));
    });
    rx
}

/// A new session on `url`; its id.
fn open_session(c: &Client, url: &str) -> String {
    let (status, session) = c.call("POST", "/sessions", Some(json!({ "url": url })));
    assert_eq!(status, 201, "{session}");
    session["sessionId"].as_str().unwrap().to_string()
}

/// The session's action `name` with `body`, as the agent calls it.
fn act(c: &Client, session: &str, name: &str, body: Value) -> (u16, Value) {
    c.call("POST", &format!("/sessions/{session}/{name}"), Some(body))
}

/// Waits until the agent reads `text` in the page's `#out` (reading works
/// while the person has the page); `what` names what never arrived.
async fn until_out(c: &Client, session: &str, text: &str, what: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (_, out) = act(c, session, "extract_text", json!({ "selector": "#out" }));
        if out["data"]["text"] == text {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what} never arrived: {out}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Where the middle of the element `css` is, in the page's CSS pixels.
fn middle(c: &Client, session: &str, css: &str) -> (f64, f64) {
    let script = format!(
        "(() => {{ const r = document.querySelector({css:?}).getBoundingClientRect(); \
         return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
    );
    let (status, r) = act(c, session, "evaluate", json!({ "script": script }));
    assert_eq!(status, 200, "{r}");
    let at = &r["data"]["result"];
    (at[0].as_f64().unwrap(), at[1].as_f64().unwrap())
}

/// Clicks the live view's picture where the page's point `at` shows: the
/// picture is the page's viewport (a frame as large as the viewport)
/// scaled to the picture's box.
async fn click_on_page(person: &Phone, at: (f64, f64)) {
    // The point is scrolled into the person's window first.
    let script = format!(
        "(() => {{ const s = document.getElementById('screen'); let r = s.getBoundingClientRect(); \
         const y = r.top + {} * r.height / s.height; \
         if (y < 0 || y > innerHeight - 10) {{ scrollBy(0, y - innerHeight / 2); r = s.getBoundingClientRect(); }} \
         return [r.left, r.top, r.width, r.height, s.width, s.height]; }})()",
        at.1
    );
    let seen: Vec<f64> = person
        .page
        .evaluate(script)
        .await
        .unwrap()
        .into_value()
        .unwrap();
    let x = seen[0] + at.0 * seen[2] / seen[4];
    let y = seen[1] + at.1 * seen[3] / seen[5];
    person
        .page
        .click(Point { x, y })
        .await
        .unwrap_or_else(|e| panic!("clicking {x}, {y} of {seen:?} for {at:?}: {e}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_takes_over_through_the_live_view_and_hands_back() {
    let pages = fixture_server();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (server, receiver) = backend(&home);
    let c = Client::new(&server);
    let form = format!("http://127.0.0.1:{pages}/form.html");
    let id = open_session(&c, &form);
    // The answer's line is laid out before the points are read (the
    // person's Submit fills it; nothing then moves).
    let (status, _) = act(
        &c,
        &id,
        "evaluate",
        json!({ "script": "document.getElementById('out').textContent = '…'" }),
    );
    assert_eq!(status, 200);
    let field = middle(&c, &id, "#name");
    let submit = middle(&c, &id, "#submit");
    let link = middle(&c, &id, "a[href='/long.html']");

    let answer = hand_off(
        &server,
        &id,
        json!({ "reason": "log in with your second factor" }),
    );
    let sent = receiver.take(1, WAIT);
    assert_eq!(
        sent[0]["body"]["type"], "handoff.requested",
        "{:#}",
        sent[0]
    );
    let data = &sent[0]["body"]["data"];
    assert_eq!(
        data["prompt"], "The agent needs you: log in with your second factor",
        "{data:#}"
    );
    assert_eq!(data["context"]["browser"]["handoff"], true, "{data:#}");
    assert_eq!(data["context"]["browser"]["url"], form.as_str());
    // The page's picture stays on this machine.
    assert_eq!(data["context"]["browser"]["screenshot"], "");
    let live = data["handoffUrl"]
        .as_str()
        .expect("a live view link")
        .to_string();
    assert!(live.contains("/handoff/"), "{live}");

    // The agent's actions on the page are refused while the person has it;
    // reading it works.
    let (status, refused) = act(&c, &id, "click", json!({ "selector": "#submit" }));
    assert_eq!(
        (status, refused["code"].as_str()),
        (409, Some("handed_off")),
        "{refused}"
    );
    let target = c.ok("GET", &format!("/sessions/{id}"), None)["targetId"]
        .as_str()
        .unwrap()
        .to_string();
    for (method, path, body) in [
        (
            "POST",
            "/act",
            json!({ "kind": "click", "selector": "#submit", "targetId": target }),
        ),
        (
            "POST",
            "/navigate",
            json!({ "url": "about:blank", "targetId": target }),
        ),
        (
            "POST",
            "/cookies/set",
            json!({ "cookie": { "name": "a", "value": "b" }, "targetId": target }),
        ),
    ] {
        let (status, body) = c.call(method, path, Some(body));
        assert_eq!(
            (status, body["code"].as_str()),
            (409, Some("handed_off")),
            "{path}: {body}"
        );
    }
    let (status, _) = c.call("DELETE", &format!("/sessions/{id}"), None);
    assert_eq!(
        status, 409,
        "a handed-off session is not deleted under the person"
    );
    let (status, read) = act(&c, &id, "extract_text", json!({ "selector": "h1" }));
    assert_eq!(
        (status, read["data"]["text"].as_str()),
        (200, Some("Sign up")),
        "{read}"
    );
    // Asking again while the person has it is a conflict too.
    let (status, again) = c.call(
        "POST",
        &format!("/sessions/{id}/handoff"),
        Some(json!({ "reason": "again" })),
    );
    assert_eq!(
        (status, again["code"].as_str()),
        (409, Some("handed_off")),
        "{again}"
    );

    // The person opens the link in their own browser: the page, live.
    let person = Phone::start().await;
    person.page.goto(live.as_str()).await.unwrap();
    person
        .until("Number(document.getElementById('screen').dataset.frames || 0) > 0")
        .await;
    // A reload (the view's last viewer leaving and a new one coming at
    // once) still gets frames.
    for _ in 0..3 {
        person.page.reload().await.unwrap();
        person
            .until("Number(document.getElementById('screen').dataset.frames || 0) > 0")
            .await;
    }
    // Their click and typing reach the page.
    click_on_page(&person, field).await;
    person
        .page
        .find_element("#screen")
        .await
        .unwrap()
        .type_str("Ada")
        .await
        .unwrap();
    click_on_page(&person, submit).await;
    until_out(&c, &id, "Hello Ada", "the person's typing").await;
    // They follow a link, then hand back.
    click_on_page(&person, link).await;
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let now = c.ok("GET", &format!("/sessions/{id}"), None);
        if now["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/long.html"))
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the person's click never followed the link: {now}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The view follows the page.
    person
        .until("document.getElementById('where').textContent.includes('/long.html')")
        .await;
    let said = person.click("#done", "Handed back").await;
    assert!(said.contains("the agent continues"), "{said}");

    let (status, ended) = answer.recv_timeout(WAIT).unwrap();
    assert_eq!(status, 200, "{ended}");
    assert_eq!(ended["done"], true, "{ended}");
    assert!(
        ended["url"].as_str().unwrap().ends_with("/long.html"),
        "{ended}"
    );
    let sent = receiver.take(1, WAIT);
    assert_eq!(sent[0]["body"]["type"], "handoff.ended", "{:#}", sent[0]);

    // The page is the agent's again.
    let (status, back) = act(&c, &id, "navigate", json!({ "url": form }));
    assert_eq!((status, back["ok"].as_bool()), (200, Some(true)), "{back}");
    // The log holds the hand-off, its outcome and duration, never what the
    // person typed.
    let trace = c.ok("GET", &format!("/sessions/{id}/trace"), None);
    let handoff = trace["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "handoff")
        .unwrap_or_else(|| panic!("no handoff in {trace:#}"))
        .clone();
    assert_eq!(handoff["ok"], true, "{handoff}");
    assert!(handoff["durationMs"].as_u64().unwrap() > 0, "{handoff}");
    assert!(!handoff.to_string().contains("Ada"), "{handoff}");
    // Nothing else of the person's is logged: every other entry is one of
    // the agent's own calls.
    for entry in trace["actions"].as_array().unwrap() {
        let name = entry["action"].as_str().unwrap();
        assert!(
            ["navigate", "evaluate", "click", "extract_text", "handoff"].contains(&name),
            "{entry}"
        );
    }
    // The link is spent: it ends nothing twice.
    let again = person
        .page
        .goto(live.as_str())
        .await
        .unwrap()
        .content()
        .await
        .unwrap();
    assert!(again.contains("ended"), "{again}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_person_declines_or_nobody_comes() {
    let pages = fixture_server();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (server, receiver) = backend(&home);
    let c = Client::new(&server);
    let form = format!("http://127.0.0.1:{pages}/form.html");
    let id = open_session(&c, &form);

    // Declined from the live view.
    let answer = hand_off(&server, &id, json!({ "reason": "solve the CAPTCHA" }));
    let sent = receiver.take(1, WAIT);
    let live = sent[0]["body"]["data"]["handoffUrl"]
        .as_str()
        .unwrap()
        .to_string();
    // The agent cannot say Done for the person: its credentials do not
    // approve the hand-off's gate, and nothing it reads holds the link.
    let gate = sent[0]["body"]["data"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, refused) = c.call(
        "POST",
        &format!("/approvals/{gate}/approve"),
        Some(json!({})),
    );
    assert_eq!(status, 403, "{refused}");
    let token = &live[live.rfind('/').unwrap() + 1..];
    for path in [
        "/approvals?status=pending".to_string(),
        "/webhooks/deliveries".to_string(),
        format!("/approvals/{gate}"),
    ] {
        let seen = c.ok("GET", &path, None);
        assert!(
            !seen.to_string().contains(token),
            "{path} holds the live view's link"
        );
    }
    let person = Phone::start().await;
    person.page.goto(live.as_str()).await.unwrap();
    person
        .until("Number(document.getElementById('screen').dataset.frames || 0) > 0")
        .await;
    let said = person.click("#decline", "Declined").await;
    assert!(said.contains("Declined"), "{said}");
    let (status, ended) = answer.recv_timeout(WAIT).unwrap();
    assert_eq!(
        (status, ended),
        (200, json!({ "done": false, "reason": "declined" }))
    );
    receiver.take(1, WAIT);

    // Nobody comes: the wait runs out, and the page is the agent's again.
    let answer = hand_off(&server, &id, json!({ "reason": "pay", "timeout_ms": 1500 }));
    let (status, ended) = answer.recv_timeout(WAIT).unwrap();
    assert_eq!(
        (status, ended),
        (200, json!({ "done": false, "reason": "timeout" }))
    );
    let (status, back) = act(&c, &id, "click", json!({ "selector": "#submit" }));
    assert_eq!((status, back["ok"].as_bool()), (200, Some(true)), "{back}");

    // Bad requests are told so.
    for (body, needle) in [
        (json!({}), "reason"),
        (json!({ "reason": "x".repeat(241) }), "reason"),
        (json!({ "reason": "x", "timeout_ms": 5 }), "timeout_ms"),
    ] {
        let (status, said) = c.call(
            "POST",
            &format!("/sessions/{id}/handoff"),
            Some(body.clone()),
        );
        assert_eq!(status, 400, "{body}: {said}");
        assert!(said["error"].as_str().unwrap().contains(needle), "{said}");
    }
    let (status, _) = c.call(
        "POST",
        "/sessions/s-nosuchsession/handoff",
        Some(json!({ "reason": "x" })),
    );
    assert_eq!(status, 404);
    let trace = c.ok("GET", &format!("/sessions/{id}/trace"), None);
    let outcomes: Vec<&str> = trace["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "handoff")
        .map(|a| a["code"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(outcomes, ["declined", "timeout"], "{trace:#}");
}

/// Waits until the phone's page, which may be reloading, has `css`.
async fn until_shown(phone: &Phone, css: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    let check = format!("!!document.querySelector({css:?})");
    loop {
        let shown = phone
            .page
            .evaluate(check.as_str())
            .await
            .ok()
            .and_then(|v| v.into_value::<bool>().ok());
        if shown == Some(true) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{css} never shown");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A hand-off hands over a logged-in browser: from afar (the host of
/// `publicBaseUrl`), its link by itself shows nothing of the page, opens
/// no live view and ends nothing; a paired device's passkey does.
#[tokio::test(flavor = "multi_thread")]
async fn from_afar_the_live_view_needs_a_paired_devices_passkey() {
    let pages = fixture_server();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let secret = clawdis_cli(&home, &["webhooks", "secret"]);
    let receiver = Receiver::start(String::from_utf8_lossy(&secret.stdout).trim());
    let port = free_port();
    let public = format!("http://clawdis.test:{port}");
    let server = start_server_full(
        &home,
        json!({
            "controlUrl": format!("http://127.0.0.1:{port}"),
            "publicBaseUrl": format!("{public}/"),
            "webhooks": [{ "url": receiver.url("/person"), "events": ["handoff.requested"] }],
        }),
        &[],
        &[],
    );
    let c = Client::new(&server);
    // The phone resolves the public host to this machine, and treats its
    // origin as secure, as HTTPS would be.
    let flags = [
        "--host-resolver-rules=MAP clawdis.test 127.0.0.1".to_string(),
        format!("--unsafely-treat-insecure-origin-as-secure={public}"),
    ];
    let out = clawdis_cli(&home, &["devices", "pair", "--name", "phone"]);
    let pairing = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let phone = Phone::start_with(&flags).await;
    let said = phone.press(&pairing, "button[data-passkey=pair]").await;
    assert!(said.contains("Paired as \"phone\""), "{said}");

    let id = open_session(&c, &format!("http://127.0.0.1:{pages}/form.html"));
    let answer = hand_off(&server, &id, json!({ "reason": "approve the payment" }));
    let sent = receiver.take(1, WAIT);
    let live = sent[0]["body"]["data"]["handoffUrl"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(live.starts_with(&format!("{public}/handoff/")), "{live}");

    // Someone else holding the link: a browser with no paired passkey.
    let stranger = Phone::start_with(&flags).await;
    stranger.page.goto(live.as_str()).await.unwrap();
    let seen = stranger.page.content().await.unwrap();
    assert!(seen.contains("data-passkey=\"signin\""), "{seen}");
    assert!(!seen.contains("<canvas"), "{seen}");
    let path = live.strip_prefix(&public).unwrap();
    let host = format!("clawdis.test:{port}");
    for (method, route, body) in [
        ("GET", format!("{path}/live"), ""),
        ("POST", format!("{path}/end"), r#"{"done":true}"#),
    ] {
        let (status, said) = clawdis_e2e::control::request(
            port,
            method,
            &route,
            &[
                ("Host", host.as_str()),
                ("Content-Type", "application/json"),
                ("Origin", public.as_str()),
            ],
            body,
        );
        assert_eq!(status, 401, "{method} {route}: {said}");
    }
    // The stranger's sign-in finds no passkey of a paired device.
    stranger
        .page
        .find_element("button[data-passkey=signin]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !stranger.page.content().await.unwrap().contains("<canvas"),
        "a stranger saw the page"
    );

    // The paired phone signs in with its passkey and sees the page live.
    phone.page.goto(live.as_str()).await.unwrap();
    phone
        .page
        .find_element("button[data-passkey=signin]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until_shown(&phone, "canvas#screen[data-frames]").await;
    let said = phone.click("#done", "Handed back").await;
    assert!(said.contains("the agent continues"), "{said}");
    let (status, ended) = answer.recv_timeout(WAIT).unwrap();
    assert_eq!(
        (status, ended["done"].as_bool()),
        (200, Some(true)),
        "{ended}"
    );
    let decided = c.ok("GET", "/approvals?status=decided", None);
    let by: Vec<&str> = decided["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["decidedBy"].as_str())
        .collect();
    assert_eq!(by, ["device:phone"], "{decided:#}");
}

/// On a phone the live view takes taps (a tap clicks) and the phone's
/// keyboard (a field whose text goes to the page's focused element).
#[tokio::test(flavor = "multi_thread")]
async fn a_phone_taps_and_types_through_the_live_view() {
    use chromiumoxide::cdp::browser_protocol::emulation::SetTouchEmulationEnabledParams;
    let pages = fixture_server();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (server, receiver) = backend(&home);
    let c = Client::new(&server);
    let id = open_session(&c, &format!("http://127.0.0.1:{pages}/form.html"));
    let (status, _) = act(
        &c,
        &id,
        "evaluate",
        json!({ "script": "document.getElementById('out').textContent = '…'" }),
    );
    assert_eq!(status, 200);
    let field = middle(&c, &id, "#name");
    let submit = middle(&c, &id, "#submit");
    let answer = hand_off(&server, &id, json!({ "reason": "type your name" }));
    let live = receiver.take(1, WAIT)[0]["body"]["data"]["handoffUrl"]
        .as_str()
        .unwrap()
        .to_string();

    let phone = Phone::start().await;
    phone
        .page
        .execute(
            SetTouchEmulationEnabledParams::builder()
                .enabled(true)
                .max_touch_points(1)
                .build()
                .unwrap(),
        )
        .await
        .unwrap();
    phone.page.goto(live.as_str()).await.unwrap();
    phone
        .until("Number(document.getElementById('screen').dataset.frames || 0) > 0")
        .await;
    let tap = |at: (f64, f64)| {
        let page = phone.page.clone();
        async move {
            let seen: Vec<f64> = page
                .evaluate(format!(
                    "(() => {{ const s = document.getElementById('screen'); s.scrollIntoView(); const r = s.getBoundingClientRect(); \
                     return [r.left + {} * r.width / s.width, r.top + {} * r.height / s.height]; }})()",
                    at.0, at.1
                ))
                .await
                .unwrap()
                .into_value()
                .unwrap();
            // A finger down, then up (CDP's touch events, as a phone's).
            for (kind, points) in [
                ("touchStart", json!([{ "x": seen[0], "y": seen[1] }])),
                ("touchEnd", json!([])),
            ] {
                clawdis_browser::cdp::page_call(
                    &page,
                    "Input.dispatchTouchEvent",
                    json!({ "type": kind, "touchPoints": points }),
                )
                .await
                .unwrap_or_else(|e| panic!("{kind} at {seen:?}: {e}"));
            }
        }
    };
    tap(field).await;
    let keys = phone.page.find_element("#keys").await.unwrap();
    keys.click().await.unwrap();
    keys.type_str("Bo").await.unwrap();
    tap(submit).await;
    until_out(&c, &id, "Hello Bo", "the phone's taps and typing").await;
    let said = phone.click("#done", "Handed back").await;
    assert!(said.contains("the agent continues"), "{said}");
    assert_eq!(answer.recv_timeout(WAIT).unwrap().1["done"], true);
}

/// A hand-off and a browser approval whose backend is killed with their
/// callers have nobody waiting for them: their gates expire (cancelled) by
/// themselves a minute after the longest wait a caller may ask, whichever
/// backend of the home runs then (the expiry itself is
/// tests/approval_expiry.rs's). They were pending for good before (issue
/// #36's closing note).
#[test]
fn requests_orphaned_by_a_killed_backend_expire_within_the_hour() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (server, _receiver) = backend(&home);
    let c = Client::new(&server);
    let first = open_session(&c, "about:blank");
    let second = open_session(&c, "about:blank");
    let _handed = hand_off(&server, &first, json!({ "reason": "log in for me" }));
    let asker = Client::new(&server);
    let path = format!("/sessions/{second}/approval");
    std::thread::spawn(move || asker.call("POST", &path, Some(json!({ "message": "buy it?" }))));
    let deadline = std::time::Instant::now() + WAIT;
    while c.ok("GET", "/approvals?status=pending", None)["approvals"]
        .as_array()
        .unwrap()
        .len()
        < 2
    {
        assert!(std::time::Instant::now() < deadline, "never both pending");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Killed: no caller waits any more, and nothing cancelled the gates.
    clawdis_e2e::signal(server.child.id() as i32, libc::SIGKILL);
    drop(server);

    let (server, _receiver) = backend(&home);
    let pending = Client::new(&server).ok("GET", "/approvals?status=pending", None);
    let pending = pending["approvals"].as_array().unwrap();
    assert_eq!(pending.len(), 2, "{pending:?}");
    for gate in pending {
        let policy = &gate["context"]["policy"];
        assert_eq!(policy["onExpiry"], "cancel", "{gate}");
        let at = |v: &Value| chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap();
        let lives = at(&policy["expiresAt"]) - at(&gate["createdAt"]);
        assert!(
            lives > chrono::Duration::minutes(60) && lives <= chrono::Duration::minutes(62),
            "{gate}"
        );
    }
    // The killed backend's Chromium outlived it: adopted here, it is
    // stopped with this backend instead of outliving the test.
    let c = Client::new(&server);
    c.ok("POST", "/start", None);
    let pid = c.ok("GET", "/", None)["pid"]
        .as_i64()
        .expect("the adopted browser's pid") as i32;
    drop(server);
    let deadline = std::time::Instant::now() + WAIT;
    while clawdis_e2e::alive(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the adopted browser is stopped"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
