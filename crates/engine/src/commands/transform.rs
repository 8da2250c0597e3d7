//! Item transforms: `where`, `pick`, `head`, `sort`, `dedupe`, `groupBy`, `map`.

use std::cmp::Ordering;
use std::collections::HashSet;

use indexmap::IndexMap;

use super::Output;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::js_sort;
use crate::path::{get_by_path, get_object_path};
use crate::pipeline::parse::{Args, Stage};
use crate::value::object::{Key, intern};
use crate::value::{
    Object, RelOp, Value, compare_js_strings, is_js_space, loose_compare, loose_eq,
    string_to_number,
};

/// A `where` predicate operator.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Eq,
    Ne,
    Rel(RelOp),
}

/// Parses `path<op>value` like the regex
/// `^([A-Za-z0-9_.]+)\s*(==|=|!=|<=|>=|<|>)\s*(.+)$`.
fn parse_predicate(expr: &str) -> Option<(String, Op, Value)> {
    let path_len = expr
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.')
        .count();
    if path_len == 0 {
        return None;
    }
    let path = &expr[..path_len];
    let rest = expr[path_len..].trim_start_matches(is_js_space);
    let ops: [(&str, Op); 7] = [
        ("==", Op::Eq),
        ("=", Op::Eq),
        ("!=", Op::Ne),
        ("<=", Op::Rel(RelOp::Le)),
        (">=", Op::Rel(RelOp::Ge)),
        ("<", Op::Rel(RelOp::Lt)),
        (">", Op::Rel(RelOp::Gt)),
    ];
    // Like the regex, an operator that leaves no value backtracks to a
    // shorter one: `a>=` is `a > "="`.
    let (op, raw) = ops
        .into_iter()
        .filter(|(t, _)| rest.starts_with(t))
        .find_map(|(t, op)| {
            let after = &rest[t.len()..];
            let trimmed = after.trim_start_matches(is_js_space);
            if !trimmed.is_empty() {
                return Some((op, trimmed));
            }
            // `\s*` gives back one character so `(.+)` can match it.
            let last = after.chars().last()?;
            Some((op, &after[after.len() - last.len_utf8()..]))
        })?;
    let is_line_end = |c: char| matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}');
    if raw.chars().any(is_line_end) {
        return None;
    }
    let value = match raw {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        _ => {
            let n = string_to_number(raw);
            if !n.is_nan() && !raw.trim_matches(is_js_space).is_empty() {
                Value::Number(n)
            } else {
                Value::from(raw)
            }
        }
    };
    Some((path.to_string(), op, value))
}

/// `where EXPR`: keeps the items the expression holds for.
pub fn where_(args: &Args, input: Items) -> Result<Output> {
    let expr = args.positional.first().filter(|e| !e.is_empty());
    let Some(expr) = expr else {
        return Err(Error::runtime(
            "where requires an expression (e.g. field=value)",
        ));
    };
    let (path, op, value) = parse_predicate(expr)
        .ok_or_else(|| Error::runtime(format!("Invalid where expression: {expr}")))?;
    Ok(Output::items(input.filter_map(move |item| {
        let left = get_object_path(&item, &path);
        let left = left.as_deref();
        let keep = match op {
            Op::Eq => loose_eq(left, Some(&value)),
            Op::Ne => !loose_eq(left, Some(&value)),
            Op::Rel(rel) => loose_compare(left, rel, Some(&value)),
        };
        Ok(keep.then_some(item))
    })))
}

/// The fields of a `pick` list (`id, name,`).
fn pick_fields(spec: &str) -> impl Iterator<Item = &str> {
    spec.split(',')
        .map(|s| s.trim_matches(is_js_space))
        .filter(|s| !s.is_empty())
}

