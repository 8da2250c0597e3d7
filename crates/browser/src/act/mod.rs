//! OpenClaw's `/act`: click, type, press, hover, scroll, drag, select, fill,
//! resize, wait, evaluate, close and batch, on snapshot refs or (where
//! OpenClaw allows) CSS selectors. Requests are fully validated before the
//! browser is touched; an action that opens a dialog reports
//! `blockedByDialog` instead of hanging.

mod evaluate;
mod parse;

use std::time::Duration;

use chromiumoxide::Page;
use serde::Serialize;
use serde_json::{Value, json};

use crate::cdp::page_call;
use crate::element::{self, Locator};
use crate::events::TabEvents;
use crate::input::{self, Button};
use crate::manager::Manager;
use crate::wait::{self, WaitSpec};
use crate::{BrowserError, Result};

pub use evaluate::evaluate;
use parse::bad;
pub use parse::parse;

/// Default wait for an element to appear or become visible.
pub const ACTION_TIMEOUT: Duration = Duration::from_secs(8);
/// Default limit of a `wait` action.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(20);
/// Most actions in one batch.
pub const MAX_BATCH: usize = 100;
/// Pause between characters of `type {slowly:true}`.
const SLOW_TYPING: Duration = Duration::from_millis(75);

/// One parsed action.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Click an element.
    Click {
        /// The element.
        at: Locator,
        /// Double-click.
        double: bool,
        /// Which button.
        button: Button,
        /// CDP modifier bits held during the click.
        modifiers: u32,
        /// Time between press and release.
        delay: Duration,
    },
    /// Click a viewport point.
    ClickCoords {
        /// Viewport x.
        x: f64,
        /// Viewport y.
        y: f64,
        /// Double-click.
        double: bool,
        /// Which button.
        button: Button,
    },
    /// Replace an input's text, optionally pressing Enter after.
    Type {
        /// The element.
        at: Locator,
        /// The text.
        text: String,
        /// Press Enter afterwards.
        submit: bool,
        /// Key by key instead of one insertion.
        slowly: bool,
    },
    /// Press a key chord on the focused element.
    Press {
        /// `Enter`, `Control+A`, ...
        key: String,
        /// Time between key down and up.
        delay: Duration,
    },
    /// Move the mouse over an element.
    Hover(Locator),
    /// Scroll an element into view.
    ScrollIntoView(Locator),
    /// Drag from one element to another.
    Drag(Locator, Locator),
    /// Choose options of a `<select>` by value or label.
    Select(Locator, Vec<String>),
    /// Set several form fields.
    Fill(Vec<Field>),
    /// Resize the viewport.
    Resize(u32, u32),
    /// Wait for conditions.
    Wait(WaitSpec),
    /// Run JS in the page (or on an element).
    Evaluate {
        /// A function, an expression, or a statement body.
        func: String,
        /// The element passed to the function.
        at: Option<Locator>,
    },
    /// Close the tab.
    Close,
    /// Several actions in order.
    Batch {
        /// The actions.
        actions: Vec<Action>,
        /// Stop at the first failure (default true).
        stop_on_error: bool,
    },
}

/// One form field of `fill`.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The element.
    pub at: Locator,
    /// `text`, `checkbox`, `radio`, `select`, ...
    pub kind: String,
    /// The value to set.
    pub value: Value,
}

/// An action with its target tab and timeout.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// What to do.
    pub kind: Kind,
    /// The tab (`targetId`), if named.
    pub target: Option<String>,
    /// `timeoutMs`, if given.
    pub timeout: Option<Duration>,
}

/// What running an action produced.
enum Outcome {
    Done(Option<Value>),
    Blocked,
}

/// What an action did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActOutcome {
    /// The tab it acted on.
    pub target_id: String,
    /// The tab's URL afterwards (absent when the action closed it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// What the action returned, for those that return something.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// A batch's results, one per action run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<BatchItem>>,
    /// Whether a JavaScript dialog opened and stopped the action.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub blocked_by_dialog: bool,
    /// The tab's dialogs, when one blocked the action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_state: Option<Value>,
}

