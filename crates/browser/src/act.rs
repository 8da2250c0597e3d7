//! OpenClaw's `/act`: click, type, press, hover, scroll, drag, select, fill,
//! resize, wait, evaluate, close and batch, on snapshot refs or (where
//! OpenClaw allows) CSS selectors. Requests are fully validated before the
//! browser is touched; an action that opens a dialog reports
//! `blockedByDialog` instead of hanging.

use std::time::Duration;

use chromiumoxide::Page;
use serde_json::{Map, Value, json};

use crate::cdp::page_call;
use crate::element::{self, Locator};
use crate::events::TabEvents;
use crate::input::{self, Button};
use crate::inspect::exception_message;
use crate::manager::Manager;
use crate::wait::{self, LoadState, WaitSpec};
use crate::{BrowserError, Result};

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

fn bad(message: impl Into<String>) -> BrowserError {
    BrowserError::invalid_code("ACT_INVALID_REQUEST", message)
}

struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn str(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    }

    /// A string field that may be empty (text to type).
    fn text(&self, key: &str) -> Result<Option<String>> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(bad(format!("{key} must be a string"))),
        }
    }

    fn bool(&self, key: &str) -> Result<bool> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
            Some(_) => Err(bad(format!("{key} must be true or false"))),
        }
    }

    fn number(&self, key: &str) -> Result<Option<f64>> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .or_else(|| v.as_str()?.trim().parse().ok())
                .filter(|n: &f64| n.is_finite())
                .map(Some)
                .ok_or_else(|| bad(format!("{key} must be a number"))),
        }
    }

    fn millis(&self, key: &str) -> Result<Option<Duration>> {
        match self.number(key)? {
            Some(ms) if ms < 0.0 => Err(bad(format!("{key} must not be negative"))),
            Some(ms) => Ok(Some(Duration::from_millis(ms.min(600_000.0) as u64))),
            None => Ok(None),
        }
    }

    /// A ref (string or number).
    fn reference(&self, key: &str) -> Option<String> {
        match self.0.get(key)? {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    fn locator(&self, ref_key: &str, selector_key: &str) -> Option<Locator> {
        self.reference(ref_key).map(Locator::Ref).or_else(|| {
            self.str(selector_key)
                .map(|s| Locator::Selector(s.to_string()))
        })
    }

    fn required(&self, kind: &str) -> Result<Locator> {
        self.locator("ref", "selector")
            .ok_or_else(|| bad(format!("{kind} requires ref or selector")))
    }

    fn strings(&self, key: &str) -> Result<Option<Vec<String>>> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err(bad(format!("{key} must be a list of strings"))),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(_) => Err(bad(format!("{key} must be a list of strings"))),
        }
    }
}

/// Kinds that accept a CSS `selector` as well as a ref.
const SELECTOR_KINDS: [&str; 8] = [
    "batch",
    "click",
    "drag",
    "hover",
    "scrollIntoView",
    "select",
    "type",
    "wait",
];

