//! Cookie-consent banners, declined: DuckDuckGo's autoconsent (its content
//! script and its compact opt-out rules, vendored unmodified under
//! `assets/autoconsent/`, MPL-2.0) runs in every document of a session's
//! page and answers each banner it recognises with its opt-out: "reject
//! all" where there is one, else only the necessary purposes saved.
//! Cosmetic rules (hiding a banner without answering it) are off.
//!
//! The script talks to us through a CDP binding: it asks for its
//! configuration and rules (`init`) and reports what it found and did,
//! which the next action's result lists under `handled`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::js_protocol::runtime::EventBindingCalled;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::Result;
use crate::cdp::{page_call, page_events};

/// autoconsent's content script (`dist/autoconsent.playwright.js`).
const SCRIPT: &str = include_str!("../assets/autoconsent/autoconsent.playwright.js");
/// Its opt-out rules (`rules/compact-rules.json`).
const RULES: &str = include_str!("../assets/autoconsent/compact-rules.json");
/// The binding the script sends its messages through.
const BINDING: &str = "__clawdConsent";

/// What autoconsent is told: opt out, in the page's own world (its rules'
/// snippets read the page's CMP objects), no hiding.
fn config() -> Value {
    json!({
        "enabled": true,
        "autoAction": "optOut",
        "disabledCmps": [],
        "enablePrehide": false,
        "enableCosmeticRules": false,
        "enableGeneratedRules": true,
        "enableHeuristicDetection": true,
        "heuristicMode": "tier2",
        "detectRetries": 20,
        "isMainWorld": true,
        "logs": { "lifecycle": false, "rulesteps": false, "detectionsteps": false, "evals": false, "errors": false, "messages": false, "waits": false },
    })
}

/// The answer to the script's `init`: its configuration and rules, as one
/// expression (the rules are JSON, so a JavaScript literal as they are),
/// made once.
fn init_answer() -> &'static str {
    static ANSWER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ANSWER.get_or_init(|| {
        format!(
            "window.autoconsentReceiveMessage && window.autoconsentReceiveMessage({{\"type\":\"initResp\",\"config\":{},\"rules\":{{\"compact\":{RULES}}}}})",
            config()
        )
    })
}

#[derive(Default)]
struct State {
    /// Banners found and not yet answered, by CMP name.
    open: Vec<String>,
    /// What was done since the last `take_handled`.
    handled: Vec<String>,
}

/// The consent watcher of one page.
pub struct Consent {
    state: Mutex<State>,
    changed: watch::Sender<u64>,
}

impl std::fmt::Debug for Consent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consent").finish_non_exhaustive()
    }
}

impl Consent {
    /// Installs autoconsent in every new document of `page` and starts
    /// answering it; the watcher ends with the page.
    pub async fn install(page: &Page) -> Result<Arc<Consent>> {
        let mut calls = page_events::<EventBindingCalled>(page).await?;
        page_call(page, "Runtime.addBinding", json!({ "name": BINDING })).await?;
        let source = format!(
            "(() => {{ const send = globalThis[{binding}]; if (typeof send !== 'function' || window.autoconsentReceiveMessage) return; \
             window.autoconsentSendMessage = (m) => {{ send(JSON.stringify(m)); return Promise.resolve(); }}; }})();\n{SCRIPT}",
            binding = json!(BINDING),
        );
        page_call(
            page,
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": source }),
        )
        .await?;
        let consent = Arc::new(Consent {
            state: Mutex::new(State::default()),
            changed: watch::Sender::new(0),
        });
        let weak = Arc::downgrade(&consent);
        let page = page.clone();
        let init = init_answer();
        tokio::spawn(async move {
            while let Some(call) = calls.next().await {
                if call.name != BINDING {
                    continue;
                }
                let Some(consent) = weak.upgrade() else { break };
                let Ok(message) = serde_json::from_str::<Value>(&call.payload) else {
                    continue;
                };
                if message.get("type").and_then(Value::as_str) == Some("init") {
                    let answered = page_call(
                        &page,
                        "Runtime.evaluate",
                        json!({ "expression": init, "contextId": call.execution_context_id.inner() }),
                    )
                    .await;
                    if let Err(e) = answered {
                        tracing::debug!(error = %e, "answering autoconsent");
                    }
                    continue;
                }
                consent.on_message(&message);
            }
        });
        Ok(consent)
    }

    fn on_message(&self, m: &Value) {
        let text = |k: &str| {
            m.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let cmp = text("cmp");
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match text("type").as_str() {
            "popupFound" => {
                tracing::info!(%cmp, url = %text("url"), "a cookie banner");
                s.open.push(cmp);
            }
            "optOutResult" if m.get("result") == Some(&json!(false)) => {
                s.open.retain(|c| *c != cmp);
                s.handled.push(format!(
                    "{cmp} cookie banner: declining failed; it may still cover the page"
                ));
            }
            "autoconsentDone" => {
                s.open.retain(|c| *c != cmp);
                tracing::info!(%cmp, "cookie banner declined");
                s.handled.push(format!(
                    "declined the {cmp} cookie banner ({})",
                    text("url")
                ));
            }
            "autoconsentError" => {
                s.open.clear();
                tracing::info!(details = %m, "autoconsent error");
            }
            _ => return,
        }
        drop(s);
        self.changed.send_modify(|n| *n += 1);
    }

    /// What was done since the last call.
    pub fn take_handled(&self) -> Vec<String> {
        std::mem::take(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()).handled)
    }

    /// Waits (at most `limit`) until no banner found is still being
    /// answered.
    pub async fn settled(&self, limit: Duration) {
        let mut changed = self.changed.subscribe();
        let wait = async {
            while !self
                .state
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .open
                .is_empty()
            {
                if changed.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
    }
}
