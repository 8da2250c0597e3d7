//! The message `JSON.parse` throws for malformed text, as V8 (Node 22)
//! words it, so that errors Lobster passes on from `JSON.parse` read the
//! same here: `Unexpected token 'o', "nope" is not valid JSON`,
//! `Expected ',' or ']' after array element in JSON at position 3 (line 1
//! column 4)`, `Unexpected end of JSON input`.
//!
//! Only the failure path uses this: the text is scanned again, in UTF-16
//! code units as JavaScript counts positions, following V8's parser's
//! order of checks. Checked against Node's own messages in the unit tests
//! below and by `scripts/lobster-diff`.

/// Where and how the scan failed.
enum Fail {
    /// The text ended where a value or an escape was still needed.
    End,
    /// A character no JSON value starts or continues with.
    Token(usize),
    /// A digit after a leading zero.
    Number(usize),
    /// One of V8's positional messages, up to "at position".
    At(&'static str, usize),
}

/// Source lengths up to this are quoted whole in an unexpected-token message.
const SHORT: usize = 20;
/// Characters of context either side of an unexpected token otherwise.
const CONTEXT: usize = 10;
/// Whole sources V8 names without a position.
const SPECIAL: [&str; 4] = ["NaN", "Infinity", "undefined", "[object Object]"];

/// The message `JSON.parse(text)` throws; `None` when V8 would accept the
/// text (which serde_json may still refuse: a lone surrogate escape, a
/// number out of range).
pub fn v8_parse_error(text: &str) -> Option<String> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut scan = Scan { s: &units, pos: 0 };
    let fail = match scan.document() {
        Ok(()) => return None,
        Err(fail) => fail,
    };
    Some(match fail {
        Fail::End => "Unexpected end of JSON input".to_string(),
        Fail::Number(at) => format!(
            "Unexpected number in JSON at position {at} {}",
            location(&units, at)
        ),
        Fail::At(what, at) => format!("{what} at position {at} {}", location(&units, at)),
        Fail::Token(_) if SPECIAL.contains(&text) => format!("\"{text}\" is not valid JSON"),
        // V8 names a token that starts a number or a string by its kind.
        Fail::Token(at) if matches!(units[at], 0x30..=0x39 | 0x2d) => {
            format!(
                "Unexpected number in JSON at position {at} {}",
                location(&units, at)
            )
        }
        Fail::Token(at) if units[at] == 0x22 => format!(
            "Unexpected string in JSON at position {at} {}",
            location(&units, at)
        ),
        Fail::Token(at) => {
            let token = String::from_utf16_lossy(&units[at..at + 1]);
            let part = |from: usize, to: usize| String::from_utf16_lossy(&units[from..to]);
            let len = units.len();
            if len <= SHORT {
                format!("Unexpected token '{token}', \"{text}\" is not valid JSON")
            } else if at < CONTEXT {
                format!(
                    "Unexpected token '{token}', \"{}\"... is not valid JSON",
                    part(0, at + CONTEXT)
                )
            } else if at < len - CONTEXT {
                format!(
                    "Unexpected token '{token}', ...\"{}\"... is not valid JSON",
                    part(at - CONTEXT, at + CONTEXT)
                )
            } else {
                format!(
                    "Unexpected token '{token}', ...\"{}\" is not valid JSON",
                    part(at - CONTEXT, len)
                )
            }
        }
    })
}

/// `(line L column C)` of position `at`; `\r\n`, `\n` and `\r` end lines.
fn location(units: &[u16], at: usize) -> String {
    let (mut line, mut start) = (1, 0);
    for i in 0..at {
        let ends = units[i] == u16::from(b'\n')
            || (units[i] == u16::from(b'\r') && units.get(i + 1) != Some(&u16::from(b'\n')));
        if ends {
            line += 1;
            start = i + 1;
        }
    }
    format!("(line {line} column {})", at - start + 1)
}

