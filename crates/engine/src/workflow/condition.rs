//! The `when` / `condition` expression language.
//!
//! `or := and ('||' and)*`, `and := eq ('&&' eq)*`,
//! `eq := unary [op unary']`, `unary := '!' unary | primary`, where primary
//! is `( or )`, a `$step.path` reference, a quoted string, a number,
//! `true`/`false`/`null`, and a bare identifier only on the right of a
//! comparison. `==` is strict (deep for arrays and objects); ordering needs
//! numbers or numeric strings on both sides.

use crate::error::{Error, Result};
use crate::value::{Object, Value, deep_equal, string_to_number};

use super::template::{scan_ref, strict_lookup};

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Or,
    And,
    Not,
    LParen,
    RParen,
    Op(&'static str),
    Ref(String, String),
    Str(String),
    Num(f64),
    Word(String),
}

fn tokenize(expr: &str, unsupported: &dyn Fn() -> Error) -> Result<Vec<Tok>> {
    let chars: Vec<char> = expr.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        if crate::value::is_js_space(c) {
            i += 1;
        } else if two == "||" {
            toks.push(Tok::Or);
            i += 2;
        } else if two == "&&" {
            toks.push(Tok::And);
            i += 2;
        } else if let Some(op) = ["==", "!=", "<=", ">="].into_iter().find(|o| *o == two) {
            toks.push(Tok::Op(op));
            i += 2;
        } else if c == '<' || c == '>' {
            toks.push(Tok::Op(if c == '<' { "<" } else { ">" }));
            i += 1;
        } else if c == '!' {
            toks.push(Tok::Not);
            i += 1;
        } else if c == '(' {
            toks.push(Tok::LParen);
            i += 1;
        } else if c == ')' {
            toks.push(Tok::RParen);
            i += 1;
        } else if c == '\'' || c == '"' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(unsupported()),
                    Some('\\') => {
                        if let Some(n) = chars.get(i + 1) {
                            s.push(*n);
                        }
                        i += 2;
                    }
                    Some(q) if *q == c => {
                        i += 1;
                        break;
                    }
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            toks.push(Tok::Str(s));
        } else if c == '$' {
            let rest: String = chars[i..].iter().collect();
            let (id, path, len) = scan_ref(&rest).ok_or_else(unsupported)?;
            toks.push(Tok::Ref(id.to_string(), path.to_string()));
            i += rest[..len].chars().count();
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            i += 1;
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            if chars.get(i) == Some(&'.') && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                i += 1;
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
            }
            let text: String = chars[start..i].iter().collect();
            toks.push(Tok::Num(string_to_number(&text)));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
            {
                i += 1;
            }
            toks.push(Tok::Word(chars[start..i].iter().collect()));
        } else {
            return Err(unsupported());
        }
    }
    Ok(toks)
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    results: &'a Object,
    unsupported: &'a dyn Fn() -> Error,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn or(&mut self) -> Result<Option<Value>> {
        let mut left = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            let right = self.and()?;
            left = if truthy(&left) { left } else { right };
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Option<Value>> {
        let mut left = self.eq()?;
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            let right = self.eq()?;
            left = if truthy(&left) { right } else { left };
        }
        Ok(left)
    }

    fn eq(&mut self) -> Result<Option<Value>> {
        let left = self.unary(false)?;
        let Some(Tok::Op(op)) = self.peek().cloned() else {
            return Ok(left);
        };
        self.pos += 1;
        let right = self.unary(true)?;
        let result = match op {
            "==" => strict_eq(&left, &right),
            "!=" => !strict_eq(&left, &right),
            _ => match (numeric(&left), numeric(&right)) {
                (Some(a), Some(b)) => match op {
                    "<" => a < b,
                    "<=" => a <= b,
                    ">" => a > b,
                    _ => a >= b,
                },
                _ => false,
            },
        };
        Ok(Some(Value::Bool(result)))
    }

    fn unary(&mut self, right_side: bool) -> Result<Option<Value>> {
        if self.peek() == Some(&Tok::Not) {
            self.pos += 1;
            let v = self.unary(right_side)?;
            return Ok(Some(Value::Bool(!truthy(&v))));
        }
        self.primary(right_side)
    }

    fn primary(&mut self, right_side: bool) -> Result<Option<Value>> {
        let tok = self.peek().cloned().ok_or_else(|| (self.unsupported)())?;
        self.pos += 1;
        match tok {
            Tok::LParen => {
                let v = self.or()?;
                if self.peek() != Some(&Tok::RParen) {
                    return Err((self.unsupported)());
                }
                self.pos += 1;
                Ok(v)
            }
            Tok::Ref(id, path) => strict_lookup(self.results, &id, &path),
            Tok::Str(s) => Ok(Some(Value::String(s))),
            Tok::Num(n) => Ok(Some(Value::Number(n))),
            Tok::Word(w) if w == "true" => Ok(Some(Value::Bool(true))),
            Tok::Word(w) if w == "false" => Ok(Some(Value::Bool(false))),
            Tok::Word(w) if w == "null" => Ok(Some(Value::Null)),
            Tok::Word(w) if right_side => Ok(Some(Value::String(w))),
            _ => Err((self.unsupported)()),
        }
    }
}

