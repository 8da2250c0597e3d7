//! Gobby's template expressions, `${{ … }}`: the Jinja-like language its
//! pipelines use in `exec`, `prompt`, `condition`, `outputs` and
//! `invoke_pipeline` arguments. Names (`inputs.x`, `steps.build.output.k`,
//! a step id by itself, `env.HOME`), literals, `[ … ]` lists, indexing,
//! comparisons (`== != < <= > >= in`, `is [not] none|defined|undefined`),
//! `and or not`, `a if c else b`, `+ - ~`, the calls `len bool str int any
//! all`, and the filters `default tojson length lower upper trim string int
//! join first last`. A name that is not there is undefined: it renders as
//! nothing and is false, as in Jinja.

use crate::value::{Object, Value, deep_equal, format_number};

/// Whether `text` is one expression and nothing else (`${{ x }}`); its
/// inside if so.
pub(crate) fn pure(text: &str) -> Option<&str> {
    let inner = text.trim().strip_prefix("${{")?.strip_suffix("}}")?;
    (!inner.contains("${{") && !inner.contains("}}")).then(|| inner.trim())
}

/// Renders every `${{ … }}` in `text` as text (see [`text_of`]).
pub(crate) fn render(text: &str, scope: &Value) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 3..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("unclosed ${{{{ in {text:?}"))?;
        out.push_str(&text_of(&evaluate(&after[..end], scope)?));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of expression `expr` in `scope` (an object of names).
pub(crate) fn evaluate(expr: &str, scope: &Value) -> Result<Value, String> {
    let tokens = lex(expr)?;
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
    };
    let tree = parser.ternary()?;
    if parser.at != tokens.len() {
        return Err(format!("unexpected {:?} in {expr:?}", tokens[parser.at]));
    }
    tree.eval(scope)
}

/// Python's truthiness: undefined, none, false, 0, "" and empty lists and
/// objects are false.
pub(crate) fn truthy(value: &Value) -> bool {
    match value {
        Value::Null | Value::Undefined => false,
        Value::Bool(b) => *b,
        Value::Number(n) => *n != 0.0 && !n.is_nan(),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A value as Jinja writes it into text: undefined as nothing, `None`,
/// `True`, `False`, numbers and strings as themselves, lists and objects
/// as JSON.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::Undefined => String::new(),
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => format_number(*n),
        Value::String(s) => s.clone(),
        other => other.to_json(),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Name(String),
    Number(f64),
    Text(String),
    Op(&'static str),
}

const OPERATORS: [&str; 18] = [
    "==", "!=", "<=", ">=", "<", ">", "(", ")", "[", "]", ".", ",", "|", "+", "-", "~", "{", "}",
];

fn lex(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Name(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                // `a.0` is an index, `1.5` a number: a dot needs a digit after it.
                if chars[i] == '.' && !chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                    break;
                }
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            tokens.push(Token::Number(
                digits
                    .parse()
                    .map_err(|_| format!("bad number {digits:?}"))?,
            ));
        } else if c == '\'' || c == '"' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(format!("unclosed string in {text:?}")),
                    Some(&q) if q == c => break,
                    Some('\\') => {
                        i += 1;
                        match chars.get(i) {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some(&other) => s.push(other),
                            None => return Err(format!("unclosed string in {text:?}")),
                        }
                    }
                    Some(&other) => s.push(other),
                }
                i += 1;
            }
            i += 1;
            tokens.push(Token::Text(s));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let op = OPERATORS
                .iter()
                .find(|op| rest.starts_with(**op))
                .ok_or_else(|| format!("unexpected {c:?} in {text:?}"))?;
            tokens.push(Token::Op(op));
            i += op.chars().count();
        }
    }
    Ok(tokens)
}

#[derive(Clone, Copy, Debug)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
}

