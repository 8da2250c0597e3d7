//! The tab's network log: requests with their status or failure.

use chromiumoxide::cdp::browser_protocol::network::EventRequestWillBeSent;
use serde::Serialize;
use tokio::sync::watch;

use super::TabEvents;

/// How many network requests a tab keeps.
const REQUESTS: usize = 500;

/// One network request of the tab, updated as its response arrives.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestEntry {
    /// Chromium's request id (redirects share it).
    pub id: String,
    /// When it was sent (ms since the epoch).
    pub timestamp: u64,
    /// HTTP method.
    pub method: String,
    /// Request URL.
    pub url: String,
    /// `Document`, `Script`, `Fetch`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    /// HTTP status, once a response arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Whether it succeeded (a status below 400), once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// Why it failed, for failed requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_text: Option<String>,
    /// Whether its body has fully arrived.
    #[serde(skip)]
    pub finished: bool,
}

impl TabEvents {
    pub(super) fn on_request(&self, e: &EventRequestWillBeSent) {
        let kind = e.r#type.as_ref().map(|t| t.as_ref().to_string());
        let entry = RequestEntry {
            id: e.request_id.inner().clone(),
            timestamp: (*e.wall_time.inner() * 1000.0) as u64,
            method: e.request.method.clone(),
            url: e.request.url.clone(),
            resource_type: kind,
            status: None,
            ok: None,
            failure_text: None,
            finished: false,
        };
        let mut s = self.state();
        s.requests.push_back(entry);
        if s.requests.len() > REQUESTS {
            s.requests.pop_front();
        }
    }

    pub(super) fn update_request(&self, id: &str, f: impl FnOnce(&mut RequestEntry)) {
        if let Some(r) = self.state().requests.iter_mut().rev().find(|r| r.id == id) {
            f(r);
        }
    }

    /// Network requests whose URL contains `filter`, oldest first; `clear`
    /// empties the buffer.
    pub fn requests(&self, filter: Option<&str>, clear: bool) -> Vec<RequestEntry> {
        let mut s = self.state();
        let out = s
            .requests
            .iter()
            .filter(|r| filter.is_none_or(|f| r.url.contains(f)))
            .cloned()
            .collect();
        if clear {
            s.requests.clear();
        }
        out
    }

    /// A receiver that changes whenever a response body has fully arrived.
    pub fn response_loaded(&self) -> watch::Receiver<u64> {
        self.loaded.subscribe()
    }

    /// The newest request whose URL `matches` and whose body has arrived.
    pub fn finished_request(&self, matches: impl Fn(&str) -> bool) -> Option<RequestEntry> {
        self.state()
            .requests
            .iter()
            .rev()
            .find(|r| r.finished && matches(&r.url))
            .cloned()
    }
}
