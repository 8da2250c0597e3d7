//! Dot-path lookups with JavaScript property semantics.

use std::borrow::Cow;

use crate::value::Value;

/// `value[key]` in JavaScript for JSON values: object properties, array
/// indices and `length`, string characters and `length`.
pub fn js_get<'a>(value: &'a Value, key: &str) -> Option<Cow<'a, Value>> {
    match value {
        Value::Object(o) => o.get(key).map(Cow::Borrowed),
        Value::Array(a) if key == "length" => Some(Cow::Owned(Value::from(a.len()))),
        Value::Array(_) => value.get_key(key).map(Cow::Borrowed),
        Value::String(s) if key == "length" => {
            Some(Cow::Owned(Value::from(s.encode_utf16().count())))
        }
        Value::String(s) => {
            let idx: usize = key
                .parse()
                .ok()
                .filter(|_| !key.starts_with('+') && (key == "0" || !key.starts_with('0')))?;
            let unit = *s.encode_utf16().collect::<Vec<u16>>().get(idx)?;
            Some(Cow::Owned(Value::String(String::from_utf16_lossy(&[unit]))))
        }
        _ => None,
    }
}

/// Lobster's `getByPath`: empty segments are ignored, `null`/`undefined`
/// stop the walk, and any other value is indexed like JavaScript does.
pub fn get_by_path<'a>(value: &'a Value, path: &str) -> Option<Cow<'a, Value>> {
    let mut cur = Cow::Borrowed(value);
    for part in path.split('.').filter(|p| !p.is_empty()) {
        if matches!(*cur, Value::Null) {
            return None;
        }
        cur = match cur {
            Cow::Borrowed(v) => js_get(v, part)?,
            Cow::Owned(v) => Cow::Owned(js_get(&v, part)?.into_owned()),
        };
    }
    Some(cur)
}

/// `where`'s path walk: only objects and arrays are descended into; any
/// other value on the way yields `undefined`.
pub fn get_object_path<'a>(value: &'a Value, path: &str) -> Option<Cow<'a, Value>> {
    let mut cur = Cow::Borrowed(value);
    for part in path.split('.') {
        if !matches!(*cur, Value::Object(_) | Value::Array(_)) {
            return None;
        }
        cur = match cur {
            Cow::Borrowed(v) => js_get(v, part)?,
            Cow::Owned(v) => Cow::Owned(js_get(&v, part)?.into_owned()),
        };
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_js_indexing() {
        let v = Value::from_json(r#"{"a":{"b":[10,20]},"s":"héllo"}"#).unwrap();
        assert_eq!(
            get_by_path(&v, "a.b.1").unwrap().into_owned(),
            Value::from(20.0)
        );
        assert_eq!(
            get_by_path(&v, "a.b.length").unwrap().into_owned(),
            Value::from(2.0)
        );
        assert_eq!(
            get_by_path(&v, "s.1").unwrap().into_owned(),
            Value::from("é")
        );
        assert!(get_object_path(&v, "s.length").is_none());
        assert_eq!(get_by_path(&v, "").unwrap().into_owned(), v);
        assert!(get_by_path(&v, "a.zz.q").is_none());
    }
}