struct Scan<'a> {
    s: &'a [u16],
    pos: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.s
            .get(self.pos)
            .map(|&u| u8::try_from(u).unwrap_or(0xff))
    }

    fn digit(&self) -> bool {
        self.peek().is_some_and(|c| c.is_ascii_digit())
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn document(&mut self) -> Result<(), Fail> {
        self.value()?;
        self.skip_space();
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(Fail::At(
                "Unexpected non-whitespace character after JSON",
                self.pos,
            )),
        }
    }

    fn value(&mut self) -> Result<(), Fail> {
        self.skip_space();
        match self.peek() {
            None => Err(Fail::End),
            Some(b'"') => self.string(),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(_) => Err(Fail::Token(self.pos)),
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), Fail> {
        for expected in word.bytes() {
            match self.peek() {
                None => return Err(Fail::End),
                Some(c) if c != expected => return Err(Fail::Token(self.pos)),
                Some(_) => self.pos += 1,
            }
        }
        Ok(())
    }

    fn digits(&mut self) {
        while self.digit() {
            self.pos += 1;
        }
    }

    fn number(&mut self) -> Result<(), Fail> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
            if !self.digit() {
                return Err(Fail::At("No number after minus sign in JSON", self.pos));
            }
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
            if self.digit() {
                return Err(Fail::Number(self.pos));
            }
        } else {
            self.digits();
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !self.digit() {
                return Err(Fail::At("Unterminated fractional number in JSON", self.pos));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !self.digit() {
                return Err(Fail::At(
                    "Exponent part is missing a number in JSON",
                    self.pos,
                ));
            }
            self.digits();
        }
        Ok(())
    }

    fn string(&mut self) -> Result<(), Fail> {
        self.pos += 1;
        loop {
            match self.s.get(self.pos) {
                None => return Err(Fail::At("Unterminated string in JSON", self.pos)),
                Some(&u) if u == u16::from(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(&u) if u == u16::from(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        None => return Err(Fail::End),
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 1;
                        }
                        Some(b'u') => {
                            self.pos += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                                    return Err(Fail::At("Bad Unicode escape in JSON", self.pos));
                                }
                                self.pos += 1;
                            }
                        }
                        Some(_) => return Err(Fail::At("Bad escaped character in JSON", self.pos)),
                    }
                }
                Some(&u) if u < 0x20 => {
                    return Err(Fail::At(
                        "Bad control character in string literal in JSON",
                        self.pos,
                    ));
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn array(&mut self) -> Result<(), Fail> {
        self.pos += 1;
        self.skip_space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    return Err(Fail::At(
                        "Expected ',' or ']' after array element in JSON",
                        self.pos,
                    ));
                }
            }
        }
    }

    fn object(&mut self) -> Result<(), Fail> {
        self.pos += 1;
        self.skip_space();
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                return Ok(());
            }
            Some(b'"') => {}
            _ => return Err(Fail::At("Expected property name or '}' in JSON", self.pos)),
        }
        loop {
            self.string()?;
            self.skip_space();
            if self.peek() != Some(b':') {
                return Err(Fail::At(
                    "Expected ':' after property name in JSON",
                    self.pos,
                ));
            }
            self.pos += 1;
            self.value()?;
            self.skip_space();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_space();
                    if self.peek() != Some(b'"') {
                        return Err(Fail::At(
                            "Expected double-quoted property name in JSON",
                            self.pos,
                        ));
                    }
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    return Err(Fail::At(
                        "Expected ',' or '}' after property value in JSON",
                        self.pos,
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::v8_parse_error;

    /// Each text with the message Node 22's `JSON.parse` throws for it
    /// (recorded with the reference Lobster's own Node).
    const NODE: &[(&str, &str)] = &[
        ("nope", "Unexpected token 'o', \"nope\" is not valid JSON"),
        ("", "Unexpected end of JSON input"),
        ("  ", "Unexpected end of JSON input"),
        (
            "{",
            "Expected property name or '}' in JSON at position 1 (line 1 column 2)",
        ),
        ("[", "Unexpected end of JSON input"),
        ("[1,", "Unexpected end of JSON input"),
        ("[1,]", "Unexpected token ']', \"[1,]\" is not valid JSON"),
        (
            "[1 2]",
            "Expected ',' or ']' after array element in JSON at position 3 (line 1 column 4)",
        ),
        (
            "[1",
            "Expected ',' or ']' after array element in JSON at position 2 (line 1 column 3)",
        ),
        (
            "{\"a\"}",
            "Expected ':' after property name in JSON at position 4 (line 1 column 5)",
        ),
        (
            "{\"a\"  ",
            "Expected ':' after property name in JSON at position 6 (line 1 column 7)",
        ),
        (
            "{\"a\":}",
            "Unexpected token '}', \"{\"a\":}\" is not valid JSON",
        ),
        ("{\"a\":", "Unexpected end of JSON input"),
        (
            "{\"a\":1",
            "Expected ',' or '}' after property value in JSON at position 6 (line 1 column 7)",
        ),
        (
            "{\"a\":1,}",
            "Expected double-quoted property name in JSON at position 7 (line 1 column 8)",
        ),
        (
            "{\"a\":1, ",
            "Expected double-quoted property name in JSON at position 8 (line 1 column 9)",
        ),
        (
            "{a:1}",
            "Expected property name or '}' in JSON at position 1 (line 1 column 2)",
        ),
        (
            "\"abc",
            "Unterminated string in JSON at position 4 (line 1 column 5)",
        ),
        (
            "[\"\\\"]",
            "Unterminated string in JSON at position 5 (line 1 column 6)",
        ),
        (
            "\"a\\qb\"",
            "Bad escaped character in JSON at position 3 (line 1 column 4)",
        ),
        (
            "\"\\u12g4\"",
            "Bad Unicode escape in JSON at position 5 (line 1 column 6)",
        ),
        (
            "\"\\u12",
            "Bad Unicode escape in JSON at position 5 (line 1 column 6)",
        ),
        ("\"\\", "Unexpected end of JSON input"),
        (
            "\"tab\there\"",
            "Bad control character in string literal in JSON at position 4 (line 1 column 5)",
        ),
        (
            "-",
            "No number after minus sign in JSON at position 1 (line 1 column 2)",
        ),
        (
            "-Infinity",
            "No number after minus sign in JSON at position 1 (line 1 column 2)",
        ),
        (
            "1e+",
            "Exponent part is missing a number in JSON at position 3 (line 1 column 4)",
        ),
        (
            "1.e5",
            "Unterminated fractional number in JSON at position 2 (line 1 column 3)",
        ),
        (
            "[01]",
            "Unexpected number in JSON at position 2 (line 1 column 3)",
        ),
        (
            "-01",
            "Unexpected number in JSON at position 2 (line 1 column 3)",
        ),
        ("tru", "Unexpected end of JSON input"),
        (
            "truex",
            "Unexpected non-whitespace character after JSON at position 4 (line 1 column 5)",
        ),
        (
            "{\"a\":tru}",
            "Unexpected token '}', \"{\"a\":tru}\" is not valid JSON",
        ),
        ("nan", "Unexpected token 'a', \"nan\" is not valid JSON"),
        ("NaN", "\"NaN\" is not valid JSON"),
        ("undefined", "\"undefined\" is not valid JSON"),
        ("[object Object]", "\"[object Object]\" is not valid JSON"),
        (
            "{\"a\":1}\n{\"b\":2}",
            "Unexpected non-whitespace character after JSON at position 8 (line 2 column 1)",
        ),
        (
            "1\r\n2",
            "Unexpected non-whitespace character after JSON at position 3 (line 2 column 1)",
        ),
        (
            "1\r2",
            "Unexpected non-whitespace character after JSON at position 2 (line 2 column 1)",
        ),
        (
            "x2345678901234567890",
            "Unexpected token 'x', \"x2345678901234567890\" is not valid JSON",
        ),
        (
            "x23456789012345678901",
            "Unexpected token 'x', \"x234567890\"... is not valid JSON",
        ),
        (
            "[1,2,3,4,5,6,7,8,9,10,11,12,13,x,15,16,17,18,19,20,21]",
            "Unexpected token 'x', ...\",11,12,13,x,15,16,17\"... is not valid JSON",
        ),
        (
            "[\"aaaaaaaaaaaaaaaaaaaaa\", \"bbbbbbbbbbbbbbbbbbbbbbbbbbbb\", x]",
            "Unexpected token 'x', ...\"bbbbbbb\", x]\" is not valid JSON",
        ),
        (
            "[\"\u{1F600}\", x, \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]",
            "Unexpected token 'x', \"[\"\u{1F600}\", x, \"aaaaaa\"... is not valid JSON",
        ),
        (
            "\u{a0}",
            "Unexpected token '\u{a0}', \"\u{a0}\" is not valid JSON",
        ),
        (
            "[1,2]]",
            "Unexpected non-whitespace character after JSON at position 5 (line 1 column 6)",
        ),
        (
            "[t0rue]",
            "Unexpected number in JSON at position 2 (line 1 column 3)",
        ),
        (
            "nu-ll",
            "Unexpected number in JSON at position 2 (line 1 column 3)",
        ),
        (
            "tr\"ue",
            "Unexpected string in JSON at position 2 (line 1 column 3)",
        ),
    ];

    #[test]
    fn messages_match_node() {
        for (text, message) in NODE {
            assert_eq!(v8_parse_error(text).as_deref(), Some(*message), "{text:?}");
        }
    }

    #[test]
    fn valid_json_has_no_message() {
        for text in [
            "-0",
            "1E+5",
            "[]",
            "{}",
            " {\"a\": [1, 2.5e-3, true, null, \"\\u00e9\"]} ",
            "\"\\ud800\"",
        ] {
            assert_eq!(v8_parse_error(text), None, "{text:?}");
        }
    }
}
