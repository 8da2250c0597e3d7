//! JSON values with JavaScript semantics.
//!
//! Lobster is written in JavaScript and its observable behaviour leaks JS
//! rules: every number is an IEEE double printed by `Number#toString`,
//! objects keep insertion order (with array-index keys first), `==` and `<`
//! coerce, and `String(x)` has its own spelling for arrays and objects. This
//! module is the one place those rules live.

use std::cmp::Ordering;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

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

use crate::object::{BuiltKey, ObjectBuilder};
pub use crate::object::{Object, array_index};

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

/// JavaScript `Number#toString()` for a double.
pub fn format_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if n == 0.0 {
        return "0".into();
    }
    let mut buf = ryu_js::Buffer::new();
    buf.format_finite(n).to_string()
}

fn write_js_string(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Undefined => out.push_str("undefined"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&format_number(*n)),
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // Array#join renders null (and undefined) elements as "".
                if !matches!(item, Value::Null | Value::Undefined) {
                    write_js_string(item, out);
                }
            }
        }
        Value::Object(_) => out.push_str("[object Object]"),
    }
}

/// Whether `c` is JavaScript white space or a line terminator (`\s`).
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// JavaScript `Number(string)`: trims white space, accepts `0x`/`0o`/`0b`
/// integers, `Infinity` and decimal literals; anything else is `NaN`.
pub fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(is_js_space);
    if t.is_empty() {
        return 0.0;
    }
    let radix = match t.get(..2) {
        Some("0x" | "0X") => Some(16),
        Some("0o" | "0O") => Some(8),
        Some("0b" | "0B") => Some(2),
        _ => None,
    };
    if let Some(radix) = radix {
        let digits = &t[2..];
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return f64::NAN;
        }
        return digits.chars().fold(0.0, |acc, c| {
            acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
        });
    }
    let (sign, body) = match t.as_bytes()[0] {
        b'+' => (1.0, &t[1..]),
        b'-' => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if body == "Infinity" {
        return sign * f64::INFINITY;
    }
    if !is_decimal_literal(body) {
        return f64::NAN;
    }
    body.parse::<f64>().map_or(f64::NAN, |n| sign * n)
}

/// `StrUnsignedDecimalLiteral`: digits with an optional fraction and exponent.
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return false;
        }
    }
    i == b.len()
}

/// Compares two strings by UTF-16 code units, as JavaScript does.
pub fn compare_js_strings(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// A primitive after JavaScript `ToPrimitive` (objects and arrays become strings).
enum Prim<'a> {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    Str(std::borrow::Cow<'a, str>),
}

fn to_primitive(v: Option<&Value>) -> Prim<'_> {
    match v {
        None => Prim::Undefined,
        Some(Value::Null) => Prim::Null,
        Some(Value::Bool(b)) => Prim::Bool(*b),
        Some(Value::Number(n)) => Prim::Number(*n),
        Some(Value::String(s)) => Prim::Str(std::borrow::Cow::Borrowed(s)),
        Some(other) => Prim::Str(std::borrow::Cow::Owned(other.to_js_string())),
    }
}

fn prim_to_number(p: &Prim<'_>) -> f64 {
    match p {
        Prim::Undefined => f64::NAN,
        Prim::Null => 0.0,
        Prim::Bool(b) => f64::from(u8::from(*b)),
        Prim::Number(n) => *n,
        Prim::Str(s) => string_to_number(s),
    }
}

/// JavaScript abstract equality `a == b` (`None` is `undefined`). Two
/// distinct objects are never equal, as each JSON value is its own object.
pub fn loose_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    let a_obj = matches!(a, Some(Value::Array(_) | Value::Object(_)));
    let b_obj = matches!(b, Some(Value::Array(_) | Value::Object(_)));
    if a_obj && b_obj {
        return false;
    }
    let (pa, pb) = (to_primitive(a), to_primitive(b));
    // Objects compared with null/undefined are never equal.
    if (a_obj && matches!(pb, Prim::Null | Prim::Undefined))
        || (b_obj && matches!(pa, Prim::Null | Prim::Undefined))
    {
        return false;
    }
    prim_loose_eq(&pa, &pb)
}

