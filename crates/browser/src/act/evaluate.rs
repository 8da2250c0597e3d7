//! `evaluate`: run a function, an expression or a statement body in the
//! page, optionally on an element.

use chromiumoxide::Page;
use serde_json::{Value, json};

use super::parse::bad;
use crate::Result;
use crate::cdp::page_call;
use crate::element;
use crate::inspect::exception_message;

/// Runs `func` (a function, an expression, or a statement body) in the
/// page, passing the element when `backend` is given, and returns its
/// (awaited) value.
pub async fn evaluate(page: &Page, func: &str, backend: Option<i64>) -> Result<Value> {
    let as_value = format!(
        "async function(el) {{ const __v = ({func}\n); return typeof __v === 'function' ? await __v(el) : await __v; }}"
    );
    let as_body = format!("async function(el) {{ {func}\n }}");
    let declaration = if compiles(page, &format!("({as_value})")).await? {
        as_value
    } else if compiles(page, &format!("({as_body})")).await? {
        as_body
    } else {
        let details = compile(page, &format!("({as_value})")).await?;
        return Err(bad(format!("evaluate: {}", exception_message(&details))));
    };
    let result = match backend {
        Some(backend) => {
            let object = element::object_id(page, backend).await?;
            page_call(
                page,
                "Runtime.callFunctionOn",
                json!({
                    "functionDeclaration": declaration,
                    "objectId": object,
                    "arguments": [{ "objectId": object }],
                    "awaitPromise": true,
                    "returnByValue": true,
                    "userGesture": true,
                }),
            )
            .await?
        }
        None => {
            page_call(
                page,
                "Runtime.evaluate",
                json!({
                    "expression": format!("({declaration})()"),
                    "awaitPromise": true,
                    "returnByValue": true,
                    "userGesture": true,
                }),
            )
            .await?
        }
    };
    if let Some(details) = result.get("exceptionDetails") {
        return Err(bad(format!("evaluate: {}", exception_message(details))));
    }
    Ok(result
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Null))
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

async fn compiles(page: &Page, source: &str) -> Result<bool> {
    Ok(compile(page, source).await?.is_null())
}