/// One action of a batch: its result, or why it failed.
#[derive(Debug, Serialize)]
pub struct BatchItem {
    /// Whether it succeeded.
    pub ok: bool,
    /// What it returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Resolves the action's tab and runs it.
pub async fn act(manager: &Manager, action: &Action) -> Result<ActOutcome> {
    if action.evaluates() && !manager.settings().evaluate_enabled {
        return Err(BrowserError::Forbidden {
            message: "evaluate is disabled in settings (evaluateEnabled: false)".into(),
            code: Some("ACT_EVALUATE_DISABLED"),
        });
    }
    let (target_id, page) = manager.page_for(action.target.as_deref()).await?;
    if let Kind::Batch { actions, .. } = &action.kind {
        for nested in actions.iter().filter_map(|a| a.target.as_deref()) {
            if manager.resolve(nested).await.ok().as_deref() != Some(target_id.as_str()) {
                return Err(BrowserError::Forbidden {
                    message: format!(
                        "batch action targetId {nested} does not match the batch's tab {target_id}"
                    ),
                    code: Some("ACT_TARGET_ID_MISMATCH"),
                });
            }
        }
    }
    if action.kind == Kind::Close {
        manager.close(&target_id, true).await?;
        return Ok(ActOutcome {
            target_id,
            url: None,
            result: None,
            results: None,
            blocked_by_dialog: false,
            browser_state: None,
        });
    }
    let events = manager.events(&target_id, &page).await?;
    let run = Runner {
        manager,
        target_id: &target_id,
        page: &page,
        events: &events,
    };
    let mut result = None;
    let mut batch = None;
    let blocked = match &action.kind {
        Kind::Batch {
            actions,
            stop_on_error,
        } => {
            let mut results = Vec::new();
            let mut blocked = false;
            for a in actions {
                match run.guarded(a).await {
                    Ok(Outcome::Done(result)) => results.push(BatchItem {
                        ok: true,
                        result,
                        error: None,
                    }),
                    Ok(Outcome::Blocked) => {
                        results.push(BatchItem {
                            ok: false,
                            result: None,
                            error: Some("blocked by a dialog".into()),
                        });
                        blocked = true;
                        break;
                    }
                    Err(e) => {
                        results.push(BatchItem {
                            ok: false,
                            result: None,
                            error: Some(e.to_string()),
                        });
                        if *stop_on_error {
                            break;
                        }
                    }
                }
            }
            batch = Some(results);
            blocked
        }
        _ => match run.guarded(action).await? {
            Outcome::Done(done) => {
                result = done;
                false
            }
            Outcome::Blocked => true,
        },
    };
    let url = manager.target_url(&target_id).await.unwrap_or_default();
    Ok(ActOutcome {
        target_id,
        url: Some(url),
        result,
        results: batch,
        blocked_by_dialog: blocked,
        browser_state: blocked.then(|| events.browser_state()),
    })
}

struct Runner<'a> {
    manager: &'a Manager,
    target_id: &'a str,
    page: &'a Page,
    events: &'a TabEvents,
}

