//! `evaluate`: run a function, an expression or a statement body in the
//! page, optionally on an element.

use chromiumoxide::Page;
use serde_json::{Value, json};

use super::parse::bad;
use crate::cdp::page_call;
use crate::element;
use crate::inspect::{eval, exception_message};
use crate::{BrowserError, Result};

/// Runs `func` (a function, an expression, or a statement body) in the
/// page, passing the element when `backend` is given, and returns its
/// (awaited) value.
pub async fn evaluate(page: &Page, func: &str, backend: Option<i64>) -> Result<Value> {
    let as_value = format!(
        "async function(el) {{ const __v = ({func}\n); return typeof __v === 'function' ? await __v(el) : await __v; }}"
    );
    let as_body = format!("async function(el) {{ {func}\n }}");
    let value_error = compile(page, &format!("({as_value})")).await?;
    let declaration = if value_error.is_null() {
        as_value
    } else if compile(page, &format!("({as_body})")).await?.is_null() {
        as_body
    } else {
        return Err(bad(format!(
            "evaluate: {}",
            exception_message(&value_error)
        )));
    };
    let result = match backend {
        Some(backend) => {
            let call = format!("function() {{ return ({declaration})(this); }}");
            element::call_on(page, backend, &call, &[]).await
        }
        None => eval(page, &format!("({declaration})()"), true).await,
    };
    result.map_err(|e| match e {
        BrowserError::Invalid { message, .. } => bad(format!("evaluate: {message}")),
        other => other,
    })
}

/// `Runtime.compileScript`'s exception details (`Null` when it compiles).
async fn compile(page: &Page, source: &str) -> Result<Value> {
    let r = page_call(
        page,
        "Runtime.compileScript",
        json!({ "expression": source, "sourceURL": "", "persistScript": false }),
    )
    .await?;
    Ok(r.get("exceptionDetails").cloned().unwrap_or(Value::Null))
}
