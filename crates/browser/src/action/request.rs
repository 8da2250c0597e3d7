//! Parsing an action's JSON body, fully, before the browser is touched.

use std::time::Duration;

use serde_json::{Map, Value};

use super::target::{Aim, parse_aim};
use super::{LONG, MEDIUM, SHORT};
use crate::{BrowserError, Result};

/// The longest wait a caller may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(300);

/// A parsed action.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// What to do.
    pub verb: Verb,
    /// How long it may take in all.
    pub timeout: Duration,
}

/// A click's target and how to press.
#[derive(Clone, Debug, PartialEq)]
pub struct Click {
    /// The element.
    pub aim: Aim,
    /// Press twice.
    pub double: bool,
    /// `left`, `right` or `middle`.
    pub button: crate::input::Button,
    /// CDP modifier bits held during the click.
    pub modifiers: u32,
    /// Time between press and release.
    pub delay: Duration,
}

impl Click {
    /// A single left click with no modifiers.
    pub fn plain(aim: Aim) -> Click {
        Click {
            aim,
            double: false,
            button: crate::input::Button::Left,
            modifiers: 0,
            delay: Duration::ZERO,
        }
    }
}

/// One field of `fill`.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The element.
    pub aim: Aim,
    /// Text for inputs, a boolean for checkboxes, an option for selects.
    pub value: Value,
}

/// What `wait` waits for.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// An element reaching a state: `visible`, `hidden`, `attached`, `detached`.
    Element(Aim, String),
    /// Text appearing on the page.
    Text(String),
    /// Text gone from the page.
    TextGone(String),
    /// The URL matching a glob or `/regex/`.
    Url(String),
    /// A JavaScript expression turning truthy.
    Js(String),
    /// No network request for 500 ms.
    NetworkIdle,
}

/// Which way `scroll` moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Towards the top.
    Up,
    /// Towards the bottom.
    Down,
    /// Towards the start of a line.
    Left,
    /// Towards the end of a line.
    Right,
}

/// The actions.
#[derive(Clone, Debug, PartialEq)]
pub enum Verb {
    /// Load a URL.
    Navigate {
        /// Where.
        url: String,
    },
    /// Reload the page.
    Reload,
    /// Go back in history.
    Back,
    /// Go forward in history.
    Forward,
    /// Click an element.
    Click(Click),
    /// Move the pointer over an element.
    Hover(Aim),
    /// Drag an element onto another.
    Drag {
        /// What is dragged.
        from: Aim,
        /// Where it is dropped.
        to: Aim,
    },
    /// Type text into an element.
    Type {
        /// The element.
        aim: Aim,
        /// The text.
        text: String,
        /// Replace the current value (default) rather than add to it.
        clear: bool,
        /// Key by key from the start, rather than one insertion first.
        slowly: bool,
    },
    /// Set several fields, each verified.
    Fill(Vec<Field>),
    /// Choose options of a native select or an ARIA combobox.
    Select {
        /// The select or combobox.
        aim: Aim,
        /// Option values or labels.
        values: Vec<String>,
    },
    /// Check (`on`) or uncheck a checkbox, radio or switch.
    Check {
        /// The element.
        aim: Aim,
        /// The state wanted.
        on: bool,
    },
    /// Set a file input's files.
    Upload {
        /// The file input (or its label).
        aim: Aim,
        /// Files under `<home>/browser/uploads/`.
        paths: Vec<String>,
    },
    /// Scroll the page or an element.
    Scroll {
        /// The element to scroll, else the page.
        aim: Option<Aim>,
        /// Which way.
        direction: Direction,
        /// Pixels; `None`: one viewport (or the element's box).
        amount: Option<f64>,
    },
    /// Wait for a condition.
    Wait(Condition),
    /// An element's (or the page's) text.
    ExtractText(Option<Aim>),
    /// Rows of text and attributes, one per matching element.
    ExtractAll {
        /// The rows.
        aim: Aim,
        /// Attributes to read of each.
        attrs: Vec<String>,
    },
    /// The page's readable text.
    Content,
    /// A screenshot file.
    Screenshot {
        /// The whole page, not only the viewport.
        full_page: bool,
    },
    /// A PDF file of the page.
    Pdf,
    /// Run JavaScript in the page.
    Evaluate {
        /// An expression or a function body.
        script: String,
    },
}

