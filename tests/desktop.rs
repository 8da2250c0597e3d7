//! The menu-bar app on a real (virtual) desktop: Xvfb, a private D-Bus
//! session, and dunst (a real notification daemon) or, for what no daemon
//! shows, a recording notification server.

use std::time::{Duration, Instant};

use clawdis_approvals::{Approvals, Channel, Decision, Event};
use clawdis_e2e::control::Client;
use clawdis_e2e::desktop::{App, Desktop, Dunst, Notifications};
use clawdis_e2e::{MAIL_FLOW, Scratch, alive, envelope};

/// What the notification carries, as the server receives it: the one
/// thing a real daemon does not show (its exact text and action keys).
#[tokio::test(flavor = "multi_thread")]
async fn a_paused_run_notifies_with_its_prompt_and_approve_and_deny() {
    clawdis_e2e::desktop::require();
    let s = Scratch::new();
    let desktop = Desktop::start();
    let notifications = Notifications::serve(&desktop);
    let app = App::start(
        &desktop,
        &s.home,
        &s.state,
        serde_json::json!({"enabled": false}),
    );
    let paused = s.run(MAIL_FLOW);
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let shown = notifications
        .next(Duration::from_secs(1))
        .unwrap_or_else(|| panic!("no notification within 1 s:\n{}", app.log()));
    assert_eq!(shown.app_name, "Clawdis");
    assert!(shown.summary.contains("approval needed"), "{shown:?}");
    // The prompt, the item count, the first line of what approving runs,
    // and who started the run (issue #35).
    assert!(
        shown.body.contains("Send 2 mails?")
            && shown.body.contains("2 items")
            && shown
                .body
                .contains("Then runs 3: exec --shell 'echo sent >> sent.txt; echo done'")
            && shown.body.contains("Started by lobster"),
        "{shown:?}"
    );
    let keys: Vec<&str> = shown
        .actions
        .iter()
        .step_by(2)
        .map(String::as_str)
        .collect();
    assert!(
        keys.contains(&"approve") && keys.contains(&"deny"),
        "actions: {:?}",
        shown.actions
    );
}

/// The app on a desktop whose notification daemon is dunst, with a run
/// paused at its approval gate and shown there.
struct DunstRig {
    s: Scratch,
    _desktop: Desktop,
    dunst: Dunst,
    app: App,
    /// Kept: the watcher publishes only while a handle lives.
    _approvals: std::sync::Arc<Approvals>,
    events: tokio::sync::broadcast::Receiver<Event>,
    /// The paused run's envelope.
    paused: serde_json::Value,
}

impl DunstRig {
    async fn paused() -> DunstRig {
        clawdis_e2e::desktop::require();
        let s = Scratch::new();
        let desktop = Desktop::start();
        let dunst = Dunst::start(&desktop);
        let app = App::start(
            &desktop,
            &s.home,
            &s.state,
            serde_json::json!({"enabled": false}),
        );
        let approvals = Approvals::open(&s.state).await.unwrap();
        let events = approvals.subscribe();
        tokio::spawn(approvals.clone().watch());
        let paused = s.run(MAIL_FLOW);
        assert_eq!(paused["status"], "needs_approval", "{paused}");
        dunst.wait_displayed(1, Duration::from_secs(5));
        DunstRig {
            s,
            _desktop: desktop,
            dunst,
            app,
            _approvals: approvals,
            events,
            paused,
        }
    }

