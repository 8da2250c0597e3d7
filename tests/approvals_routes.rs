//! The approval routes of `clawdis serve`: `GET /approvals/{id}` and the
//! approve / deny / respond / cancel forms, by run id or 8-hex approval id,
//! with comments and reasons kept, and a second decision answered 409 with
//! the first one's outcome.

use std::path::Path;

use clawdis_e2e::control::{Client, start_server_full};
use clawdis_e2e::run_tool;
use serde_json::{Value, json};

fn pause(home: &Path, work: &Path, flow: &str) -> Value {
    let paused = run_tool(home, work, flow);
    assert!(
        paused["status"] == "needs_approval" || paused["status"] == "needs_input",
        "{paused}"
    );
    paused
}

#[test]
fn approval_routes_decide_once_and_keep_what_was_said() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let server = start_server_full(&home, json!({}), &["--no-browser"], &[]);
    let c = Client::new(&server);

    // Approve by the short approval id, with a comment.
    let first = pause(
        &home,
        &work,
        "exec --json --shell 'echo [1]' | approve --prompt 'One?' | exec --shell 'echo one >> log.txt; echo one'",
    );
    let short = first["requiresApproval"]["approvalId"].as_str().unwrap();
    let one = c.ok("GET", &format!("/approvals/{short}"), None)["approval"].clone();
    assert_eq!(
        (one["prompt"].as_str(), one["status"].as_str()),
        (Some("One?"), Some("pending"))
    );
    assert_eq!(one["approvalId"], short);
    assert_eq!(
        one["policy"],
        json!({"approvers": "any", "presence": "any", "minApprovals": 1})
    );
    let approved = c.ok(
        "POST",
        &format!("/approvals/{short}/approve"),
        Some(json!({"comment": "looks right"})),
    );
    assert_eq!(approved["result"]["status"], "ok", "{approved}");
    // A second decision: 409, with the first one and how it ended.
    let (status, again) = c.call("POST", &format!("/approvals/{short}/deny"), None);
    assert_eq!(status, 409, "{again}");
    let first_decision = &again["approval"];
    assert_eq!(
        (
            first_decision["decision"].as_str(),
            first_decision["decidedBy"].as_str(),
            first_decision["comment"].as_str(),
            first_decision["result"]["output"][0].as_str()
        ),
        (
            Some("approve"),
            Some("owner"),
            Some("looks right"),
            Some("one")
        ),
        "{again}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("log.txt")).unwrap(),
        "one\n"
    );

    // Deny by run id; the reason is kept as the comment, and the agent's
    // envelope says it, and that a denial means stop (issue #35).
    pause(
        &home,
        &work,
        "exec --json --shell 'echo [2]' | approve --prompt 'Two?'",
    );
    let pending = c.ok("GET", "/approvals?status=pending", None)["approvals"].clone();
    assert_eq!(pending.as_array().unwrap().len(), 1, "{pending}");
    let id = pending[0]["id"].as_str().unwrap().to_string();
    let denied = c.ok(
        "POST",
        &format!("/approvals/{id}/deny"),
        Some(json!({"reason": "not today"})),
    );
    assert_eq!(denied["result"]["status"], "cancelled", "{denied}");
    let reason = denied["result"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("Denied by owner: not today.") && reason.contains("A denial means stop"),
        "{denied}"
    );
    let two = &c.ok("GET", &format!("/approvals/{id}"), None)["approval"];
    assert_eq!(
        (two["decision"].as_str(), two["comment"].as_str()),
        (Some("reject"), Some("not today"))
    );

    // An input gate takes a response checked against its schema.
    std::fs::write(
        work.join("ask.lobster"),
        "steps:\n  - id: who\n    input:\n      prompt: Who?\n      responseSchema:\n        type: object\n        properties:\n          name: {type: string}\n        required: [name]\n  - id: hello\n    run: echo \"hello $who.response.name\"\n",
    )
    .unwrap();
    pause(&home, &work, "ask.lobster");
    let ask = c.ok("GET", "/approvals?status=pending", None)["approvals"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // An answer the gate's own schema refuses is the body's fault: a 400
    // naming the path that failed (issue 44: it was a 409), and the gate
    // waits on.
    for (answer, names) in [(json!({"nom": 1}), "name"), (json!({"name": 5}), "/name")] {
        let (status, refused) = c.call(
            "POST",
            &format!("/approvals/{ask}/respond"),
            Some(json!({ "response": answer })),
        );
        assert_eq!(status, 400, "{refused}");
        let error = refused["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("schema validation") && error.contains(names),
            "{error:?} should name {names:?}"
        );
    }
    // A decision the gate does not take stays a conflict with the gate.
    let (status, refused) = c.call("POST", &format!("/approvals/{ask}/approve"), None);
    assert_eq!(status, 409, "{refused}");
    let (status, missing) = c.call("POST", &format!("/approvals/{ask}/respond"), None);
    assert_eq!(status, 400, "{missing}");
    let answered = c.ok(
        "POST",
        &format!("/approvals/{ask}/respond"),
        Some(json!({"response": {"name": "ann"}})),
    );
    assert_eq!(answered["result"]["output"][0], "hello ann\n", "{answered}");

    // Cancel, and the filters.
    pause(
        &home,
        &work,
        "exec --json --shell 'echo [3]' | approve --prompt 'Three?'",
    );
    let three = c.ok("GET", "/approvals?status=pending", None)["approvals"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let cancelled = c.ok("POST", &format!("/approvals/{three}/cancel"), None);
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert_eq!(
        c.ok("GET", "/approvals?status=pending", None)["approvals"],
        json!([])
    );
    let decided = c.ok("GET", "/approvals?status=decided", None)["approvals"].clone();
    assert_eq!(decided.as_array().unwrap().len(), 4, "{decided}");
    assert_eq!(c.call("GET", "/approvals?status=maybe", None).0, 400);
    assert_eq!(c.call("GET", "/approvals/0badc0de", None).0, 404);
    assert_eq!(c.call("POST", "/approvals/0badc0de/approve", None).0, 404);
}
