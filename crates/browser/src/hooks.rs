//! Arming calls made before the click that needs them: dialog answers,
//! files for a chooser, and downloads saved inside `<home>/downloads`.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::{
    DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
};
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::cdp::page_call;
use crate::element::{self, Locator};
use crate::events::DialogReply;
use crate::input::{self, Button};
use crate::manager::Manager;
use crate::{BrowserError, Result, files};

/// How long an armed dialog answer, chooser or download waits by default.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(120);
/// Default wait for a triggered download.
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(20);

/// Only one download is awaited at a time, so each waiter gets its own.
static DOWNLOADS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Answers the tab's pending dialog, or arms the answer for its next one.
/// Returns the tab and whether a dialog was answered now.
pub async fn dialog(
    manager: &Manager,
    target: Option<&str>,
    reply: DialogReply,
    dialog_id: Option<&str>,
    timeout: Option<Duration>,
) -> Result<(String, bool)> {
    let (target_id, page) = manager.page_for(target).await?;
    let events = manager.events(&target_id, &page).await?;
    let handled = events
        .reply(&page, reply, dialog_id, timeout.unwrap_or(HOOK_TIMEOUT))
        .await?;
    Ok((target_id, handled))
}

/// The tab and its dialogs, pending and recent (`browserState`).
pub async fn dialogs(manager: &Manager, target: Option<&str>) -> Result<(String, Value)> {
    let (target_id, page) = manager.page_for(target).await?;
    let events = manager.events(&target_id, &page).await?;
    Ok((target_id, events.browser_state()))
}

/// How the files of an upload reach the page.
#[derive(Clone, Debug)]
pub enum Upload {
    /// Set them on this `<input type=file>` directly.
    Input(Locator),
    /// Arm the chooser, then click this element to open it.
    Trigger(Locator),
    /// Arm the chooser for the next time the page opens one.
    Next,
}

/// Uploads files from `<home>/uploads` and returns the tab. Paths are
/// checked before the page is touched.
pub async fn upload(
    manager: &Manager,
    target: Option<&str>,
    paths: &[String],
    via: Upload,
    timeout: Option<Duration>,
) -> Result<String> {
    if paths.is_empty() {
        return Err(BrowserError::invalid("paths are required"));
    }
    let files: Vec<String> = paths
        .iter()
        .map(|p| files::upload_file(manager.home(), p).map(|f| f.display().to_string()))
        .collect::<Result<_>>()?;
    let (target_id, page) = manager.page_ready(target).await?;
    let wait = timeout.unwrap_or(crate::act::ACTION_TIMEOUT);
    match via {
        Upload::Input(at) => {
            let backend = manager.find(&target_id, &page, &at, wait).await?;
            page_call(
                &page,
                "DOM.setFileInputFiles",
                json!({ "files": files, "backendNodeId": backend }),
            )
            .await
            .map_err(|e| BrowserError::invalid(format!("cannot set files on {at}: {e}")))?;
        }
        Upload::Trigger(at) => {
            let events = manager.events(&target_id, &page).await?;
            let backend = manager.find(&target_id, &page, &at, wait).await?;
            let point = element::point(&page, backend, wait).await?;
            let mut done = events.arm_chooser(&page, files, wait).await?;
            input::click(&page, point, Button::Left, false, 0, Duration::ZERO).await?;
            match tokio::time::timeout(wait, done.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(BrowserError::Missing("tab not found".into())),
                Err(_) => {
                    // Nothing opened: later choosers are the user's again.
                    events.disarm_chooser(&page).await;
                    return Err(BrowserError::Timeout(format!(
                        "clicking {at} opened no file chooser"
                    )));
                }
            }
        }
        Upload::Next => {
            let events = manager.events(&target_id, &page).await?;
            events
                .arm_chooser(&page, files, timeout.unwrap_or(HOOK_TIMEOUT))
                .await?;
        }
    }
    Ok(target_id)
}