#[derive(Debug)]
enum Expr {
    Lit(Value),
    Name(String),
    Attr(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
    Filter(Box<Expr>, String, Vec<Expr>),
    Test(Box<Expr>, String, bool),
    List(Vec<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Compare(Box<Expr>, Cmp, Box<Expr>),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
}

struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Token::Op(o)) if *o == op)
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Name(n)) if n == word)
    }

    fn expect_op(&mut self, op: &str) -> Result<(), String> {
        if self.is_op(op) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("expected {op:?}, found {:?}", self.peek()))
        }
    }

    fn name(&mut self) -> Result<String, String> {
        match self.peek() {
            Some(Token::Name(n)) => {
                let n = n.clone();
                self.at += 1;
                Ok(n)
            }
            other => Err(format!("expected a name, found {other:?}")),
        }
    }

    fn ternary(&mut self) -> Result<Expr, String> {
        let then = self.or()?;
        if !self.is_word("if") {
            return Ok(then);
        }
        self.at += 1;
        let test = self.or()?;
        let otherwise = if self.is_word("else") {
            self.at += 1;
            self.ternary()?
        } else {
            Expr::Lit(Value::Undefined)
        };
        Ok(Expr::If(
            Box::new(test),
            Box::new(then),
            Box::new(otherwise),
        ))
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.is_word("or") {
            self.at += 1;
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.not()?;
        while self.is_word("and") {
            self.at += 1;
            left = Expr::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, String> {
        if self.is_word("not") {
            self.at += 1;
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.compare()
    }

    fn compare(&mut self) -> Result<Expr, String> {
        let mut left = self.sum()?;
        loop {
            let op = match self.peek() {
                Some(Token::Op("==")) => Cmp::Eq,
                Some(Token::Op("!=")) => Cmp::Ne,
                Some(Token::Op("<")) => Cmp::Lt,
                Some(Token::Op("<=")) => Cmp::Le,
                Some(Token::Op(">")) => Cmp::Gt,
                Some(Token::Op(">=")) => Cmp::Ge,
                Some(Token::Name(n)) if n == "in" => Cmp::In,
                Some(Token::Name(n))
                    if n == "not"
                        && matches!(self.tokens.get(self.at + 1), Some(Token::Name(m)) if m == "in") =>
                {
                    self.at += 1;
                    Cmp::NotIn
                }
                Some(Token::Name(n)) if n == "is" => {
                    self.at += 1;
                    let negated = self.is_word("not");
                    if negated {
                        self.at += 1;
                    }
                    let test = self.name()?;
                    left = Expr::Test(Box::new(left), test, negated);
                    continue;
                }
                _ => return Ok(left),
            };
            self.at += 1;
            left = Expr::Compare(Box::new(left), op, Box::new(self.sum()?));
        }
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut left = self.filtered()?;
        loop {
            let make: fn(Box<Expr>, Box<Expr>) -> Expr = if self.is_op("+") {
                Expr::Add
            } else if self.is_op("-") {
                Expr::Sub
            } else if self.is_op("~") {
                Expr::Concat
            } else {
                return Ok(left);
            };
            self.at += 1;
            left = make(Box::new(left), Box::new(self.filtered()?));
        }
    }

    fn filtered(&mut self) -> Result<Expr, String> {
        let mut value = self.unary()?;
        while self.is_op("|") {
            self.at += 1;
            let filter = self.name()?;
            let args = if self.is_op("(") {
                self.at += 1;
                self.arguments(")")?
            } else {
                Vec::new()
            };
            value = Expr::Filter(Box::new(value), filter, args);
        }
        Ok(value)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.is_op("-") {
            self.at += 1;
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, String> {
        let mut value = self.primary()?;
        loop {
            if self.is_op(".") {
                self.at += 1;
                value = match self.peek() {
                    Some(Token::Number(n)) => {
                        let index = Expr::Lit(Value::Number(*n));
                        self.at += 1;
                        Expr::Index(Box::new(value), Box::new(index))
                    }
                    _ => Expr::Attr(Box::new(value), self.name()?),
                };
            } else if self.is_op("[") {
                self.at += 1;
                let index = self.ternary()?;
                self.expect_op("]")?;
                value = Expr::Index(Box::new(value), Box::new(index));
            } else {
                return Ok(value);
            }
        }
    }

    fn arguments(&mut self, close: &str) -> Result<Vec<Expr>, String> {
        let mut args = Vec::new();
        while !self.is_op(close) {
            args.push(self.ternary()?);
            if !self.is_op(close) {
                self.expect_op(",")?;
            }
        }
        self.at += 1;
        Ok(args)
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let token = self
            .peek()
            .cloned()
            .ok_or_else(|| "the expression ends too soon".to_string())?;
        self.at += 1;
        Ok(match token {
            Token::Number(n) => Expr::Lit(Value::Number(n)),
            Token::Text(s) => Expr::Lit(Value::String(s)),
            Token::Op("(") => {
                let inner = self.ternary()?;
                self.expect_op(")")?;
                inner
            }
            Token::Op("[") => Expr::List(self.arguments("]")?),
            Token::Name(n) => match n.as_str() {
                "True" | "true" => Expr::Lit(Value::Bool(true)),
                "False" | "false" => Expr::Lit(Value::Bool(false)),
                "None" | "none" | "null" => Expr::Lit(Value::Null),
                _ if self.is_op("(") => {
                    self.at += 1;
                    Expr::Call(n, self.arguments(")")?)
                }
                _ => Expr::Name(n),
            },
            Token::Op(op) => return Err(format!("unexpected {op:?}")),
        })
    }
}

fn length(value: &Value) -> Result<Value, String> {
    let n = match value {
        Value::String(s) => s.chars().count(),
        Value::Array(a) => a.len(),
        Value::Object(o) => o.len(),
        other => return Err(format!("{} has no length", text_of(other))),
    };
    Ok(Value::Number(n as f64))
}

fn integer(value: &Value) -> Result<Value, String> {
    match value {
        Value::Number(n) => Ok(Value::Number(n.trunc())),
        Value::Bool(b) => Ok(Value::Number(f64::from(u8::from(*b)))),
        Value::String(s) => s
            .trim()
            .parse::<i64>()
            .map(|n| Value::Number(n as f64))
            .map_err(|_| format!("int({s:?}): not a whole number")),
        other => Err(format!("int({}): not a number", text_of(other))),
    }
}

fn items(value: &Value) -> Result<&[Value], String> {
    match value {
        Value::Array(a) => Ok(a),
        other => Err(format!("{} is not a list", text_of(other))),
    }
}

impl Expr {
    fn eval(&self, scope: &Value) -> Result<Value, String> {
        Ok(match self {
            Expr::Lit(v) => v.clone(),
            Expr::Name(n) => scope.get_key(n).cloned().unwrap_or(Value::Undefined),
            Expr::Attr(of, key) => match of.eval(scope)? {
                Value::Object(o) => o.get(key).cloned().unwrap_or(Value::Undefined),
                _ => Value::Undefined,
            },
            Expr::Index(of, index) => match (of.eval(scope)?, index.eval(scope)?) {
                (Value::Object(o), Value::String(key)) => {
                    o.get(&key).cloned().unwrap_or(Value::Undefined)
                }
                (Value::Array(a), Value::Number(n)) if n.fract() == 0.0 => {
                    let i = if n < 0.0 { a.len() as f64 + n } else { n };
                    if i >= 0.0 {
                        a.get(i as usize).cloned().unwrap_or(Value::Undefined)
                    } else {
                        Value::Undefined
                    }
                }
                _ => Value::Undefined,
            },
            Expr::List(list) => Value::Array(
                list.iter()
                    .map(|e| e.eval(scope))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::Not(e) => Value::Bool(!truthy(&e.eval(scope)?)),
            Expr::Neg(e) => match e.eval(scope)? {
                Value::Number(n) => Value::Number(-n),
                other => return Err(format!("-{}: not a number", text_of(&other))),
            },
            Expr::And(a, b) => {
                let left = a.eval(scope)?;
                if truthy(&left) { b.eval(scope)? } else { left }
            }
            Expr::Or(a, b) => {
                let left = a.eval(scope)?;
                if truthy(&left) { left } else { b.eval(scope)? }
            }
            Expr::If(test, then, otherwise) => {
                if truthy(&test.eval(scope)?) {
                    then.eval(scope)?
                } else {
                    otherwise.eval(scope)?
                }
            }
            Expr::Compare(a, op, b) => Value::Bool(compare(&a.eval(scope)?, *op, &b.eval(scope)?)?),
            Expr::Add(a, b) => match (a.eval(scope)?, b.eval(scope)?) {
                (Value::Number(x), Value::Number(y)) => Value::Number(x + y),
                (Value::String(x), Value::String(y)) => Value::String(x + &y),
                (Value::Array(mut x), Value::Array(y)) => {
                    x.extend(y);
                    Value::Array(x)
                }
                (x, y) => return Err(format!("cannot add {} and {}", text_of(&x), text_of(&y))),
            },
            Expr::Sub(a, b) => match (a.eval(scope)?, b.eval(scope)?) {
                (Value::Number(x), Value::Number(y)) => Value::Number(x - y),
                (x, y) => {
                    return Err(format!(
                        "cannot subtract {} from {}",
                        text_of(&y),
                        text_of(&x)
                    ));
                }
            },
            Expr::Concat(a, b) => {
                Value::String(text_of(&a.eval(scope)?) + &text_of(&b.eval(scope)?))
            }
            Expr::Test(e, test, negated) => {
                let v = e.eval(scope)?;
                let holds = match test.as_str() {
                    "none" | "None" => v == Value::Null,
                    "defined" => v != Value::Undefined,
                    "undefined" => v == Value::Undefined,
                    other => return Err(format!("unknown test {other:?}")),
                };
                Value::Bool(holds != *negated)
            }
            Expr::Call(name, args) => {
                let args: Vec<Value> = args
                    .iter()
                    .map(|e| e.eval(scope))
                    .collect::<Result<_, _>>()?;
                let [arg] = args.as_slice() else {
                    return Err(format!("{name}() takes one argument"));
                };
                match name.as_str() {
                    "len" => length(arg)?,
                    "bool" => Value::Bool(truthy(arg)),
                    "str" => Value::String(text_of(arg)),
                    "int" => integer(arg)?,
                    "any" => Value::Bool(items(arg)?.iter().any(truthy)),
                    "all" => Value::Bool(items(arg)?.iter().all(truthy)),
                    other => return Err(format!("unknown function {other}()")),
                }
            }
            Expr::Filter(e, name, args) => {
                let v = e.eval(scope)?;
                let args: Vec<Value> = args
                    .iter()
                    .map(|e| e.eval(scope))
                    .collect::<Result<_, _>>()?;
                filter(v, name, &args)?
            }
        })
    }
}

fn filter(v: Value, name: &str, args: &[Value]) -> Result<Value, String> {
    Ok(match name {
        "default" | "d" => {
            let also_falsy = args.get(1).is_some_and(truthy);
            if v == Value::Undefined || (also_falsy && !truthy(&v)) {
                args.first().cloned().unwrap_or_default()
            } else {
                v
            }
        }
        "tojson" => Value::String(v.to_json()),
        "length" | "count" => length(&v)?,
        "lower" => Value::String(text_of(&v).to_lowercase()),
        "upper" => Value::String(text_of(&v).to_uppercase()),
        "trim" => Value::String(text_of(&v).trim().to_string()),
        "string" => Value::String(text_of(&v)),
        "int" => integer(&v)?,
        "join" => {
            let sep = args.first().map(text_of).unwrap_or_default();
            Value::String(
                items(&v)?
                    .iter()
                    .map(text_of)
                    .collect::<Vec<_>>()
                    .join(&sep),
            )
        }
        "first" => items(&v)?.first().cloned().unwrap_or(Value::Undefined),
        "last" => items(&v)?.last().cloned().unwrap_or(Value::Undefined),
        other => return Err(format!("unknown filter {other:?}")),
    })
}

fn compare(a: &Value, op: Cmp, b: &Value) -> Result<bool, String> {
    let order = || match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .partial_cmp(y)
            .ok_or_else(|| "cannot order NaN".to_string()),
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        _ => Err(format!("cannot order {} and {}", text_of(a), text_of(b))),
    };
    let within = || match b {
        Value::String(s) => Ok(s.contains(&text_of(a))),
        Value::Array(list) => Ok(list.iter().any(|x| same(a, x))),
        Value::Object(o) => Ok(a.as_str().is_some_and(|k| o.contains_key(k))),
        other => Err(format!(
            "{} is not a string, list or object",
            text_of(other)
        )),
    };
    Ok(match op {
        Cmp::Eq => same(a, b),
        Cmp::Ne => !same(a, b),
        Cmp::Lt => order()?.is_lt(),
        Cmp::Le => order()?.is_le(),
        Cmp::Gt => order()?.is_gt(),
        Cmp::Ge => order()?.is_ge(),
        Cmp::In => within()?,
        Cmp::NotIn => !within()?,
    })
}

/// Python's `==`: undefined equals none.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Undefined | Value::Null, Value::Undefined | Value::Null) => true,
        _ => deep_equal(a, b),
    }
}

/// The scope expressions see: `inputs`, `steps` (`{id: {output}}`), each
/// step id by itself, and `env`.
pub(crate) fn scope(inputs: &Object, steps: &Object, env: &Object) -> Value {
    let mut scope = Object::new();
    for (id, step) in steps.iter() {
        if !["inputs", "steps", "env"].contains(&id) {
            scope.insert(id, step.clone());
        }
    }
    scope.insert("inputs", Value::Object(inputs.clone()));
    scope.insert("steps", Value::Object(steps.clone()));
    scope.insert("env", Value::Object(env.clone()));
    Value::Object(scope)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope_of(json: &str) -> Value {
        Value::from_json(json).unwrap()
    }

    fn eval(expr: &str) -> Value {
        let scope = scope_of(
            r#"{"inputs": {"name": "World", "n": 3, "flag": true, "list": [1, 2, 3], "empty": ""},
                "steps": {"build": {"output": {"stdout": "ok\n", "exit_code": 0, "files": ["a", "b"]}}},
                "build": {"output": {"stdout": "ok\n", "exit_code": 0, "files": ["a", "b"]}}}"#,
        );
        evaluate(expr, &scope).unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    #[test]
    fn names_and_paths_read_the_scope() {
        assert_eq!(eval("inputs.name"), Value::from("World"));
        assert_eq!(eval("steps.build.output.exit_code"), Value::Number(0.0));
        assert_eq!(eval("build.output.files[1]"), Value::from("b"));
        assert_eq!(eval("build.output.files.0"), Value::from("a"));
        assert_eq!(eval("inputs['name']"), Value::from("World"));
        assert_eq!(eval("inputs.list[-1]"), Value::Number(3.0));
        assert_eq!(eval("inputs.missing"), Value::Undefined);
        assert_eq!(eval("inputs.missing.deeper"), Value::Undefined);
    }

    #[test]
    fn operators_follow_python() {
        for (expr, want) in [
            ("inputs.n > 2 and inputs.flag", true),
            ("inputs.n == 3.0", true),
            ("not inputs.empty", true),
            ("inputs.missing is undefined", true),
            ("inputs.missing == None", true),
            ("inputs.name is not none", true),
            ("2 in inputs.list", true),
            ("'or' in inputs.name", true),
            ("'x' not in inputs.list", true),
            ("'name' in inputs", true),
            ("len(inputs.list) >= 3", true),
            ("inputs.missing or inputs.flag", true),
            ("inputs.n < 3", false),
            ("build.output.exit_code != 0", false),
        ] {
            assert_eq!(eval(expr), Value::Bool(want), "{expr}");
        }
        assert_eq!(eval("inputs.n + 1 - 2"), Value::Number(2.0));
        assert_eq!(eval("'a' if inputs.flag else 'b'"), Value::from("a"));
        assert_eq!(eval("inputs.name ~ '!'"), Value::from("World!"));
    }

    #[test]
    fn filters_and_calls() {
        assert_eq!(eval("inputs.missing | default('x')"), Value::from("x"));
        assert_eq!(eval("inputs.empty | default('x', true)"), Value::from("x"));
        assert_eq!(eval("inputs.list | tojson"), Value::from("[1,2,3]"));
        assert_eq!(eval("inputs.list | join('-')"), Value::from("1-2-3"));
        assert_eq!(eval("inputs.name | upper | length"), Value::Number(5.0));
        assert_eq!(eval("int('42') + 1"), Value::Number(43.0));
        assert_eq!(eval("str(inputs.flag)"), Value::from("True"));
        assert_eq!(eval("all([1, inputs.flag])"), Value::Bool(true));
    }

    #[test]
    fn templates_render_as_jinja_writes_values() {
        let scope = scope_of(r#"{"inputs": {"who": "me", "on": true, "n": 2, "obj": {"a": 1}}}"#);
        assert_eq!(
            render(
                "hi ${{ inputs.who }} ${{inputs.on}} ${{ inputs.n }} ${{ inputs.obj }} [${{ inputs.nope }}]",
                &scope
            )
            .unwrap(),
            r#"hi me True 2 {"a":1} []"#
        );
        assert_eq!(pure(" ${{ inputs.n }} "), Some("inputs.n"));
        assert_eq!(pure("x ${{ inputs.n }}"), None);
        assert_eq!(pure("${{ a }} ${{ b }}"), None);
    }

    #[test]
    fn bad_expressions_are_errors_that_say_what() {
        let scope = scope_of("{}");
        for (expr, needle) in [
            ("a ==", "ends too soon"),
            ("a $ b", "unexpected '$'"),
            ("'open", "unclosed string"),
            ("nope(1)", "unknown function"),
            ("a | nope", "unknown filter"),
            ("1 < 'a'", "cannot order"),
            ("(a", "expected \")\""),
        ] {
            let err = evaluate(expr, &scope).unwrap_err();
            assert!(err.contains(needle), "{expr}: {err}");
        }
        assert!(render("${{ a ", &scope).unwrap_err().contains("unclosed"));
    }
}