/// Parses and validates an `/act` body (or one batch entry).
pub fn parse(body: &Map<String, Value>, nested: bool) -> Result<Action> {
    let f = Fields(body);
    let kind = match body.get("kind") {
        None | Some(Value::Null) => {
            return Err(BrowserError::invalid_code(
                "ACT_KIND_REQUIRED",
                "kind is required",
            ));
        }
        Some(Value::String(k)) if !k.trim().is_empty() => k.trim(),
        Some(_) => {
            return Err(BrowserError::invalid_code(
                "ACT_KIND_REQUIRED",
                "kind is required",
            ));
        }
    };
    let uses_selector = ["selector", "startSelector", "endSelector"]
        .iter()
        .any(|k| f.str(k).is_some());
    if uses_selector && !SELECTOR_KINDS.contains(&kind) {
        return Err(BrowserError::invalid_code(
            "ACT_SELECTOR_UNSUPPORTED",
            format!("selector is not supported for {kind}; use a ref from a snapshot"),
        ));
    }
    let kind = match kind {
        "click" => Kind::Click {
            at: f.required("click")?,
            double: f.bool("doubleClick")?,
            button: Button::parse(f.str("button"))?,
            modifiers: input::modifiers(&f.strings("modifiers")?.unwrap_or_default())?,
            delay: f.millis("delayMs")?.unwrap_or_default(),
        },
        "clickCoords" => Kind::ClickCoords {
            x: f.number("x")?
                .ok_or_else(|| bad("clickCoords requires x and y"))?,
            y: f.number("y")?
                .ok_or_else(|| bad("clickCoords requires x and y"))?,
            double: f.bool("doubleClick")?,
            button: Button::parse(f.str("button"))?,
        },
        "type" => Kind::Type {
            at: f.required("type")?,
            text: f.text("text")?.ok_or_else(|| bad("type requires text"))?,
            submit: f.bool("submit")?,
            slowly: f.bool("slowly")?,
        },
        "press" => {
            let key = f.str("key").ok_or_else(|| bad("press requires key"))?;
            input::check_key(key)?;
            Kind::Press {
                key: key.to_string(),
                delay: f.millis("delayMs")?.unwrap_or_default(),
            }
        }
        "hover" => Kind::Hover(f.required("hover")?),
        "scrollIntoView" => Kind::ScrollIntoView(f.required("scrollIntoView")?),
        "drag" => Kind::Drag(
            f.locator("startRef", "startSelector")
                .ok_or_else(|| bad("drag requires startRef or startSelector"))?,
            f.locator("endRef", "endSelector")
                .ok_or_else(|| bad("drag requires endRef or endSelector"))?,
        ),
        "select" => {
            let values = f
                .strings("values")?
                .or(f.strings("value")?)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| bad("select requires values"))?;
            Kind::Select(f.required("select")?, values)
        }
        "fill" => Kind::Fill(fields(body.get("fields"))?),
        "resize" => {
            let side = |key: &str| -> Result<u32> {
                f.number(key)?
                    .filter(|n| (1.0..=10_000.0).contains(n))
                    .map(|n| n as u32)
                    .ok_or_else(|| bad("resize requires width and height between 1 and 10000"))
            };
            Kind::Resize(side("width")?, side("height")?)
        }
        "wait" => {
            let load_state = match f.str("loadState") {
                None => None,
                Some(s) => Some(LoadState::parse(s).ok_or_else(|| {
                    bad(format!(
                        "loadState must be load, domcontentloaded or networkidle, not {s}"
                    ))
                })?),
            };
            let spec = WaitSpec {
                time: f.millis("timeMs")?,
                text: f.text("text")?.filter(|t| !t.is_empty()),
                text_gone: f.text("textGone")?.filter(|t| !t.is_empty()),
                selector: f.str("selector").map(str::to_string),
                url: f.str("url").map(str::to_string),
                load_state,
                func: f.str("fn").map(str::to_string),
            };
            if spec.is_empty() {
                return Err(bad(
                    "wait requires one of timeMs, text, textGone, selector, url, loadState or fn",
                ));
            }
            Kind::Wait(spec)
        }
        "evaluate" => Kind::Evaluate {
            func: f
                .str("fn")
                .or(f.str("function"))
                .ok_or_else(|| bad("evaluate requires fn"))?
                .to_string(),
            at: f.reference("ref").map(Locator::Ref),
        },
        "close" if nested => {
            return Err(bad("a batch cannot close its tab; send close on its own"));
        }
        "close" => Kind::Close,
        "batch" if nested => return Err(bad("a batch cannot contain another batch")),
        "batch" => {
            let items = body
                .get("actions")
                .and_then(Value::as_array)
                .filter(|a| !a.is_empty())
                .ok_or_else(|| bad("batch requires a non-empty actions list"))?;
            if items.len() > MAX_BATCH {
                return Err(bad(format!("a batch holds at most {MAX_BATCH} actions")));
            }
            let actions = items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let obj = item
                        .as_object()
                        .ok_or_else(|| bad(format!("actions[{i}] must be an object")))?;
                    parse(obj, true).map_err(|e| prefix(e, i))
                })
                .collect::<Result<Vec<_>>>()?;
            let stop_on_error = match body.get("stopOnError") {
                None | Some(Value::Null) => true,
                _ => f.bool("stopOnError")?,
            };
            Kind::Batch {
                actions,
                stop_on_error,
            }
        }
        other => return Err(bad(format!("unknown act kind {other}"))),
    };
    Ok(Action {
        kind,
        target: f.str("targetId").map(str::to_string),
        timeout: f.millis("timeoutMs")?,
    })
}

