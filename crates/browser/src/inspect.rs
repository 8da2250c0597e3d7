//! Reading pages: screenshots and PDFs written under home, JS evaluation,
//! CSS queries, DOM and text dumps.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use chromiumoxide::Page;
use serde_json::{Value, json};

use crate::cdp::{page_call, page_call_with};
use crate::events::now_ms;
use crate::{BrowserError, Result};

/// Longest side of a screenshot, in pixels.
pub const MAX_SIDE: f64 = 2000.0;
/// Largest screenshot file.
pub const MAX_SCREENSHOT_BYTES: usize = 5 * 1024 * 1024;
/// Appended to cut DOM and text dumps.
pub const TRUNCATION_MARKER: &str = "…[truncated]";

/// Where a screenshot is clipped.
#[derive(Clone, Copy, Debug)]
pub enum ShotArea {
    /// The visible viewport.
    Viewport,
    /// The whole page.
    FullPage,
    /// One element.
    Element(i64),
}

/// Screenshot image formats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ImageType {
    /// PNG.
    Png,
    /// JPEG (quality 85, lower when needed to stay under 5 MiB).
    Jpeg,
}

impl ImageType {
    /// Parses `png` / `jpeg` / `jpg`.
    pub fn parse(text: Option<&str>) -> Result<ImageType> {
        match text.map(str::to_ascii_lowercase).as_deref() {
            None | Some("png") => Ok(ImageType::Png),
            Some("jpeg" | "jpg") => Ok(ImageType::Jpeg),
            Some(other) => Err(BrowserError::invalid(format!(
                "type must be png or jpeg, not {other}"
            ))),
        }
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh file path under `<home>/media/<kind>/`.
/// `<home>/media/<kind>/`: where the control API's screenshots and PDFs go.
pub fn media_dir(home: &Path, kind: &str) -> PathBuf {
    home.join("media").join(kind)
}

/// A new, unique file name in `dir` (created if missing).
fn media_path(dir: &Path, ext: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    Ok(dir.join(format!(
        "{}-{}-{}.{ext}",
        now_ms(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )))
}

fn decode(data: &Value, what: &str) -> Result<Vec<u8>> {
    let text = data
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| BrowserError::Cdp(format!("{what} returned no data")))?;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| BrowserError::Cdp(format!("{what}: {e}")))
}

fn num(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer).and_then(Value::as_f64).unwrap_or(0.0)
}

