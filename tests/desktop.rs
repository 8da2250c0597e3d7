//! The menu-bar app on a real (virtual) desktop: Xvfb, a private D-Bus
//! session and a notification server on it.

use std::time::{Duration, Instant};

use clawdis_approvals::{Approvals, Event};
use clawdis_e2e::desktop::{App, Desktop, Notifications};
use clawdis_e2e::{envelope, lobster};

const FLOW: &str = "exec --json --shell 'cat mails.json' | approve --prompt 'Send 2 mails?' | exec --shell 'echo sent >> sent.txt; echo done'";

#[tokio::test(flavor = "multi_thread")]
async fn approve_in_the_notification_resumes_a_paused_lobster_run() {
    if !clawdis_e2e::desktop::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (home, state, work) = (
        dir.path().join("home"),
        dir.path().join("state"),
        dir.path().join("work"),
    );
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("mails.json"), r#"[{"to":"ann"},{"to":"bob"}]"#).unwrap();
    let desktop = Desktop::start();
    let notifications = Notifications::serve(&desktop);
    let app = App::start(&desktop, &home, &state);
    let approvals = Approvals::open(&state).await.unwrap();
    let mut events = approvals.subscribe();
    tokio::spawn(approvals.clone().watch());

    // An agent's lobster, a separate process, pauses at the gate.
    let paused_at = Instant::now();
    let out = lobster(&state)
        .current_dir(&work)
        .args(["run", "--mode", "tool", FLOW])
        .output()
        .unwrap();
    let paused = envelope(&out);
    assert_eq!(paused["status"], "needs_approval", "{paused}");

    let shown = notifications
        .next(Duration::from_secs(1))
        .unwrap_or_else(|| panic!("no notification within 1 s:\n{}", app.log()));
    let latency = paused_at.elapsed();
    assert_eq!(shown.app_name, "Clawdis");
    assert!(shown.summary.contains("approval needed"), "{shown:?}");
    assert!(
        shown.body.contains("Send 2 mails?") && shown.body.contains("2 items"),
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
    eprintln!("pause to notification: {latency:?}");

    // The person clicks Approve. The app listens for the answer only once
    // the notification is up, so click until the run moves on.
    let decided = loop {
        notifications.click(shown.id, "approve");
        match tokio::time::timeout(Duration::from_millis(200), events.recv()).await {
            Ok(Ok(Event::Changed { approval })) if approval.status != "running" => break approval,
            Ok(_) => {}
            Err(_) => assert!(
                Instant::now() - paused_at < Duration::from_secs(10),
                "the click resumed nothing:\n{}",
                app.log()
            ),
        }
    };
    assert_eq!(decided.status, "done", "{decided:?}");
    assert_eq!(decided.decision.as_deref(), Some("approve"));
    assert_eq!(decided.decided_via.as_deref(), Some("notification"));

    // The agent resumes with its token later: the recorded outcome, and the
    // step after the gate ran exactly once.
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let resumed = lobster(&state)
        .current_dir(&work)
        .args(["resume", "--token", token, "--approve", "yes"])
        .output()
        .unwrap();
    let resumed = envelope(&resumed);
    assert_eq!(resumed["status"], "ok", "{resumed}");
    assert_eq!(resumed["output"][0], "done");
    assert_eq!(
        std::fs::read_to_string(work.join("sent.txt")).unwrap(),
        "sent\n"
    );
}