impl Verb {
    /// The action's name in routes and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Verb::Navigate { .. } => "navigate",
            Verb::Reload => "reload",
            Verb::Back => "back",
            Verb::Forward => "forward",
            Verb::Click(_) => "click",
            Verb::Hover(_) => "hover",
            Verb::Drag { .. } => "drag",
            Verb::Type { .. } => "type",
            Verb::Fill(_) => "fill",
            Verb::Select { .. } => "select",
            Verb::Check { on: true, .. } => "check",
            Verb::Check { on: false, .. } => "uncheck",
            Verb::Upload { .. } => "upload",
            Verb::Scroll { .. } => "scroll",
            Verb::Wait(_) => "wait",
            Verb::ExtractText(_) => "extract_text",
            Verb::ExtractAll { .. } => "extract_all",
            Verb::Content => "content",
            Verb::Screenshot { .. } => "screenshot",
            Verb::Pdf => "pdf",
            Verb::Evaluate { .. } => "evaluate",
        }
    }

    /// The element the action aims at, if one.
    pub fn aim(&self) -> Option<&Aim> {
        match self {
            Verb::Click(c) => Some(&c.aim),
            Verb::Hover(aim)
            | Verb::Drag { from: aim, .. }
            | Verb::Type { aim, .. }
            | Verb::Select { aim, .. }
            | Verb::Check { aim, .. }
            | Verb::Upload { aim, .. }
            | Verb::ExtractAll { aim, .. } => Some(aim),
            Verb::Scroll { aim, .. } | Verb::ExtractText(aim) => aim.as_ref(),
            Verb::Wait(Condition::Element(aim, _)) => Some(aim),
            _ => None,
        }
    }

    /// Whether the action runs page JavaScript the caller wrote.
    pub fn evaluates(&self) -> bool {
        matches!(self, Verb::Evaluate { .. } | Verb::Wait(Condition::Js(_)))
    }

    /// Whether the action can change the page (and so its session's
    /// snapshot).
    pub fn changes_page(&self) -> bool {
        !matches!(
            self,
            Verb::Hover(_)
                | Verb::Wait(_)
                | Verb::ExtractText(_)
                | Verb::ExtractAll { .. }
                | Verb::Content
                | Verb::Screenshot { .. }
                | Verb::Pdf
        )
    }
}

impl Verb {
    /// Whether the action only reads the page (text, content, a picture,
    /// waiting for something): what an agent may still do while a person
    /// has the page.
    pub fn reads_only(&self) -> bool {
        matches!(
            self,
            Verb::Wait(_)
                | Verb::ExtractText(_)
                | Verb::ExtractAll { .. }
                | Verb::Content
                | Verb::Screenshot { .. }
                | Verb::Pdf
        )
    }
}

/// The action names, as routes spell them.
pub const ACTIONS: &[&str] = &[
    "navigate",
    "reload",
    "back",
    "forward",
    "click",
    "type",
    "fill",
    "select",
    "check",
    "uncheck",
    "hover",
    "drag",
    "upload",
    "scroll",
    "wait",
    "extract_text",
    "extract_all",
    "content",
    "screenshot",
    "pdf",
    "evaluate",
];

pub(crate) fn bad(message: impl Into<String>) -> BrowserError {
    BrowserError::invalid_code("ACTION_INVALID", message)
}

fn string(body: &Map<String, Value>, key: &str) -> Result<Option<String>> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(format!("{key} must be a string"))),
    }
}

fn required(body: &Map<String, Value>, key: &str) -> Result<String> {
    string(body, key)?.ok_or_else(|| bad(format!("{key} is required")))
}

fn boolean(body: &Map<String, Value>, key: &str, default: bool) -> Result<bool> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(format!("{key} must be true or false"))),
    }
}

fn number(body: &Map<String, Value>, key: &str) -> Result<Option<f64>> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|n| n.is_finite())
            .map(Some)
            .ok_or_else(|| bad(format!("{key} must be a number"))),
    }
}

fn strings(body: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(format!("{key} must be a list of strings")))
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(_) => Err(bad(format!("{key} must be a list of strings"))),
    }
}

/// A whole number from 0, however JSON writes it (`1200` or `1200.0`).
pub(crate) fn whole(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
            .map(|f| f as u64)
    })
}

