//! A tab's cookies and Web Storage (`localStorage` / `sessionStorage`).

use chromiumoxide::Page;
use serde_json::{Map, Value, json};

use crate::cdp::page_call;
use crate::cdp::page_url;
use crate::inspect::eval;
use crate::{BrowserError, Result};

/// The cookies that apply to the page (and its frames).
pub async fn cookies(page: &Page) -> Result<Value> {
    let got = page_call(page, "Network.getCookies", json!({})).await?;
    Ok(got.get("cookies").cloned().unwrap_or_else(|| json!([])))
}

/// Sets one cookie `{name, value, url?, domain?, path?, expires?, httpOnly?,
/// secure?, sameSite?}`; with neither `url` nor `domain` it belongs to the
/// page's URL.
pub async fn set_cookie(page: &Page, cookie: &Map<String, Value>) -> Result<()> {
    let text = |k: &str| cookie.get(k).and_then(Value::as_str);
    if text("name").is_none_or(str::is_empty) || text("value").is_none() {
        return Err(BrowserError::invalid(
            "cookie.name and cookie.value are required",
        ));
    }
    let mut params = Map::new();
    for key in [
        "name", "value", "url", "domain", "path", "expires", "httpOnly", "secure", "sameSite",
    ] {
        if let Some(v) = cookie.get(key).filter(|v| !v.is_null()) {
            params.insert(key.into(), v.clone());
        }
    }
    if let Some(same_site) = params.get("sameSite").and_then(Value::as_str) {
        let normal = match same_site.to_ascii_lowercase().as_str() {
            "strict" => "Strict",
            "lax" => "Lax",
            "none" => "None",
            other => {
                return Err(BrowserError::invalid(format!(
                    "sameSite must be Strict, Lax or None, not {other}"
                )));
            }
        };
        params.insert("sameSite".into(), json!(normal));
    }
    if !params.contains_key("url") && !params.contains_key("domain") {
        let url = page_url(page).await?;
        if !url.starts_with("http") {
            // Right on a web page, wrong on this one: a conflict, not a
            // bad request.
            return Err(BrowserError::Conflict(
                "cookie needs a url or domain (the tab shows no http page)".into(),
            ));
        }
        params.insert("url".into(), json!(url));
    }
    // A well-formed cookie the browser's own rules refuse (its domain and
    // the URL, a public suffix) conflicts with where it would go: 409, not
    // a bad request (issue #36: schemathesis sent a cookie the document
    // allows that Chromium would not sanitize).
    let set = page_call(page, "Network.setCookie", Value::Object(params))
        .await
        .map_err(|e| BrowserError::Conflict(format!("the browser refused the cookie: {e}")))?;
    if set.get("success").and_then(Value::as_bool) == Some(false) {
        return Err(BrowserError::Conflict(
            "the browser refused the cookie".into(),
        ));
    }
    Ok(())
}

/// Sets each of `cookies` as [`set_cookie`] does; one the browser refuses
/// is skipped. How many were set.
pub async fn set_cookies(page: &Page, cookies: &[Map<String, Value>]) -> Result<usize> {
    let mut added = 0;
    for cookie in cookies {
        match set_cookie(page, cookie).await {
            Ok(()) => added += 1,
            Err(BrowserError::Invalid { .. } | BrowserError::Conflict(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(added)
}

/// Removes every cookie of the browser.
pub async fn clear_cookies(page: &Page) -> Result<()> {
    page_call(page, "Network.clearBrowserCookies", json!({}))
        .await
        .map(drop)
}

/// Which Web Storage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `localStorage`.
    Local,
    /// `sessionStorage`.
    Session,
}

impl Kind {
    /// Parses `local` / `session`.
    pub fn parse(text: &str) -> Result<Kind> {
        match text {
            "local" => Ok(Kind::Local),
            "session" => Ok(Kind::Session),
            other => Err(BrowserError::invalid(format!(
                "storage kind must be local or session, not {other}"
            ))),
        }
    }

    fn object(self) -> &'static str {
        match self {
            Kind::Local => "localStorage",
            Kind::Session => "sessionStorage",
        }
    }
}

/// All entries (or the one `key`) as `{key: value}`.
pub async fn read(page: &Page, kind: Kind, key: Option<&str>) -> Result<Value> {
    let js = format!(
        "((key) => {{ const s = {}; const out = {{}}; \
         for (let i = 0; i < s.length; i++) {{ const k = s.key(i); if (key === null || k === key) out[k] = s.getItem(k); }} \
         return out; }})({})",
        kind.object(),
        json!(key)
    );
    in_storage(page, kind, &js).await
}

/// Runs `js` on the page's `kind` storage. A page without an origin of
/// its own (`about:blank`, `data:`) has none: that is the page's state,
/// a conflict, not a bad request.
async fn in_storage(page: &Page, kind: Kind, js: &str) -> Result<Value> {
    eval(page, js, false).await.map_err(|e| match e {
        BrowserError::Invalid { message, .. } if message.starts_with("SecurityError") => {
            BrowserError::Conflict(format!(
                "this page has no {} (it has no origin of its own): open a web page first",
                kind.object()
            ))
        }
        other => other,
    })
}

/// Sets one entry.
pub async fn write(page: &Page, kind: Kind, key: &str, value: &str) -> Result<()> {
    let js = format!(
        "{}.setItem({}, {})",
        kind.object(),
        json!(key),
        json!(value)
    );
    in_storage(page, kind, &js).await.map(drop)
}

/// Removes every entry.
pub async fn clear(page: &Page, kind: Kind) -> Result<()> {
    in_storage(page, kind, &format!("{}.clear()", kind.object()))
        .await
        .map(drop)
}
