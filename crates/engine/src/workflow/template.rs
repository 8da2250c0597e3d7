//! Text substitution in workflow strings: `${arg}` and `$step.path`.

use crate::error::{Error, Result};
use crate::value::{Object, Value};

fn is_arg_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Replaces `${name}` with `String(arg)` for known args; others stay verbatim.
pub fn resolve_args(input: &str, args: &Object) -> String {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(pos) = rest.find("${") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 2..];
        let name_len = after.find(|c: char| !is_arg_char(c)).unwrap_or(after.len());
        let name = &after[..name_len];
        if name_len > 0 && after[name_len..].starts_with('}') {
            match args.get(name) {
                Some(v) => out.push_str(&v.to_js_string()),
                None => out.push_str(&rest[pos..pos + 3 + name_len]),
            }
            rest = &after[name_len + 1..];
        } else {
            out.push_str("${");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A `$id.path` reference found at the start of `s`: (id, path, length).
pub fn scan_ref(s: &str) -> Option<(&str, &str, usize)> {
    let body = s.strip_prefix('$')?;
    let id_len = body.find(|c: char| !is_arg_char(c)).unwrap_or(body.len());
    if id_len == 0 || !body[id_len..].starts_with('.') {
        return None;
    }
    let path_start = id_len + 1;
    let mut end = path_start;
    loop {
        let seg = &body[end..];
        let seg_len = seg.find(|c: char| !is_path_char(c)).unwrap_or(seg.len());
        if seg_len == 0 {
            break;
        }
        end += seg_len;
        if body[end..].starts_with('.') && body[end + 1..].starts_with(is_path_char) {
            end += 1;
        } else {
            break;
        }
    }
    if end == path_start {
        return None;
    }
    Some((&body[..id_len], &body[path_start..end], end + 1))
}

/// The value at `path` inside a step result (`json.list.1`); `None` is undefined.
pub fn lookup(result: &Value, path: &str) -> Option<Value> {
    let mut cur = result;
    for part in path.split('.') {
        cur = match cur {
            Value::Array(items) => items.get(
                part.parse::<usize>()
                    .ok()
                    .filter(|_| !part.starts_with('+'))?,
            )?,
            Value::Object(o) => o.get(part)?,
            _ => return None,
        };
    }
    Some(cur.clone())
}

/// Renders a referenced value into text.
pub fn ref_text(value: Option<&Value>, path: &str) -> String {
    match value {
        None if path == "approved" || path == "skipped" => "false".into(),
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_js_string(),
        Some(other) => other.to_json(),
    }
}

/// Rewrites every `$id.path` reference in `input` with `render(id, path)`;
/// references it returns `None` for stay verbatim.
pub fn replace_refs(input: &str, mut render: impl FnMut(&str, &str) -> Option<String>) -> String {
    let mut out = String::with_capacity(input.len());
    let mut i = 0;
    while let Some(pos) = input[i..].find('$') {
        let at = i + pos;
        out.push_str(&input[i..at]);
        match scan_ref(&input[at..]) {
            Some((id, path, len)) => {
                match render(id, path) {
                    Some(text) => out.push_str(&text),
                    None => out.push_str(&input[at..at + len]),
                }
                i = at + len;
            }
            None => {
                out.push('$');
                i = at + 1;
            }
        }
    }
    out.push_str(&input[i..]);
    out
}

/// The `(id, path)` of every `$id.path` reference in `input`.
pub fn refs_in(input: &str) -> Vec<(String, String)> {
    let mut refs = Vec::new();
    replace_refs(input, |id, path| {
        refs.push((id.to_string(), path.to_string()));
        None
    });
    refs
}

/// Replaces `$id.path` references to known steps; unknown ids stay verbatim.
pub fn resolve_refs(input: &str, results: &Object) -> String {
    replace_refs(input, |id, path| {
        results
            .get(id)
            .map(|result| ref_text(lookup(result, path).as_ref(), path))
    })
}

/// `${arg}` then `$step.path` substitution.
pub fn resolve(input: &str, args: &Object, results: &Object) -> String {
    resolve_refs(&resolve_args(input, args), results)
}

/// A string that is exactly one `$id.path` reference (after trimming).
pub fn whole_ref(s: &str) -> Option<(String, String)> {
    let t = s.trim();
    let (id, path, len) = scan_ref(t)?;
    (len == t.len()).then(|| (id.to_string(), path.to_string()))
}

/// Strict reference lookup: an unknown step id is an error.
pub fn strict_lookup(results: &Object, id: &str, path: &str) -> Result<Option<Value>> {
    let result = results
        .get(id)
        .ok_or_else(|| Error::runtime(format!("Unknown step reference: {id}.{path}")))?;
    Ok(lookup(result, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_and_refs() {
        let args = Object::from_iter([("who", Value::from("bob")), ("n", Value::from(2.0))]);
        assert_eq!(
            resolve_args("hi ${who} ${n} ${nope} ${ x} $", &args),
            "hi bob 2 ${nope} ${ x} $"
        );
        let results = Object::from_iter([(
            "a",
            Value::from_json(r#"{"id":"a","json":{"l":[10,20]},"stdout":"x\n"}"#).unwrap(),
        )]);
        assert_eq!(
            resolve_refs(
                "$a.json.l.1 $a.json.l $a.stdout$a.approved $zz.stdout $HOME.txt $a.json.",
                &results
            ),
            "20 [10,20] x\nfalse $zz.stdout $HOME.txt [object Object]."
                .replace("[object Object]", r#"{"l":[10,20]}"#)
        );
        assert_eq!(
            whole_ref(" $a.json.l "),
            Some(("a".into(), "json.l".into()))
        );
        assert_eq!(whole_ref("x $a.json"), None);
    }

    /// Regression: a reference to `null` renders as nothing, like Lobster's
    /// `renderTemplateValue` (it printed `null`).
    #[test]
    fn null_renders_empty() {
        let results = Object::from_iter([(
            "a",
            Value::from_json(r#"{"id":"a","json":{"n":null},"approved":null}"#).unwrap(),
        )]);
        assert_eq!(
            resolve_refs("[$a.json.n][$a.approved][$a.skipped]", &results),
            "[][][false]"
        );
    }
}
