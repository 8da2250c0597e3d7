//! Renderers: `json` and `table` write to stdout and end the item stream.

use super::Output;
use crate::context::Ctx;
use crate::error::Result;
use crate::items::Items;
use crate::value::Value;

pub fn json(input: Items, ctx: &Ctx) -> Result<Output> {
    let items = input.collect()?;
    ctx.stdout
        .write(&(Value::Array(items).to_json_pretty() + "\n"));
    Ok(Output::rendered())
}

/// A table cell: empty for null, strings as-is, others as JSON / `String()`.
fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null | Value::Undefined) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_js_string(),
        Some(other) => other.to_json(),
    }
}

/// Pads to `width` UTF-16 code units (`String#padEnd`).
fn pad_end(s: &str, width: usize) -> String {
    let len = s.encode_utf16().count();
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(len)));
    out
}

pub fn table(input: Items, ctx: &Ctx) -> Result<Output> {
    let items = input.collect()?;
    if items.is_empty() {
        ctx.stdout.write("(no results)\n");
        return Ok(Output::rendered());
    }
    let sample = &items[..items.len().min(20)];
    if !sample.iter().all(|i| matches!(i, Value::Object(_))) {
        let mut text = String::new();
        for item in &items {
            text.push_str(&cell(Some(item)));
            text.push('\n');
        }
        ctx.stdout.write(&text);
        return Ok(Output::rendered());
    }
    let mut cols: Vec<String> = Vec::new();
    for obj in sample.iter().filter_map(Value::as_object) {
        for k in obj.keys() {
            if !cols.iter().any(|c| c == k) {
                cols.push(k.to_string());
            }
        }
    }
    let mut rows: Vec<Vec<String>> = vec![cols.clone()];
    for item in &items {
        rows.push(
            cols.iter()
                .map(|c| cell(crate::path::js_get(item, c).as_deref()))
                .collect(),
        );
    }
    for row in &mut rows {
        for c in row.iter_mut() {
            *c = c.replace('\n', " ");
        }
    }
    let widths: Vec<usize> = (0..cols.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].encode_utf16().count())
                .max()
                .unwrap_or(0)
                .max(3)
        })
        .collect();
    let render_row = |row: &Vec<String>| {
        row.iter()
            .enumerate()
            .map(|(i, c)| pad_end(c, widths[i]))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut text = render_row(&rows[0]) + "\n";
    text.push_str(
        &widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  "),
    );
    text.push('\n');
    for row in &rows[1..] {
        text.push_str(&render_row(row));
        text.push('\n');
    }
    ctx.stdout.write(&text);
    Ok(Output::rendered())
}
