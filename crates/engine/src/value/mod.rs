//! JSON values with JavaScript semantics.
//!
//! Lobster is written in JavaScript and its observable behaviour leaks JS
//! rules: every number is an IEEE double printed by `Number#toString`,
//! objects keep insertion order (with array-index keys first), `==` and `<`
//! coerce, and `String(x)` has its own spelling for arrays and objects. This
//! module is the one place those rules live.

use std::fmt;

/// A JSON value as JavaScript sees it after `JSON.parse`.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// Every JSON number is a double, as in JavaScript.
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object with JavaScript property order.
    Object(Object),
    /// `undefined` as an object property's value (`pick` of a missing
    /// field): the key counts for `Object.keys`, JSON leaves it out.
    Undefined,
}

mod compare;
mod json_in;
mod json_out;
pub(crate) mod object;
mod text;

pub use compare::{RelOp, deep_equal, loose_compare, loose_eq};
pub use json_in::{Projection, Valid};
pub use json_out::stable_stringify;
pub use object::{Object, array_index};
pub use text::{compare_js_strings, format_number, is_js_space, string_to_number};

use json_out::write_json;
use text::write_js_string;

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<f64> for Value {
    fn from(n: f64) -> Self {
        Value::Number(n)
    }
}
impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Number(n as f64)
    }
}
impl From<usize> for Value {
    fn from(n: usize) -> Self {
        Value::Number(n as f64)
    }
}
impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Self {
        Value::Array(v)
    }
}
impl From<Object> for Value {
    fn from(o: Object) -> Self {
        Value::Object(o)
    }
}

impl Value {
    /// The string inside, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The object inside, if this is an object.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array inside, if this is an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// JavaScript `typeof` (arrays and null are `"object"`).
    pub fn type_of(&self) -> &'static str {
        match self {
            Value::Null | Value::Array(_) | Value::Object(_) => "object",
            Value::Undefined => "undefined",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
        }
    }

    /// A property lookup `value[key]` for objects and arrays (numeric keys);
    /// `None` when undefined.
    pub fn get_key(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(o) => o.get(key),
            Value::Array(a) => {
                if key == "length" {
                    return None;
                }
                array_index(key)
                    .and_then(|i| a.get(i as usize))
                    .filter(|v| !matches!(v, Value::Undefined))
            }
            _ => None,
        }
    }

    /// Walks a dot path (`a.b.0`) through objects and arrays. A primitive
    /// anywhere on the way yields `None` (JavaScript `undefined`).
    pub fn get_path(&self, path: &str) -> Option<&Value> {
        let mut cur = self;
        for part in path.split('.') {
            cur = cur.get_key(part)?;
        }
        Some(cur)
    }

    /// JavaScript truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null | Value::Undefined => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::String(s) => !s.is_empty(),
            Value::Array(_) | Value::Object(_) => true,
        }
    }

    /// JavaScript `String(value)`.
    pub fn to_js_string(&self) -> String {
        match self {
            Value::String(s) => s.clone(),
            other => {
                let mut out = String::new();
                write_js_string(other, &mut out);
                out
            }
        }
    }

    /// JavaScript `Number(value)`.
    pub fn to_number(&self) -> f64 {
        match self {
            Value::Null => 0.0,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Number(n) => *n,
            Value::String(s) => string_to_number(s),
            Value::Array(_) => string_to_number(&self.to_js_string()),
            Value::Object(_) | Value::Undefined => f64::NAN,
        }
    }

    /// Compact `JSON.stringify(value)`.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        write_json(self, &mut out, None, 0);
        out
    }

    /// `JSON.stringify(value)` as JavaScript returns it: `None` for `undefined`.
    pub fn stringify(&self) -> Option<String> {
        (!matches!(self, Value::Undefined)).then(|| self.to_json())
    }

    /// `JSON.stringify(value, null, 2)`.
    pub fn to_json_pretty(&self) -> String {
        let mut out = String::new();
        write_json(self, &mut out, Some(2), 0);
        out
    }

    /// Parses JSON text the way `JSON.parse` does.
    pub fn from_json(text: &str) -> Result<Value, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Converts to a `serde_json::Value` (numbers that are integers stay integers).
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            Value::Null | Value::Undefined => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => {
                if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
                    serde_json::Value::from(*n as i64)
                } else {
                    serde_json::Number::from_f64(*n)
                        .map_or(serde_json::Value::Null, serde_json::Value::Number)
                }
            }
            Value::String(s) => serde_json::Value::String(s.clone()),
            Value::Array(a) => serde_json::Value::Array(a.iter().map(Value::to_serde).collect()),
            Value::Object(o) => serde_json::Value::Object(
                o.defined()
                    .map(|(k, v)| (k.to_string(), v.to_serde()))
                    .collect(),
            ),
        }
    }
}

