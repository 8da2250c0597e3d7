//! Durable key/value state: `state.get`, `state.set`, `diff.last`.

use super::Output;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::pipeline::parse::Args;
use crate::value::{Object, Value, stable_stringify};

/// Normalises a state key like Lobster's `keyToPath`: lower-case, runs of
/// characters outside `[a-z0-9._-]` become `_`, `_` runs collapse, and one
/// leading and trailing `_` are dropped.
pub fn normalize_key(key: &str) -> Result<String> {
    let mut out = String::with_capacity(key.len());
    for c in key.to_lowercase().chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
            c
        } else {
            '_'
        };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    let out = out.strip_prefix('_').unwrap_or(&out);
    let out = out.strip_suffix('_').unwrap_or(out);
    if out.is_empty() {
        return Err(Error::runtime("state key is empty/invalid"));
    }
    Ok(out.to_string())
}

/// One item is stored as itself; any other count as the array.
fn single_or_array(mut items: Vec<Value>) -> Value {
    if items.len() == 1 {
        items.pop().unwrap_or_default()
    } else {
        Value::Array(items)
    }
}

/// Reads a stored value (`None` when absent).
pub async fn read_value(ctx: &Ctx, key: &str) -> Result<Option<Value>> {
    let store = ctx.state.store().await?;
    match store.kv_get(&normalize_key(key)?).await? {
        None => Ok(None),
        Some(text) => Value::from_json(&text)
            .map(Some)
            .map_err(|e| Error::runtime(format!("state value for {key} is corrupt: {e}"))),
    }
}

/// Stores a value.
pub async fn write_value(ctx: &Ctx, key: &str, value: &Value) -> Result<()> {
    let store = ctx.state.store().await?;
    store.kv_set(&normalize_key(key)?, &value.to_json()).await?;
    Ok(())
}

pub async fn get(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let Some(key) = args.positional.first().filter(|k| !k.is_empty()) else {
        return Err(Error::runtime("state.get requires a key"));
    };
    input.drain()?;
    let value = read_value(ctx, key).await?.unwrap_or(Value::Null);
    Ok(Output::items(vec![value]))
}

pub async fn set(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let Some(key) = args.positional.first().filter(|k| !k.is_empty()) else {
        return Err(Error::runtime("state.set requires a key"));
    };
    let value = single_or_array(input.collect()?);
    write_value(ctx, key, &value).await?;
    Ok(Output::items(vec![value]))
}

pub async fn diff_last(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let key = args
        .get("key")
        .map(Value::to_js_string)
        .or_else(|| args.positional.first().cloned())
        .filter(|k| !k.is_empty());
    let Some(key) = key else {
        return Err(Error::runtime("diff.last requires --key"));
    };
    let after = single_or_array(input.collect()?);
    let before = read_value(ctx, &key).await?;
    let changed = before
        .as_ref()
        .is_none_or(|b| stable_stringify(b) != stable_stringify(&after));
    write_value(ctx, &key, &after).await?;
    let mut out = Object::new();
    out.insert("kind", Value::from("diff.last"));
    out.insert("key", Value::from(key));
    out.insert("changed", Value::Bool(changed));
    out.insert("before", before.unwrap_or(Value::Null));
    out.insert("after", after);
    Ok(Output::items(vec![Value::Object(out)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_normalise_like_lobster() {
        assert_eq!(normalize_key("My Key!").unwrap(), "my_key");
        assert_eq!(normalize_key("__a//b__").unwrap(), "a_b");
        assert_eq!(normalize_key("x.y-z").unwrap(), "x.y-z");
        assert!(normalize_key("!!!").is_err());
    }
}
