//! `template`: render `{{path | filter ...}}` templates against each item.

use std::borrow::Cow;

use super::Output;
use super::filters::apply_filters;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::path::get_by_path;
use crate::pipeline::parse::Args;
use crate::value::{Value, is_js_space};

/// Replaces every `{{ expr }}` (regex `\{\{\s*([^}]+?)\s*\}\}`) with
/// `render(expr)`, where `expr` is trimmed.
pub fn replace_placeholders(template: &str, mut render: impl FnMut(&str) -> String) -> String {
    try_replace_placeholders(template, |e| Ok(render(e))).unwrap_or_default()
}

/// Fallible [`replace_placeholders`].
pub fn try_replace_placeholders(
    template: &str,
    mut render: impl FnMut(&str) -> Result<String>,
) -> Result<String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        // `[^}]+?` cannot cross a `}`; the match needs `}}` right after it.
        match after.find('}') {
            Some(c) if c > 0 && after[c..].starts_with("}}") => {
                let expr = after[..c].trim_matches(is_js_space);
                out.push_str(&rest[..open]);
                out.push_str(&render(expr)?);
                rest = &after[c + 2..];
            }
            _ => {
                out.push_str(&rest[..open + 1]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Splits `path | filter a | filter b` on `|` outside quotes.
fn split_filter_chain(expr: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                cur.push(c);
                while let Some(n) = chars.next() {
                    if n == '\\' {
                        cur.push(n);
                        if let Some(esc) = chars.next() {
                            cur.push(esc);
                        }
                        continue;
                    }
                    cur.push(n);
                    if n == c {
                        break;
                    }
                }
            }
            '|' => parts.push(
                std::mem::take(&mut cur)
                    .trim_matches(is_js_space)
                    .to_string(),
            ),
            _ => cur.push(c),
        }
    }
    parts.push(cur.trim_matches(is_js_space).to_string());
    parts
}

/// Renders one template against `item` the way the `template` command does.
pub fn render_item_template(template: &str, item: &Value) -> Result<String> {
    try_replace_placeholders(template, |expr| {
        let parts = split_filter_chain(expr);
        let key = parts[0].as_str();
        let mut val: Option<Value> = if key == "." || key == "this" {
            Some(item.clone())
        } else {
            get_by_path(item, key).map(Cow::into_owned)
        };
        if parts.len() > 1 {
            val = apply_filters(val, &parts[1..])?;
        }
        Ok(match val {
            None | Some(Value::Null | Value::Undefined) => String::new(),
            Some(Value::String(s)) => s,
            Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_js_string(),
            Some(other) => other.to_json(),
        })
    })
}

pub async fn run(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let mut tpl = args
        .string("text")
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    if tpl.is_none()
        && let Some(file) = args.string("file").filter(|s| !s.is_empty())
    {
        let path = ctx.cwd.join(file);
        let text = tokio::fs::read_to_string(&path).await.map_err(|e| {
            let message = match e.kind() {
                std::io::ErrorKind::NotFound => {
                    format!("ENOENT: no such file or directory, open '{file}'")
                }
                _ => format!("{e}, open '{file}'"),
            };
            Error::io(message, e)
        })?;
        tpl = Some(text).filter(|s| !s.is_empty());
    }
    if tpl.is_none() && !args.positional.is_empty() {
        tpl = Some(args.positional.join(" ")).filter(|s| !s.is_empty());
    }
    let Some(tpl) = tpl else {
        return Err(Error::runtime(
            "template requires --text or --file (or positional text)",
        ));
    };
    Ok(Output::items(input.filter_map(move |item| {
        Ok(Some(Value::String(render_item_template(&tpl, &item)?)))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_scanning_matches_the_regex() {
        let r = |t: &str| replace_placeholders(t, |e| format!("<{e}>"));
        assert_eq!(r("a {{ x }} b"), "a <x> b");
        assert_eq!(r("{{a}b}} {{c}}"), "{{a}b}} <c>");
        assert_eq!(r("{{{a}}}"), "<{a>}");
        assert_eq!(r("{{}}"), "{{}}");
        assert_eq!(r("{{ }}"), "<>");
    }

    #[test]
    fn filter_chain_respects_quotes() {
        assert_eq!(
            split_filter_chain(r#"line | split "|" | first"#),
            vec!["line", r#"split "|""#, "first"]
        );
    }
}
