//! Tool answers: a structured JSON value and a text, each bounded so that a
//! host that caps tool output never loses a whole answer.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// The most characters of an answer's text, and of its structured content
/// serialised.
pub(crate) const MAX_CHARS: usize = 100_000;

/// What replaces the cut part of a text.
fn marker(cut: usize) -> String {
    format!(
        "\n… [{cut} more characters cut; ask for less: a snapshot's maxChars or selector, extract_text of one element, a smaller page of runs]"
    )
}

/// `text` cut to at most `max` characters, with a marker saying how much
/// was left out and how to get it.
pub(crate) fn cut_text(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    // Leave room for the marker itself.
    let keep = max.saturating_sub(marker(total).chars().count());
    let kept: String = text.chars().take(keep).collect();
    let cut = total - keep;
    format!("{kept}{}", marker(cut))
}

fn size(value: &Value) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.chars().count())
}

/// The length of the longest string in `value`.
fn longest_string(value: &Value) -> usize {
    match value {
        Value::String(s) => s.chars().count(),
        Value::Array(items) => items.iter().map(longest_string).max().unwrap_or(0),
        Value::Object(fields) => fields.values().map(longest_string).max().unwrap_or(0),
        _ => 0,
    }
}

/// A string of `len` characters in `value`.
fn string_of_len(value: &mut Value, len: usize) -> Option<&mut String> {
    if value.as_str().is_some_and(|s| s.chars().count() == len) {
        return match value {
            Value::String(s) => Some(s),
            _ => None,
        };
    }
    match value {
        Value::Array(items) => items.iter_mut().find_map(|v| string_of_len(v, len)),
        Value::Object(fields) => fields.values_mut().find_map(|v| string_of_len(v, len)),
        _ => None,
    }
}

/// The length of the longest array in `value`.
fn longest_array(value: &Value) -> usize {
    match value {
        Value::Array(items) => items
            .iter()
            .map(longest_array)
            .max()
            .unwrap_or(0)
            .max(items.len()),
        Value::Object(fields) => fields.values().map(longest_array).max().unwrap_or(0),
        _ => 0,
    }
}

/// An array of `len` items in `value`.
fn array_of_len(value: &mut Value, len: usize) -> Option<&mut Vec<Value>> {
    if value.as_array().is_some_and(|a| a.len() == len) {
        return value.as_array_mut();
    }
    match value {
        Value::Array(items) => items.iter_mut().find_map(|v| array_of_len(v, len)),
        Value::Object(fields) => fields.values_mut().find_map(|v| array_of_len(v, len)),
        _ => None,
    }
}

/// `value` made to fit in `max` characters serialised: its longest texts
/// are cut (with a marker) and then its longest lists shortened (ending
/// with a note of how many items were left out). Fields are never removed.
pub(crate) fn fit(mut value: Value, max: usize) -> Value {
    for _ in 0..10_000 {
        let over = size(&value).saturating_sub(max);
        if over == 0 {
            break;
        }
        let len = longest_string(&value);
        if len > 200
            && let Some(s) = string_of_len(&mut value, len)
        {
            let keep = len.saturating_sub(over + 200).max(len / 2);
            *s = cut_text(s, keep);
            continue;
        }
        let len = longest_array(&value);
        match array_of_len(&mut value, len).filter(|a| a.len() > 1) {
            Some(items) => {
                let keep = items.len() / 2;
                let left_out = items.len() - keep;
                items.truncate(keep);
                items.push(Value::String(format!("… {left_out} more items cut")));
            }
            None => break,
        }
    }
    value
}

/// A tool's answer: `structured` as structured content, `text` as its
/// text, both bounded; an error answer when `error`.
pub(crate) fn answer(structured: Value, text: String, error: bool) -> CallToolResult {
    let structured = fit(structured, MAX_CHARS);
    let mut result = if error {
        CallToolResult::structured_error(structured)
    } else {
        CallToolResult::structured(structured)
    };
    result.content = vec![ContentBlock::text(cut_text(&text, MAX_CHARS))];
    result
}

/// An answer that is only a text, bounded.
pub(crate) fn text_answer(text: &str) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(cut_text(text, MAX_CHARS))])
}

/// An error answer with only a message.
pub(crate) fn failure(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(cut_text(
        &message.into(),
        MAX_CHARS,
    ))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_long_text_is_cut_with_a_marker_within_the_bound() {
        let text = "x".repeat(250_000);
        let cut = cut_text(&text, MAX_CHARS);
        assert!(cut.chars().count() <= MAX_CHARS);
        assert!(
            cut.contains("more characters cut"),
            "{}",
            &cut[cut.len() - 200..]
        );
        assert_eq!(cut_text("short", MAX_CHARS), "short");
    }

    #[test]
    fn structured_content_fits_without_losing_fields() {
        let big = json!({
            "ok": true,
            "data": { "text": "y".repeat(300_000), "title": "kept" },
            "items": (0..50_000).map(|i| json!({ "i": i })).collect::<Vec<_>>(),
        });
        let fitted = fit(big, MAX_CHARS);
        assert!(size(&fitted) <= MAX_CHARS, "{}", size(&fitted));
        assert_eq!(fitted["ok"], true);
        assert_eq!(fitted["data"]["title"], "kept");
        assert!(
            fitted["data"]["text"]
                .as_str()
                .unwrap()
                .contains("more characters cut")
        );
        let items = fitted["items"].as_array().unwrap();
        assert!(
            items
                .last()
                .unwrap()
                .as_str()
                .unwrap()
                .ends_with("more items cut")
        );
        let small = json!({ "a": 1 });
        assert_eq!(fit(small.clone(), MAX_CHARS), small);
    }
}