fn prim_loose_eq(a: &Prim<'_>, b: &Prim<'_>) -> bool {
    match (a, b) {
        (Prim::Undefined | Prim::Null, Prim::Undefined | Prim::Null) => true,
        (Prim::Undefined | Prim::Null, _) | (_, Prim::Undefined | Prim::Null) => false,
        (Prim::Str(x), Prim::Str(y)) => x == y,
        (Prim::Bool(x), Prim::Bool(y)) => x == y,
        _ => prim_to_number(a) == prim_to_number(b),
    }
}

/// JavaScript abstract relational comparison `a < b`; `None` when the result
/// is undefined (a `NaN` operand), which makes every relational operator false.
fn less_than(a: &Prim<'_>, b: &Prim<'_>) -> Option<bool> {
    if let (Prim::Str(x), Prim::Str(y)) = (a, b) {
        return Some(compare_js_strings(x, y) == Ordering::Less);
    }
    let (x, y) = (prim_to_number(a), prim_to_number(b));
    if x.is_nan() || y.is_nan() {
        return None;
    }
    Some(x < y)
}

/// A relational operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// JavaScript `a <op> b` with its coercions.
pub fn loose_compare(a: Option<&Value>, op: RelOp, b: Option<&Value>) -> bool {
    let (pa, pb) = (to_primitive(a), to_primitive(b));
    match op {
        RelOp::Lt => less_than(&pa, &pb) == Some(true),
        RelOp::Gt => less_than(&pb, &pa) == Some(true),
        RelOp::Le => less_than(&pb, &pa) == Some(false),
        RelOp::Ge => less_than(&pa, &pb) == Some(false),
    }
}

/// Deep equality of two JSON values (numbers by value, objects by key set).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| deep_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        (Value::Number(x), Value::Number(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

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

fn write_json(v: &Value, out: &mut String, indent: Option<usize>, depth: usize) {
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
                        crate::object::intern(k),
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

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        ValueSeed {
            depth: 0,
            keep: None,
        }
        .deserialize(deserializer)
    }
}

/// Deserializes a value nested `depth` levels deep (objects at each depth
/// share key shapes, see [`ObjectBuilder`]). With `keep`, an object builds
/// only those properties and checks the others as [`Valid`].
#[derive(Clone, Copy)]
struct ValueSeed<'k> {
    depth: usize,
    keep: Option<&'k [String]>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(ValueSeed {
            depth: self.depth + 1,
            keep: None,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut builder = ObjectBuilder::new(self.depth, map.size_hint().unwrap_or(0).min(4096));
        let nested = ValueSeed {
            depth: self.depth + 1,
            keep: None,
        };
        match self.keep {
            None => {
                while let Some(key) = map.next_key_seed(KeySeed(&builder))? {
                    let value = map.next_value_seed(nested)?;
                    builder.insert(key, value);
                }
            }
            Some(keep) => {
                while let Some(key) = map.next_key_seed(KeptKey {
                    builder: &builder,
                    keep,
                })? {
                    match key {
                        Some(key) => {
                            let value = map.next_value_seed(nested)?;
                            builder.insert(key, value);
                        }
                        None => {
                            map.next_value::<Valid>()?;
                        }
                    }
                }
            }
        }
        Ok(Value::Object(builder.finish()))
    }
}

/// A JSON value checked exactly as [`Value`] would read it (strings with
/// their escapes, numbers within range) but not built: for values nobody
/// will see that building would still have refused.
pub struct Valid;

impl<'de> Deserialize<'de> for Valid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Valid, D::Error> {
        // `deserialize_any`, as for `Value`: `deserialize_ignored_any`
        // would let through what `Value` refuses (lone surrogate escapes,
        // numbers out of range).
        deserializer.deserialize_any(ValidVisitor)
    }
}

