//! Splitting a command line into words the way dash does, for lines whose
//! words need nothing but quote removal and, at most, a pathname pattern
//! that matches nothing (see [`super::glob`]).
//!
//! Accepted: unquoted characters that mean themselves inside a word, `\`
//! before an ASCII character, `'…'`, `"…"` with `\` escaping `$`, `` ` ``,
//! `"` and `\` (before anything else it stays), and unquoted `*`, `?` and
//! `[`, which make the word a pattern. Everything that would make dash
//! expand, redirect or run more than one command is refused: `$`,
//! backquotes, `~`, `#`, operators, newlines outside quotes, and anything
//! outside the accepted set.

/// One word after quote removal.
#[derive(Debug, PartialEq)]
pub struct Word {
    /// The word's text.
    pub text: String,
    /// Whether any part of it was quoted or escaped.
    pub quoted: bool,
    /// The word as a pathname pattern, when it has an unquoted `*`, `?` or
    /// `[`: its quoted characters are escaped with `\`.
    pub glob: Option<String>,
}

/// Bytes that mean themselves in every word position of a POSIX shell.
pub fn plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'_' | b'-' | b'.' | b'/' | b',' | b':' | b'+' | b'@' | b'%' | b'='
        )
}

/// A word being read: its text, and the same as a pattern.
#[derive(Default)]
struct Partial {
    text: String,
    pattern: String,
    quoted: bool,
    globs: bool,
}

impl Partial {
    fn push_plain(&mut self, c: char) {
        self.text.push(c);
        self.pattern.push(c);
    }

    fn push_quoted(&mut self, c: char) {
        self.quoted = true;
        self.text.push(c);
        self.pattern.push('\\');
        self.pattern.push(c);
    }

    fn done(self) -> Word {
        Word {
            text: self.text,
            quoted: self.quoted,
            glob: self.globs.then_some(self.pattern),
        }
    }
}

/// The words of `line`, or `None` when it needs more of the shell than
/// quote removal and pathname patterns.
pub fn split(line: &str) -> Option<Vec<Word>> {
    let mut words = Vec::new();
    let mut current: Option<Partial> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == ' ' || c == '\t' {
            words.extend(current.take().map(Partial::done));
            continue;
        }
        let word = current.get_or_insert_with(Partial::default);
        match c {
            '\'' => {
                word.quoted = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push_quoted(c),
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
                            c @ ('$' | '`' | '"' | '\\') => word.push_quoted(c),
                            '\n' => return None,
                            c => {
                                word.push_quoted('\\');
                                word.push_quoted(c);
                            }
                        },
                        c => word.push_quoted(c),
                    }
                }
            }
            '\\' => match chars.next()? {
                c if c.is_ascii() && c != '\n' => word.push_quoted(c),
                _ => return None,
            },
            '*' | '?' | '[' => {
                word.globs = true;
                word.push_plain(c);
            }
            // Literal inside a word in dash (reserved words and `!` count
            // only as a whole first word, which the caller checks).
            ']' | '{' | '}' | '!' => word.push_plain(c),
            c if c.is_ascii() && plain_byte(c as u8) => word.push_plain(c),
            _ => return None,
        }
    }
    words.extend(current.map(Partial::done));
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
        assert_eq!(
            texts("'$HOME *?[ \\ ~#;|&<>()\nx'").unwrap(),
            ["$HOME *?[ \\ ~#;|&<>()\nx"]
        );
        assert_eq!(
            texts("\"applied [{\"id\":2}]\"").unwrap(),
            ["applied [{id:2}]"]
        );
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
    fn unquoted_glob_characters_make_a_pattern_with_the_quoted_ones_escaped() {
        let words = split("[1,2] 'a*'b* \\?x \"[\"y] {a,b}! plain").unwrap();
        let globs: Vec<Option<&str>> = words.iter().map(|w| w.glob.as_deref()).collect();
        assert_eq!(
            globs,
            [Some("[1,2]"), Some("\\a\\*b*"), None, None, None, None]
        );
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["[1,2]", "a*b*", "?x", "[y]", "{a,b}!", "plain"]);
    }

    #[test]
    fn expansions_operators_and_open_quotes_are_refused() {
        for line in [
            "a $b",
            "\"$b\"",
            "a `b`",
            "\"`b`\"",
            "~/x",
            "#c",
            "a;b",
            "a|b",
            "a&",
            "a>b",
            "a<b",
            "(a)",
            "a\nb",
            "'open",
            "\"open",
            "a\\",
            "\"a\\\nb\"",
            "a\\\nb",
            "é",
            "a\\é",
            "a^b",
            "a~",
        ] {
            assert_eq!(split(line), None, "{line:?}");
        }
    }

    /// Every line of up to four characters over the quoting alphabet that
    /// is accepted splits into exactly the words dash gives it.
    #[test]
    fn accepted_lines_split_as_dash_splits_them() {
        assert!(
            std::fs::canonicalize("/bin/sh").is_ok_and(|p| p.ends_with("dash")),
            "this test compares with dash, and /bin/sh is not dash"
        );
        let alphabet = ['a', ' ', '\t', '\'', '"', '\\', '$', '*', '\n'];
        let mut lines = vec![String::new()];
        let mut level = vec![String::new()];
        for _ in 0..4 {
            level = level
                .iter()
                .flat_map(|l| alphabet.iter().map(move |c| format!("{l}{c}")))
                .collect();
            lines.extend(level.iter().cloned());
        }
        // Patterns are expanded against a directory: `super::glob` checks those.
        let no_patterns =
            |l: &String| split(l).is_some_and(|words| words.iter().all(|w| w.glob.is_none()));
        let accepted: Vec<(String, Vec<String>)> = lines
            .into_iter()
            .filter(no_patterns)
            .filter_map(|l| texts(&l).map(|w| (l, w)))
            .collect();
        assert!(
            accepted.len() > 500,
            "the alphabet exercises the splitter ({} lines)",
            accepted.len()
        );
        // One dash process checks them all: each line becomes `set --` and a
        // count and the words, between markers.
        let script: String = accepted
            .iter()
            .map(|(line, _)| format!("set -- {line}\nprintf '%s:' \"$#\"; for a; do printf '<%s>' \"$a\"; done; printf '\\n'\n"))
            .collect();
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dash = String::from_utf8(out.stdout).unwrap();
        let mut dash_lines = dash.split('\n');
        for (line, words) in &accepted {
            let ours = format!(
                "{}:{}",
                words.len(),
                words.iter().map(|w| format!("<{w}>")).collect::<String>()
            );
            // A word may hold a newline; read as many output lines as it has.
            let mut theirs = dash_lines.next().unwrap().to_string();
            for _ in 0..ours.matches('\n').count() {
                theirs = format!("{theirs}\n{}", dash_lines.next().unwrap());
            }
            assert_eq!(ours, theirs, "{line:?}");
        }
    }
}
