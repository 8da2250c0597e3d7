//! Approvals decided in the backend (the app's windows and notifications):
//! pauses from a separate `lobster` process reach the bus, a decision
//! resumes the run in-process exactly once and is recorded, and the agent's
//! later `lobster resume` gets the recorded envelope.

use std::time::Duration;

use clawdis_approvals::Decider;
use clawdis_approvals::{Approvals, Channel, Choice, Decision, Event, Presence};
use clawdis_e2e::{MAIL_FLOW, Scratch, envelope, lobster};

fn app() -> Decider {
    Decider {
        by: Some("ann@example.com".into()),
        via: Channel::App,
        presence: Some(Presence::Click),
        seen: None,
        comment: None,
    }
}

async fn next_event(rx: &mut tokio::sync::broadcast::Receiver<Event>) -> Event {
    tokio::time::timeout(Duration::from_secs(1), rx.recv())
        .await
        .expect("an event within 1 s")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pause_from_another_process_is_announced_and_decided_once() {
    let s = Scratch::new();
    let (state, work) = (&s.state, &s.work);
    let approvals = Approvals::open(state).await.unwrap();
    let mut rx = approvals.subscribe();
    tokio::spawn(approvals.clone().watch());

    let paused = s.run(MAIL_FLOW);
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let Event::Paused { approval } = next_event(&mut rx).await else {
        panic!("a pause first")
    };
    assert_eq!(
        approvals.pending_count(),
        1,
        "counted before it is announced"
    );
    assert_eq!(approval.prompt, "Send 2 mails?");
    assert_eq!(approval.item_count, 2);
    assert_eq!(
        approval.items[1].get(),
        r#"{"to":"bob"}"#,
        "items as the run wrote them"
    );
    assert_eq!(
        approval.approval_id.as_deref(),
        paused["requiresApproval"]["approvalId"].as_str()
    );
    assert_eq!(
        approvals.list().await.unwrap()[0].status.as_str(),
        "pending"
    );

    let result = approvals
        .decide(&approval.id, Choice::Approve, app())
        .await
        .unwrap();
    assert_eq!(result["status"], "ok", "{result}");
    assert_eq!(result["output"][0], "done");
    // The watcher may see the run while its remaining steps run: skip that.
    let decided = loop {
        let Event::Changed { approval } = next_event(&mut rx).await else {
            panic!("then a change")
        };
        if approval.status.as_str() != "running" {
            break approval;
        }
    };
    assert_eq!(decided.status.as_str(), "done");
    assert_eq!(decided.decision.map(Decision::as_str), Some("approve"));
    assert_eq!(decided.decided_via.map(Channel::as_str), Some("app"));
    assert_eq!(decided.decided_by.as_deref(), Some("ann@example.com"));
    assert!(decided.decided_at.is_some());

    // A second decision on the same run is refused, and nothing runs again.
    let again = approvals
        .decide(&approval.id, Choice::Deny, app())
        .await
        .unwrap_err();
    assert!(again.to_string().contains("already decided"), "{again}");

    // The agent resumes later with its token: it gets the recorded outcome,
    // and who decided it and when; its own `no` decided nothing (issue 44:
    // nothing said so).
    let token = paused["requiresApproval"]["resumeToken"].as_str().unwrap();
    let id = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    for args in [
        ["--token", token, "--approve", "yes"],
        ["--id", id, "--approve", "no"],
    ] {
        let out = lobster(state)
            .current_dir(work)
            .arg("resume")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let mut late = envelope(&out);
        let said = late
            .as_object_mut()
            .and_then(|o| o.remove("decided"))
            .unwrap_or_else(|| panic!("{args:?} is told who decided"));
        assert_eq!(late, result, "{args:?}: the recorded final envelope");
        assert_eq!(
            (
                said["decision"].as_str(),
                said["by"].as_str(),
                said["via"].as_str(),
                said["at"].as_str()
            ),
            (
                Some("approve"),
                Some("ann@example.com"),
                Some("app"),
                decided.decided_at.as_deref()
            ),
            "{said}"
        );
        let note = said["note"].as_str().unwrap_or_default();
        assert!(note.contains("this call decided nothing"), "{note}");
    }
    assert_eq!(
        std::fs::read_to_string(work.join("sent.txt")).unwrap(),
        "sent\n",
        "the step ran exactly once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_app_and_the_cli_racing_run_the_rest_once() {
    let s = Scratch::new();
    let (state, work) = (&s.state, &s.work);
    let approvals = Approvals::open(state).await.unwrap();
    for round in 1..=4 {
        let paused = s.run(MAIL_FLOW);
        let token = paused["requiresApproval"]["resumeToken"]
            .as_str()
            .unwrap()
            .to_string();
        let id = approvals
            .list()
            .await
            .unwrap()
            .into_iter()
            .find(|a| a.status.as_str() == "pending")
            .unwrap()
            .id;
        let cli = {
            let (state, work) = (state.clone(), work.clone());
            tokio::task::spawn_blocking(move || {
                lobster(&state)
                    .current_dir(&work)
                    .args(["resume", "--token", &token, "--approve", "yes"])
                    .output()
                    .unwrap()
            })
        };
        let in_app = approvals.decide(&id, Choice::Approve, app()).await;
        let cli = cli.await.unwrap();
        let sent = std::fs::read_to_string(work.join("sent.txt")).unwrap();
        assert_eq!(
            sent.lines().count(),
            round,
            "round {round}: the rest ran once"
        );
        let run = approvals.get(&id).await.unwrap();
        match run.decided_via.map(Channel::as_str) {
            // The app won: the CLI gets the app's outcome.
            Some("app") => {
                assert_eq!(in_app.unwrap()["status"], "ok");
                assert_eq!(envelope(&cli)["status"], "ok");
            }
            // The CLI won: the app is told plainly.
            Some("cli") => {
                assert!(cli.status.success());
                assert!(in_app.unwrap_err().to_string().contains("already decided"));
            }
            other => panic!("decided via {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_input_gate_takes_a_response_and_cancel_ends_a_run() {
    let s = Scratch::new();
    let (state, work) = (&s.state, &s.work);
    let approvals = Approvals::open(state).await.unwrap();
    let flow = work.join("ask.lobster");
    std::fs::write(
        &flow,
        "name: ask\nsteps:\n  - id: who\n    input:\n      prompt: Who gets it?\n      responseSchema:\n        type: object\n        properties:\n          name: {type: string}\n        required: [name]\n  - id: greet\n    command: echo hello\n",
    )
    .unwrap();
    let paused = s.run(flow.to_str().unwrap());
    assert_eq!(paused["status"], "needs_input", "{paused}");
    let ask = approvals.list().await.unwrap().remove(0);
    assert_eq!(
        (ask.gate.as_str(), ask.workflow.as_deref()),
        ("input", Some("ask"))
    );
    let schema: serde_json::Value =
        serde_json::from_str(ask.response_schema.as_ref().unwrap().get()).unwrap();
    assert_eq!(schema["required"][0], "name");
    let wrong = approvals
        .decide(&ask.id, Choice::Approve, app())
        .await
        .unwrap_err();
    assert!(wrong.to_string().contains("does not take"), "{wrong}");
    // An answer the schema refuses is the answer's fault (a 400 over HTTP,
    // issue 44), and the run keeps waiting.
    let refused = approvals
        .decide(
            &ask.id,
            Choice::Respond(serde_json::json!({"nom": 1})),
            app(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(refused, clawdis_approvals::ApprovalsError::Invalid(_)),
        "{refused:?}"
    );
    assert!(
        refused.to_string().contains("schema validation"),
        "{refused}"
    );
    assert_eq!(
        approvals.get(&ask.id).await.unwrap().status.as_str(),
        "pending"
    );
    let done = approvals
        .decide(
            &ask.id,
            Choice::Respond(serde_json::json!({"name": "ann"})),
            app(),
        )
        .await
        .unwrap();
    assert_eq!(done["ok"], true, "{done}");
    assert_eq!(
        approvals
            .get(&ask.id)
            .await
            .unwrap()
            .decision
            .map(Decision::as_str),
        Some("respond")
    );

    let paused = s.run(MAIL_FLOW);
    assert_eq!(paused["status"], "needs_approval");
    let gate = approvals
        .list()
        .await
        .unwrap()
        .into_iter()
        .find(|a| a.status.as_str() == "pending")
        .unwrap();
    let cancelled = approvals
        .decide(&gate.id, Choice::Cancel, app())
        .await
        .unwrap();
    assert_eq!(cancelled["status"], "cancelled");
    assert!(
        !work.join("sent.txt").exists(),
        "a cancelled run runs nothing more"
    );
}

/// Issue #34, item 1: a gate with `presence: verified` takes only a passkey
/// or the operating system's check. A click in the app's window is refused
/// (under X11 any program can synthesize one), and so is an approver token;
/// either may still deny it.
#[tokio::test(flavor = "multi_thread")]
async fn a_verified_gate_refuses_the_windows_click() {
    let s = Scratch::new();
    std::fs::write(
        s.work.join("wire.lobster"),
        "name: wire\nsteps:\n  - id: gate\n    approval:\n      prompt: Wire the money?\n      \
         presence: verified\n  - id: go\n    run: echo wired > wired.txt\n",
    )
    .unwrap();
    let approvals = Approvals::open(&s.state).await.unwrap();
    let paused = s.run("wire.lobster");
    assert_eq!(paused["status"], "needs_approval", "{paused}");
    let id = paused["requiresApproval"]["approvalId"].as_str().unwrap();
    let gate = approvals.get(id).await.unwrap();
    assert_eq!(gate.policy.presence, "verified");
    assert!(gate.needs_a_person());

    for presence in [Presence::Click, Presence::Token] {
        let decider = Decider {
            presence: Some(presence),
            seen: None,
            ..app()
        };
        let refused = approvals
            .decide(id, Choice::Approve, decider)
            .await
            .unwrap_err();
        let said = refused.to_string();
        assert!(
            matches!(refused, clawdis_approvals::ApprovalsError::Forbidden(_))
                && said.contains(&format!("a {} is not enough", presence.as_str()))
                && said.contains("passkey"),
            "{said}"
        );
    }
    assert_eq!(approvals.get(id).await.unwrap().status.as_str(), "pending");
    assert!(!s.work.join("wired.txt").exists());

    let denied = approvals.decide(id, Choice::Deny, app()).await.unwrap();
    assert_eq!(denied["status"], "cancelled", "{denied}");
    assert!(!s.work.join("wired.txt").exists());
}
