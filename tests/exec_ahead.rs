//! `exec --json` followed by pure stages works on the output while the
//! command still writes it; what comes out must be exactly what parsing
//! the whole output first gives, whatever the command prints.

use std::process::Output;

use clawdis_e2e::lobster;

/// Runs `flow` in a directory whose `gen.sh` is `script`, with the fast
/// paths on or off (`CLAWDIS_FAST_PATHS`).
fn run_with(flow: &str, script: &str, fast: bool) -> Output {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gen.sh"), script).unwrap();
    lobster(&dir.path().join("state"))
        .current_dir(dir.path())
        .env("CLAWDIS_FAST_PATHS", if fast { "1" } else { "0" })
        .arg(flow)
        .output()
        .unwrap()
}

/// Runs `flow` with the fast paths on.
fn run(flow: &str, script: &str) -> Output {
    run_with(flow, script, true)
}

/// `flow` over `script` gives the same exit, stderr and stdout worked
/// ahead as with the fast paths off.
fn assert_same_both_ways(flow: &str, script: &str) {
    let ahead = run_with(flow, script, true);
    let whole = run_with(flow, script, false);
    let shown = format!(
        "{flow} over {}",
        script.chars().take(60).collect::<String>()
    );
    assert_eq!(ahead.status.code(), whole.status.code(), "{shown}");
    assert_eq!(
        String::from_utf8_lossy(&ahead.stderr),
        String::from_utf8_lossy(&whole.stderr),
        "{shown}"
    );
    assert_eq!(
        String::from_utf8_lossy(&ahead.stdout),
        String::from_utf8_lossy(&whole.stdout),
        "{shown}"
    );
}

/// An awk program printing a JSON array of `n` objects without its `]`.
fn open_array(n: u32) -> String {
    format!(
        r#"awk 'BEGIN {{ printf "["; for (i = 0; i < {n}; i++) {{ if (i) printf ","; printf "{{\"i\":%d,\"s\":\"x%d\"}}", i, i }} }}'"#
    )
}

#[test]
fn worked_ahead_output_matches_whole_output_parsing() {
    let big = open_array(20_000);
    let scripts = [
        format!("{big}; echo ']'"),
        format!("{big}; echo ']'; exit 3"),
        format!("{big}; echo"),
        format!("{big}; echo ',]'"),
        format!("{big}; echo '] x'"),
        format!("{big}; echo '] []'"),
        r#"printf '\302\240[{"i":1},{"i":2}]\302\240'"#.to_string(),
        r#"printf '["a\377b", "c"]'"#.to_string(),
        r#"printf '{"i":1}'"#.to_string(),
        "printf '  42 '".to_string(),
        "printf ''".to_string(),
        "printf '[1,2]' >&2; exit 1".to_string(),
    ];
    for script in &scripts {
        assert_same_both_ways("exec --json sh gen.sh | head --n 1000000 | json", script);
    }
}

#[test]
fn stages_worked_ahead_give_their_usual_result() {
    let script = format!("{}; echo ']'", open_array(20_000));
    let out = run(
        "exec --json sh gen.sh | where i>=19990 | pick s,i | sort --key i --desc | head --n 3 | json",
        &script,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        items,
        serde_json::json!([{"s": "x19999", "i": 19999}, {"s": "x19998", "i": 19998}, {"s": "x19997", "i": 19997}])
    );
    // A failure after the items a stage took still fails the run.
    let out = run(
        "exec --json sh gen.sh | head --n 1 | json",
        &format!("{}; echo '] x'", open_array(20_000)),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("exec --json could not parse stdout as JSON"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `where` stages then `pick` see only some properties of each object, so
/// the others are not built; the result must be what building them gives.
#[test]
fn properties_no_stage_sees_change_nothing() {
    let docs = [
        r#"[{"id":1,"v":7,"name":"a","tags":["x",{"deep":[1,2]}]},{"id":2,"v":3,"name":"b"},{"v":9,"id":3}]"#,
        r#"[{"v":5,"v":1,"id":1},{"id":2,"v":"6","name":null,"extra":{"v":100}},{"name":"no v"}]"#,
        r#"[7,"v",[{"v":8}],null,{"a.b":1,"a":{"b":2},"v":4,"id":"x"},{"0":1,"v":10,"1":2}]"#,
        r#"[{"a":{"b":3},"v":1},{"a":[5],"v":2},{"a":"str","v":3},{"id":1,"v":2,"s":"\ud800"}]"#,
        r#"[{"id":1,"v":2,"big":1e400}]"#,
    ];
    let flows = [
        "exec --json sh gen.sh | where v>=5 | pick id,v,name | json",
        "exec --json sh gen.sh | where a.b>=2 | pick v,a | json",
        "exec --json sh gen.sh | where v!=4 | where id=1 | pick id, 0 ,a.b | sort --key id | json",
        "exec --json sh gen.sh | pick v | json",
    ];
    for doc in docs {
        for flow in flows {
            assert_same_both_ways(flow, &format!("printf '%s' '{doc}'"));
        }
    }
}

/// A `--shell` line dash runs as a builtin (`printf`) is computed
/// in-process; the stages worked ahead must read it as they read a real
/// command's output, larger than a pipe holds included.
#[test]
fn builtin_output_is_worked_ahead_like_a_commands() {
    let doc = format!(
        "[{}]",
        (0..20_000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    assert!(doc.len() > 64 * 1024, "more than a pipe's buffer");
    let flow = |cmd: &str| format!("exec --json {cmd} | head --n 3 | json");
    let builtin = run(&flow(&format!("--shell \"printf '%s' '{doc}'\"")), "");
    let process = run(&flow("sh gen.sh"), &format!("printf '%s' '{doc}'"));
    assert_eq!(
        builtin.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&builtin.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&builtin.stdout),
        String::from_utf8_lossy(&process.stdout)
    );
    let items = run(
        &format!("exec --json --shell \"printf '%s' '{doc}'\" | head --n 2 | json"),
        "",
    );
    assert_eq!(String::from_utf8_lossy(&items.stdout), "[\n  0,\n  1\n]\n");
}
