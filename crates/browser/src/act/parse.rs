//! Parsing and validating `/act` bodies, with OpenClaw's error codes.

use std::time::Duration;

use serde_json::{Map, Value};

use super::{Action, Field, Kind, MAX_BATCH};
use crate::element::Locator;
use crate::input::{self, Button};
use crate::wait::{LoadState, WaitSpec};
use crate::{BrowserError, Result};

pub(super) fn bad(message: impl Into<String>) -> BrowserError {
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

/// The kinds `/act` knows (OpenClaw's list).
const KINDS: [&str; 14] = [
    "click",
    "clickCoords",
    "type",
    "press",
    "hover",
    "scrollIntoView",
    "drag",
    "select",
    "fill",
    "resize",
    "wait",
    "evaluate",
    "close",
    "batch",
];

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
    // OpenClaw's server answers every kind it does not know, like a
    // missing one, with ACT_KIND_REQUIRED.
    let kind = match body.get("kind") {
        Some(Value::String(k)) if KINDS.contains(&k.as_str()) => k.as_str(),
        _ => return Err(kind_required()),
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
        _ => return Err(kind_required()),
    };
    Ok(Action {
        kind,
        target: f.str("targetId").map(str::to_string),
        timeout: f.millis("timeoutMs")?,
    })
}

fn kind_required() -> BrowserError {
    BrowserError::invalid_code("ACT_KIND_REQUIRED", "kind is required")
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        // Any kind OpenClaw does not know, as its server answers it (issue
        // #20: an unknown kind used to be ACT_INVALID_REQUEST).
        for kind in [
            json!("fly"),
            json!(""),
            json!(" click"),
            json!("CLICK"),
            json!(7),
            json!(null),
            json!(["click"]),
        ] {
            let err = p(json!({ "kind": kind, "selector": "#x" })).unwrap_err();
            assert_eq!(
                (err.code(), err.to_string().as_str()),
                (Some("ACT_KIND_REQUIRED"), "kind is required"),
                "{kind}"
            );
        }
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