/// One capture at a time in this process (its one browser): a hidden tab is
/// brought to the front for its capture, and another capture must not hide
/// it again before its frame is drawn.
static CAPTURE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Captures a screenshot into `dir` and returns its path.
///
/// Chromium draws no frame for a tab behind another in its window, so its
/// capture waited for one until the call timed out. Such a tab is brought
/// to the front first, as the actions do when a page draws nothing. The
/// tab that calls without a `targetId` use is ours to track and stays.
pub async fn screenshot(
    page: &Page,
    dir: &Path,
    area: ShotArea,
    kind: ImageType,
) -> Result<PathBuf> {
    let _turn = CAPTURE.lock().await;
    // A page too busy to say within 2 s is treated as hidden.
    let shown = page_call_with(
        page,
        "Runtime.evaluate",
        json!({ "expression": "document.visibilityState", "returnByValue": true }),
        std::time::Duration::from_secs(2),
    )
    .await
    .ok()
    .and_then(|v| {
        v.pointer("/result/value")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    if shown.as_deref() != Some("visible") {
        page_call(page, "Page.bringToFront", json!({})).await?;
    }
    let metrics = page_call(page, "Page.getLayoutMetrics", json!({})).await?;
    let (page_x, page_y) = (
        num(&metrics, "/cssVisualViewport/pageX"),
        num(&metrics, "/cssVisualViewport/pageY"),
    );
    let (x, y, w, h, beyond) = match area {
        ShotArea::Viewport => (
            page_x,
            page_y,
            num(&metrics, "/cssVisualViewport/clientWidth"),
            num(&metrics, "/cssVisualViewport/clientHeight"),
            false,
        ),
        ShotArea::FullPage => (
            0.0,
            0.0,
            num(&metrics, "/cssContentSize/width"),
            num(&metrics, "/cssContentSize/height"),
            true,
        ),
        ShotArea::Element(backend) => {
            let _ = page_call(
                page,
                "DOM.scrollIntoViewIfNeeded",
                json!({ "backendNodeId": backend }),
            )
            .await;
            let metrics = page_call(page, "Page.getLayoutMetrics", json!({})).await?;
            let quads = page_call(
                page,
                "DOM.getContentQuads",
                json!({ "backendNodeId": backend }),
            )
            .await?;
            let quad: Vec<f64> = quads
                .pointer("/quads/0")
                .and_then(Value::as_array)
                .map(|q| q.iter().filter_map(Value::as_f64).collect())
                .filter(|q: &Vec<f64>| q.len() == 8)
                .ok_or_else(|| BrowserError::invalid("element is not visible"))?;
            let xs = [quad[0], quad[2], quad[4], quad[6]];
            let ys = [quad[1], quad[3], quad[5], quad[7]];
            let min = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = |v: &[f64]| v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            (
                min(&xs) + num(&metrics, "/cssVisualViewport/pageX"),
                min(&ys) + num(&metrics, "/cssVisualViewport/pageY"),
                max(&xs) - min(&xs),
                max(&ys) - min(&ys),
                true,
            )
        }
    };
    if w < 1.0 || h < 1.0 {
        return Err(BrowserError::invalid("nothing to capture: zero-sized area"));
    }
    let scale = (MAX_SIDE / w.max(h)).min(1.0);
    let clip = json!({ "x": x, "y": y, "width": w, "height": h, "scale": scale });
    let mut qualities: &[u32] = match kind {
        ImageType::Png => &[0],
        ImageType::Jpeg => &[85],
    };
    let mut format = kind;
    loop {
        let mut params =
            json!({ "clip": clip, "captureBeyondViewport": beyond, "fromSurface": true });
        if format == ImageType::Jpeg {
            params["format"] = json!("jpeg");
            params["quality"] = json!(qualities[0]);
        } else {
            params["format"] = json!("png");
        }
        let shot = page_call(page, "Page.captureScreenshot", params).await?;
        let bytes = decode(&shot, "Page.captureScreenshot")?;
        if bytes.len() <= MAX_SCREENSHOT_BYTES
            || (format == ImageType::Jpeg && qualities.len() == 1)
        {
            let path = media_path(
                dir,
                if format == ImageType::Png {
                    "png"
                } else {
                    "jpg"
                },
            )?;
            std::fs::write(&path, bytes)?;
            return Ok(path);
        }
        // Too big: fall back to JPEG, lowering the quality.
        if format == ImageType::Png {
            format = ImageType::Jpeg;
            qualities = &[85, 70, 50, 30];
        } else {
            qualities = &qualities[1..];
        }
    }
}

/// Prints the page to a PDF file in `dir`.
pub async fn pdf(page: &Page, dir: &Path) -> Result<PathBuf> {
    let printed = page_call(page, "Page.printToPDF", json!({ "printBackground": true }))
        .await
        .map_err(|e| match e {
            BrowserError::Cdp(m) => {
                BrowserError::Unsupported(format!("PDF is not available for this browser: {m}"))
            }
            other => other,
        })?;
    let path = media_path(dir, "pdf")?;
    std::fs::write(&path, decode(&printed, "Page.printToPDF")?)?;
    Ok(path)
}

/// The message of a thrown exception.
pub fn exception_message(details: &Value) -> String {
    details
        .pointer("/exception/description")
        .and_then(Value::as_str)
        .or_else(|| details.pointer("/exception/value").and_then(Value::as_str))
        .or_else(|| details.get("text").and_then(Value::as_str))
        .unwrap_or("evaluation failed")
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Evaluates an expression; a thrown exception is [`BrowserError::Invalid`]
/// carrying its message.
pub async fn eval(page: &Page, js: &str, await_promise: bool) -> Result<Value> {
    let result = page_call(
        page,
        "Runtime.evaluate",
        json!({
            "expression": js,
            "awaitPromise": await_promise,
            "returnByValue": true,
            "userGesture": true,
            "includeCommandLineAPI": true,
        }),
    )
    .await?;
    if let Some(details) = result.get("exceptionDetails") {
        return Err(BrowserError::invalid(exception_message(details)));
    }
    Ok(result
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Null))
}

/// Calls a JS function with JSON arguments in the page.
async fn call(page: &Page, function: &str, args: &[Value]) -> Result<Value> {
    let args = args
        .iter()
        .map(|a| serde_json::to_string(a).unwrap_or_default())
        .collect::<Vec<_>>()
        .join(", ");
    eval(page, &format!("({function})({args})"), true).await
}

const QUERY: &str = r#"(selector, limit) => {
  const cut = (s, n) => s.length > n ? s.slice(0, n) + '…' : s;
  return Array.from(document.querySelectorAll(selector)).slice(0, limit).map((el, i) => {
    const m = { index: i + 1, tag: el.tagName.toLowerCase() };
    if (el.id) m.id = el.id;
    if (typeof el.className === 'string' && el.className) m.className = cut(el.className, 300);
    const text = (el.innerText || el.textContent || '').trim();
    if (text) m.text = cut(text, 500);
    if (typeof el.value === 'string' && el.value) m.value = cut(el.value, 500);
    if (el.href) m.href = String(el.href);
    m.outerHTML = cut(el.outerHTML, 1500);
    return m;
  });
}"#;

/// Up to `limit` (default 20, max 200) summaries of `querySelectorAll(selector)`.
pub async fn query(page: &Page, selector: &str, limit: Option<usize>) -> Result<Value> {
    if selector.trim().is_empty() {
        return Err(BrowserError::invalid("selector is required"));
    }
    let limit = limit.unwrap_or(20).clamp(1, 200);
    call(page, QUERY, &[json!(selector), json!(limit)])
        .await
        .map_err(|e| match e {
            BrowserError::Invalid { message, .. } => {
                BrowserError::invalid(format!("invalid selector {selector}: {message}"))
            }
            other => other,
        })
}

const DOM: &str = r#"(format, selector) => {
  const el = selector ? document.querySelector(selector) : (format === 'html' ? document.documentElement : document.body);
  if (!el) return null;
  return format === 'html' ? el.outerHTML : el.innerText;
}"#;

