//! `wait` conditions: time, text present or gone, a visible selector, the
//! URL, the load state and a JS predicate, all of which must hold.

use std::time::Duration;

use chromiumoxide::Page;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::cdp::page_call;
use crate::element::POLL;
use crate::inspect::exception_message;
use crate::{BrowserError, Result};

/// How far a page must have loaded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadState {
    /// `DOMContentLoaded` has fired.
    DomContentLoaded,
    /// The load event has fired.
    Load,
    /// Loaded and no resource finished in the last 500 ms.
    NetworkIdle,
}

impl LoadState {
    /// Parses `load` / `domcontentloaded` / `networkidle`.
    pub fn parse(text: &str) -> Option<LoadState> {
        match text.to_ascii_lowercase().as_str() {
            "load" => Some(LoadState::Load),
            "domcontentloaded" => Some(LoadState::DomContentLoaded),
            "networkidle" => Some(LoadState::NetworkIdle),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            LoadState::DomContentLoaded => "domcontentloaded",
            LoadState::Load => "load",
            LoadState::NetworkIdle => "networkidle",
        }
    }
}

/// What to wait for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WaitSpec {
    /// A fixed pause, taken first.
    pub time: Option<Duration>,
    /// Text that must appear in the page.
    pub text: Option<String>,
    /// Text that must disappear.
    pub text_gone: Option<String>,
    /// A selector that must match a visible element.
    pub selector: Option<String>,
    /// A URL: exact, substring, or a glob (`*` within a path segment, `**`
    /// across segments, `?` one character).
    pub url: Option<String>,
    /// A load state to reach.
    pub load_state: Option<LoadState>,
    /// A JS function or expression that must become truthy.
    pub func: Option<String>,
}

impl WaitSpec {
    /// Whether nothing at all was asked for.
    pub fn is_empty(&self) -> bool {
        *self == WaitSpec::default()
    }
}

const CHECK: &str = r#"(c) => {
  const body = document.body ? document.body.innerText : '';
  if (c.text != null && !body.includes(c.text)) return `text "${c.text}" did not appear`;
  if (c.textGone != null && body.includes(c.textGone)) return `text "${c.textGone}" is still there`;
  if (c.selector != null) {
    const el = document.querySelector(c.selector);
    if (!el) return `nothing matches ${c.selector}`;
    const r = el.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0) || getComputedStyle(el).visibility === 'hidden') return `${c.selector} is not visible`;
  }
  if (c.load != null) {
    const rs = document.readyState;
    if (c.load === 'domcontentloaded' ? rs === 'loading' : rs !== 'complete') return `the page is not loaded (readyState ${rs})`;
    if (c.load === 'networkidle') {
      const ends = performance.getEntriesByType('resource').map((e) => e.responseEnd);
      if (performance.now() - Math.max(0, ...ends) < 500) return 'the network is not idle';
    }
  }
  return '';
}"#;

/// What is still missing ("" when everything holds). Errors thrown by the
/// page (a bad selector, a throwing predicate) are [`BrowserError::Invalid`]; a context lost to
/// a navigation is "not yet".
async fn unmet(page: &Page, spec: &WaitSpec) -> Result<String> {
    let conditions = json!({
        "text": spec.text,
        "textGone": spec.text_gone,
        "selector": spec.selector,
        "load": spec.load_state.map(LoadState::name),
    });
    let mut script = format!("({CHECK})({conditions})");
    if let Some(f) = &spec.func {
        script = format!(
            "(async () => {{ const m = {script}; if (m) return m; const __v = ({f}\n); \
             const ok = typeof __v === 'function' ? await __v() : await __v; \
             return ok ? '' : 'the function returned a falsy value'; }})()"
        );
    }
    let result = page_call(
        page,
        "Runtime.evaluate",
        json!({ "expression": script, "awaitPromise": true, "returnByValue": true }),
    )
    .await;
    match result {
        Ok(v) => {
            if let Some(details) = v.get("exceptionDetails") {
                return Err(BrowserError::invalid_code(
                    "ACT_INVALID_REQUEST",
                    format!("wait: {}", exception_message(details)),
                ));
            }
            Ok(v.pointer("/result/value")
                .and_then(Value::as_str)
                .unwrap_or("the page did not answer")
                .to_string())
        }
        Err(BrowserError::Cdp(e)) => Ok(format!("the page is navigating ({e})")),
        Err(e) => Err(e),
    }
}

/// Waits until every condition holds, or fails with what was still missing
/// when `timeout` ran out. `url_of` reads the tab's current URL.
pub async fn wait<F, Fut>(page: &Page, spec: &WaitSpec, timeout: Duration, url_of: F) -> Result<()>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<String>>,
{
    if let Some(t) = spec.time {
        tokio::time::sleep(t).await;
    }
    let page_conditions = WaitSpec {
        time: None,
        url: None,
        ..spec.clone()
    };
    let deadline = Instant::now() + timeout;
    loop {
        let mut missing = String::new();
        if let Some(pattern) = &spec.url {
            let url = url_of().await?;
            if !url_matches(pattern, &url) {
                missing = format!("the URL is {url}, not {pattern}");
            }
        }
        if missing.is_empty() && !page_conditions.is_empty() {
            missing = unmet(page, &page_conditions).await?;
        }
        if missing.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(BrowserError::Timeout(format!(
                "wait timed out after {} ms: {missing}",
                timeout.as_millis()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Exact or substring match, or a glob when the pattern has `*` or `?`.
pub fn url_matches(pattern: &str, url: &str) -> bool {
    if pattern.contains(['*', '?']) {
        glob(pattern.as_bytes(), url.as_bytes())
    } else {
        url == pattern || url.contains(pattern)
    }
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    match p {
        [] => s.is_empty(),
        [b'*', b'*', rest @ ..] => (0..=s.len()).any(|i| glob(rest, &s[i..])),
        [b'*', rest @ ..] => (0..=s.len())
            .take_while(|&i| i == 0 || s[i - 1] != b'/')
            .any(|i| glob(rest, &s[i..])),
        [b'?', rest @ ..] => !s.is_empty() && glob(rest, &s[1..]),
        [c, rest @ ..] => s.first() == Some(c) && glob(rest, &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_patterns() {
        let u = "http://127.0.0.1:8000/app/done.html?x=1";
        assert!(url_matches(u, u));
        assert!(url_matches("done.html", u));
        assert!(url_matches("**/done.html*", u));
        assert!(url_matches("http://127.0.0.1:8000/*/done.html?x=?", u));
        assert!(
            !url_matches("http://127.0.0.1:8000/*.html*", u),
            "* stays in one segment"
        );
        assert!(!url_matches("**/other.html", u));
        assert!(!url_matches("missing", u));
    }
}
