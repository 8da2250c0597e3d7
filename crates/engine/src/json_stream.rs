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

/// Iterates the elements of a validated JSON array held in `text[pos..end]`.
struct ArrayElements {
    text: String,
    pos: usize,
    end: usize,
}

impl ArrayElements {
    /// Byte offset just past the element starting at `from`.
    fn element_end(&self, from: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut depth = 0usize;
        let mut in_string = false;
        let mut i = from;
        while i < self.end {
            let b = bytes[i];
            if in_string {
                match b {
                    b'\\' => i += 1,
                    b'"' => in_string = false,
                    _ => {}
                }
            } else {
                match b {
                    b'"' => in_string = true,
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => depth -= 1,
                    b',' if depth == 0 => return i,
                    _ => {}
                }
            }
            i += 1;
        }
        self.end
    }
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
        let stop = self.element_end(self.pos);
        let slice = &self.text[self.pos..stop];
        self.pos = stop + 1;
        Some(Value::from_json(slice).map_err(|e| crate::error::Error::runtime(e.to_string())))
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
