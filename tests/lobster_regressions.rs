//! Behaviour where `lobster` differed from the real Lobster, found by running
//! generated pipelines and workflows through both; one test per finding.

use std::process::Output;

use clawdis_e2e::lobster;

fn human(flow: &str, data: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.json"), data).unwrap();
    lobster(&dir.path().join("state")).current_dir(dir.path()).arg(flow).output().unwrap()
}

/// `pick` sets every field it names, undefined when missing: `table` shows
/// those columns in pick order, while JSON output leaves them out.
#[test]
fn picked_fields_are_table_columns_even_when_missing() {
    let data = r#"[{"b":1},{"a":2,"b":3}]"#;
    let out = human("exec --json cat d.json | pick a,b | table", data);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a    b  \n---  ---\n     1  \n2    3  \n");
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
    let out = human("exec --json cat d.json | where a>= | json", r#"[{"a":""},{"a":"x"},{"a":0}]"#);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(items, serde_json::json!([{"a": "x"}]));
}
