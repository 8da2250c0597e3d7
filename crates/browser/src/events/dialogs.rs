//! JavaScript dialogs: answered at once when armed, else kept pending.

use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::EventJavascriptDialogOpening;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::TabEvents;
use super::now_ms;
use crate::cdp::page_call;
use crate::{BrowserError, Result};

/// How many answered dialogs a tab remembers.
const RECENT: usize = 10;

/// The answer for the next dialog.
#[derive(Clone, Debug)]
pub struct DialogReply {
    /// Accept (OK) or dismiss (Cancel).
    pub accept: bool,
    /// Text typed into a `prompt()`.
    pub prompt_text: Option<String>,
}

/// How a session answers JavaScript dialogs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DialogPolicy {
    /// Accept alerts and `beforeunload`, dismiss confirm and prompt (what
    /// a careful person does: nothing is agreed to unasked).
    #[default]
    Default,
    /// Accept every dialog.
    Accept,
    /// Dismiss every dialog.
    Dismiss,
    /// Leave every dialog open for a person (or the agent) to answer.
    Ask,
}

impl DialogPolicy {
    /// Parses `default`, `accept`, `dismiss` or `ask`.
    pub fn parse(text: &str) -> Option<DialogPolicy> {
        match text {
            "default" => Some(DialogPolicy::Default),
            "accept" => Some(DialogPolicy::Accept),
            "dismiss" => Some(DialogPolicy::Dismiss),
            "ask" => Some(DialogPolicy::Ask),
            _ => None,
        }
    }

    /// The answer for a dialog of `kind`, or `None` to leave it open.
    fn answer(self, kind: &str) -> Option<bool> {
        match self {
            DialogPolicy::Default => Some(matches!(kind, "alert" | "beforeunload")),
            DialogPolicy::Accept => Some(true),
            DialogPolicy::Dismiss => Some(false),
            DialogPolicy::Ask => None,
        }
    }
}

/// A dialog as clients see it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DialogInfo {
    /// Id to answer it by (`/hooks/dialog {dialogId}`).
    pub dialog_id: String,
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The dialog's message.
    pub message: String,
    /// A prompt's default text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_prompt: Option<String>,
    /// The frame URL that opened it.
    pub url: String,
    /// When it opened (ms since the epoch).
    pub opened_at: u64,
    /// How it was answered, once it was: `accepted` or `dismissed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<&'static str>,
    /// Who answered: `hook` (armed in advance or answered by id), `policy`
    /// (the session's dialog policy) or `page` (closed some other way).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handled_by: Option<&'static str>,
}

fn outcome(accept: bool) -> &'static str {
    if accept { "accepted" } else { "dismissed" }
}

impl TabEvents {
    pub(super) async fn on_opening(&self, page: &Page, e: &EventJavascriptDialogOpening) {
        let (info, armed) = {
            let mut s = self.state();
            s.next_id += 1;
            let info = DialogInfo {
                dialog_id: format!("d{}", s.next_id),
                kind: e.r#type.as_ref().to_string(),
                message: e.message.clone(),
                default_prompt: e.default_prompt.clone(),
                url: e.url.clone(),
                opened_at: now_ms(),
                outcome: None,
                handled_by: None,
            };
            let armed = s
                .armed
                .take()
                .filter(|(_, until)| Instant::now() < *until)
                .map(|(reply, _)| (reply, "hook"))
                .or_else(|| {
                    let accept = s.policy?.answer(&info.kind)?;
                    Some((
                        DialogReply {
                            accept,
                            prompt_text: None,
                        },
                        "policy",
                    ))
                });
            if armed.is_none() {
                s.pending = Some(info.clone());
            }
            (info, armed)
        };
        tracing::info!(kind = %info.kind, armed = armed.is_some(), "dialog opened");
        match armed {
            Some((reply, by)) => {
                if let Err(e) = answer(page, &reply).await {
                    tracing::warn!(error = %e, "answering an armed dialog");
                }
                let info = DialogInfo {
                    outcome: Some(outcome(reply.accept)),
                    handled_by: Some(by),
                    ..info
                };
                if by == "policy" {
                    self.state().handled.push(info.clone());
                }
                self.remember(info);
            }
            None => {
                self.opened.send_modify(|n| *n += 1);
            }
        }
    }

    pub(super) fn on_closed(&self, accepted: bool) {
        let mut s = self.state();
        if let Some(info) = s.pending.take() {
            drop(s);
            self.remember(DialogInfo {
                outcome: Some(outcome(accepted)),
                handled_by: Some("page"),
                ..info
            });
        }
    }

    pub(super) fn remember(&self, info: DialogInfo) {
        let mut s = self.state();
        s.recent.push_front(info);
        s.recent.truncate(RECENT);
    }

    /// Sets the standing answer to this tab's dialogs.
    pub fn set_policy(&self, policy: DialogPolicy) {
        self.state().policy = Some(policy);
    }

    /// The dialogs the policy answered since the last call.
    pub fn take_handled(&self) -> Vec<DialogInfo> {
        std::mem::take(&mut self.state().handled)
    }

    /// The dialog waiting for an answer, if any.
    pub fn pending(&self) -> Option<DialogInfo> {
        self.state().pending.clone()
    }

    /// `{dialogs: {pending: [...], recent: [...]}}`.
    pub fn browser_state(&self) -> Value {
        let s = self.state();
        json!({ "dialogs": { "pending": s.pending.iter().collect::<Vec<_>>(), "recent": s.recent } })
    }

    /// A receiver that changes whenever a dialog opens with no armed answer.
    pub fn dialog_opened(&self) -> watch::Receiver<u64> {
        self.opened.subscribe()
    }

    /// Answers the pending dialog now (checking `dialog_id` when given), or
    /// arms `reply` for the next one for `timeout`. True when answered now.
    pub async fn reply(
        &self,
        page: &Page,
        reply: DialogReply,
        dialog_id: Option<&str>,
        timeout: Duration,
    ) -> Result<bool> {
        // Taken before answering, so the close event that follows finds no
        // pending dialog to record a second time.
        let taken = {
            let mut s = self.state();
            let matches = s
                .pending
                .as_ref()
                .is_some_and(|p| dialog_id.is_none_or(|id| id == p.dialog_id));
            if matches { s.pending.take() } else { None }
        };
        match taken {
            Some(info) => {
                if let Err(e) = answer(page, &reply).await {
                    self.state().pending = Some(info);
                    return Err(e);
                }
                self.remember(DialogInfo {
                    outcome: Some(outcome(reply.accept)),
                    handled_by: Some("hook"),
                    ..info
                });
                Ok(true)
            }
            _ if dialog_id.is_some() => Err(BrowserError::Missing(format!(
                "no pending dialog {}",
                dialog_id.unwrap_or_default()
            ))),
            _ => {
                self.state().armed = Some((reply, Instant::now() + timeout));
                Ok(false)
            }
        }
    }
}

async fn answer(page: &Page, reply: &DialogReply) -> Result<()> {
    let mut params = json!({ "accept": reply.accept });
    if let Some(text) = &reply.prompt_text {
        params["promptText"] = json!(text);
    }
    page_call(page, "Page.handleJavaScriptDialog", params)
        .await
        .map(drop)
}