/// The properties of an object item that `stages` can observe, when they
/// are `where` stages and then a `pick`, which drops every other property:
/// the first segment of each `where` path, and the picked fields. `None`
/// when the stages may see the whole object.
pub fn keys_seen(stages: &[Stage]) -> Option<Vec<String>> {
    let mut keys = Vec::new();
    for stage in stages {
        let spec = stage.args.positional.first().filter(|s| !s.is_empty())?;
        match stage.name.as_str() {
            "where" => {
                let (path, _, _) = parse_predicate(spec)?;
                keys.extend(path.split('.').next().map(str::to_string));
            }
            "pick" => {
                keys.extend(pick_fields(spec).map(str::to_string));
                return Some(keys);
            }
            _ => return None,
        }
    }
    None
}

/// `pick FIELDS`: keeps only the named fields of each item.
pub fn pick(args: &Args, input: Items) -> Result<Output> {
    let spec = args.positional.first().filter(|s| !s.is_empty());
    let Some(spec) = spec else {
        return Err(Error::runtime("pick requires a comma-separated field list"));
    };
    let fields: Vec<Key> = pick_fields(spec).map(intern).collect();
    Ok(Output::items(input.filter_map(move |item| {
        let mut out = Object::with_capacity(fields.len());
        match item {
            // Owned objects give up their fields instead of copying them.
            // `out[f] = item[f]`: a missing field is an undefined property,
            // which `table` shows as a column and JSON leaves out.
            Value::Object(mut obj) => {
                for f in &fields {
                    let v = obj
                        .remove(f)
                        .or_else(|| out.get(f).cloned())
                        .unwrap_or(Value::Undefined);
                    out.insert_key(f.clone(), v);
                }
            }
            Value::Array(_) => {
                for f in &fields {
                    let v =
                        crate::path::js_get(&item, f).map_or(Value::Undefined, |v| v.into_owned());
                    out.insert_key(f.clone(), v);
                }
            }
            primitive => return Ok(Some(primitive)),
        }
        Ok(Some(Value::Object(out)))
    })))
}

/// `head [--n N]`: the first N items (10 by default).
pub fn head(args: &Args, input: Items) -> Result<Output> {
    let n = args.get("n").map_or(10.0, Value::to_number);
    if !n.is_finite() || n < 0.0 {
        return Err(Error::runtime("head --n must be a non-negative number"));
    }
    let take = n.ceil() as usize;
    if let Items::List(mut items) = input {
        if items.len() <= take {
            return Ok(Output::items(items));
        }
        let kept: Vec<Value> = items[..take].iter_mut().map(std::mem::take).collect();
        drop_in_background(items);
        return Ok(Output::items(kept));
    }
    Ok(Output::items(Items::Lazy(Box::new(
        input.into_iter().take(take),
    ))))
}

/// Items a stage drops in bulk: freeing 50k parsed objects takes
/// milliseconds, which a background thread spends instead of the pipeline
/// (and a `lobster` process that exits first never spends).
fn drop_in_background(items: Vec<Value>) {
    const IN_BACKGROUND_FROM: usize = 4096;
    if items.len() < IN_BACKGROUND_FROM {
        return;
    }
    // A thread that cannot start hands the items back to be dropped here.
    let _ = std::thread::Builder::new()
        .name("lobster-drop".into())
        .spawn(move || drop(items));
}

/// Lobster's sort comparator: null/undefined last, numbers numerically,
/// everything else by `String()` in UTF-16 order.
/// What Lobster's `sort` comparator looks at in one item, computed once.
enum SortKey {
    /// `undefined` or `null`: after everything else.
    Missing,
    Number(f64),
    /// `String(value)` of anything else.
    Text(String),
}

impl SortKey {
    fn of(value: Option<&Value>) -> SortKey {
        match value {
            None | Some(Value::Null | Value::Undefined) => SortKey::Missing,
            Some(Value::Number(n)) => SortKey::Number(*n),
            Some(v) => SortKey::Text(v.to_js_string()),
        }
    }

    fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            SortKey::Number(n) => Value::Number(*n).to_js_string().into(),
            SortKey::Text(s) => s.as_str().into(),
            SortKey::Missing => "".into(),
        }
    }
}

