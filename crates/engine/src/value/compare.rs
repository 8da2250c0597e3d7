//! JavaScript's comparisons: `==` and `<`/`<=`/`>`/`>=` with their
//! coercions, and deep equality.

use std::cmp::Ordering;

use super::{Value, compare_js_strings, string_to_number};

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
