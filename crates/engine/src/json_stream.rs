//! Parsing a command's JSON output into items without materialising the
//! whole document: a top-level array is validated once, then its elements
//! are parsed one at a time as the pipeline pulls them.

use serde::de::IgnoredAny;

use crate::error::Result;
use crate::items::Items;
use crate::value::{Value, is_js_space};

/// `JSON.parse(text.trim() || "null")`, spread into items when it is an array.
pub fn json_items(text: String) -> Result<Items, serde_json::Error> {
    let trimmed = text.trim_matches(is_js_space);
    if trimmed.is_empty() {
        return Ok(Items::List(vec![Value::Null]));
    }
    if !trimmed.starts_with('[') {
        return Ok(Items::List(vec![Value::from_json(trimmed)?]));
    }
    // Validate the whole document first so a syntax error anywhere fails
    // before any item flows, exactly like JSON.parse.
    serde_json::from_str::<IgnoredAny>(trimmed)?;
    let start = text.len() - text.trim_start_matches(is_js_space).len();
    let end = start + trimmed.len();
    Ok(Items::Lazy(Box::new(ArrayElements { text, pos: start + 1, end: end - 1 })))
}

/// Iterates the elements of a validated JSON array held in `text[pos..end]`,
/// parsing each element in place.
struct ArrayElements {
    text: String,
    pos: usize,
    end: usize,
}

impl Iterator for ArrayElements {
    type Item = Result<Value>;

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        while self.pos < self.end && matches!(bytes[self.pos], b' ' | b'\t' | b'\n' | b'\r' | b',') {
            self.pos += 1;
        }
        if self.pos >= self.end {
            return None;
        }
        let mut stream = serde_json::Deserializer::from_str(&self.text[self.pos..self.end]).into_iter::<Value>();
        let item = stream.next()?;
        self.pos += stream.byte_offset();
        Some(item.map_err(|e| crate::error::Error::runtime(e.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_arrays_lazily_and_wraps_scalars() {
        let items = json_items(" [1, \"a,]\", {\"k\":[2,3]}, [] ] \n".into()).unwrap().collect().unwrap();
        assert_eq!(Value::Array(items).to_json(), r#"[1,"a,]",{"k":[2,3]},[]]"#);
        assert_eq!(json_items("42".into()).unwrap().collect().unwrap(), vec![Value::from(42.0)]);
        assert_eq!(json_items("  ".into()).unwrap().collect().unwrap(), vec![Value::Null]);
        assert!(json_items("[]".into()).unwrap().collect().unwrap().is_empty());
        assert!(json_items("[1,".into()).is_err());
        assert!(json_items("not-json".into()).is_err());
    }
}