struct ValidVisitor;

impl<'de> Visitor<'de> for ValidVisitor {
    type Value = Valid;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_i128<E>(self, _: i128) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_u128<E>(self, _: u128) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_str<E>(self, _: &str) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_unit<E>(self) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_none<E>(self) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Valid, D::Error> {
        Valid::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Valid, A::Error> {
        while seq.next_element::<Valid>()?.is_some() {}
        Ok(Valid)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Valid, A::Error> {
        while map.next_entry::<Valid, Valid>()?.is_some() {}
        Ok(Valid)
    }
}

/// Reads a value, building only the `keep` properties of a top-level
/// object; the values of its other properties are checked as [`Valid`] and
/// dropped. For readers that cannot see the other properties (see
/// [`crate::commands::transform::keys_seen`]).
pub struct Projection<'a> {
    /// The properties to build.
    pub keep: &'a [String],
}

impl<'de> DeserializeSeed<'de> for &Projection<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        ValueSeed {
            depth: 0,
            keep: Some(self.keep),
        }
        .deserialize(deserializer)
    }
}

/// Reads a key of a projected object: the built key when it is kept.
struct KeptKey<'a> {
    builder: &'a ObjectBuilder,
    keep: &'a [String],
}

impl<'de> DeserializeSeed<'de> for KeptKey<'_> {
    type Value = Option<BuiltKey>;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Option<BuiltKey>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeptKey<'_> {
    type Value = Option<BuiltKey>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Option<BuiltKey>, E> {
        Ok(self
            .keep
            .iter()
            .any(|k| k == v)
            .then(|| self.builder.key(v)))
    }
}

/// Reads a map key for the object `0` builds; YAML allows non-string keys,
/// which JavaScript turns into strings.
struct KeySeed<'a>(&'a ObjectBuilder);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = BuiltKey;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<BuiltKey, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = BuiltKey;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map key")
    }
    fn visit_str<E>(self, v: &str) -> Result<BuiltKey, E> {
        Ok(self.0.key(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<BuiltKey, E> {
        Ok(self.0.other_key(&Value::Bool(v).to_js_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<BuiltKey, E> {
        Ok(self.0.other_key(&format_number(v as f64)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<BuiltKey, E> {
        Ok(self.0.other_key(&format_number(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<BuiltKey, E> {
        Ok(self.0.other_key(&format_number(v)))
    }
    fn visit_unit<E>(self) -> Result<BuiltKey, E> {
        Ok(self.0.other_key("null"))
    }
    fn visit_none<E>(self) -> Result<BuiltKey, E> {
        Ok(self.0.other_key("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<BuiltKey, A::Error> {
        Err(de::Error::custom("map keys must be scalars"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<BuiltKey, A::Error> {
        Err(de::Error::custom("map keys must be scalars"))
    }
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

    #[test]
    fn projection_builds_only_the_kept_properties() {
        let keep = ["v".to_string(), "id".to_string()];
        let read = |json: &str| {
            (&Projection { keep: &keep }).deserialize(&mut serde_json::Deserializer::from_str(json))
        };
        let obj = read(r#"{"id":1,"tags":["a",{"x":[1]}],"v":2,"name":"n","v":3}"#).unwrap();
        assert_eq!(obj.to_json(), r#"{"id":1,"v":3}"#);
        for whole in [r#"[{"tags":1}]"#, "7", r#""s""#, "null"] {
            assert_eq!(
                read(whole).unwrap(),
                Value::from_json(whole).unwrap(),
                "{whole}"
            );
        }
        for bad in [
            r#"{"tags":"\ud800"}"#,
            r#"{"tags":[1e400]}"#,
            r#"{"tags":[1,]}"#,
        ] {
            assert!(read(bad).is_err(), "{bad} is refused as Value refuses it");
            assert!(Value::from_json(bad).is_err(), "{bad}");
        }
    }

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