/// A saved download.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Download {
    /// Where it came from.
    pub url: String,
    /// The name the page suggested.
    pub suggested_filename: String,
    /// Where it was saved.
    pub path: String,
}

/// Clicks `trigger` (if any) and saves the download it starts as `path`
/// under `<home>/downloads` (default: the suggested file name); returns the
/// tab and the download.
pub async fn download(
    manager: &Manager,
    target: Option<&str>,
    trigger: Option<Locator>,
    path: Option<&str>,
    timeout: Option<Duration>,
) -> Result<(String, Download)> {
    let requested = path
        .map(|p| files::download_target(manager.home(), p))
        .transpose()?;
    let timeout = timeout.unwrap_or(DOWNLOAD_TIMEOUT);
    let (target_id, page) = manager.page_ready(target).await?;
    let cdp = manager.connected()?;
    let _one_at_a_time = DOWNLOADS.lock().await;
    // Chromium saves under the download's guid; the file is renamed after.
    let incoming = files::download_root(manager.home()).join(".incoming");
    std::fs::create_dir_all(&incoming)?;
    let mut begins = cdp.listen::<EventDownloadWillBegin>().await?;
    let mut progress = cdp.listen::<EventDownloadProgress>().await?;
    cdp.call(
        "Browser.setDownloadBehavior",
        json!({ "behavior": "allowAndName", "downloadPath": incoming, "eventsEnabled": true }),
    )
    .await?;
    let waited = async {
        let deadline = Instant::now() + timeout;
        if let Some(at) = trigger {
            let backend = manager.find(&target_id, &page, &at, timeout).await?;
            let point = element::point(&page, backend, timeout).await?;
            input::click(&page, point, Button::Left, false, 0, Duration::ZERO).await?;
        }
        let begun = tokio::time::timeout_at(deadline, begins.next())
            .await
            .map_err(|_| {
                BrowserError::Timeout(format!(
                    "no download started within {} ms",
                    timeout.as_millis()
                ))
            })?
            .ok_or_else(|| BrowserError::Conflict("browser not running".into()))?;
        loop {
            let p = tokio::time::timeout_at(deadline, progress.next())
                .await
                .map_err(|_| {
                    BrowserError::Timeout(format!("the download of {} did not finish", begun.url))
                })?
                .ok_or_else(|| BrowserError::Conflict("browser not running".into()))?;
            if p.guid != begun.guid {
                continue;
            }
            match p.state {
                DownloadProgressState::Completed => break,
                DownloadProgressState::Canceled => {
                    return Err(BrowserError::Conflict(format!(
                        "the download of {} was canceled",
                        begun.url
                    )));
                }
                DownloadProgressState::InProgress => {}
            }
        }
        Ok::<_, BrowserError>(begun)
    }
    .await;
    // Later downloads (a person using the clawd browser) go back to
    // Chromium's own handling.
    let _ = cdp
        .call(
            "Browser.setDownloadBehavior",
            json!({ "behavior": "default" }),
        )
        .await;
    let begun = waited?;
    let dest = match requested {
        Some(d) => d,
        None => files::download_target(manager.home(), &safe_name(&begun.suggested_filename))?,
    };
    std::fs::rename(incoming.join(&begun.guid), &dest)?;
    tracing::info!(url = %begun.url, path = %dest.display(), "download saved");
    Ok((
        target_id,
        Download {
            url: begun.url.clone(),
            suggested_filename: begun.suggested_filename.clone(),
            path: dest.display().to_string(),
        },
    ))
}

/// A suggested file name reduced to one safe path segment.
fn safe_name(suggested: &str) -> String {
    let name: String = suggested
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    match name.trim_start_matches('.') {
        "" => "download".to_string(),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggested_names_stay_one_segment() {
        assert_eq!(safe_name("report.pdf"), "report.pdf");
        assert_eq!(safe_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(safe_name(".."), "download");
        assert_eq!(safe_name(""), "download");
    }
}