fn truthy(v: &Option<Value>) -> bool {
    v.as_ref().is_some_and(Value::truthy)
}

fn strict_eq(a: &Option<Value>, b: &Option<Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => match (x, y) {
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                deep_equal(x, y)
            }
            (Value::Number(p), Value::Number(q)) => p == q || (p.is_nan() && q.is_nan()),
            _ => x == y,
        },
        _ => false,
    }
}

fn numeric(v: &Option<Value>) -> Option<f64> {
    match v {
        Some(Value::Number(n)) => Some(*n),
        Some(Value::String(s)) if !s.trim().is_empty() => {
            Some(string_to_number(s)).filter(|n| !n.is_nan())
        }
        _ => None,
    }
}

/// Evaluates a step condition against the results so far.
pub fn evaluate(condition: Option<&Value>, results: &Object) -> Result<bool> {
    let text = match condition {
        None | Some(Value::Null) => return Ok(true),
        Some(Value::Bool(b)) => return Ok(*b),
        Some(Value::String(s)) => s,
        Some(_) => return Err(Error::runtime("Unsupported condition type")),
    };
    match text.trim() {
        "true" => return Ok(true),
        "false" => return Ok(false),
        _ => {}
    }
    let text = text.trim();
    let unsupported = || Error::runtime(format!("Unsupported condition: {text}"));
    let toks = tokenize(text, &unsupported)?;
    let mut p = Parser {
        toks,
        pos: 0,
        results,
        unsupported: &unsupported,
    };
    let v = p.or()?;
    if p.pos != p.toks.len() {
        return Err(unsupported());
    }
    Ok(truthy(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results() -> Object {
        Object::from_iter([(
            "n",
            Value::from_json(
                r#"{"id":"n","json":{"v":5,"s":"abc","t":true,"z":null,"arr":[1,2]}}"#,
            )
            .unwrap(),
        )])
    }

    fn eval(s: &str) -> Result<bool> {
        evaluate(Some(&Value::from(s)), &results())
    }

    #[test]
    fn grammar_and_semantics() {
        assert!(eval("$n.json.v == 5").unwrap());
        assert!(eval("$n.json.v > 4 && $n.json.v <= 5").unwrap());
        assert!(eval("!($n.json.t) || $n.json.z == null").unwrap());
        assert!(eval("$n.json.s == abc").unwrap());
        assert!(!eval("$n.json.v == \"5\"").unwrap());
        assert!(!eval("$n.json.t > 0").unwrap());
        assert!(eval("$n.json.arr == $n.json.arr").unwrap());
        assert!(eval("'it\\'s' != $n.json.s").unwrap());
        assert_eq!(
            eval("foo bar").unwrap_err().message,
            "Unsupported condition: foo bar"
        );
        assert_eq!(
            eval("$nope.approved").unwrap_err().message,
            "Unknown step reference: nope.approved"
        );
        assert_eq!(
            evaluate(Some(&Value::from(3.0)), &Object::new())
                .unwrap_err()
                .message,
            "Unsupported condition type"
        );
    }
}
