//! A tab's live picture: Chromium's screencast (`Page.startScreencast`),
//! shared by every viewer of the tab (OpenClaw's `/screencast` stream, a
//! hand-off's live view). Each frame is acknowledged as it arrives, so
//! Chromium sends the next one as soon as the page changes; a viewer reads
//! the newest frame and skips those it was too slow for, never a queue of
//! stale pictures.

use std::sync::{Arc, Weak};

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameNavigated, EventLoadEventFired, EventNavigatedWithinDocument, EventScreencastFrame,
};
use futures::StreamExt as _;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::Result;
use crate::cdp::{page_call, page_events};

/// How a screencast is encoded: the largest picture and its JPEG quality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Widest frame, in device pixels.
    pub max_width: u32,
    /// Tallest frame, in device pixels.
    pub max_height: u32,
    /// JPEG quality, 0 to 100.
    pub quality: u32,
}

impl Default for Options {
    /// OpenClaw's defaults: 1280×1280 at most, quality 70.
    fn default() -> Options {
        Options {
            max_width: 1280,
            max_height: 1280,
            quality: 70,
        }
    }
}

/// The page a screencast shows: its URL and title, as they change.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Meta {
    /// The page's URL.
    pub url: String,
    /// Its title.
    pub title: String,
}

/// One picture of the page.
#[derive(Clone, Debug)]
pub struct Frame {
    /// The page's URL when it was taken.
    pub url: String,
    /// The viewport's size in CSS pixels.
    pub css_width: f64,
    /// The viewport's height in CSS pixels.
    pub css_height: f64,
    /// Horizontal scroll, in CSS pixels.
    pub scroll_x: f64,
    /// Vertical scroll, in CSS pixels.
    pub scroll_y: f64,
    /// When Chromium swapped it onto the screen (seconds since the epoch).
    pub ts: Option<f64>,
    /// The picture.
    pub jpeg: Vec<u8>,
}

impl Frame {
    /// The frame as OpenClaw's screencast sends it: a 4-byte big-endian
    /// length of a JSON header `{url, cssWidth, cssHeight, scrollX, scrollY,
    /// ts}`, the header, then the JPEG.
    pub fn wire(&self) -> Vec<u8> {
        let header = json!({
            "url": self.url,
            "cssWidth": self.css_width,
            "cssHeight": self.css_height,
            "scrollX": self.scroll_x,
            "scrollY": self.scroll_y,
            "ts": self.ts,
        })
        .to_string();
        let mut wire = Vec::with_capacity(4 + header.len() + self.jpeg.len());
        wire.extend_from_slice(
            &u32::try_from(header.len())
                .unwrap_or(u32::MAX)
                .to_be_bytes(),
        );
        wire.extend_from_slice(header.as_bytes());
        wire.extend_from_slice(&self.jpeg);
        wire
    }
}

/// What a viewer hears next.
#[derive(Clone, Debug)]
pub enum Update {
    /// A new picture.
    Frame(Arc<Frame>),
    /// The page's URL or title changed.
    Meta(Meta),
}

/// The screencast of one tab while anyone watches it.
struct Cast {
    frames: watch::Sender<Option<Arc<Frame>>>,
    meta: watch::Sender<Meta>,
    /// Tells the relaying task the last viewer left: it stops Chromium's
    /// screencast (which then encodes no frame nobody reads) and ends.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// Turns true when the task ended (the tab closed, or stopped).
    ended: watch::Receiver<bool>,
}

impl Drop for Cast {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Someone watching a tab's screencast; it stops with its last viewer.
pub struct Viewer {
    frames: watch::Receiver<Option<Arc<Frame>>>,
    meta: watch::Receiver<Meta>,
    ended: watch::Receiver<bool>,
    /// Held, not read: the screencast runs while a viewer holds it.
    _cast: Arc<Cast>,
}

impl std::fmt::Debug for Viewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Viewer").finish_non_exhaustive()
    }
}

impl Viewer {
    fn of(cast: Arc<Cast>) -> Viewer {
        Viewer {
            frames: cast.frames.subscribe(),
            meta: cast.meta.subscribe(),
            ended: cast.ended.clone(),
            _cast: cast,
        }
    }

    /// The next news of the page: a frame newer than the last one read, or
    /// a new URL or title; `None` once the screencast ended (the tab closed
    /// or stopped answering).
    pub async fn next(&mut self) -> Option<Update> {
        loop {
            if *self.ended.borrow() {
                return None;
            }
            tokio::select! {
                // Ended, or its task gone without a word.
                changed = self.ended.changed() => changed.ok()?,
                changed = self.frames.changed() => {
                    changed.ok()?;
                    if let Some(frame) = self.frames.borrow_and_update().clone() {
                        return Some(Update::Frame(frame));
                    }
                }
                changed = self.meta.changed() => {
                    changed.ok()?;
                    return Some(Update::Meta(self.meta.borrow_and_update().clone()));
                }
            }
        }
    }

    /// The page's URL and title now.
    pub fn meta(&self) -> Meta {
        self.meta.borrow().clone()
    }
}

/// The screencasts of one browser, by tab: a second viewer of a tab shares
/// the first one's frames.
#[derive(Default)]
pub struct Screencasts {
    /// Held while a screencast is looked up or started, so two viewers
    /// never start two screencasts of one tab.
    casts: tokio::sync::Mutex<std::collections::HashMap<String, Running>>,
}