/// Lobster's comparator: missing keys last, numbers by value (`a - b`,
/// NaN counting as equal), anything else by `String(x)` in UTF-16 order.
/// Not a total order when numbers and strings mix.
fn sort_compare(a: &SortKey, b: &SortKey) -> Ordering {
    match (a, b) {
        (SortKey::Missing, SortKey::Missing) => Ordering::Equal,
        (SortKey::Missing, _) => Ordering::Greater,
        (_, SortKey::Missing) => Ordering::Less,
        (SortKey::Number(x), SortKey::Number(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (x, y) => compare_js_strings(&x.text(), &y.text()),
    }
}

/// `sort [--key PATH] [--desc]`: items in JavaScript's sort order.
pub fn sort(args: &Args, input: Items) -> Result<Output> {
    let key = args.string("key");
    let desc = args.truthy("desc");
    let mut items = input.collect()?;
    let keys: Vec<SortKey> = items
        .iter()
        .map(|item| match key {
            Some(k) => SortKey::of(get_by_path(item, k).as_deref()),
            None => SortKey::of(Some(item)),
        })
        .collect();
    let compare = |a: &usize, b: &usize| {
        let c = sort_compare(&keys[*a], &keys[*b]);
        if desc { c.reverse() } else { c }
    };
    // Sort positions, not items. Numbers mixed with strings (or NaN) make
    // the comparator inconsistent, and then only V8's own algorithm puts
    // items in Lobster's order; otherwise every stable sort agrees with it.
    let has = |f: fn(&SortKey) -> bool| keys.iter().any(f);
    let numbers = has(|k| matches!(k, SortKey::Number(_)));
    let order: Vec<usize> = if has(|k| matches!(k, SortKey::Number(n) if n.is_nan()))
        || (numbers && has(|k| matches!(k, SortKey::Text(_))))
    {
        let mut order: Vec<usize> = (0..items.len()).collect();
        js_sort::sort_by(&mut order, compare);
        order
    } else if numbers && !has(|k| matches!(k, SortKey::Missing)) {
        // Only numbers: sort them next to their positions.
        let mut pairs: Vec<(f64, usize)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (if let SortKey::Number(n) = k { *n } else { 0.0 }, i))
            .collect();
        let by_value =
            |a: &(f64, usize), b: &(f64, usize)| a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal);
        if desc {
            pairs.sort_by(|a, b| by_value(b, a));
        } else {
            pairs.sort_by(by_value);
        }
        pairs.into_iter().map(|(_, i)| i).collect()
    } else {
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by(compare);
        order
    };
    Ok(Output::items(
        order
            .into_iter()
            .map(|i| std::mem::take(&mut items[i]))
            .collect::<Vec<_>>(),
    ))
}

/// `JSON.stringify(v)` where `undefined` stays undefined (`None`).
fn identity_key(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::stringify)
}

/// `dedupe [--key PATH]`: the first item of each distinct value.
pub fn dedupe(args: &Args, input: Items) -> Result<Output> {
    let key = args.string("key").map(str::to_string);
    let mut seen: HashSet<Option<String>> = HashSet::new();
    Ok(Output::items(input.filter_map(move |item| {
        let id = match &key {
            Some(k) => identity_key(get_by_path(&item, k).as_deref()),
            None => identity_key(Some(&item)),
        };
        Ok(seen.insert(id).then_some(item))
    })))
}

/// `groupBy --key PATH`: one `{key, items, count}` per distinct key.
pub fn group_by(args: &Args, input: Items) -> Result<Output> {
    let key_path = args
        .get("key")
        .map(Value::to_js_string)
        .unwrap_or_default()
        .trim_matches(is_js_space)
        .to_string();
    if key_path.is_empty() {
        return Err(Error::runtime("groupBy requires --key"));
    }
    let mut groups: IndexMap<Option<String>, (Option<Value>, Vec<Value>)> = IndexMap::new();
    for item in input.into_iter() {
        let item = item?;
        let key_val = get_by_path(&item, &key_path).map(|c| c.into_owned());
        let id = identity_key(key_val.as_ref());
        groups
            .entry(id)
            .or_insert_with(|| (key_val, Vec::new()))
            .1
            .push(item);
    }
    let out = groups
        .into_values()
        .map(|(key, items)| {
            let mut obj = Object::with_capacity(3);
            // `{key, items, count}`: an undefined key is still a property.
            obj.insert("key", key.unwrap_or(Value::Undefined));
            let count = items.len();
            obj.insert("items", Value::Array(items));
            obj.insert("count", Value::from(count));
            Value::Object(obj)
        })
        .collect::<Vec<_>>();
    Ok(Output::items(out))
}

