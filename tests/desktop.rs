//! The menu-bar app on a real (virtual) desktop: Xvfb, a private D-Bus
//! session and a notification server on it.

use std::time::{Duration, Instant};

use clawdis_approvals::{Approvals, Event};
use clawdis_e2e::control::Client;
use clawdis_e2e::desktop::{App, Desktop, Notifications};
use clawdis_e2e::{MAIL_FLOW, Scratch, envelope};

#[tokio::test(flavor = "multi_thread")]
async fn approve_in_the_notification_resumes_a_paused_lobster_run() {
    if !clawdis_e2e::desktop::available() {
        return;
    }
    let s = Scratch::new();
    let (home, state) = (&s.home, &s.state);
    let desktop = Desktop::start();
    let notifications = Notifications::serve(&desktop);
    let app = App::start(&desktop, home, state, serde_json::json!({"enabled": false}));
    let approvals = Approvals::open(state).await.unwrap();
    let mut events = approvals.subscribe();
    tokio::spawn(approvals.clone().watch());

    // An agent's lobster, a separate process, pauses at the gate.
    let paused_at = Instant::now();
    let paused = s.run(MAIL_FLOW);
    assert_eq!(paused["status"], "needs_approval", "{paused}");

    let shown = notifications.next(Duration::from_secs(1)).unwrap_or_else(|| panic!("no notification within 1 s:\n{}", app.log()));
    assert_eq!(shown.app_name, "Clawdis");
    assert!(shown.summary.contains("approval needed"), "{shown:?}");
    assert!(shown.body.contains("Send 2 mails?") && shown.body.contains("2 items"), "{shown:?}");
    let keys: Vec<&str> = shown.actions.iter().step_by(2).map(String::as_str).collect();
    assert!(keys.contains(&"approve") && keys.contains(&"deny"), "actions: {:?}", shown.actions);

    // The person clicks Approve. The app listens for the answer only once
    // the notification is up, so click until the run moves on.
    let decided = loop {
        notifications.click(shown.id, "approve");
        match tokio::time::timeout(Duration::from_millis(200), events.recv()).await {
            Ok(Ok(Event::Changed { approval })) if approval.status != "running" => break approval,
            Ok(_) => {}
            Err(_) => assert!(Instant::now() - paused_at < Duration::from_secs(10), "the click resumed nothing:\n{}", app.log()),
        }
    };
    assert_eq!(decided.status, "done", "{decided:?}");
    assert_eq!(decided.decision.as_deref(), Some("approve"));
    assert_eq!(decided.decided_via.as_deref(), Some("notification"));

    // The agent resumes with its token later: the recorded outcome, and the
    // step after the gate ran exactly once.
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let resumed = s.resume(token, &["--approve", "yes"]);
    let resumed = envelope(&resumed);
    assert_eq!(resumed["status"], "ok", "{resumed}");
    assert_eq!(resumed["output"][0], "done");
    assert_eq!(s.sent(), "sent\n");

    // A run decided elsewhere (the agent's own resume) takes its
    // notification off the screen.
    let paused = s.run(MAIL_FLOW);
    let shown = notifications.next(Duration::from_secs(1)).expect("a second notification");
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let denied = s.resume(token, &["--approve", "no"]);
    assert_eq!(envelope(&denied)["status"], "cancelled");
    assert_eq!(notifications.next_closed(Duration::from_secs(1)), Some(shown.id), "withdrawn within 1 s:\n{}", app.log());
}

/// The control API's status (`GET /`).
fn status(app: &App, home: &std::path::Path) -> serde_json::Value {
    Client::for_home(app.port, home).ok("GET", "/", None)
}

#[test]
fn the_tray_menu_opens_windows_starts_the_browser_and_quits() {
    if !clawdis_e2e::desktop::available() {
        return;
    }
    let s = Scratch::new();
    let (home, state) = (&s.home, &s.state);
    let mut desktop = Desktop::start();
    desktop.tray();
    let settings = serde_json::json!({"enabled": true, "headless": true, "cdpPort": clawdis_e2e::control::free_port()});
    let mut app = App::start(&desktop, home, state, settings);

    desktop.tray_pick(2);
    desktop.wait_window(&["--onlyvisible", "--name", "^Clawdis Approvals$"]);
    desktop.tray_pick(1);
    desktop.wait_window(&["--onlyvisible", "--name", "^Clawdis Settings$"]);
    desktop.tray_pick(3);
    desktop.wait_window(&["--onlyvisible", "--name", "^Clawdis Tabs$"]);

    assert_eq!(status(&app, home)["running"], false);
    desktop.tray_pick(4);
    let deadline = Instant::now() + Duration::from_secs(20);
    while status(&app, home)["running"] != true {
        assert!(Instant::now() < deadline, "Start Browser started nothing:\n{}", app.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = status(&app, home)["pid"].as_i64().unwrap() as i32;

    desktop.tray_pick(5);
    assert_eq!(app.wait_exit(Duration::from_secs(20)), Some(0), "Quit exits cleanly:\n{}", app.log());
    assert!(app.log().contains("backend stopped"), "{}", app.log());
    let alive =
        unsafe { libc::kill(pid, 0) } == 0 && !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z ");
    assert!(!alive, "Quit stopped the browser (pid {pid})");
}

#[test]
fn a_backlog_gets_three_notifications_and_one_summary() {
    if !clawdis_e2e::desktop::available() {
        return;
    }
    let s = Scratch::new();
    for _ in 0..5 {
        assert_eq!(s.run(MAIL_FLOW)["status"], "needs_approval");
    }
    let desktop = Desktop::start();
    let notifications = Notifications::serve(&desktop);
    let app = App::start(&desktop, &s.home, &s.state, serde_json::json!({"enabled": false}));

    let (mut single, mut summary) = (Vec::new(), None);
    while single.len() < 3 || !summary.as_ref().is_some_and(|(_, text): &(u32, String)| text.contains("2 more")) {
        let shown =
            notifications.next(Duration::from_secs(5)).unwrap_or_else(|| panic!("seen {single:?} and {summary:?}; app:\n{}", app.log()));
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
        assert_eq!(Some(extra.id), summary.as_ref().map(|(id, _)| *id), "nothing but the summary again: {extra:?}");
    }
}
