//! Behaviour where `lobster` differed from the real Lobster, found by running
//! generated pipelines and workflows through both; one test per finding.

use std::path::Path;
use std::process::Output;

use clawdis_e2e::lobster;

/// Runs `lobster` with `args` in `dir` (state in `dir/state`): its exit code
/// and envelope.
fn call(dir: &Path, args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = lobster(&dir.join("state"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), clawdis_e2e::envelope(&out))
}

fn human(flow: &str, data: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.json"), data).unwrap();
    lobster(&dir.path().join("state"))
        .current_dir(dir.path())
        .arg(flow)
        .output()
        .unwrap()
}

/// `pick` sets every field it names, undefined when missing: `table` shows
/// those columns in pick order, while JSON output leaves them out.
#[test]
fn picked_fields_are_table_columns_even_when_missing() {
    let data = r#"[{"b":1},{"a":2,"b":3}]"#;
    let out = human("exec --json cat d.json | pick a,b | table", data);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "a    b  \n---  ---\n     1  \n2    3  \n"
    );
    let out = human("exec --json cat d.json | pick c | table", data);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "c  \n---\n   \n   \n");
    let out = human("exec --json cat d.json | pick a,b | json", data);
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(items, serde_json::json!([{"b": 1}, {"a": 2, "b": 3}]));
}

/// `where a>=` has no value after `>=`, so the pattern backtracks to `>`
/// with the value `=`.
#[test]
fn where_backtracks_to_a_shorter_operator() {
    let out = human(
        "exec --json cat d.json | where a>= | json",
        r#"[{"a":""},{"a":"x"},{"a":0}]"#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(items, serde_json::json!([{"a": "x"}]));
}

/// `map --unwrap` of a missing field yields `undefined`, not `null`: it
/// renders empty, dedupes apart from `null`, is an empty stdin line, and
/// vanishes from a wrapping object.
#[test]
fn unwrapped_missing_fields_are_undefined() {
    let data = r#"[{"a":1},{"b":2},{"a":null},{"c":3}]"#;
    let json = |flow: &str| -> serde_json::Value {
        let out = human(flow, data);
        assert!(
            out.status.success(),
            "{flow}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let unwrap = "exec --json cat d.json | map --unwrap a";
    assert_eq!(
        json(&format!("{unwrap} | json")),
        serde_json::json!([1, null, null, null])
    );
    assert_eq!(
        json(&format!("{unwrap} | dedupe | json")),
        serde_json::json!([1, null, null])
    );
    assert_eq!(
        json(&format!("{unwrap} | template --text '[{{{{.}}}}]'")),
        serde_json::json!(["[1]", "[]", "[]", "[]"])
    );
    assert_eq!(
        json(&format!("{unwrap} | exec --stdin jsonl cat")),
        serde_json::json!(["1", "null"])
    );
    assert_eq!(
        json(&format!("{unwrap} | map x=1 | json")),
        serde_json::json!([{"value": 1, "x": "1"}, {"x": "1"}, {"value": null, "x": "1"}, {"x": "1"}])
    );
}

/// A `groupBy` key that is undefined for every item is still a property,
/// so `table` shows its column.
#[test]
fn group_by_keeps_an_undefined_key_column() {
    let out = human(
        "exec --json cat d.json | groupBy --key nope | table",
        "[1,2]",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "key  items  count\n---  -----  -----\n     [1,2]  2    \n"
    );
}

/// Lobster retires a pipeline's approval id once a stage after its gate
/// has started. An approval that was the last stage starts none, so its id
/// outlives the run and reusing it reports the missing resume state; with
/// a stage after the gate (issue #33: `approve | pick`), or after a
/// rejection, the id is "not found or expired" (`parse_error`, exit 2).
#[test]
fn a_pipelines_approval_id_dies_once_a_stage_after_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let gone = (Some(2), "parse_error", "not found or expired");
    for (tail, decision, second) in [
        (
            "",
            "yes",
            (Some(1), "runtime_error", "Pipeline resume state not found"),
        ),
        ("", "no", gone),
        (" | pick a", "yes", gone),
        (" | pick a", "no", gone),
        (" | approve --prompt again", "yes", gone),
        (" | exec --shell 'exit 3'", "yes", gone),
    ] {
        let flow = format!("exec --json echo '[{{\"a\":1}}]' | approve --prompt go{tail}");
        let (_, paused) = call(dir.path(), &["run", "--mode", "tool", &flow]);
        let id = paused["requiresApproval"]["approvalId"]
            .as_str()
            .unwrap()
            .to_string();
        let (_, first) = call(dir.path(), &["resume", "--id", &id, "--approve", decision]);
        assert!(first["ok"].is_boolean(), "{flow}: {first}");
        let (code, again) = call(dir.path(), &["resume", "--id", &id, "--approve", "yes"]);
        assert_eq!(code, second.0, "{flow} then {decision}: {again}");
        assert_eq!(again["error"]["type"], second.1, "{flow}: {again}");
        assert!(
            again["error"]["message"]
                .as_str()
                .unwrap()
                .contains(second.2),
            "{flow}: {again}"
        );
    }
}

/// `sort` over mixed numbers and strings: Lobster's comparator is not a
/// total order there (numbers by value, a number and a string as strings),
/// so the result is whatever V8's TimSort makes of it, and Rust's own sort
/// ordered such input differently (and may panic on it).
#[test]
fn sort_of_mixed_keys_follows_v8_order() {
    let one = r#"10,"9",9,"10",1,"a",2,"1",null,"b",3,"2",20,"3",100,"x""#;
    let data = format!("[{one},{one},{one}]");
    let out = human("exec --json cat d.json | sort | json", &data);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected: serde_json::Value = serde_json::from_str(
        r#"[1,"1",1,"1",1,"1",2,10,"10",10,"10",2,10,"10",2,100,100,100,"2","2","2",3,20,20,"3",3,"3",3,"3","9",9,9,20,"9","9",9,"a","a","a","b","b","b","x","x","x",null,null,null]"#,
    )
    .unwrap();
    assert_eq!(items, expected);
    let out = human("exec --json cat d.json | sort --desc | json", &data);
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected: serde_json::Value = serde_json::from_str(
        r#"[null,null,null,"x","x","x","b","b","b","a","a","a","9","9","9",100,100,100,20,20,20,10,10,10,9,9,9,3,"3",3,"3",3,"3",2,"2",2,"2",2,"2","10","10","10",1,"1",1,"1",1,"1"]"#,
    )
    .unwrap();
    assert_eq!(items, expected);
}

/// A command that fails with nothing on stdout or stderr is named by what
/// was run: the shell line for `exec --shell`, the program otherwise (issue
/// #20: ours named the shell's path, `/bin/sh`).
#[test]
fn a_silent_failure_names_what_ran() {
    let dir = tempfile::tempdir().unwrap();
    for (flow, message) in [
        ("exec --shell 'exit 3'", "exec failed (3): exit 3"),
        ("exec --json --shell 'exit 5'", "exec failed (5): exit 5"),
        ("exec false", "exec failed (1): false"),
        ("exec sh -c 'exit 4'", "exec failed (4): sh"),
    ] {
        let (code, envelope) = call(dir.path(), &["run", "--mode", "tool", flow]);
        assert_eq!(code, Some(1), "{flow}");
        assert_eq!(
            envelope["error"]["type"], "runtime_error",
            "{flow}: {envelope}"
        );
        assert_eq!(envelope["error"]["message"], message, "{flow}");
    }
}

/// Given both `--id` and `--token`, Lobster resumes by the id; an empty id
/// leaves the token to decide (issue #20: ours used the token first).
#[test]
fn an_approval_id_wins_over_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paused) = call(
        dir.path(),
        &[
            "run",
            "--mode",
            "tool",
            "exec --json echo [1] | approve --prompt go",
        ],
    );
    let id = paused["requiresApproval"]["approvalId"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, resumed) = call(
        dir.path(),
        &[
            "resume",
            "--id",
            &id,
            "--token",
            "garbage",
            "--approve",
            "yes",
        ],
    );
    assert_eq!(
        (code, &resumed["status"], &resumed["output"]),
        (Some(0), &"ok".into(), &serde_json::json!([1])),
        "{resumed}"
    );
    let (code, failed) = call(
        dir.path(),
        &[
            "resume",
            "--id",
            "abc",
            "--token",
            "garbage",
            "--approve",
            "yes",
        ],
    );
    assert_eq!(
        (code, failed["error"]["message"].as_str()),
        (Some(2), Some("Approval ID \"abc\" not found or expired")),
        "{failed}"
    );
    let (code, failed) = call(
        dir.path(),
        &[
            "resume",
            "--id",
            "",
            "--token",
            "garbage",
            "--approve",
            "yes",
        ],
    );
    assert_eq!(
        (code, failed["error"]["message"].as_str()),
        (Some(2), Some("Invalid token")),
        "{failed}"
    );
}