/// `short`, `medium`, `long` or milliseconds.
pub fn parse_timeout(value: Option<&Value>, default: Duration) -> Result<Duration> {
    let timeout = match value {
        None | Some(Value::Null) => return Ok(default),
        Some(Value::String(tier)) => match tier.as_str() {
            "short" => SHORT,
            "medium" => MEDIUM,
            "long" => LONG,
            other => {
                return Err(bad(format!(
                    "timeout must be short, medium, long or milliseconds, not {other}"
                )));
            }
        },
        Some(v) => match whole(v) {
            Some(ms) if ms > 0 => Duration::from_millis(ms),
            _ => {
                return Err(bad(
                    "timeout must be short, medium, long or a positive number of milliseconds",
                ));
            }
        },
    };
    if timeout > MAX_TIMEOUT {
        return Err(bad(format!(
            "timeout is at most {} ms",
            MAX_TIMEOUT.as_millis()
        )));
    }
    Ok(timeout)
}

/// Parses the body of `POST /sessions/{id}/{action}`.
pub fn parse(action: &str, body: &Value) -> Result<Request> {
    let empty = Map::new();
    let body = match body {
        Value::Object(map) => map,
        Value::Null => &empty,
        _ => return Err(bad("the body must be a JSON object")),
    };
    let aim = || parse_aim(body);
    let verb = match action {
        "navigate" => Verb::Navigate {
            url: required(body, "url")?,
        },
        "reload" => Verb::Reload,
        "back" => Verb::Back,
        "forward" => Verb::Forward,
        "click" => Verb::Click(Click {
            aim: aim()?,
            double: boolean(body, "double", false)?,
            button: crate::input::Button::parse(string(body, "button")?.as_deref())?,
            modifiers: crate::input::modifiers(&strings(body, "modifiers")?.unwrap_or_default())?,
            delay: Duration::ZERO,
        }),
        "hover" => Verb::Hover(aim()?),
        "drag" => Verb::Drag {
            from: aim()?,
            to: match body.get("to") {
                Some(Value::Object(to)) => parse_aim(to)?,
                _ => return Err(bad("to must be {ref} or {selector}")),
            },
        },
        "type" => Verb::Type {
            aim: aim()?,
            text: required(body, "text")?,
            clear: boolean(body, "clear", true)?,
            slowly: boolean(body, "slowly", false)?,
        },
        "fill" => {
            let Some(Value::Array(fields)) = body.get("fields") else {
                return Err(bad("fields must be a list of {ref or selector, value}"));
            };
            if fields.is_empty() {
                return Err(bad("fields must not be empty"));
            }
            Verb::Fill(
                fields
                    .iter()
                    .map(|f| {
                        let f = f
                            .as_object()
                            .ok_or_else(|| bad("each field must be an object"))?;
                        let value = f
                            .get("value")
                            .cloned()
                            .ok_or_else(|| bad("each field needs a value"))?;
                        if !matches!(value, Value::String(_) | Value::Bool(_) | Value::Number(_)) {
                            return Err(bad(
                                "a field's value must be a string, a number or a boolean",
                            ));
                        }
                        Ok(Field {
                            aim: parse_aim(f)?,
                            value,
                        })
                    })
                    .collect::<Result<_>>()?,
            )
        }
        "select" => {
            let values = match (string(body, "value")?, strings(body, "values")?) {
                (Some(v), None) => vec![v],
                (None, Some(vs)) if !vs.is_empty() => vs,
                _ => return Err(bad("select needs value or a non-empty values")),
            };
            Verb::Select {
                aim: aim()?,
                values,
            }
        }
        "check" | "uncheck" => Verb::Check {
            aim: aim()?,
            on: action == "check",
        },
        "upload" => {
            let paths = strings(body, "paths")?.unwrap_or_default();
            if paths.is_empty() {
                return Err(bad("paths must list at least one file"));
            }
            Verb::Upload { aim: aim()?, paths }
        }
        "scroll" => {
            let amount = number(body, "amount")?;
            if amount.is_some_and(|a| a <= 0.0) {
                return Err(bad("amount must be a positive number of pixels"));
            }
            let direction = match string(body, "direction")?.as_deref().unwrap_or("down") {
                "down" => Direction::Down,
                "up" => Direction::Up,
                "right" => Direction::Right,
                "left" => Direction::Left,
                other => {
                    return Err(bad(format!(
                        "direction must be up, down, left or right, not {other}"
                    )));
                }
            };
            let has_target = body.contains_key("ref") || body.contains_key("selector");
            Verb::Scroll {
                aim: if has_target { Some(aim()?) } else { None },
                direction,
                amount,
            }
        }
        "wait" => Verb::Wait(parse_condition(body)?),
        "extract_text" => Verb::ExtractText(
            if body.contains_key("ref") || body.contains_key("selector") {
                Some(aim()?)
            } else {
                None
            },
        ),
        "extract_all" => Verb::ExtractAll {
            aim: aim()?,
            attrs: strings(body, "attrs")?.unwrap_or_default(),
        },
        "content" => Verb::Content,
        "screenshot" => Verb::Screenshot {
            full_page: boolean(body, "fullPage", false)?,
        },
        "pdf" => Verb::Pdf,
        "evaluate" => Verb::Evaluate {
            script: required(body, "script")?,
        },
        other => {
            return Err(BrowserError::Missing(format!(
                "no action {other} (the actions are {})",
                ACTIONS.join(", ")
            )));
        }
    };
    let default = match &verb {
        Verb::Navigate { .. } | Verb::Reload | Verb::Back | Verb::Forward => LONG,
        Verb::Wait(_) => MEDIUM,
        _ => SHORT,
    };
    Ok(Request {
        timeout: parse_timeout(body.get("timeout"), default)?,
        verb,
    })
}

