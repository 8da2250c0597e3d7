//! Cookie-consent banners, declined: DuckDuckGo's autoconsent (its content
//! script and its compact opt-out rules, vendored unmodified under
//! `assets/autoconsent/`, MPL-2.0) runs in every document of a session's
//! page and answers each banner it recognises with its opt-out: "reject
//! all" where there is one, else only the necessary purposes saved.
//! Cosmetic rules (hiding a banner without answering it) are off.
//!
//! The script talks to us through a CDP binding: it asks for its
//! configuration and rules (`init`) and reports what it found and did,
//! which the action's result lists under `handled`. What its rules press
//! is recorded in the page (their clicks are untrusted events) and named
//! there too. A banner answered while no action runs (after `navigate`
//! answered, before the next click) is kept for the next action's result
//! and handed at once to whoever logs between actions
//! ([`Consent::between_actions`]): it is never lost.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::js_protocol::runtime::EventBindingCalled;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::Result;
use crate::action::Handled;
use crate::cdp::{page_call, page_events};

/// autoconsent's content script (`dist/autoconsent.playwright.js`).
const SCRIPT: &str = include_str!("../assets/autoconsent/autoconsent.playwright.js");
/// Its opt-out rules (`rules/compact-rules.json`).
const RULES: &str = include_str!("../assets/autoconsent/compact-rules.json");
/// The binding the script sends its messages through.
const BINDING: &str = "__clawdConsent";
/// Set up before the script in every document: its messages go to the
/// binding, and the labels of the last untrusted clicks (what the rules
/// press) are kept for [`TAKE_CLICKS`].
const SHIM: &str = r#"(() => {
  const send = globalThis[BINDING];
  if (typeof send !== 'function' || window.autoconsentReceiveMessage) return;
  window.autoconsentSendMessage = (m) => { send(JSON.stringify(m)); return Promise.resolve(); };
  const clicks = [];
  window[Symbol.for('clawd.consentClicks')] = () => clicks.splice(0);
  window.addEventListener('click', (e) => {
    if (e.isTrusted) return;
    const el = e.composedPath()[0];
    if (!el || el.nodeType !== 1) return;
    const label = (el.getAttribute('aria-label') || el.innerText || el.textContent || el.value || el.getAttribute('title') || el.id || el.localName).replace(/\s+/g, ' ').trim().slice(0, 80);
    clicks.push(label);
    if (clicks.length > 5) clicks.shift();
  }, true);
})();
"#;
/// The labels of the untrusted clicks since the last call.
const TAKE_CLICKS: &str =
    "(() => { const f = window[Symbol.for('clawd.consentClicks')]; return f ? f() : []; })()";

