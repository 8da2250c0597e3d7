//! Writing values as JSON the way `JSON.stringify` does, and Lobster's
//! `stableStringify`.

use super::{Object, Value, compare_js_strings, format_number};

fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => out.push_str(&format!("\\u{b:04x}")),
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

pub(super) fn write_json(v: &Value, out: &mut String, indent: Option<usize>, depth: usize) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(step) = indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', step * depth));
        }
    };
    match v {
        // `undefined` in an array is `null`; object members that are
        // undefined are left out below.
        Value::Null | Value::Undefined => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_finite() {
                out.push_str(&format_number(*n));
            } else {
                out.push_str("null");
            }
        }
        Value::String(s) => write_json_string(s, out),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_json(item, out, indent, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(obj) => {
            if obj.defined().next().is_none() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (k, item)) in obj.defined().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_json_string(k, out);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_json(item, out, indent, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
    }
}

/// JSON with object keys sorted (Lobster's `stableStringify`).
pub fn stable_stringify(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            Value::Object(o) => {
                let mut keys: Vec<&str> = o.defined().map(|(k, _)| k).collect();
                keys.sort_by(|a, b| compare_js_strings(a, b));
                // Build without JS ordering so the sorted order is kept.
                let mut sorted_obj = Object::with_capacity(keys.len());
                for k in keys {
                    sorted_obj.push_unordered(
                        crate::value::object::intern(k),
                        sorted(o.get(k).unwrap_or(&Value::Null)),
                    );
                }
                Value::Object(sorted_obj)
            }
            other => other.clone(),
        }
    }
    sorted(v).to_json()
}

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Value::Null | Value::Undefined => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(n) => {
                if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
                    serializer.serialize_i64(*n as i64)
                } else if n.is_finite() {
                    serializer.serialize_f64(*n)
                } else {
                    serializer.serialize_unit()
                }
            }
            Value::String(s) => serializer.serialize_str(s),
            Value::Array(a) => {
                let mut seq = serializer.serialize_seq(Some(a.len()))?;
                for item in a {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(o) => {
                let mut map = serializer.serialize_map(None)?;
                for (k, v) in o.defined() {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}
