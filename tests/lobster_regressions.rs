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

/// `map --unwrap` of a missing field yields `undefined`, not `null`: it
/// renders empty, dedupes apart from `null`, is an empty stdin line, and
/// vanishes from a wrapping object.
#[test]
fn unwrapped_missing_fields_are_undefined() {
    let data = r#"[{"a":1},{"b":2},{"a":null},{"c":3}]"#;
    let json = |flow: &str| -> serde_json::Value {
        let out = human(flow, data);
        assert!(out.status.success(), "{flow}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let unwrap = "exec --json cat d.json | map --unwrap a";
    assert_eq!(json(&format!("{unwrap} | json")), serde_json::json!([1, null, null, null]));
    assert_eq!(json(&format!("{unwrap} | dedupe | json")), serde_json::json!([1, null, null]));
    assert_eq!(json(&format!("{unwrap} | template --text '[{{{{.}}}}]'")), serde_json::json!(["[1]", "[]", "[]", "[]"]));
    assert_eq!(json(&format!("{unwrap} | exec --stdin jsonl cat")), serde_json::json!(["1", "null"]));
    assert_eq!(json(&format!("{unwrap} | map x=1 | json")), serde_json::json!([{"value": 1, "x": "1"}, {"x": "1"}, {"value": null, "x": "1"}, {"x": "1"}]));
}

/// A `groupBy` key that is undefined for every item is still a property,
/// so `table` shows its column.
#[test]
fn group_by_keeps_an_undefined_key_column() {
    let out = human("exec --json cat d.json | groupBy --key nope | table", "[1,2]");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "key  items  count\n---  -----  -----\n     [1,2]  2    \n");
}
