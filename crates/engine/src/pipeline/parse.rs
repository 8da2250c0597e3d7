//! The pipeline grammar: `cmd --flag value arg | cmd2 ...`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::value::{Object, Value};

/// Parsed arguments of one stage: flags plus positional words in `_`.
///
/// Flag values are strings, or `true` for a bare flag.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    /// `--key value`, `--key=value` and bare `--key` (as `Value::Bool(true)`).
    pub flags: Vec<(String, Value)>,
    /// Positional words.
    pub positional: Vec<String>,
}

impl Args {
    /// The value of `--key` (the last one wins, as with object assignment).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.flags
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The value of `--key` when it is a string.
    pub fn string(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// Whether `--key` was given with a truthy value.
    pub fn truthy(&self, key: &str) -> bool {
        self.get(key).is_some_and(Value::truthy)
    }

    /// The args as the JavaScript object Lobster builds (`_` first). A flag
    /// literally named `--_` is dropped so it cannot clobber the positional
    /// words (no command reads it).
    pub fn to_value(&self) -> Value {
        let mut obj = Object::new();
        obj.insert(
            "_",
            Value::Array(
                self.positional
                    .iter()
                    .map(|s| Value::from(s.as_str()))
                    .collect(),
            ),
        );
        for (k, v) in self.flags.iter().filter(|(k, _)| k != "_") {
            obj.insert(k, v.clone());
        }
        Value::Object(obj)
    }

    /// Rebuilds args from their object form (as stored in resume state).
    pub fn from_value(v: &Value) -> Args {
        let mut args = Args::default();
        if let Some(obj) = v.as_object() {
            for (k, val) in obj.iter() {
                if k == "_" {
                    if let Some(items) = val.as_array() {
                        args.positional = items.iter().map(Value::to_js_string).collect();
                    }
                } else {
                    args.flags.push((k.to_string(), val.clone()));
                }
            }
        }
        args
    }
}

/// One stage: command name, arguments and the raw text it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// The command name (first word).
    pub name: String,
    /// Its arguments.
    pub args: Args,
    /// The trimmed source text of the stage.
    pub raw: String,
}

/// The serialised form of a stage kept in resume state: `{name, args, raw}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StageRecord {
    /// Command name.
    pub name: String,
    /// Arguments as an object (`_` holds the positional words).
    pub args: Value,
    /// Source text.
    pub raw: String,
}

impl StageRecord {
    /// The record as a JSON object.
    pub fn to_value(&self) -> Value {
        Value::Object(Object::from_iter([
            ("name", Value::from(self.name.as_str())),
            ("args", self.args.clone()),
            ("raw", Value::from(self.raw.as_str())),
        ]))
    }
}

impl From<&Stage> for StageRecord {
    fn from(s: &Stage) -> Self {
        StageRecord {
            name: s.name.clone(),
            args: s.args.to_value(),
            raw: s.raw.clone(),
        }
    }
}

impl From<&StageRecord> for Stage {
    fn from(r: &StageRecord) -> Self {
        Stage {
            name: r.name.clone(),
            args: Args::from_value(&r.args),
            raw: r.raw.clone(),
        }
    }
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Splits pipeline text on `|` outside quotes.
fn split_stages(text: &str) -> Result<Vec<String>> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                cur.push(c);
                if c == '\\' {
                    if let Some(next) = chars.next() {
                        cur.push(next);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    cur.push(c);
                }
                '|' => parts.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            },
        }
    }
    if quote.is_some() {
        return Err(Error::parse("Unclosed quote"));
    }
    parts.push(cur);
    let mut parts: Vec<String> = parts
        .into_iter()
        .map(|p| p.trim_matches(crate::value::is_js_space).to_string())
        .collect();
    if parts.last().is_some_and(String::is_empty) {
        parts.pop();
    }
    Ok(parts)
}

