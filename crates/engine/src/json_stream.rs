//! Parsing a command's JSON output into items without materialising the
//! whole document: a top-level array is validated once, then its elements
//! are parsed one at a time as the pipeline pulls them ([`json_items`]); or
//! its elements are parsed as the output arrives, for stages that work
//! ahead ([`ChunkedArray`]).

use std::io::Read;
use std::marker::PhantomData;

use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny};

use crate::error::Result;
use crate::items::Items;
use crate::json_error::v8_parse_error;
use crate::value::{Value, is_js_space};

/// `JSON.parse(text.trim() || "null")`, spread into items when it is an
/// array. A syntax error is worded as `JSON.parse` words it
/// ([`crate::json_error`]).
pub fn json_items(text: String) -> Result<Items, String> {
    let trimmed = text.trim_matches(is_js_space);
    if trimmed.is_empty() {
        return Ok(Items::List(vec![Value::Null]));
    }
    let as_node = |e: serde_json::Error| v8_parse_error(trimmed).unwrap_or_else(|| e.to_string());
    if !trimmed.starts_with('[') {
        return Ok(Items::List(vec![
            Value::from_json(trimmed).map_err(as_node)?,
        ]));
    }
    // Validate the whole document first so a syntax error anywhere fails
    // before any item flows, exactly like JSON.parse.
    serde_json::from_str::<IgnoredAny>(trimmed).map_err(as_node)?;
    let start = text.len() - text.trim_start_matches(is_js_space).len();
    let end = start + trimmed.len();
    Ok(Items::Lazy(Box::new(ArrayElements {
        text,
        pos: start + 1,
        end: end - 1,
    })))
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
        while self.pos < self.end && matches!(bytes[self.pos], b' ' | b'\t' | b'\n' | b'\r' | b',')
        {
            self.pos += 1;
        }
        if self.pos >= self.end {
            return None;
        }
        let mut stream =
            serde_json::Deserializer::from_str(&self.text[self.pos..self.end]).into_iter::<Value>();
        let item = stream.next()?;
        self.pos += stream.byte_offset();
        Some(item.map_err(|e| crate::error::Error::runtime(e.to_string())))
    }
}

/// Where a [`ChunkedArray`] is in the array's grammar.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Before the opening `[`.
    Start,
    /// After `[`: an element or `]`.
    Open,
    /// After an element: `,` or `]`.
    Element,
    /// After `,`: an element.
    Comma,
    /// After `]`: only whitespace may follow.
    Closed,
}

/// A JSON array read from a stream (a child's stdout) whose elements are
/// parsed as soon as each is complete.
///
/// It accepts only a strict JSON array surrounded by JSON whitespace and
/// gives up (is "broken") on anything else, including input that
/// `JSON.parse` would take after JavaScript's wider trim; the caller then
/// falls back to [`json_items`] over the whole text. Every byte received is
/// kept, so that fallback always has the full output.
pub struct ChunkedArray {
    source: Box<dyn Read + Send>,
    /// Most bytes taken from `source` at a time.
    read_size: u64,
    buf: Vec<u8>,
    /// `buf[..valid]` is known to be UTF-8 (a chunk may end inside a
    /// character).
    valid: usize,
    pos: usize,
    phase: Phase,
    /// The source has ended: no more bytes will come.
    ended: bool,
    broken: bool,
}

impl ChunkedArray {
    /// Reads `source` to its end.
    pub fn new(source: Box<dyn Read + Send>) -> Self {
        Self::with_read_size(source, 1 << 16)
    }

    fn with_read_size(source: Box<dyn Read + Send>, read_size: u64) -> Self {
        ChunkedArray {
            source,
            read_size,
            buf: Vec::new(),
            valid: 0,
            pos: 0,
            phase: Phase::Start,
            ended: false,
            broken: false,
        }
    }

    /// Whether the input turned out not to be a strict JSON array.
    pub fn broken(&self) -> bool {
        self.broken
    }