fn prefix(e: BrowserError, i: usize) -> BrowserError {
    match e {
        BrowserError::Invalid { message, code } => BrowserError::Invalid {
            message: format!("actions[{i}]: {message}"),
            code,
        },
        other => other,
    }
}

fn fields(v: Option<&Value>) -> Result<Vec<Field>> {
    let items = v
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| bad("fill requires a non-empty fields list"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let obj = item
                .as_object()
                .ok_or_else(|| bad(format!("fields[{i}] must be an object")))?;
            let f = Fields(obj);
            Ok(Field {
                at: f
                    .reference("ref")
                    .map(Locator::Ref)
                    .ok_or_else(|| bad(format!("fields[{i}] requires ref")))?,
                kind: f.str("type").unwrap_or("text").to_ascii_lowercase(),
                value: obj.get("value").cloned().unwrap_or(Value::Null),
            })
        })
        .collect()
}

impl Action {
    /// Whether running this needs `evaluateEnabled`.
    pub fn evaluates(&self) -> bool {
        match &self.kind {
            Kind::Evaluate { .. } => true,
            Kind::Wait(spec) => spec.func.is_some(),
            Kind::Batch { actions, .. } => actions.iter().any(Action::evaluates),
            _ => false,
        }
    }
}

/// What running an action produced.
enum Outcome {
    Done(Option<Value>),
    Blocked,
}

/// Runs `/act`: parses the body, resolves the tab, runs the action and
/// returns the response body.
pub async fn act(manager: &Manager, body: &Map<String, Value>) -> Result<Value> {
    let action = parse(body, false)?;
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
        return Ok(json!({ "ok": true, "targetId": target_id }));
    }
    let events = manager.events(&target_id, &page).await?;
    let run = Runner {
        manager,
        target_id: &target_id,
        page: &page,
        events: &events,
    };
    let mut response = json!({ "ok": true, "targetId": target_id });
    let blocked = match &action.kind {
        Kind::Batch {
            actions,
            stop_on_error,
        } => {
            let mut results = Vec::new();
            let mut blocked = false;
            for a in actions {
                match run.guarded(a).await {
                    Ok(Outcome::Done(result)) => {
                        let mut r = json!({ "ok": true });
                        if let Some(v) = result {
                            r["result"] = v;
                        }
                        results.push(r);
                    }
                    Ok(Outcome::Blocked) => {
                        results.push(json!({ "ok": false, "error": "blocked by a dialog" }));
                        blocked = true;
                        break;
                    }
                    Err(e) => {
                        results.push(json!({ "ok": false, "error": e.to_string() }));
                        if *stop_on_error {
                            break;
                        }
                    }
                }
            }
            response["results"] = json!(results);
            blocked
        }
        _ => match run.guarded(&action).await? {
            Outcome::Done(result) => {
                if let Some(v) = result {
                    response["result"] = v;
                }
                false
            }
            Outcome::Blocked => true,
        },
    };
    response["url"] = json!(manager.target_url(&target_id).await.unwrap_or_default());
    if blocked {
        response["blockedByDialog"] = json!(true);
        response["browserState"] = events.browser_state();
    }
    Ok(response)
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
        element::find(self.manager, self.target_id, self.page, at, timeout).await
    }

    async fn point(&self, at: &Locator, timeout: Duration) -> Result<(f64, f64)> {
        let backend = self.find(at, timeout).await?;
        element::point(self.page, backend, timeout).await
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
                let p = self.point(at, timeout).await?;
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
                let p = self.point(at, timeout).await?;
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
            let checked = element::call_on(
                self.page,
                backend,
                "function() { return !!this.checked; }",
                &[],
            )
            .await?;
            if checked.as_bool() != Some(want) {
                let p = element::point(self.page, backend, timeout).await?;
                input::click(self.page, p, Button::Left, false, 0, Duration::ZERO).await?;
            }
            let now = element::call_on(
                self.page,
                backend,
                "function() { return !!this.checked; }",
                &[],
            )
            .await?;
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

/// Runs `func` (a function, an expression, or a statement body) in the
/// page, passing the element when `backend` is given, and returns its
/// (awaited) value.
pub async fn evaluate(page: &Page, func: &str, backend: Option<i64>) -> Result<Value> {
    let as_value = format!(
        "async function(el) {{ const __v = ({func}\n); return typeof __v === 'function' ? await __v(el) : await __v; }}"
    );
    let as_body = format!("async function(el) {{ {func}\n }}");
    let declaration = if compiles(page, &format!("({as_value})")).await? {
        as_value
    } else if compiles(page, &format!("({as_body})")).await? {
        as_body
    } else {
        let details = compile(page, &format!("({as_value})")).await?;
        return Err(bad(format!("evaluate: {}", exception_message(&details))));
    };
    let result = match backend {
        Some(backend) => {
            let object = element::object_id(page, backend).await?;
            page_call(
                page,
                "Runtime.callFunctionOn",
                json!({
                    "functionDeclaration": declaration,
                    "objectId": object,
                    "arguments": [{ "objectId": object }],
                    "awaitPromise": true,
                    "returnByValue": true,
                    "userGesture": true,
                }),
            )
            .await?
        }
        None => {
            page_call(
                page,
                "Runtime.evaluate",
                json!({
                    "expression": format!("({declaration})()"),
                    "awaitPromise": true,
                    "returnByValue": true,
                    "userGesture": true,
                }),
            )
            .await?
        }
    };
    if let Some(details) = result.get("exceptionDetails") {
        return Err(bad(format!("evaluate: {}", exception_message(details))));
    }
    Ok(result
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Null))
}

