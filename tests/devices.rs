//! Paired devices (issue #34, item 2): a person's phone registers a passkey
//! through a one-time pairing link and approves gates that need a person
//! with it. The phone here is real Chromium with its WebAuthn virtual
//! authenticator (user verification on), driven over CDP; the server
//! verifies with webauthn-rs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clawdis_e2e::control::{Client, Server, free_port, start_server_full};
use clawdis_e2e::phone::{Phone, WAIT};
use clawdis_e2e::webhooks::Receiver;
use clawdis_e2e::{clawdis_cli, run_tool};
use serde_json::{Value, json};

/// A backend whose public base URL is its own loopback port (the relying
/// party `localhost`), sending `approval.pending` to a receiver.
fn backend(home: &Path) -> (Server, Receiver) {
    let port = free_port();
    backend_at(home, port, &format!("http://localhost:{port}/"))
}

/// A backend on loopback port `port` whose public base URL is `public`.
fn backend_at(home: &Path, port: u16, public: &str) -> (Server, Receiver) {
    let secret = clawdis_cli(home, &["webhooks", "secret"]);
    let receiver = Receiver::start(String::from_utf8_lossy(&secret.stdout).trim());
    let server = start_server_full(
        home,
        json!({
            "controlUrl": format!("http://127.0.0.1:{port}"),
            "publicBaseUrl": public,
            "webhooks": [{ "url": receiver.url("/phone"), "events": ["approval.pending"] }],
        }),
        &["--no-browser"],
        &[],
    );
    (server, receiver)
}

/// Pauses `text` as workflow `name` in `work`; its approval id and the link
/// its webhook carried.
fn pause(
    home: &Path,
    work: &Path,
    receiver: &Receiver,
    name: &str,
    text: &str,
) -> (String, String) {
    std::fs::write(work.join(name), text).unwrap();
    let paused = run_tool(home, work, name);
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let sent = receiver.take(1, WAIT);
    let link = sent[0]["body"]["data"]["approvalUrl"].as_str().unwrap();
    (
        paused["requiresApproval"]["approvalId"]
            .as_str()
            .unwrap()
            .to_string(),
        link.to_string(),
    )
}