    /// Reads up to `read_size` more bytes, waiting for them or the end;
    /// `false` once the input has ended. A source that fails has ended.
    fn fill(&mut self) -> bool {
        if self.ended {
            return false;
        }
        match (&mut self.source)
            .take(self.read_size)
            .read_to_end(&mut self.buf)
        {
            Ok(n) if n > 0 => {
                match std::str::from_utf8(&self.buf[self.valid..]) {
                    Ok(_) => self.valid = self.buf.len(),
                    Err(e) => {
                        self.valid += e.valid_up_to();
                        // Bytes that are not UTF-8 are for the whole-text
                        // path, which decodes them lossily.
                        if e.error_len().is_some() {
                            self.broken = true;
                        }
                    }
                }
                true
            }
            _ => {
                self.ended = true;
                false
            }
        }
    }

    /// The next byte that is not JSON whitespace, waiting for input as
    /// needed; `None` at the end of the input.
    fn peek_token(&mut self) -> Option<u8> {
        loop {
            while let Some(&b) = self.buf.get(self.pos) {
                if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                    return Some(b);
                }
                self.pos += 1;
            }
            if !self.fill() {
                return None;
            }
        }
    }

    fn give_up<T>(&mut self) -> Option<T> {
        self.broken = true;
        None
    }

    /// The next element as a `T`; `None` at the closing `]` or when broken.
    pub fn next_element<T: DeserializeOwned>(&mut self) -> Option<T> {
        self.next_element_seed(PhantomData::<T>)
    }

    /// [`ChunkedArray::next_element`], read with `seed`.
    pub fn next_element_seed<S, V>(&mut self, seed: S) -> Option<V>
    where
        S: Clone + for<'de> DeserializeSeed<'de, Value = V>,
    {
        if self.broken {
            return None;
        }
        loop {
            let token = self.peek_token();
            match (self.phase, token) {
                (Phase::Start, Some(b'[')) => {
                    self.pos += 1;
                    self.phase = Phase::Open;
                }
                (Phase::Open | Phase::Element, Some(b']')) => {
                    self.pos += 1;
                    self.phase = Phase::Closed;
                    return None;
                }
                (Phase::Element, Some(b',')) => {
                    self.pos += 1;
                    self.phase = Phase::Comma;
                }
                (Phase::Open | Phase::Comma, Some(_)) => return self.parse_element(seed),
                (Phase::Closed, _) => return None,
                _ => return self.give_up(),
            }
        }
    }

    /// Parses the element at `pos`, waiting for more input while it is
    /// incomplete. The retry after a wait re-parses the element, so each
    /// wait asks for at least as many new bytes as are pending: a huge
    /// element costs linear time, not quadratic.
    fn parse_element<S, V>(&mut self, seed: S) -> Option<V>
    where
        S: Clone + for<'de> DeserializeSeed<'de, Value = V>,
    {
        loop {
            if self.broken {
                return None;
            }
            let pending = self.valid - self.pos;
            let (parsed, used) = {
                // SAFETY: `buf[..valid]` is UTF-8 and `pos` is at a
                // character boundary: it only moves past ASCII tokens and
                // whole values.
                let text =
                    unsafe { std::str::from_utf8_unchecked(&self.buf[self.pos..self.valid]) };
                let mut de = serde_json::Deserializer::from_str(text);
                let parsed = seed.clone().deserialize(&mut de);
                (parsed, de.into_iter::<IgnoredAny>().byte_offset())
            };
            // A value that runs to the end of the input so far may go on
            // (a number), and one cut short needs the rest.
            let incomplete = match &parsed {
                Ok(_) => used == pending && !self.ended,
                Err(e) => e.is_eof() && !self.ended,
            };
            if incomplete {
                let want = self.valid + pending.max(1);
                while self.valid < want && !self.broken && self.fill() {}
                continue;
            }
            return match parsed {
                Ok(value) => {
                    self.pos += used;
                    self.phase = Phase::Element;
                    Some(value)
                }
                _ => self.give_up(),
            };
        }
    }

    /// Validates the rest of the input (elements nobody asked for, the
    /// closing `]`, trailing whitespace), waiting for all of it. `true`
    /// when the whole input was a strict JSON array.
    pub fn finish(&mut self) -> bool {
        while self.next_element::<IgnoredAny>().is_some() {}
        // Not broken means the array closed; only whitespace may follow.
        if !self.broken && self.peek_token().is_some() {
            self.broken = true;
        }
        while self.fill() {}
        !self.broken
    }

    /// Every byte received, for [`json_items`] or an error message.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_arrays_lazily_and_wraps_scalars() {
        let items = json_items(" [1, \"a,]\", {\"k\":[2,3]}, [] ] \n".into())
            .unwrap()
            .collect()
            .unwrap();
        assert_eq!(Value::Array(items).to_json(), r#"[1,"a,]",{"k":[2,3]},[]]"#);
        assert_eq!(
            json_items("42".into()).unwrap().collect().unwrap(),
            vec![Value::from(42.0)]
        );
        assert_eq!(
            json_items("  ".into()).unwrap().collect().unwrap(),
            vec![Value::Null]
        );
        assert!(
            json_items("[]".into())
                .unwrap()
                .collect()
                .unwrap()
                .is_empty()
        );
        assert!(json_items("[1,".into()).is_err());
        assert!(json_items("not-json".into()).is_err());
    }

    /// Feeds `text` to a [`ChunkedArray`] `size` bytes at a time and reads
    /// it all: the elements, or `None` when it gave up.
    fn chunked(text: &[u8], size: u64) -> Option<Vec<Value>> {
        let mut array =
            ChunkedArray::with_read_size(Box::new(std::io::Cursor::new(text.to_vec())), size);
        let mut items = Vec::new();
        while let Some(v) = array.next_element::<Value>() {
            items.push(v);
        }
        let clean = array.finish();
        assert_eq!(array.into_bytes(), text, "every byte is kept");
        clean.then_some(items)
    }

    #[test]
    fn chunked_arrays_match_whole_parsing_at_every_chunk_size() {
        let docs = [
            "[]",
            " [ ] \n",
            "[1,2.5e3,-0,123456789]",
            r#"[{"id":1,"name":"a\"b","tags":["x",{"y":[null,true]}]},"\u00e9",42]"#,
            "\n[\n  10 ,\n  20\n]\n",
            "[\"é€😀\",{\"ключ\":\"值\"}]",
        ];
        for doc in docs {
            let whole = json_items(doc.to_string()).unwrap().collect().unwrap();
            for size in 1..=9 {
                assert_eq!(
                    chunked(doc.as_bytes(), size).as_ref(),
                    Some(&whole),
                    "{doc:?} in {size}-byte chunks"
                );
            }
        }
    }

    #[test]
    fn chunked_arrays_give_up_on_anything_but_a_strict_array() {
        // Invalid JSON, other top-level values, and what only JavaScript's
        // wider trim accepts all go back to the ordinary path.
        for doc in [
            "[1,",
            "[1,]",
            "[1 2]",
            "[1] x",
            "[1][2]",
            "{\"a\":1}",
            "42",
            "",
            "\u{feff}[1]",
            "[1]\u{a0}",
            "[01]",
            "[\"\\x\"]",
            "[\"é",
        ] {
            for size in [1, 2, 64] {
                assert_eq!(
                    chunked(doc.as_bytes(), size),
                    None,
                    "{doc:?} in {size}-byte chunks"
                );
            }
        }
        // Bytes that are not UTF-8 are decoded lossily on the whole-text path.
        for size in [1, 3, 64] {
            assert_eq!(chunked(b"[\"a\xffb\"]", size), None);
            assert_eq!(chunked(b"[\"a\xe2\x82\"]", size), None);
        }
    }
}