impl Runner<'_> {
    /// Runs one action unless a dialog is (or becomes) pending.
    async fn guarded(&self, action: &Action) -> Result<Outcome> {
        let mut opened = self.events.dialog_opened();
        if self.events.pending().is_some() {
            return Ok(Outcome::Blocked);
        }
        tokio::select! {
            result = self.run(action) => result.map(Outcome::Done),
            _ = opened.changed() => Ok(Outcome::Blocked),
        }
    }

    async fn find(&self, at: &Locator, timeout: Duration) -> Result<i64> {
        self.manager
            .find(self.target_id, self.page, at, timeout)
            .await
    }

    async fn point(&self, at: &Locator, timeout: Duration) -> Result<(f64, f64)> {
        let backend = self.find(at, timeout).await?;
        element::point(self.page, backend, timeout).await
    }

    /// The point to click or hover the element at, once the pointer would
    /// reach it there ([`element::check_hit_target`]); the element and its
    /// point are found afresh on every try, until `timeout`.
    async fn reachable_point(&self, at: &Locator, timeout: Duration) -> Result<(f64, f64)> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let backend = self.find(at, left).await?;
            let point = element::point(self.page, backend, left).await?;
            match element::check_hit_target(self.page, backend, point).await {
                Ok(()) => return Ok(point),
                Err(covered) if tokio::time::Instant::now() >= deadline => return Err(covered),
                Err(_) => tokio::time::sleep(element::POLL).await,
            }
        }
    }

    async fn run(&self, action: &Action) -> Result<Option<Value>> {
        let timeout = action.timeout.unwrap_or(ACTION_TIMEOUT);
        let page = self.page;
        match &action.kind {
            Kind::Click {
                at,
                double,
                button,
                modifiers,
                delay,
            } => {
                let p = self.reachable_point(at, timeout).await?;
                input::click(page, p, *button, *double, *modifiers, *delay).await?;
            }
            Kind::ClickCoords {
                x,
                y,
                double,
                button,
            } => {
                input::click(page, (*x, *y), *button, *double, 0, Duration::ZERO).await?;
            }
            Kind::Type {
                at,
                text,
                submit,
                slowly,
            } => {
                let backend = self.find(at, timeout).await?;
                self.set_text(backend, text, *slowly).await?;
                if *submit {
                    input::press(page, "Enter", Duration::ZERO).await?;
                }
            }
            Kind::Press { key, delay } => input::press(page, key, *delay).await?,
            Kind::Hover(at) => {
                let p = self.reachable_point(at, timeout).await?;
                input::move_to(page, p).await?;
            }
            Kind::ScrollIntoView(at) => {
                let backend = self.find(at, timeout).await?;
                element::scroll_into_view(page, backend).await?;
            }
            Kind::Drag(from, to) => {
                let a = self.point(from, timeout).await?;
                let b = self.point(to, timeout).await?;
                input::drag(page, a, b).await?;
            }
            Kind::Select(at, values) => {
                let backend = self.find(at, timeout).await?;
                return element::call_on(page, backend, SELECT, &[json!(values)])
                    .await
                    .map(Some);
            }
            Kind::Fill(fields) => {
                for field in fields {
                    self.fill(field, timeout).await?;
                }
            }
            Kind::Resize(width, height) => {
                page_call(
                    page,
                    "Emulation.setDeviceMetricsOverride",
                    json!({ "width": width, "height": height, "deviceScaleFactor": 0, "mobile": false }),
                )
                .await?;
            }
            Kind::Wait(spec) => {
                let timeout = action.timeout.unwrap_or(WAIT_TIMEOUT);
                wait::wait(page, spec, timeout, || {
                    self.manager.target_url(self.target_id)
                })
                .await?;
            }
            Kind::Evaluate { func, at } => {
                let backend = match at {
                    Some(at) => Some(self.find(at, timeout).await?),
                    None => None,
                };
                return evaluate(page, func, backend).await.map(Some);
            }
            Kind::Close | Kind::Batch { .. } => {
                return Err(bad("close and batch cannot be nested in a batch"));
            }
        }
        Ok(None)
    }

    /// Replaces the text of an input, textarea or contenteditable.
    async fn set_text(&self, backend: i64, text: &str, slowly: bool) -> Result<()> {
        let page = self.page;
        element::scroll_into_view(page, backend).await?;
        page_call(page, "DOM.focus", json!({ "backendNodeId": backend }))
            .await
            .map_err(|e| bad(format!("the element cannot take text: {e}")))?;
        element::call_on(page, backend, SELECT_ALL, &[]).await?;
        if text.is_empty() {
            input::press(page, "Delete", Duration::ZERO).await?;
        } else if slowly {
            input::type_slowly(page, text, SLOW_TYPING).await?;
        } else {
            input::insert_text(page, text).await?;
        }
        element::call_on(page, backend, ENSURE_VALUE, &[json!(text)]).await?;
        Ok(())
    }

    async fn fill(&self, field: &Field, timeout: Duration) -> Result<()> {
        let backend = self.find(&field.at, timeout).await?;
        let tag = element::call_on(self.page, backend, DESCRIBE, &[]).await?;
        let tag = tag.as_str().unwrap_or_default();
        if matches!(field.kind.as_str(), "checkbox" | "radio")
            || matches!(tag, "checkbox" | "radio")
        {
            let want = truthy(&field.value);
            let checked = || {
                element::call_on(
                    self.page,
                    backend,
                    "function() { return !!this.checked; }",
                    &[],
                )
            };
            if checked().await?.as_bool() != Some(want) {
                let p = element::point(self.page, backend, timeout).await?;
                input::click(self.page, p, Button::Left, false, 0, Duration::ZERO).await?;
            }
            let now = checked().await?;
            if now.as_bool() != Some(want) {
                return Err(bad(format!("could not set {} to {want}", field.at)));
            }
            return Ok(());
        }
        let text = match &field.value {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        if tag == "select" || field.kind == "select" {
            element::call_on(self.page, backend, SELECT, &[json!([text])]).await?;
            return Ok(());
        }
        self.set_text(backend, &text, false).await
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "on" | "yes" | "1" | "checked"
        ),
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        _ => false,
    }
}

/// `select`/`checkbox`/`radio`/the tag name of an element.
const DESCRIBE: &str = r#"function() {
  const tag = this.tagName ? this.tagName.toLowerCase() : '';
  if (tag === 'input' && (this.type === 'checkbox' || this.type === 'radio')) return this.type;
  return tag;
}"#;

const SELECT_ALL: &str = r#"function() {
  if (typeof this.select === 'function') { try { this.select(); return; } catch (e) {} }
  if (this.isContentEditable) {
    const range = document.createRange();
    range.selectNodeContents(this);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
}"#;

/// Inputs that ignore typed text get their value set (what a date or colour
/// picker would do); text inputs keep whatever the page made of the typing.
const ENSURE_VALUE: &str = r#"function(text) {
  const picked = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];
  if (this.tagName !== 'INPUT' || !picked.includes(this.type) || this.value === text) return;
  const proto = Object.getPrototypeOf(this);
  const setter = Object.getOwnPropertyDescriptor(proto, 'value');
  if (setter && setter.set) setter.set.call(this, text); else this.value = text;
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
}"#;

const SELECT: &str = r#"function(values) {
  if (!this.tagName || this.tagName.toLowerCase() !== 'select') throw new Error('the element is not a <select>');
  if (!this.multiple && values.length > 1) throw new Error('the <select> takes one value');
  const options = Array.from(this.options);
  const picked = values.map((v) => {
    const o = options.find((o) => o.value === v) || options.find((o) => o.label.trim() === v || o.text.trim() === v);
    if (!o) throw new Error(`no option "${v}" (have: ${options.map((o) => o.value).join(', ')})`);
    return o;
  });
  for (const o of options) o.selected = picked.includes(o);
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return picked.map((o) => o.value);
}"#;