fn cli_ok(home: &Path, args: &[&str]) -> String {
    let out = clawdis_cli(home, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const PUBLISH: &str = "name: publish\nsteps:\n  - id: gate\n    approval:\n      prompt: Publish?\n      \
                       approvers: human\n  - id: go\n    run: echo published >> published.txt\n";

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    (dir, home, work)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paired_device_approves_a_human_gate_with_its_passkey() {
    let (_dir, home, work) = dirs();
    let (server, receiver) = backend(&home);
    let owner = Client::new(&server);

    // An agent's credential never pairs a device, not even the first
    // (found by the red team: an agent token paired its own software
    // passkey while none was paired).
    let agent = clawdis_e2e::create_token(&home, "agent", "agent");
    let (status, body) = Client::with_token(server.port, &agent).call(
        "POST",
        "/devices/pairings",
        Some(json!({"name": "mine"})),
    );
    assert_eq!(status, 403, "{body}");

    // With none paired, the list says so (issue 44: it printed nothing).
    let none = clawdis_cli(&home, &["devices", "list"]);
    assert!(none.status.success() && none.stdout.is_empty(), "{none:?}");
    let said = String::from_utf8_lossy(&none.stderr);
    assert!(
        said.contains("No device is paired") && said.contains("clawdis devices pair"),
        "{said}"
    );

    // Trust on first use: the command line pairs the first device. A
    // link on localhost says it opens only on this machine, and how to
    // reach a phone (issue 44).
    let out = clawdis_cli(&home, &["devices", "pair", "--name", "phone"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("opens only on this machine") && said.contains("publicBaseUrl"),
        "{said}"
    );
    let url = String::from_utf8(out.stdout).unwrap();
    let url = url.trim();
    assert!(
        url.starts_with(&format!("http://localhost:{}/pair/", server.port)),
        "{url}"
    );
    let phone = Phone::start().await;
    let said = phone.press(url, "button[data-passkey=pair]").await;
    assert!(said.contains("Paired as \"phone\""), "{said}");
    let listed = cli_ok(&home, &["devices", "list"]);
    assert!(listed.starts_with("phone\tlocalhost\t"), "{listed}");
    assert!(listed.trim_end().ends_with("live"), "{listed}");
    // One use.
    phone.page.goto(url).await.unwrap();
    let again = phone.page.content().await.unwrap();
    assert!(again.contains("was used, has expired"), "{again}");
    // Then locked: a pairing asked from a shell could be an agent's. It
    // waits for the person to confirm it in the app (which shows the
    // asking process); unanswered, it prints no link.
    let second = clawdis_cli(
        &home,
        &["devices", "pair", "--name", "laptop", "--wait", "2s"],
    );
    assert_eq!(second.status.code(), Some(1));
    assert!(
        second.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(
        said.contains("Confirm or refuse it in the Clawdis app")
            && said.contains("nobody answered"),
        "{said}"
    );
    // Over TCP the person could not see who asks: refused.
    let (status, body) = owner.call("POST", "/devices/pairings", Some(json!({"name": "laptop"})));
    assert_eq!(status, 400, "{body}");

    // The link page of a human gate approves with the passkey.
    let (id, link) = pause(&home, &work, &receiver, "publish.lobster", PUBLISH);
    let said = phone.press(&link, "button[data-passkey=approve]").await;
    assert!(
        said.contains("Approved with the passkey of \"phone\""),
        "{said}"
    );
    let gate = owner.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    assert_eq!(
        (gate["decidedBy"].as_str(), gate["decidedVia"].as_str()),
        (Some("device:phone"), Some("device")),
        "{gate:#}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("published.txt")).unwrap(),
        "published\n"
    );
    let ledger = owner.ok("GET", "/audit?limit=1", None);
    let decision = &ledger["entries"][0];
    assert_eq!(
        (decision["kind"].as_str(), decision["presence"].as_str()),
        (Some("gate.approve"), Some("passkey")),
        "{ledger}"
    );
    assert_eq!(decision["digest"], gate["digest"]);
    // The gate's decisions say the passkey too.
    assert_eq!(gate["decisions"][0]["presence"], "passkey", "{gate:#}");
    // A used link starts no other ceremony.
    let path = link.split_once(&format!(":{}", server.port)).unwrap().1;
    let (status, said) = clawdis_e2e::control::request(
        server.port,
        "POST",
        &format!("{path}/challenge"),
        &[("Host", "localhost"), ("Content-Type", "application/json")],
        &json!({"decision": "approve", "digest": gate["digest"]}).to_string(),
    );
    assert_eq!(status, 410, "{said}");

    // The inbox: signed in with the passkey, it lists what waits; each
    // approval there takes an assertion of its own.
    let inbox = format!("http://localhost:{}/inbox", server.port);
    let (status, _) = clawdis_e2e::control::request(
        server.port,
        "GET",
        "/inbox/approvals",
        &[("Host", "localhost")],
        "",
    );
    assert_eq!(status, 401, "not signed in");
    let again = PUBLISH.replace("published.txt", "again.txt").replace(
        "Publish?",
        "\"Publish \u{202E}txt.exe\u{202C} to p\u{0430}ypal?\"",
    );
    let (id, _) = pause(&home, &work, &receiver, "again.lobster", &again);
    let said = phone.press(&inbox, "button[data-passkey=signin]").await;
    assert!(said.contains("Signed in as \"phone\""), "{said}");
    // What it shows is legible: the hidden characters escaped, a warning
    // above (issue #35).
    let card: String = phone
        .page
        .evaluate(format!(
            "document.querySelector('.card[data-id=\"{id}\"]').textContent"
        ))
        .await
        .unwrap()
        .into_value()
        .unwrap();
    assert!(
        card.contains("⚠ This text holds 2 hidden")
            && card.contains("Publish ⟨U+202E⟩txt.exe⟨U+202C⟩ to p\u{0430}ypal?")
            && card.contains("reads as \"paypal\"")
            && !card.contains('\u{202E}'),
        "{card}"
    );
    // The inbox follows what waits: a gate paused now shows up, and one
    // decided elsewhere leaves within a second (issue #35).
    let other = PUBLISH.replace("published.txt", "other.txt");
    let (other, _) = pause(&home, &work, &receiver, "other.lobster", &other);
    let card = format!("document.querySelector('.card[data-id=\"{other}\"]')");
    phone.until(&format!("!!{card}")).await;
    owner.ok(
        "POST",
        &format!("/approvals/{other}/deny"),
        Some(json!({"reason": "not this one"})),
    );
    let decided = Instant::now();
    phone.until(&format!("!{card}")).await;
    assert!(
        decided.elapsed() < Duration::from_secs(1),
        "the decided gate left the inbox after {:?}",
        decided.elapsed()
    );
    let said = phone
        .click(
            &format!("button[data-passkey=inbox-approve][data-id=\"{id}\"]"),
            "Approved",
        )
        .await;
    assert!(
        said.contains(&format!("Approved {id} with the passkey of \"phone\"")),
        "{said}"
    );
    let gate = owner.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    assert_eq!(
        (gate["decidedBy"].as_str(), gate["decidedVia"].as_str()),
        (Some("device:phone"), Some("device")),
        "{gate:#}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("again.txt")).unwrap(),
        "published\n"
    );

    // A gate that asks for a verified person takes the passkey too.
    let verified = PUBLISH.replace("approvers: human", "presence: verified");
    let (id, link) = pause(&home, &work, &receiver, "verified.lobster", &verified);
    let said = phone.press(&link, "button[data-passkey=approve]").await;
    assert!(said.contains("Approved"), "{said}");
    let gate = owner.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    assert_eq!(gate["decidedBy"], "device:phone", "{gate:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_digest_or_a_revoked_device_approves_nothing() {
    let (_dir, home, work) = dirs();
    let (server, receiver) = backend(&home);
    let owner = Client::new(&server);
    let url = cli_ok(&home, &["devices", "pair", "--name", "phone"]);
    let phone = Phone::start().await;
    let said = phone.press(url.trim(), "button[data-passkey=pair]").await;
    assert!(said.contains("Paired"), "{said}");

    // The person opens the link; an agent with a shell then rewrites the
    // step after the gate in the SQLite file. The page's approval names
    // what it showed, and is refused.
    let (id, link) = pause(&home, &work, &receiver, "publish.lobster", PUBLISH);
    phone.page.goto(&link).await.unwrap();
    let edit = Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); \
             c.execute(\"UPDATE runs SET state_json=replace(state_json,'echo published','echo pwned') \
             WHERE status='pending'\"); c.commit()",
            home.join("clawdis.db").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(edit.status.success(), "{edit:?}");
    phone
        .page
        .find_element("button[data-passkey=approve]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let said: String = tokio::time::timeout(
        WAIT,
        phone.page.evaluate(
            "new Promise((done) => { const said = document.getElementById('said'); \
             const check = () => said.textContent && done(said.textContent); \
             new MutationObserver(check).observe(said, {childList: true, subtree: true, characterData: true}); \
             check(); })",
        ),
    )
    .await
    .unwrap()
    .unwrap()
    .into_value()
    .unwrap();
    assert!(said.contains("changed since the page showed it"), "{said}");
    let gate = |id: &str| owner.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    assert_eq!(gate(&id)["status"], "pending");

    // Revoked, the device approves nothing: its passkey is no one's now.
    cli_ok(&home, &["devices", "revoke", "phone"]);
    let listed = cli_ok(&home, &["devices", "list"]);
    assert!(listed.contains("\trevoked "), "{listed}");
    let said = phone.press(&link, "button[data-passkey=approve]").await;
    assert!(said.contains("no device is paired"), "{said}");
    assert_eq!(gate(&id)["status"], "pending");
    assert!(!work.join("published.txt").exists());
    // And the ledger shows the pairing and the revocation.
    let kinds: Vec<Value> = owner.ok("GET", "/audit", None)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"].as_str().unwrap().starts_with("device."))
        .map(|e| json!([e["kind"], e["subject"]]))
        .collect();
    assert_eq!(
        kinds,
        [
            json!(["device.revoked", "device:phone"]),
            json!(["device.paired", "device:phone"])
        ]
    );
}

/// The app tells the person of every device paired, however it was paired
/// (here from the command line, while none was): a pairing they did not
/// make is seen, in the real notification daemon (dunst).
#[tokio::test(flavor = "multi_thread")]
async fn the_app_tells_the_person_of_a_device_paired() {
    clawdis_e2e::desktop::require();
    let s = clawdis_e2e::Scratch::new();
    let desktop = clawdis_e2e::desktop::Desktop::start();
    let dunst = clawdis_e2e::desktop::Dunst::start(&desktop);
    let app =
        clawdis_e2e::desktop::App::start(&desktop, &s.home, &s.state, json!({"enabled": false}));
    let url = cli_ok(&s.home, &["devices", "pair", "--name", "phone"]);
    assert!(
        url.starts_with(&format!("http://localhost:{}/pair/", app.port)),
        "{url}"
    );
    let phone = Phone::start().await;
    let said = phone.press(url.trim(), "button[data-passkey=pair]").await;
    assert!(said.contains("Paired"), "{said}");
    dunst.wait_displayed(1, WAIT);
    let menu = dunst.pick("#Open Approvals (Clawdis: a device was paired)");
    assert!(
        menu.iter()
            .any(|l| l.starts_with("#Open Approvals (Clawdis: a device was paired)")),
        "menu: {menu:?}\n{}",
        app.log()
    );
}

/// Starts `clawdis <args>` in `home`, which asks the person over the local
/// socket; the process and the request id it printed.
fn asking(home: &Path, args: &[&str]) -> (Child, String) {
    use std::io::BufRead;
    let mut child = Command::new(clawdis_e2e::bin("clawdis"))
        .arg("--home")
        .arg(home)
        .args(args)
        .env("CLAWDIS_KEYCHAIN", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut told = String::new();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    stderr.read_line(&mut told).unwrap();
    let id = told
        .split_once("(request ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(id, _)| id.to_string())
        .unwrap_or_else(|| panic!("{args:?} printed no request id: {told}"));
    // The rest of what it says, for when it ends.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, id)
}

/// Issue #34, item 2: once a device is paired, what a shell asks of the
/// person (a new pairing, an approver token) waits for them "in the app or
/// on a paired device". The paired phone's inbox shows each request with
/// the process that asked; confirming takes its passkey, refusing its
/// signed-in session. Nothing else answers a request: not the owner's
/// token, not a caller without the inbox's session.
#[tokio::test(flavor = "multi_thread")]
async fn a_paired_device_confirms_or_refuses_what_a_shell_asks() {
    let (_dir, home, _work) = dirs();
    let (server, _receiver) = backend(&home);
    let owner = Client::new(&server);
    let url = cli_ok(&home, &["devices", "pair", "--name", "phone"]);
    let phone = Phone::start().await;
    let said = phone.press(url.trim(), "button[data-passkey=pair]").await;
    assert!(said.contains("Paired"), "{said}");

    let (pairing, pairing_id) = asking(
        &home,
        &["devices", "pair", "--name", "laptop", "--wait", "60s"],
    );
    let (token, token_id) = asking(
        &home,
        &[
            "token", "create", "--name", "deputy", "--role", "approver", "--wait", "60s",
        ],
    );

    // No credential of the control API answers a request, and the inbox's
    // routes want its session.
    for path in [
        format!("/inbox/requests/{token_id}/refuse"),
        format!("/inbox/requests/{token_id}/challenge"),
        format!("/inbox/requests/{token_id}/passkey"),
    ] {
        let (status, body) = owner.call("POST", &path, Some(json!({})));
        assert_eq!(status, 401, "{path}: {body}");
    }
    let (status, _) = owner.call("GET", "/inbox/requests", None);
    assert_eq!(status, 401);

    let inbox = format!("http://localhost:{}/inbox", server.port);
    let said = phone.press(&inbox, "button[data-passkey=signin]").await;
    assert!(said.contains("Signed in as \"phone\""), "{said}");
    // The person sees which process asks.
    let shown: String = phone
        .page
        .evaluate(format!(
            "document.querySelector('[data-request=\"{pairing_id}\"]').textContent"
        ))
        .await
        .unwrap()
        .into_value()
        .unwrap();
    assert!(
        shown.contains("pair a device named \"laptop\"")
            && shown.contains(&format!("pid {} · ", pairing.id()))
            && shown.contains("devices pair --name laptop"),
        "{shown}"
    );

    // Confirmed with the passkey: the asking command prints the link.
    let said = phone
        .click(
            &format!("button[data-passkey=request-confirm][data-id=\"{pairing_id}\"]"),
            "Confirmed",
        )
        .await;
    assert!(
        said.contains(&format!(
            "Confirmed request {pairing_id} with the passkey of \"phone\""
        )),
        "{said}"
    );
    let paired = pairing.wait_with_output().unwrap();
    assert!(paired.status.success(), "{paired:?}");
    let link = String::from_utf8(paired.stdout).unwrap();
    assert!(
        link.trim()
            .starts_with(&format!("http://localhost:{}/pair/", server.port)),
        "{link}"
    );

    // Refused from the inbox: the asking command gets no token.
    let said = phone
        .click(
            &format!("button[data-passkey=request-refuse][data-id=\"{token_id}\"]"),
            "Refused",
        )
        .await;
    assert!(
        said.contains(&format!("Refused request {token_id}")),
        "{said}"
    );
    let refused = token.wait_with_output().unwrap();
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(refused.stdout.is_empty());
    let tokens = cli_ok(&home, &["token", "list"]);
    assert!(!tokens.contains("deputy"), "{tokens}");

    // The ledger names the device and its passkey for both answers.
    let entries = owner.ok("GET", "/audit", None)["entries"].clone();
    let answered: Vec<Value> = entries
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| ["pairing.confirmed", "token.refused"].contains(&e["kind"].as_str().unwrap()))
        .map(|e| json!([e["kind"], e["subject"], e["by"], e["via"], e["presence"]]))
        .collect();
    assert_eq!(
        answered,
        [
            json!([
                "token.refused",
                "deputy (approver)",
                "device:phone",
                "device",
                "passkey"
            ]),
            json!([
                "pairing.confirmed",
                "device:laptop",
                "device:phone",
                "device",
                "passkey"
            ]),
        ],
        "{entries:#}"
    );
}

/// Issue #34, item 2: "remote ones under `publicBaseUrl`". The phone
/// reaches the backend by a name that is not `localhost` (here
/// `clawdis.test`, which the phone's resolver maps to this machine, as a
/// tunnel or a reverse proxy would): the pairing link, the passkey's
/// relying party and the approval link are all that host's, and a passkey
/// made there approves.
#[tokio::test(flavor = "multi_thread")]
async fn a_device_pairs_and_approves_under_a_public_base_url() {
    let (_dir, home, work) = dirs();
    let port = free_port();
    let public = format!("http://clawdis.test:{port}");
    let (server, receiver) = backend_at(&home, port, &format!("{public}/"));
    let owner = Client::new(&server);
    let url = cli_ok(&home, &["devices", "pair", "--name", "phone"]);
    assert!(url.starts_with(&format!("{public}/pair/")), "{url}");
    // WebAuthn wants a secure context: a real deployment serves HTTPS;
    // this phone is told to treat the test origin as one.
    let phone = Phone::start_with(&[
        "--host-resolver-rules=MAP clawdis.test 127.0.0.1".into(),
        format!("--unsafely-treat-insecure-origin-as-secure={public}"),
    ])
    .await;
    let said = phone.press(url.trim(), "button[data-passkey=pair]").await;
    assert!(said.contains("Paired as \"phone\""), "{said}");
    let listed = cli_ok(&home, &["devices", "list"]);
    assert!(listed.starts_with("phone\tclawdis.test\t"), "{listed}");

    let (id, link) = pause(&home, &work, &receiver, "publish.lobster", PUBLISH);
    assert!(link.starts_with(&format!("{public}/approve/")), "{link}");
    let said = phone.press(&link, "button[data-passkey=approve]").await;
    assert!(
        said.contains("Approved with the passkey of \"phone\""),
        "{said}"
    );
    let gate = owner.ok("GET", &format!("/approvals/{id}"), None)["approval"].clone();
    assert_eq!(
        (gate["decidedBy"].as_str(), gate["runStatus"].as_str()),
        (Some("device:phone"), Some("done")),
        "{gate:#}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("published.txt")).unwrap(),
        "published\n"
    );
}

/// The pairing page says what it waits for and why it failed (issue 44: the
/// pressed button turned disabled and the page said nothing for 80 s while
/// no authenticator answered).
#[tokio::test(flavor = "multi_thread")]
async fn the_pairing_page_says_it_waits_for_the_passkey_and_why_it_failed() {
    let (_dir, home, _work) = dirs();
    let (_server, _receiver) = backend(&home);
    let url = cli_ok(&home, &["devices", "pair", "--name", "phone"]);
    let url = url.trim();
    let phone = Phone::start().await;
    let button = "button[data-passkey=pair]";

    // An authenticator nobody touches: the button says the page waits.
    phone.answers(false).await;
    phone.page.goto(url).await.unwrap();
    phone
        .page
        .find_element(button)
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    phone
        .until(&format!(
            "document.querySelector('{button}').textContent === 'Waiting for your passkey…'"
        ))
        .await;

    // One that refuses (its user not verified): the page says so, in words
    // a person acts on, and the button works again.
    phone.page.goto(url).await.unwrap();
    phone.answers(true).await;
    phone.verifies(false).await;
    let said = phone.click(button, "No passkey answered").await;
    assert!(said.contains("Press the button to try again"), "{said}");
    phone
        .until(&format!(
            "!document.querySelector('{button}').disabled && \
             document.querySelector('{button}').textContent === 'Pair this device'"
        ))
        .await;

    // The same link then pairs.
    phone.verifies(true).await;
    let said = phone.click(button, "Paired as").await;
    assert!(said.contains("Paired as \"phone\""), "{said}");
}