/// `exec --shell ''` names no command (issue #20: ours panicked on it), and
/// a program that cannot be started is reported as Node reports a failed
/// spawn (issue #20: ours gave Rust's wording).
#[test]
fn exec_without_a_command_or_a_startable_program() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notexec.sh"), "#!/bin/sh\necho never\n").unwrap();
    for (flow, message) in [
        ("exec --shell ''", "exec requires a command"),
        ("exec --shell=", "exec requires a command"),
        ("exec ./notexec.sh", "spawn ./notexec.sh EACCES"),
        ("exec /tmp", "spawn /tmp EACCES"),
    ] {
        let (code, envelope) = call(dir.path(), &["run", "--mode", "tool", flow]);
        assert_eq!(code, Some(1), "{flow}: {envelope}");
        assert_eq!(
            (
                envelope["error"]["type"].as_str(),
                envelope["error"]["message"].as_str()
            ),
            (Some("runtime_error"), Some(message)),
            "{flow}"
        );
    }
}

/// Output that is not JSON fails with the message Lobster passes on from
/// V8's `JSON.parse` (issue #20: ours passed on serde_json's).
#[test]
fn malformed_json_output_is_reported_as_json_parse_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    for (output, message) in [
        ("nope", "Unexpected token 'o', \"nope\" is not valid JSON"),
        (
            "[1 2]",
            "Expected ',' or ']' after array element in JSON at position 3 (line 1 column 4)",
        ),
        ("[1,", "Unexpected end of JSON input"),
    ] {
        std::fs::write(dir.path().join("out.txt"), output).unwrap();
        let (_, envelope) = call(
            dir.path(),
            &["run", "--mode", "tool", "exec --json --shell 'cat out.txt'"],
        );
        assert_eq!(
            envelope["error"]["message"],
            format!("exec --json could not parse stdout as JSON: {message}"),
            "{output}"
        );
    }
}