const TEXT: &str = r#"(selector) => {
  const el = selector ? document.querySelector(selector)
    : (document.querySelector('article') || document.querySelector('main') || document.body);
  return el ? el.innerText : null;
}"#;

/// Cuts `text` to `max` characters, with a marker; returns whether it cut.
pub fn truncate(text: &str, max: usize) -> (String, bool) {
    if text.chars().count() <= max {
        return (text.to_string(), false);
    }
    (
        format!(
            "{}{TRUNCATION_MARKER}",
            text.chars().take(max).collect::<String>()
        ),
        true,
    )
}

/// `innerText` (`text`) or `outerHTML` (`html`) of `selector`, cut at `max_chars`.
pub async fn dom(
    page: &Page,
    format: &str,
    selector: Option<&str>,
    max_chars: Option<usize>,
) -> Result<(String, bool)> {
    if format != "text" && format != "html" {
        return Err(BrowserError::invalid(format!(
            "format must be html or text, not {format}"
        )));
    }
    let value = call(page, DOM, &[json!(format), json!(selector)]).await?;
    let Some(content) = value.as_str() else {
        return Err(BrowserError::Missing(format!(
            "no element matches selector {}",
            selector.unwrap_or_default()
        )));
    };
    Ok(truncate(
        content,
        max_chars.unwrap_or(200_000).clamp(1, 5_000_000),
    ))
}

/// Readable text: `selector`, else article, main or body; at most 40000 characters.
pub async fn text(
    page: &Page,
    selector: Option<&str>,
    max_chars: Option<usize>,
) -> Result<(String, bool)> {
    let value = call(page, TEXT, &[json!(selector)]).await?;
    let Some(content) = value.as_str() else {
        return Err(BrowserError::Missing(format!(
            "no element matches selector {}",
            selector.unwrap_or_default()
        )));
    };
    Ok(truncate(
        content,
        max_chars.unwrap_or(40_000).clamp(1, 40_000),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("hello", 5), ("hello".to_string(), false));
        let (cut, truncated) = truncate("héllo world", 5);
        assert!(truncated);
        assert_eq!(cut, format!("héllo{TRUNCATION_MARKER}"));
    }
}