/// Splits one stage into words with Lobster's quoting rules.
pub fn tokenize(stage: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = stage.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if is_space(c) => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        None => return Err(Error::parse("Unclosed quote")),
                        Some('\'') => break,
                        Some('\\') if chars.peek() == Some(&'\'') => {
                            chars.next();
                            cur.push('\'');
                        }
                        Some(ch) => cur.push(ch),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        None => return Err(Error::parse("Unclosed quote")),
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some(&n @ ('"' | '\\' | '$' | '`')) => {
                                chars.next();
                                cur.push(n);
                            }
                            Some('\n') => {
                                chars.next();
                            }
                            _ => cur.push('\\'),
                        },
                        Some(ch) => cur.push(ch),
                    }
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Turns the words after the command name into [`Args`]: `--key value` is
/// greedy unless `key` is one of `boolean_flags`.
pub fn parse_args(words: &[String], boolean_flags: &[&str]) -> Args {
    let mut args = Args::default();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if let Some(flag) = w.strip_prefix("--") {
            if let Some((k, v)) = flag.split_once('=') {
                args.flags.push((k.to_string(), Value::from(v)));
            } else if let Some(next) = words
                .get(i + 1)
                .filter(|n| !n.starts_with("--") && !boolean_flags.contains(&flag))
            {
                args.flags
                    .push((flag.to_string(), Value::from(next.as_str())));
                i += 1;
            } else {
                args.flags.push((flag.to_string(), Value::Bool(true)));
            }
        } else {
            args.positional.push(w.clone());
        }
        i += 1;
    }
    args
}

/// Parses a whole pipeline string into stages.
pub fn parse_pipeline(text: &str) -> Result<Vec<Stage>> {
    let segments = split_stages(text)?;
    if segments.is_empty() {
        return Err(Error::parse("Empty pipeline"));
    }
    segments
        .into_iter()
        .map(|raw| {
            let words = tokenize(&raw)?;
            let Some((name, rest)) = words.split_first() else {
                return Err(Error::parse("Empty command stage"));
            };
            // exec's JSON switch must not swallow the executable (2026.9.13).
            let boolean_flags: &[&str] = if name == "exec" { &["json"] } else { &[] };
            Ok(Stage {
                name: name.clone(),
                args: parse_args(rest, boolean_flags),
                raw,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        tokenize(s).unwrap()
    }

    #[test]
    fn quoting_rules() {
        assert_eq!(words(r#"echo 'it\'s a\b'"#), vec!["echo", r"it's a\b"]);
        assert_eq!(
            words(r#"echo "say \"hi\" \\ \$HOME \`x\` \n""#),
            vec!["echo", r#"say "hi" \ $HOME `x` \n"#]
        );
        assert_eq!(words(r#"ab'cd'"ef""#), vec!["abcdef"]);
        assert_eq!(words("a ''"), vec!["a", ""]);
    }

    #[test]
    fn pipes_inside_quotes_do_not_split() {
        let stages = parse_pipeline(r#"exec echo 'a|b' "c|d" | head --n 5"#).unwrap();
        assert_eq!(stages.len(), 2);
        assert_eq!(stages[0].args.positional, vec!["echo", "a|b", "c|d"]);
    }

    #[test]
    fn greedy_flags() {
        let stages = parse_pipeline("approve --emit 'Send?' --x=1 --y --z -1").unwrap();
        let a = &stages[0].args;
        assert_eq!(a.get("emit"), Some(&Value::from("Send?")));
        assert_eq!(a.get("x"), Some(&Value::from("1")));
        assert_eq!(a.get("y"), Some(&Value::Bool(true)));
        assert_eq!(a.get("z"), Some(&Value::from("-1")));
        let exec = &parse_pipeline("exec --json echo hi").unwrap()[0].args;
        assert_eq!(exec.get("json"), Some(&Value::Bool(true)));
        assert_eq!(exec.positional, vec!["echo", "hi"]);
    }

    #[test]
    fn underscore_flag_does_not_clobber_positionals() {
        // Found by the pipeline_parser fuzzer.
        let stage = &parse_pipeline("exec echo hi --_ x").unwrap()[0];
        let back = Stage::from(&StageRecord::from(stage));
        assert_eq!(back.args.positional, vec!["echo", "hi"]);
    }

    #[test]
    fn empty_segments() {
        assert_eq!(parse_pipeline("  ").unwrap_err().message, "Empty pipeline");
        assert_eq!(
            parse_pipeline("a | | b").unwrap_err().message,
            "Empty command stage"
        );
        assert_eq!(parse_pipeline("exec echo a |").unwrap().len(), 1);
        assert_eq!(
            parse_pipeline("exec 'oops").unwrap_err().message,
            "Unclosed quote"
        );
    }
}