impl fmt::Display for Value {
    /// Displays as compact JSON.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// Parses a JSON literal known to be valid (key order is kept).
#[macro_export]
macro_rules! jv {
    ($json:literal) => {
        $crate::value::Value::from_json($json).expect("valid JSON literal")
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value {
        Value::from_json(s).unwrap()
    }

    #[test]
    fn numbers_print_like_javascript() {
        let v = parse("[1.0, 2.50, 1e21, 1e-7, 123456789012345678901, 0.1, -0.0, 100]");
        assert_eq!(
            v.to_json(),
            "[1,2.5,1e+21,1e-7,123456789012345680000,0.1,0,100]"
        );
    }

    #[test]
    fn index_keys_come_first() {
        let mut o = Object::new();
        o.insert("a", Value::from(1.0));
        o.insert("1", Value::from(2.0));
        o.insert("0", Value::from(3.0));
        o.insert("01", Value::from(4.0));
        assert_eq!(Value::Object(o).to_json(), r#"{"0":3,"1":2,"a":1,"01":4}"#);
    }

    #[test]
    fn duplicate_keys_keep_first_position_last_value() {
        assert_eq!(
            parse(r#"{"a":1,"b":2,"a":3}"#).to_json(),
            r#"{"a":3,"b":2}"#
        );
    }

    #[test]
    fn string_to_number_follows_js() {
        assert_eq!(string_to_number(" 0x10 "), 16.0);
        assert_eq!(string_to_number("1e1"), 10.0);
        assert_eq!(string_to_number(""), 0.0);
        assert_eq!(string_to_number("-Infinity"), f64::NEG_INFINITY);
        assert!(string_to_number("inf").is_nan());
        assert!(string_to_number("1_0").is_nan());
        assert!(string_to_number("-0x10").is_nan());
        assert_eq!(string_to_number(".5"), 0.5);
        assert_eq!(string_to_number("5."), 5.0);
        assert!(string_to_number(".").is_nan());
    }

    #[test]
    fn loose_equality_and_ordering() {
        let s40 = Value::from("40");
        let n40 = Value::from(40.0);
        assert!(loose_eq(Some(&s40), Some(&n40)));
        assert!(loose_eq(Some(&Value::Null), None));
        assert!(!loose_eq(Some(&Value::Null), Some(&Value::from(0.0))));
        assert!(loose_eq(Some(&Value::from(1.0)), Some(&Value::Bool(true))));
        assert!(loose_compare(
            Some(&Value::Null),
            RelOp::Lt,
            Some(&Value::from(18.0))
        ));
        assert!(!loose_compare(None, RelOp::Lt, Some(&Value::from(18.0))));
        assert!(!loose_compare(None, RelOp::Ge, Some(&Value::from(18.0))));
        assert!(loose_compare(
            Some(&Value::from("C")),
            RelOp::Lt,
            Some(&Value::from("a"))
        ));
    }

    #[test]
    fn js_string_of_composites() {
        assert_eq!(
            parse("[1,[2,null],{}]").to_js_string(),
            "1,2,,[object Object]"
        );
    }

    #[test]
    fn pretty_matches_json_stringify() {
        assert_eq!(
            parse(r#"{"a":[],"b":{},"c":[1]}"#).to_json_pretty(),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1\n  ]\n}"
        );
        assert_eq!(Value::from("\u{1}\"\n").to_json(), "\"\\u0001\\\"\\n\"");
    }
}