/// A tab's screencast as its viewers hold it, and whether its task ended.
struct Running {
    cast: Weak<Cast>,
    ended: watch::Receiver<bool>,
}

impl std::fmt::Debug for Screencasts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screencasts").finish_non_exhaustive()
    }
}

/// How long a new viewer waits for the last one's screencast to stop.
const STOPPING: std::time::Duration = std::time::Duration::from_secs(2);

impl Screencasts {
    /// Watches tab `target`: its running screencast, else a new one with
    /// `options`. A screencast whose last viewer just left is stopped
    /// before a new one starts, so its stop never ends the new one.
    pub async fn watch(&self, target: &str, page: &Page, options: Options) -> Result<Viewer> {
        let mut casts = self.casts.lock().await;
        if let Some(running) = casts.get(target) {
            let mut ended = running.ended.clone();
            match running.cast.upgrade() {
                Some(cast) if !*ended.borrow() => {
                    return Ok(Viewer::of(cast));
                }
                _ => {
                    let _ = tokio::time::timeout(STOPPING, ended.wait_for(|e| *e)).await;
                }
            }
        }
        let cast = Arc::new(start(page.clone(), options).await?);
        casts.retain(|_, r| r.cast.strong_count() > 0 || !*r.ended.borrow());
        casts.insert(
            target.to_string(),
            Running {
                cast: Arc::downgrade(&cast),
                ended: cast.ended.clone(),
            },
        );
        Ok(Viewer::of(cast))
    }
}

/// The page's URL and title as its target reports them.
async fn read_meta(page: &Page) -> Option<Meta> {
    let info = page_call(page, "Target.getTargetInfo", json!({}))
        .await
        .ok()?;
    let text = |k: &str| {
        info.pointer(&format!("/targetInfo/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Some(Meta {
        url: text("url"),
        title: text("title"),
    })
}

/// Starts `page`'s screencast and the task that relays it.
async fn start(page: Page, options: Options) -> Result<Cast> {
    let mut frames_in = page_events::<EventScreencastFrame>(&page).await?;
    let mut navigated = page_events::<EventFrameNavigated>(&page).await?;
    let mut within = page_events::<EventNavigatedWithinDocument>(&page).await?;
    let mut loaded = page_events::<EventLoadEventFired>(&page).await?;
    let meta = watch::Sender::new(read_meta(&page).await.unwrap_or_default());
    let frames = watch::Sender::new(None);
    page_call(
        &page,
        "Page.startScreencast",
        json!({
            "format": "jpeg",
            "quality": options.quality,
            "maxWidth": options.max_width,
            "maxHeight": options.max_height,
            "everyNthFrame": 1,
        }),
    )
    .await?;
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let (ended, ended_rx) = watch::channel(false);
    {
        let frames = frames.clone();
        let meta = meta.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => {
                        let _ = page_call(&page, "Page.stopScreencast", json!({})).await;
                        break;
                    }
                    frame = frames_in.next() => {
                        let Some(frame) = frame else { break };
                        let Ok(jpeg) = base64::engine::general_purpose::STANDARD
                            .decode(AsRef::<str>::as_ref(&frame.data)) else { continue };
                        let m = &frame.metadata;
                        frames.send_replace(Some(Arc::new(Frame {
                            url: meta.borrow().url.clone(),
                            css_width: m.device_width,
                            css_height: m.device_height,
                            scroll_x: m.scroll_offset_x,
                            scroll_y: m.scroll_offset_y,
                            ts: m.timestamp.as_ref().map(|t| *t.inner()),
                            jpeg,
                        })));
                        // Chromium sends no next frame before this one is
                        // acknowledged.
                        let ack = json!({ "sessionId": frame.session_id });
                        if page_call(&page, "Page.screencastFrameAck", ack).await.is_err() {
                            break;
                        }
                    }
                    Some(e) = navigated.next() => {
                        if e.frame.parent_id.is_none() {
                            refresh(&page, &meta).await;
                        }
                    }
                    Some(_) = within.next() => refresh(&page, &meta).await,
                    Some(_) = loaded.next() => refresh(&page, &meta).await,
                }
            }
            tracing::debug!("screencast ended");
            ended.send_replace(true);
        });
    }
    Ok(Cast {
        frames,
        meta,
        stop: Some(stop),
        ended: ended_rx,
    })
}

/// Reads the page's URL and title again; a change reaches the viewers.
async fn refresh(page: &Page, meta: &watch::Sender<Meta>) {
    if let Some(now) = read_meta(page).await {
        meta.send_if_modified(|was| {
            let changed = *was != now;
            *was = now;
            changed
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_on_the_wire_is_length_header_then_jpeg() {
        let frame = Frame {
            url: "https://example.com/".into(),
            css_width: 1280.0,
            css_height: 720.0,
            scroll_x: 0.0,
            scroll_y: 12.5,
            ts: Some(1.5),
            jpeg: vec![0xff, 0xd8, 0xff, 0xd9],
        };
        let wire = frame.wire();
        let len = u32::from_be_bytes([wire[0], wire[1], wire[2], wire[3]]) as usize;
        let header: Value = serde_json::from_slice(&wire[4..4 + len]).unwrap();
        assert_eq!(header["url"], "https://example.com/");
        assert_eq!(header["cssWidth"], 1280.0);
        assert_eq!(header["scrollY"], 12.5);
        assert_eq!(&wire[4 + len..], &[0xff, 0xd8, 0xff, 0xd9]);
    }
}