/// `Runtime.compileScript`'s exception details (`Null` when it compiles).
async fn compile(page: &Page, source: &str) -> Result<Value> {
    let r = page_call(
        page,
        "Runtime.compileScript",
        json!({ "expression": source, "sourceURL": "", "persistScript": false }),
    )
    .await?;
    Ok(r.get("exceptionDetails").cloned().unwrap_or(Value::Null))
}

async fn compiles(page: &Page, source: &str) -> Result<bool> {
    Ok(compile(page, source).await?.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: Value) -> Result<Action> {
        parse(v.as_object().unwrap(), false)
    }

    fn code(r: Result<Action>) -> Option<&'static str> {
        r.err().and_then(|e| e.code())
    }

    #[test]
    fn validation_codes() {
        assert_eq!(code(p(json!({}))), Some("ACT_KIND_REQUIRED"));
        assert_eq!(
            code(p(json!({ "kind": "click" }))),
            Some("ACT_INVALID_REQUEST")
        );
        assert_eq!(
            code(p(json!({ "kind": "wait" }))),
            Some("ACT_INVALID_REQUEST")
        );
        assert_eq!(
            code(p(json!({ "kind": "fly" }))),
            Some("ACT_INVALID_REQUEST")
        );
        assert_eq!(
            code(p(json!({ "kind": "press", "key": "a", "selector": "#x" }))),
            Some("ACT_SELECTOR_UNSUPPORTED")
        );
        assert_eq!(
            code(p(
                json!({ "kind": "batch", "actions": [{ "kind": "batch", "actions": [] }] })
            )),
            Some("ACT_INVALID_REQUEST")
        );
        assert_eq!(
            code(p(
                json!({ "kind": "batch", "actions": [{ "kind": "close" }] })
            )),
            Some("ACT_INVALID_REQUEST")
        );
        assert_eq!(
            code(p(json!({ "kind": "press", "key": "Hyper+a" }))),
            Some("ACT_INVALID_REQUEST")
        );
    }

    #[test]
    fn openclaw_client_extras_are_accepted() {
        let a =
            p(json!({ "kind": "click", "ref": "e3", "doubleClick": false, "timeoutMs": 60000 }))
                .unwrap();
        assert_eq!(a.timeout, Some(Duration::from_secs(60)));
        let a =
            p(json!({ "kind": "type", "ref": 4, "text": "", "submit": false, "slowly": false }))
                .unwrap();
        assert!(matches!(a.kind, Kind::Type { at: Locator::Ref(ref r), .. } if r == "4"));
        let a = p(json!({ "kind": "wait", "fn": "() => true" })).unwrap();
        assert!(a.evaluates());
    }
}
