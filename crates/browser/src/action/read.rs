//! Reading actions: extract_text, extract_all, content, screenshot, pdf and
//! evaluate. They change nothing, so their check is that the element is
//! there.

use serde_json::{Value, json};
use tokio::time::Instant;

use super::checks::{Needs, prepare};
use super::target::{Aim, all};
use super::{Attempt, Code, Step, Tab, fail};
use crate::element::call_on;
use crate::inspect::{self, ImageType, ShotArea};

/// The most rows `extract_all` returns.
const MAX_ROWS: usize = 1000;
/// How soon `extract_all` looks again while nothing matches.
const LOOK_AGAIN: std::time::Duration = std::time::Duration::from_millis(100);

/// The element's (or the page's) rendered text.
pub(crate) async fn text(
    tab: &Tab<'_>,
    aim: Option<&Aim>,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    const TEXT: &str =
        "function() { return (this.nodeType === 9 ? this.body : this).innerText || ''; }";
    let text = match aim {
        Some(aim) => {
            let ready = prepare(tab, aim, Needs::Attached, deadline, attempt).await?;
            call_on(tab.dom, ready.backend, TEXT, &[]).await?
        }
        None => page_value(tab, "document.body ? document.body.innerText : ''").await?,
    };
    Ok(Some(json!({ "text": text })))
}

async fn page_value(tab: &Tab<'_>, expression: &str) -> Step<Value> {
    let r = crate::cdp::page_call(
        tab.page,
        "Runtime.evaluate",
        json!({ "expression": expression, "returnByValue": true }),
    )
    .await?;
    Ok(r.pointer("/result/value").cloned().unwrap_or(Value::Null))
}

/// One row: the element's text, the attributes asked for (URLs resolved),
/// and a table row's cells.
const ROW: &str = r#"function(attrs) {
  const norm = (t) => String(t == null ? '' : t).replace(/\s+/g, ' ').trim();
  const row = { text: norm(this.innerText !== undefined ? this.innerText : this.textContent) };
  const urls = ['href', 'src', 'action'];
  for (const a of attrs) {
    if (urls.includes(a) && typeof this[a] === 'string' && this.hasAttribute(a)) row[a] = this[a];
    else if (a === 'value' && 'value' in this) row[a] = this.value;
    else if (a === 'checked' && 'checked' in this) row[a] = this.checked;
    else row[a] = this.getAttribute(a);
  }
  if (this.localName === 'tr') row.cells = Array.from(this.cells, (c) => norm(c.innerText));
  return row;
}"#;

/// Rows of text and attributes, one per element the selector matches.
pub(crate) async fn all_rows(tab: &Tab<'_>, aim: &Aim, attrs: &[String]) -> Step<Vec<Value>> {
    let found = all(tab, aim, MAX_ROWS).await?;
    let mut rows = Vec::with_capacity(found.len());
    for backend in found {
        rows.push(call_on(tab.dom, backend, ROW, &[json!(attrs)]).await?);
    }
    Ok(rows)
}

/// `extract_all`: waits until at least one element matches, then reads
/// them all.
pub(crate) async fn all_items(
    tab: &Tab<'_>,
    aim: &Aim,
    attrs: &[String],
    deadline: Instant,
) -> Step<Option<Value>> {
    loop {
        let rows = all_rows(tab, aim, attrs).await?;
        if !rows.is_empty() {
            return Ok(Some(json!({ "items": rows, "count": rows.len() })));
        }
        if Instant::now() + LOOK_AGAIN >= deadline {
            return Err(fail(Code::NotFound, format!("no element matches {aim}")));
        }
        tokio::time::sleep(LOOK_AGAIN).await;
    }
}

/// The page's readable text: its main content when it marks one, else the
/// body; blank lines collapsed.
pub(crate) async fn content(tab: &Tab<'_>) -> Step<Option<Value>> {
    const CONTENT: &str = r#"(() => {
  const main = document.querySelector('main, [role=main], article') || document.body;
  const text = main ? main.innerText : '';
  return { title: document.title, url: location.href, content: text.split('\n').map((l) => l.replace(/\s+/g, ' ').trim()).filter(Boolean).join('\n') };
})()"#;
    Ok(Some(page_value(tab, CONTENT).await?))
}

/// Saves a screenshot under the artifacts directory.
pub(crate) async fn save_screenshot(tab: &Tab<'_>, full_page: bool) -> crate::Result<String> {
    let area = if full_page {
        ShotArea::FullPage
    } else {
        ShotArea::Viewport
    };
    let path = inspect::screenshot(tab.page, &tab.artifacts, area, ImageType::Png).await?;
    Ok(path.display().to_string())
}

/// `screenshot` → `data.path`.
pub(crate) async fn screenshot(tab: &Tab<'_>, full_page: bool) -> Step<Option<Value>> {
    Ok(Some(
        json!({ "path": save_screenshot(tab, full_page).await? }),
    ))
}

/// `pdf` → `data.path`.
pub(crate) async fn pdf(tab: &Tab<'_>) -> Step<Option<Value>> {
    let path = inspect::pdf(tab.page, &tab.artifacts).await?;
    Ok(Some(json!({ "path": path.display().to_string() })))
}

/// `evaluate` → `data.result`; a script that throws is `verify_failed`
/// with its error.
pub(crate) async fn evaluate(tab: &Tab<'_>, script: &str) -> Step<Option<Value>> {
    match crate::act::evaluate(tab.page, script, None).await {
        Ok(result) => Ok(Some(json!({ "result": result }))),
        Err(crate::BrowserError::Invalid { message, .. }) if !message.contains("SyntaxError") => {
            Err(fail(Code::VerifyFailed, message))
        }
        Err(e) => Err(e.into()),
    }
}