/// Renders `{{path}}` placeholders for `map` assignments: missing → "",
/// strings verbatim, anything else as compact JSON.
fn render_map_template(template: &str, item: &Value) -> String {
    crate::commands::template::replace_placeholders(template, |expr| {
        let val = if expr == "." || expr == "this" {
            Some(std::borrow::Cow::Borrowed(item))
        } else {
            get_by_path(item, expr)
        };
        match val.as_deref() {
            None | Some(Value::Null | Value::Undefined) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_json(),
        }
    })
}

/// `map [--wrap F | --unwrap F] [K=TEMPLATE…]`: each item wrapped in a field,
/// one field taken out, or given fields rendered from templates.
pub fn map(args: &Args, input: Items) -> Result<Output> {
    let wrap = args
        .string("wrap")
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let unwrap = args
        .string("unwrap")
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    if wrap.is_some() && unwrap.is_some() {
        return Err(Error::runtime("map cannot use both --wrap and --unwrap"));
    }
    let assignments: Vec<(String, String)> = args
        .positional
        .iter()
        .filter_map(|tok| {
            let (k, v) = tok.split_once('=')?;
            let k = k.trim_matches(is_js_space);
            (!k.is_empty()).then(|| (k.to_string(), v.to_string()))
        })
        .collect();
    Ok(Output::items(input.filter_map(move |item| {
        if let Some(field) = &unwrap {
            let out = match &item {
                Value::Object(_) | Value::Array(_) => {
                    crate::path::js_get(&item, field).map(|c| c.into_owned())
                }
                _ => None,
            };
            return Ok(Some(out.unwrap_or(Value::Undefined)));
        }
        let mut cur = match &wrap {
            Some(w) => Value::Object(Object::from_iter([(w.clone(), item.clone())])),
            None => item.clone(),
        };
        if !assignments.is_empty() {
            if !matches!(cur, Value::Object(_)) {
                cur = Value::Object(Object::from_iter([("value", cur)]));
            }
            if let Value::Object(obj) = &mut cur {
                for (k, tpl) in &assignments {
                    obj.insert(k.clone(), Value::String(render_map_template(tpl, &item)));
                }
            }
        }
        Ok(Some(cur))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_parse_like_the_regex() {
        assert_eq!(parse_predicate("a=1").unwrap().2, Value::from(1.0));
        assert_eq!(parse_predicate("t==a b").unwrap().2, Value::from("a b"));
        assert_eq!(parse_predicate("a===b").unwrap().2, Value::from("=b"));
        assert_eq!(parse_predicate("x>=0x10").unwrap().2, Value::from(16.0));
        assert_eq!(parse_predicate("a= ").unwrap().2, Value::from(" "));
        assert!(parse_predicate("foo").is_none());
        assert!(parse_predicate("a=b\nc").is_none());
        assert!(parse_predicate("=1").is_none());
    }

    /// Regression: an operator with nothing after it gives way to a shorter
    /// one, as the regex backtracks (`a>=` compares `a > "="`).
    #[test]
    fn an_empty_value_backtracks_to_a_shorter_operator() {
        let (_, op, value) = parse_predicate("a>=").unwrap();
        assert!(matches!(op, Op::Rel(RelOp::Gt)) && value == Value::from("="));
        let (_, op, value) = parse_predicate("a<=").unwrap();
        assert!(matches!(op, Op::Rel(RelOp::Lt)) && value == Value::from("="));
        let (_, op, value) = parse_predicate("a==").unwrap();
        assert!(matches!(op, Op::Eq) && value == Value::from("="));
        assert!(parse_predicate("a!=").is_none());
        assert!(parse_predicate("a<").is_none());
    }
}