fn parse_condition(body: &Map<String, Value>) -> Result<Condition> {
    let mut found = Vec::new();
    if body.contains_key("selector") || body.contains_key("ref") {
        let state = string(body, "state")?.unwrap_or_else(|| "visible".into());
        if !["visible", "hidden", "attached", "detached"].contains(&state.as_str()) {
            return Err(bad(format!(
                "state must be visible, hidden, attached or detached, not {state}"
            )));
        }
        found.push(Condition::Element(parse_aim(body)?, state));
    }
    if let Some(text) = string(body, "text")? {
        found.push(Condition::Text(text));
    }
    if let Some(text) = string(body, "textGone")? {
        found.push(Condition::TextGone(text));
    }
    if let Some(url) = string(body, "url")? {
        found.push(Condition::Url(url));
    }
    if let Some(js) = string(body, "js")? {
        found.push(Condition::Js(js));
    }
    if boolean(body, "networkIdle", false)? {
        found.push(Condition::NetworkIdle);
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(bad(
            "wait needs one of selector (with state), text, textGone, url, js or networkIdle",
        )),
        _ => Err(bad("wait takes one condition at a time")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timeouts_by_tier() {
        let click = parse("click", &json!({ "selector": "#a" })).unwrap();
        assert_eq!(click.timeout, SHORT);
        let nav = parse("navigate", &json!({ "url": "http://x/" })).unwrap();
        assert_eq!(nav.timeout, LONG);
        let wait = parse("wait", &json!({ "text": "hi", "timeout": "long" })).unwrap();
        assert_eq!(wait.timeout, LONG);
        let ms = parse("click", &json!({ "selector": "#a", "timeout": 1200 })).unwrap();
        assert_eq!(ms.timeout, Duration::from_millis(1200));
        for bad in [json!("soon"), json!(0), json!(-1), json!(10_000_000)] {
            assert!(parse("click", &json!({ "selector": "#a", "timeout": bad })).is_err());
        }
    }

    #[test]
    fn malformed_bodies() {
        for (action, body) in [
            ("click", json!({})),
            ("type", json!({ "selector": "#a" })),
            ("fill", json!({ "fields": [] })),
            ("fill", json!({ "fields": [{ "selector": "#a" }] })),
            ("select", json!({ "selector": "#a" })),
            ("upload", json!({ "selector": "#a", "paths": [] })),
            ("scroll", json!({ "direction": "sideways" })),
            ("wait", json!({})),
            ("wait", json!({ "text": "a", "url": "b" })),
            ("wait", json!({ "selector": "#a", "state": "shiny" })),
            ("drag", json!({ "selector": "#a" })),
            ("evaluate", json!({})),
        ] {
            assert!(parse(action, &body).is_err(), "{action} {body}");
        }
        assert!(matches!(
            parse("fly", &json!({})),
            Err(BrowserError::Missing(_))
        ));
    }

    #[test]
    fn scroll_directions() {
        let down = parse("scroll", &json!({ "amount": 300 })).unwrap();
        assert_eq!(
            down.verb,
            Verb::Scroll {
                aim: None,
                direction: Direction::Down,
                amount: Some(300.0)
            }
        );
        let up = parse("scroll", &json!({ "direction": "up", "selector": "#list" })).unwrap();
        assert!(matches!(
            up.verb,
            Verb::Scroll {
                aim: Some(_),
                direction: Direction::Up,
                amount: None
            }
        ));
    }
}