    /// Picks `label` in dunst's action menu, as a person would; the run's
    /// approval once it is decided.
    async fn pick(&mut self, label: &str) -> clawdis_approvals::Approval {
        let menu = self
            .dunst
            .pick(&format!("#{label} (Clawdis: approval needed)"));
        assert!(
            menu.iter()
                .any(|l| l.starts_with("#Approve (Clawdis: approval needed)")),
            "menu: {menu:?}"
        );
        assert!(
            menu.iter()
                .any(|l| l.starts_with("#Deny (Clawdis: approval needed)")),
            "menu: {menu:?}"
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match tokio::time::timeout_at(deadline.into(), self.events.recv()).await {
                Ok(Ok(Event::Changed { approval }))
                    if approval.status.as_str() != "running"
                        && approval.status.as_str() != "pending" =>
                {
                    return approval;
                }
                Ok(Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
                Ok(Err(closed)) => panic!("the approvals bus ended: {closed}"),
                Err(_) => panic!(
                    "picking {label} in dunst decided nothing:\n{}",
                    self.app.log()
                ),
            }
        }
    }

    /// The agent's own `lobster resume` with the run's token.
    fn resume(&self, approve: &str) -> serde_json::Value {
        let token = self.paused["requiresApproval"]["resumeToken"]
            .as_str()
            .unwrap();
        envelope(&self.s.resume(token, &["--approve", approve]))
    }
}

/// Issue #20: with a real daemon, which sends `ActionInvoked` only to the
/// connection that sent the notification, Approve did nothing.
#[tokio::test(flavor = "multi_thread")]
async fn approve_in_dunst_resumes_the_run_once() {
    let mut rig = DunstRig::paused().await;
    let decided = rig.pick("Approve").await;
    assert_eq!(decided.status.as_str(), "done", "{decided:?}");
    assert_eq!(decided.decision.map(Decision::as_str), Some("approve"));
    assert_eq!(
        decided.decided_via.map(Channel::as_str),
        Some("notification")
    );
    // The notification is resident: the app takes it down once answered.
    rig.dunst.wait_displayed(0, Duration::from_secs(5));
    // The agent resumes with its token later: the recorded outcome, and the
    // step after the gate ran exactly once.
    let resumed = rig.resume("yes");
    assert_eq!(
        (&resumed["status"], &resumed["output"][0]),
        (&"ok".into(), &"done".into()),
        "{resumed}"
    );
    assert_eq!(rig.s.sent(), "sent\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_in_dunst_cancels_the_run_once() {
    let mut rig = DunstRig::paused().await;
    let decided = rig.pick("Deny").await;
    assert_eq!(
        decided.decision.map(Decision::as_str),
        Some("reject"),
        "{decided:?}"
    );
    assert_eq!(
        decided.decided_via.map(Channel::as_str),
        Some("notification")
    );
    rig.dunst.wait_displayed(0, Duration::from_secs(5));
    assert_eq!(
        rig.resume("yes")["status"],
        "cancelled",
        "the denial stands"
    );
    assert_eq!(rig.s.sent(), "", "nothing after the gate ran");
}

/// Issue #35: a prompt with a right-to-left override read "exe.txt" in
/// dunst. The notification now shows hidden characters as escapes with a
/// warning, escapes markup (dunst reads it: `<b>` would be bold), and
/// offers no Approve for text like that (the window shows all of it).
/// Dismissing it leaves the gate pending.
#[tokio::test(flavor = "multi_thread")]
async fn a_notification_shows_hidden_characters_and_offers_no_approve_for_them() {
    clawdis_e2e::desktop::require();
    let s = Scratch::new();
    let desktop = Desktop::start();
    let dunst = Dunst::start(&desktop);
    let app = App::start(
        &desktop,
        &s.home,
        &s.state,
        serde_json::json!({"enabled": false}),
    );
    std::fs::write(
        s.work.join("notes.lobster"),
        "name: notes\nsteps:\n  - id: gate\n    approval:\n      prompt: \"Publish <b>notes</b> to \u{202E}txt.exe\u{202C} the p\u{0430}ypal list?\"\n  - id: go\n    run: echo published > published.txt\n",
    )
    .unwrap();
    let paused = s.run("notes.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    dunst.wait_displayed(1, Duration::from_secs(5));
    let menu = dunst.pick("#nothing to pick");
    assert!(
        menu.iter()
            .any(|l| l.starts_with("#Deny (Clawdis: approval needed)"))
            && !menu.iter().any(|l| l.starts_with("#Approve (")),
        "menu: {menu:?}\n{}",
        app.log()
    );
    dunst.close();
    dunst.wait_displayed(0, Duration::from_secs(5));
    let bodies = dunst.history_bodies();
    let body = bodies.first().expect("the closed notification");
    assert!(
        body.starts_with("⚠ This text holds 2 hidden")
            && body.contains(
                "Publish &lt;b&gt;notes&lt;/b&gt; to ⟨U+202E⟩txt.exe⟨U+202C⟩ the p\u{0430}ypal list?"
            )
            && body.contains("reads as \"paypal\"")
            // The workflow and the step whose gate it is.
            && body.contains("(notes, step gate)")
            && !body.contains('\u{202E}'),
        "{body}"
    );
    // Dismissed is neither approved nor denied: the agent's own denial is
    // the one recorded.
    let denied = envelope(&s.resume(
        paused["requiresApproval"]["resumeToken"].as_str().unwrap(),
        &["--approve", "no"],
    ));
    assert_eq!(denied["status"], "cancelled", "{denied}");
    let approvals = Approvals::open(&s.state).await.unwrap();
    let id = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    let gate = approvals.get(id).await.unwrap();
    assert_eq!(
        gate.decided_via.map(Channel::as_str),
        Some("cli"),
        "{gate:?}"
    );
    assert!(!s.work.join("published.txt").exists());
}

/// A run decided elsewhere (the agent's own resume) takes its notification
/// off dunst's screen.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_decided_elsewhere_leaves_dunst() {
    let rig = DunstRig::paused().await;
    assert_eq!(rig.resume("no")["status"], "cancelled");
    rig.dunst.wait_displayed(0, Duration::from_secs(5));
}

/// The control API's status (`GET /`).
fn status(app: &App, home: &std::path::Path) -> serde_json::Value {
    Client::for_home(app.port, home).ok("GET", "/", None)
}

#[test]
fn the_tray_menu_opens_windows_starts_the_browser_and_quits() {
    clawdis_e2e::desktop::require();
    let s = Scratch::new();
    let (home, state) = (&s.home, &s.state);
    let mut desktop = Desktop::start();
    desktop.tray();
    let cdp_port = clawdis_e2e::control::free_port();
    let settings = serde_json::json!({"enabled": true, "headless": true, "cdpPort": cdp_port});
    let mut app = App::start(&desktop, home, state, settings);

    for (n, title) in [
        (2, "Clawdis Approvals"),
        (1, "Clawdis Settings"),
        (3, "Clawdis Runs"),
        (4, "Clawdis Triggers"),
        (5, "Clawdis Deliveries"),
        (6, "Clawdis Ledger"),
        (7, "Clawdis Devices & tokens"),
        (8, "Clawdis Tabs"),
    ] {
        assert!(
            desktop.tray_pick_until(n, || desktop.shows(title)),
            "the tray menu's item {n} never opened {title}:\n{}",
            app.log()
        );
    }

    assert_eq!(status(&app, home)["running"], false);
    // The pick has taken once a browser is launched on the port (a second
    // pick would be Stop Browser); its start may take longer.
    let launched = format!("--remote-debugging-port={cdp_port}");
    assert!(
        desktop.tray_pick_until(9, || {
            !clawdis_e2e::processes(|args| args.contains(&launched)).is_empty()
        }),
        "Start Browser launched nothing:\n{}",
        app.log()
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while status(&app, home)["running"] != true {
        assert!(
            Instant::now() < deadline,
            "Start Browser started nothing:\n{}",
            app.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = status(&app, home)["pid"].as_i64().unwrap() as i32;

    assert!(
        desktop.tray_pick_until(10, || app.log().contains("quitting from the menu")),
        "Quit did not quit:\n{}",
        app.log()
    );
    assert_eq!(
        app.wait_exit(Duration::from_secs(20)),
        Some(0),
        "Quit exits cleanly:\n{}",
        app.log()
    );
    assert!(app.log().contains("backend stopped"), "{}", app.log());
    assert!(!alive(pid), "Quit stopped the browser (pid {pid})");
}

#[test]
fn a_backlog_gets_three_notifications_and_one_summary() {
    clawdis_e2e::desktop::require();
    let s = Scratch::new();
    for _ in 0..5 {
        assert_eq!(s.run(MAIL_FLOW)["status"], "needs_approval");
    }
    let desktop = Desktop::start();
    let notifications = Notifications::serve(&desktop);
    let app = App::start(
        &desktop,
        &s.home,
        &s.state,
        serde_json::json!({"enabled": false}),
    );

    let (mut single, mut summary) = (Vec::new(), None);
    while single.len() < 3
        || !summary
            .as_ref()
            .is_some_and(|(_, text): &(u32, String)| text.contains("2 more"))
    {
        // The first one waits on the app's start too, which on a loaded
        // two-core machine (the whole suite running) took over 5 s once.
        let shown = notifications
            .next(Duration::from_secs(20))
            .unwrap_or_else(|| panic!("seen {single:?} and {summary:?}; app:\n{}", app.log()));
        if shown.summary.contains("more approval") {
            if let Some((id, _)) = &summary {
                assert_eq!(*id, shown.id, "the summary is updated in place");
            }
            summary = Some((shown.id, shown.summary));
        } else {
            single.push(shown.id);
        }
    }
    assert_eq!(single.len(), 3, "three runs get their own notification");
    while let Some(extra) = notifications.next(Duration::from_millis(500)) {
        assert_eq!(
            Some(extra.id),
            summary.as_ref().map(|(id, _)| *id),
            "nothing but the summary again: {extra:?}"
        );
    }
}

/// `document.visibilityState` of session `id`'s page.
fn visibility(api: &Client, id: &str) -> String {
    let read = api.ok(
        "POST",
        &format!("/sessions/{id}/evaluate"),
        Some(serde_json::json!({ "script": "document.visibilityState" })),
    );
    read["data"]["result"]
        .as_str()
        .or_else(|| read["data"].as_str())
        .unwrap_or_else(|| panic!("no visibility: {read}"))
        .to_string()
}

/// The app with the browser (headless, as on a machine without a display
/// for it, or visible on the desktop) on a desktop whose notification
/// daemon is dunst, and a session whose agent asked for a hand-off: its
/// notification shown.
struct HandoffRig {
    _s: Scratch,
    desktop: Desktop,
    dunst: Dunst,
    app: App,
    api: Client,
    /// The session handed off.
    session: String,
    /// The hand-off's answer, once it ends.
    answer: std::sync::mpsc::Receiver<(u16, serde_json::Value)>,
}

impl HandoffRig {
    fn asked(headless: bool) -> HandoffRig {
        clawdis_e2e::desktop::require();
        let s = Scratch::new();
        let desktop = Desktop::start();
        let dunst = Dunst::start(&desktop);
        let pages = clawdis_e2e::control::fixture_server();
        let app = App::start(
            &desktop,
            &s.home,
            &s.state,
            serde_json::json!({ "headless": headless, "cdpPort": clawdis_e2e::control::free_port() }),
        );
        let api = Client::for_home(app.port, &s.home);
        let (status, session) = api.call(
            "POST",
            "/sessions",
            Some(serde_json::json!({ "url": format!("http://127.0.0.1:{pages}/form.html") })),
        );
        assert_eq!(status, 201, "{session}");
        let id = session["sessionId"].as_str().unwrap().to_string();
        let session = id.clone();
        if !headless {
            // Another tab of the window hides the page (opened by the page,
            // as a link with target=_blank would be).
            api.ok(
                "POST",
                &format!("/sessions/{id}/evaluate"),
                Some(serde_json::json!({ "script": "window.open('about:blank'); 1" })),
            );
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while visibility(&api, &id) != "hidden" {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the page was never hidden"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let (tx, answer) = std::sync::mpsc::channel();
        let agent = Client::for_home(app.port, &s.home);
        std::thread::spawn(move || {
            let _ = tx.send(agent.call(
                "POST",
                &format!("/sessions/{id}/handoff"),
                Some(serde_json::json!({ "reason": "finish the login" })),
            ));
        });
        dunst.wait_displayed(1, Duration::from_secs(10));
        HandoffRig {
            _s: s,
            desktop,
            dunst,
            app,
            api,
            session,
            answer,
        }
    }

    /// Ends the hand-off with a denial over the API (anyone may deny); the
    /// agent hears it declined.
    fn decline(&self) {
        let pending = self.api.ok("GET", "/approvals?status=pending", None);
        let id = pending["approvals"][0]["approvalId"]
            .as_str()
            .unwrap()
            .to_string();
        self.api.ok(
            "POST",
            &format!("/approvals/{id}/deny"),
            Some(serde_json::json!({})),
        );
        let (status, ended) = self.answer.recv_timeout(Duration::from_secs(20)).unwrap();
        assert_eq!(
            (status, ended),
            (
                200,
                serde_json::json!({ "done": false, "reason": "declined" })
            )
        );
    }

    /// Picks `label` in dunst's menu for the hand-off's notification, which
    /// offers Take over and Decline (never Approve).
    fn pick(&self, label: &str) {
        let menu = self
            .dunst
            .pick(&format!("#{label} (Clawdis: the agent needs you)"));
        for offered in ["#Take over (", "#Decline ("] {
            assert!(
                menu.iter().any(|l| l.starts_with(offered)),
                "menu: {menu:?}"
            );
        }
        assert!(
            !menu.iter().any(|l| l.starts_with("#Approve")),
            "menu: {menu:?}"
        );
    }
}

/// Issue #36: Take over in the notification opens the live view of the
/// headless browser's page in a window of the app; the agent still waits.
#[tokio::test(flavor = "multi_thread")]
async fn take_over_in_dunst_opens_the_live_view() {
    let rig = HandoffRig::asked(true);
    rig.pick("Take over");
    rig.desktop.wait_window(&["--name", "Clawdis Hand-off"]);
    assert!(
        rig.app
            .log()
            .contains("hand-off taken over: the live view opened"),
        "{}",
        rig.app.log()
    );
    assert!(
        rig.answer.try_recv().is_err(),
        "the agent's call ended before the person handed back"
    );
    // The person declines from the Approvals window's side of things (here:
    // anyone may deny); the agent hears it.
    rig.decline();
}

/// Issue #36: with a visible browser, Take over in the notification brings
/// the browser's window to the front on the handed-off page, a tab that
/// another tab of its window had hidden.
#[tokio::test(flavor = "multi_thread")]
async fn take_over_in_dunst_brings_a_visible_browsers_page_to_the_front() {
    let rig = HandoffRig::asked(false);
    rig.pick("Take over");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !rig
        .app
        .log()
        .contains("hand-off taken over: the browser's window is in front")
    {
        assert!(std::time::Instant::now() < deadline, "{}", rig.app.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    rig.decline();
    assert_eq!(visibility(&rig.api, &rig.session), "visible");
}

/// Decline in the notification ends the hand-off: the agent is told.
#[tokio::test(flavor = "multi_thread")]
async fn decline_in_dunst_tells_the_agent() {
    let rig = HandoffRig::asked(true);
    rig.pick("Decline");
    let (status, ended) = rig.answer.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(
        (status, ended),
        (
            200,
            serde_json::json!({ "done": false, "reason": "declined" })
        ),
        "{}",
        rig.app.log()
    );
    rig.dunst.wait_displayed(0, Duration::from_secs(5));
}

/// Issue #44: the app registers on its own desktop's accessibility bus, as
/// on a person's desktop, even with another desktop started after its own
/// (each had put its accessibility bus on one shared path, the newest
/// taking it over, and the app was sent to the other's bus and refused:
/// "Couldn't register with accessibility bus: Did not receive a reply").
#[test]
fn the_app_registers_on_its_own_desktops_accessibility_bus() {
    clawdis_e2e::desktop::require();
    let s = Scratch::new();
    let desktop = Desktop::start();
    let other = Desktop::start();
    let app = App::start(
        &desktop,
        &s.home,
        &s.state,
        serde_json::json!({"enabled": false}),
    );
    let pid = app.pid();
    // GTK's bridge registers as the app's toolkit starts, before the app
    // watches approvals; looked for until it shows, in case it lags.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !desktop.accessibility_clients().contains(&pid) {
        assert!(
            Instant::now() < deadline,
            "the app (pid {pid}) is not on its desktop's accessibility bus {}: {:?}\n{}",
            desktop.accessibility,
            desktop.accessibility_clients(),
            app.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !other.accessibility_clients().contains(&pid),
        "the app is on the other desktop's accessibility bus too"
    );
    assert!(
        !app.log().contains("accessibility bus"),
        "the app complained about its accessibility bus:\n{}",
        app.log()
    );
}