/// What autoconsent is told: opt out, in the page's own world (its rules'
/// snippets read the page's CMP objects), no hiding, never accepting.
fn config() -> Value {
    json!({
        "enabled": true,
        "autoAction": "optOut",
        "disabledCmps": [],
        "enablePrehide": false,
        "enableCosmeticRules": false,
        "enableGeneratedRules": true,
        "enableHeuristicDetection": true,
        // Reject buttons and acknowledgements ("OK", "Close") only: its
        // `tier2` would press a notice's lone "Accept".
        "heuristicMode": "tier1",
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
    handled: Vec<Handled>,
    /// What was done while no action ran and is in no log yet.
    unlogged: Vec<Handled>,
    /// Whether an action runs (from `begin` to `take_handled`).
    busy: bool,
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
            "{}\n{SCRIPT}",
            SHIM.replace("BINDING", &json!(BINDING).to_string())
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
                // What the rules pressed, read where they ran.
                let clicked = if message.get("type").and_then(Value::as_str)
                    == Some("autoconsentDone")
                {
                    page_call(
                        &page,
                        "Runtime.evaluate",
                        json!({ "expression": TAKE_CLICKS, "contextId": call.execution_context_id.inner(), "returnByValue": true }),
                    )
                    .await
                    .ok()
                    .and_then(|r| r.pointer("/result/value").cloned())
                    .and_then(|v| serde_json::from_value::<Vec<String>>(v).ok())
                    .unwrap_or_default()
                } else {
                    Vec::new()
                };
                consent.on_message(&message, clicked);
            }
        });
        Ok(consent)
    }

    fn on_message(&self, m: &Value, clicked: Vec<String>) {
        let text = |k: &str| {
            m.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let cmp = text("cmp");
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let done = match text("type").as_str() {
            "popupFound" => {
                tracing::info!(%cmp, url = %text("url"), "a cookie banner");
                s.open.push(cmp);
                None
            }
            "optOutResult" if m.get("result") == Some(&json!(false)) => {
                s.open.retain(|c| *c != cmp);
                Some(Handled {
                    kind: "consent",
                    detail: format!(
                        "{cmp} cookie banner: declining failed; it may still cover the page"
                    ),
                    cmp: Some(cmp),
                    by: Some("rules"),
                    ..Handled::default()
                })
            }
            "autoconsentDone" => {
                s.open.retain(|c| *c != cmp);
                tracing::info!(%cmp, ?clicked, "cookie banner declined");
                let choice = choice_of(clicked.last().map(String::as_str));
                let pressed = (!clicked.is_empty()).then(|| clicked.join("\", then \""));
                let last = clicked.last().cloned();
                Some(Handled {
                    kind: "consent",
                    detail: format!(
                        "answered the {cmp} cookie banner ({choice}){} ({})",
                        pressed
                            .as_ref()
                            .map(|p| format!(" with \"{p}\""))
                            .unwrap_or_default(),
                        text("url")
                    ),
                    cmp: Some(cmp),
                    choice: Some(choice),
                    clicked: last,
                    by: Some("rules"),
                    ..Handled::default()
                })
            }
            "autoconsentError" => {
                s.open.clear();
                tracing::info!(details = %m, "autoconsent error");
                None
            }
            _ => return,
        };
        if let Some(done) = done {
            s.unlogged.push(done.clone());
            s.handled.push(done);
        }
        drop(s);
        self.changed.send_modify(|n| *n += 1);
    }

    /// An action starts: what is done from now on is its own, and
    /// [`Consent::between_actions`] leaves it to the action.
    pub fn begin(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).busy = true;
    }

    /// What was done since the last call, for the result of the action
    /// that ends (the action's log has it, so it is logged).
    pub fn take_handled(&self) -> Vec<Handled> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.busy = false;
        s.unlogged.clear();
        std::mem::take(&mut s.handled)
    }

    /// An action that ended without a result (a request refused): what
    /// was done waits for the next action's result.
    pub fn end(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).busy = false;
        self.changed.send_modify(|n| *n += 1);
    }

    /// What was done and is in no log yet; it stays
    /// for the next action's result too. Empty while an action runs.
    pub fn between_actions(&self) -> Vec<Handled> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.busy {
            return Vec::new();
        }
        std::mem::take(&mut s.unlogged)
    }

    /// Changes whenever something was found or done.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Whether no banner the rules found is being answered.
    pub fn idle(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .open
            .is_empty()
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

/// What the rules' opt-out chose, by the label of the last control they
/// pressed: `reject`, `necessary`, `save`, or `dismiss` for a notice that
/// offered no choice (an "OK"); `reject` when they pressed nothing (the
/// consent manager's own API declined every optional purpose).
fn choice_of(label: Option<&str>) -> &'static str {
    let Some(label) = label else {
        return "reject";
    };
    let label = label.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| label.contains(w));
    if has(&[
        "reject", "decline", "deny", "refuse", "disagree", "opt out", "opt-out", "ablehnen",
        "refuser", "rechazar", "rifiuta",
    ]) {
        "reject"
    } else if has(&[
        "necessary",
        "essential",
        "required",
        "notwendig",
        "nécessaire",
    ]) {
        "necessary"
    } else if has(&["save", "confirm", "speichern", "enregistrer"]) {
        "save"
    } else {
        "dismiss"
    }
}

#[cfg(test)]
mod tests {
    use super::choice_of;

    #[test]
    fn the_rules_choice_is_read_from_what_they_pressed() {
        assert_eq!(choice_of(Some("Reject all")), "reject");
        assert_eq!(choice_of(Some("deny cookies")), "reject");
        assert_eq!(
            choice_of(Some("Accept necessary cookies only")),
            "necessary"
        );
        assert_eq!(choice_of(Some("Save settings")), "save");
        assert_eq!(choice_of(Some("OK")), "dismiss");
        assert_eq!(choice_of(None), "reject");
    }
}
