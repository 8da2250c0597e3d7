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

use crate::action::{self, Aim, Code, Failure, Request, Strategy, Tab, Target, Verb};
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
    // A person has the page (a hand-off): waiting on it is reading it.
    if !matches!(action.kind, Kind::Wait(_)) {
        manager.not_handed_off(&target_id)?;
    }
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
            result = self.run(action) => match result {
                // The engine saw the dialog first.
                Err(BrowserError::DialogOpen(_)) if self.events.pending().is_some() => Ok(Outcome::Blocked),
                other => other.map(Outcome::Done),
            },
            _ = opened.changed() => Ok(Outcome::Blocked),
        }
    }

    async fn find(&self, at: &Locator, timeout: Duration) -> Result<i64> {
        self.manager
            .find(self.target_id, self.page, at, timeout)
            .await
    }

    /// Runs an element action through the verified engine: the same
    /// checks, input and read-back as the session routes. A failure
    /// becomes the error OpenClaw's routes answer with.
    async fn engine(&self, verb: Verb, timeout: Duration) -> Result<Option<Value>> {
        let tab = Tab {
            manager: self.manager,
            target_id: self.target_id,
            page: self.page,
            dom: crate::cdp::Dom::Page(self.page),
            events: self.events,
            artifacts: self
                .manager
                .home()
                .join("browser")
                .join("artifacts")
                .join("tabs"),
            session: None,
            consent: None,
        };
        let outcome = action::run(&tab, &Request { verb, timeout }).await?;
        match outcome.error {
            None => Ok(outcome.data),
            Some(f) => Err(as_error(f)),
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
                let click = action::Click {
                    aim: aim(at),
                    double: *double,
                    button: *button,
                    modifiers: *modifiers,
                    delay: *delay,
                };
                self.engine(Verb::Click(click), timeout).await?;
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
                let verb = Verb::Type {
                    aim: aim(at),
                    text: text.clone(),
                    clear: true,
                    slowly: *slowly,
                };
                self.engine(verb, timeout).await?;
                if *submit {
                    input::press(page, "Enter", Duration::ZERO).await?;
                }
            }
            Kind::Press { key, delay } => input::press(page, key, *delay).await?,
            Kind::Hover(at) => {
                self.engine(Verb::Hover(aim(at)), timeout).await?;
            }
            Kind::ScrollIntoView(at) => {
                let backend = self.find(at, timeout).await?;
                element::scroll_into_view(page, backend).await?;
            }
            Kind::Drag(from, to) => {
                let verb = Verb::Drag {
                    from: aim(from),
                    to: aim(to),
                };
                self.engine(verb, timeout).await?;
            }
            Kind::Select(at, values) => {
                let verb = Verb::Select {
                    aim: aim(at),
                    values: values.clone(),
                };
                let data = self.engine(verb, timeout).await?;
                return Ok(data.and_then(|d| d.get("values").cloned()));
            }
            Kind::Fill(fields) => {
                let fields = fields
                    .iter()
                    .map(|f| action::Field {
                        aim: aim(&f.at),
                        value: f.value.clone(),
                    })
                    .collect();
                self.engine(Verb::Fill(fields), timeout).await?;
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
}

/// A locator of OpenClaw's routes as the engine's target.
fn aim(at: &Locator) -> Aim {
    Aim {
        target: match at {
            Locator::Ref(r) => Target::Ref(r.clone()),
            Locator::Selector(s) => Target::Selector(vec![Strategy::Css(s.clone())]),
        },
        nth: None,
        frame: None,
    }
}

/// An engine failure as the error (and status) OpenClaw's routes answer.
fn as_error(f: Failure) -> BrowserError {
    let m = f.message;
    match f.code {
        Code::NotFound => BrowserError::Missing(m),
        Code::Ambiguous | Code::NotEditable | Code::VerifyFailed => {
            BrowserError::invalid_code("ACT_INVALID_REQUEST", m)
        }
        Code::Covered | Code::Disabled => BrowserError::Conflict(m),
        Code::Detached => BrowserError::StaleRef(m),
        Code::Dialog => BrowserError::DialogOpen(m),
        Code::Timeout => BrowserError::Timeout(m),
        Code::Navigation | Code::Crashed => BrowserError::Cdp(m),
    }
}
