//! Splitting a command line into words the way dash does, for lines whose
//! words need nothing but quote removal.
//!
//! Accepted: unquoted bytes that mean themselves everywhere, `\` before an
//! ASCII character, `'…'`, and `"…"` with `\` escaping `$`, `` ` ``, `"`
//! and `\` (before anything else it stays). Everything that would make dash
//! expand, redirect, glob or run more than one command is refused:
//! `$`, backquotes, `*?[~#`, operators, newlines outside quotes, and any
//! byte outside the plain set.

/// One word after quote removal.
#[derive(Debug, PartialEq)]
pub struct Word {
    /// The word's text.
    pub text: String,
    /// Whether any part of it was quoted or escaped.
    pub quoted: bool,
}

/// Bytes that mean themselves in every word position of a POSIX shell.
pub fn plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/' | b',' | b':' | b'+' | b'@' | b'%' | b'=')
}

/// The words of `line`, or `None` when it needs more of the shell than
/// quote removal.
pub fn split(line: &str) -> Option<Vec<Word>> {
    let mut words = Vec::new();
    let mut current: Option<Word> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == ' ' || c == '\t' {
            words.extend(current.take());
            continue;
        }
        let word = current.get_or_insert_with(|| Word { text: String::new(), quoted: false });
        match c {
            '\'' => {
                word.quoted = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.text.push(c),
                    }
                }
            }
            '"' => {
                word.quoted = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' => return None,
                        '\\' => match chars.next()? {
                            c @ ('$' | '`' | '"' | '\\') => word.text.push(c),
                            '\n' => return None,
                            c => {
                                word.text.push('\\');
                                word.text.push(c);
                            }
                        },
                        c => word.text.push(c),
                    }
                }
            }
            '\\' => match chars.next()? {
                c if c.is_ascii() && c != '\n' => {
                    word.quoted = true;
                    word.text.push(c);
                }
                _ => return None,
            },
            c if c.is_ascii() && plain_byte(c as u8) => word.text.push(c),
            _ => return None,
        }
    }
    words.extend(current);
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Option<Vec<String>> {
        split(line).map(|w| w.into_iter().map(|w| w.text).collect())
    }

    #[test]
    fn quotes_are_removed_as_dash_removes_them() {
        assert_eq!(texts("  a\tb  c ").unwrap(), ["a", "b", "c"]);
        assert_eq!(texts("'a b' \"c d\" e\\ f").unwrap(), ["a b", "c d", "e f"]);
        assert_eq!(texts("'' \"\" x''y").unwrap(), ["", "", "xy"]);
        assert_eq!(texts(r#""a\"b\\c\$d\`e\nf""#).unwrap(), ["a\"b\\c$d`e\\nf"]);
        assert_eq!(texts("'$HOME *?[ \\ ~#;|&<>()\nx'").unwrap(), ["$HOME *?[ \\ ~#;|&<>()\nx"]);
        assert_eq!(texts("\"applied [{\"id\":2}]\"").unwrap(), ["applied [{id:2}]"]);
        assert_eq!(texts("\\'a\\\"").unwrap(), ["'a\""]);
        assert_eq!(texts("").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn quoting_is_recorded() {
        let words = split("echo 'x' y\\z w").unwrap();
        let quoted: Vec<bool> = words.iter().map(|w| w.quoted).collect();
        assert_eq!(quoted, [false, true, true, false]);
    }

    #[test]
    fn expansions_operators_and_open_quotes_are_refused() {
        for line in [
            "a $b", "\"$b\"", "a `b`", "\"`b`\"", "a*", "a?", "[a]", "~/x", "#c", "a;b", "a|b", "a&", "a>b", "a<b", "(a)",
            "a\nb", "'open", "\"open", "a\\", "\"a\\\nb\"", "a\\\nb", "é", "{a,b}", "a!", "a\\é",
        ] {
            assert_eq!(split(line), None, "{line:?}");
        }
    }
}
