//! What a person is shown at a gate, as one digest. A decision names the
//! digest it was made on; one made on anything else is refused (the gate
//! changed since it was shown), and each decision is recorded with it.
//!
//! The digest is SHA-256 over the canonical JSON (object keys sorted, no
//! whitespace) of `{"request": ..., "state": ...}`: the request is what
//! the gate asks (prompt, items, policy), the state is what resumes (the
//! definition the run paused with, the steps run so far, the gate's step).
//! Both are kept once at the pause; an edit of either, in the store's file
//! say, changes the digest.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The hex SHA-256 of what a gate paused with `state_json` and
/// `request_json` shows.
pub fn digest(state_json: &str, request_json: &str) -> String {
    let parse = |text: &str| {
        serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_string()))
    };
    let mut shown = serde_json::Map::new();
    shown.insert("request".into(), parse(request_json));
    shown.insert("state".into(), parse(state_json));
    let mut text = String::new();
    canonical(&Value::Object(shown), &mut text);
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `value` as JSON with every object's keys in sorted order.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_ignores_key_order_and_spacing_and_nothing_else() {
        let d = digest(
            r#"{"b": 1, "a": [1, {"y": 2, "x": "é"}]}"#,
            r#"{"prompt": "Ship?"}"#,
        );
        assert_eq!(
            d,
            digest(
                r#"{"a":[1,{"x":"é","y":2}],"b":1}"#,
                r#"{ "prompt":"Ship?" }"#
            )
        );
        assert_eq!(d.len(), 64);
        for (state, request) in [
            (
                r#"{"b": 2, "a": [1, {"y": 2, "x": "é"}]}"#,
                r#"{"prompt": "Ship?"}"#,
            ),
            (
                r#"{"b": 1, "a": [{"y": 2, "x": "é"}, 1]}"#,
                r#"{"prompt": "Ship?"}"#,
            ),
            (
                r#"{"b": 1, "a": [1, {"y": 2, "x": "é"}]}"#,
                r#"{"prompt": "Ship!"}"#,
            ),
            // The halves are not interchangeable.
            (
                r#"{"prompt": "Ship?"}"#,
                r#"{"b": 1, "a": [1, {"y": 2, "x": "é"}]}"#,
            ),
        ] {
            assert_ne!(digest(state, request), d, "{state} {request}");
        }
    }
}
