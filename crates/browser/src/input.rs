//! Trusted input through CDP: mouse clicks and moves, key presses with
//! modifiers (`Control+Shift+T`), and text insertion.

use std::time::Duration;

use chromiumoxide::Page;
use serde_json::json;

use crate::cdp::page_call;
use crate::{BrowserError, Result};

/// Modifier bits as CDP counts them.
const ALT: u32 = 1;
const CONTROL: u32 = 2;
const META: u32 = 4;
const SHIFT: u32 = 8;

/// A mouse button.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Button {
    /// The primary button.
    Left,
    /// The context-menu button.
    Right,
    /// The wheel button.
    Middle,
}

impl Button {
    /// Parses `left` / `right` / `middle` (default left).
    pub fn parse(text: Option<&str>) -> Result<Button> {
        match text.map(str::to_ascii_lowercase).as_deref() {
            None | Some("left") => Ok(Button::Left),
            Some("right") => Ok(Button::Right),
            Some("middle") => Ok(Button::Middle),
            Some(other) => Err(invalid(format!(
                "button must be left, right or middle, not {other}"
            ))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Button::Left => "left",
            Button::Right => "right",
            Button::Middle => "middle",
        }
    }

    fn mask(self) -> u32 {
        match self {
            Button::Left => 1,
            Button::Right => 2,
            Button::Middle => 4,
        }
    }
}

fn invalid(message: String) -> BrowserError {
    BrowserError::invalid_code("ACT_INVALID_REQUEST", message)
}

/// The modifier bit for a name, with OpenClaw's aliases.
fn modifier(name: &str) -> Option<u32> {
    match name.to_ascii_lowercase().as_str() {
        "alt" | "option" => Some(ALT),
        "control" | "ctrl" => Some(CONTROL),
        "meta" | "cmd" | "command" | "super" => Some(META),
        "shift" => Some(SHIFT),
        "controlormeta" => Some(if cfg!(target_os = "macos") {
            META
        } else {
            CONTROL
        }),
        _ => None,
    }
}

/// Parses a list of modifier names into CDP's bit set.
pub fn modifiers(names: &[String]) -> Result<u32> {
    names.iter().try_fold(0, |bits, n| {
        modifier(n)
            .map(|b| bits | b)
            .ok_or_else(|| invalid(format!("unknown modifier {n}")))
    })
}

/// One key as `Input.dispatchKeyEvent` wants it.
#[derive(Clone, Debug, PartialEq)]
struct Key {
    key: String,
    code: String,
    key_code: u32,
    text: Option<String>,
}

fn named(key: &str, code: &str, key_code: u32, text: Option<&str>) -> Key {
    Key {
        key: key.into(),
        code: code.into(),
        key_code,
        text: text.map(str::to_string),
    }
}

/// The key for a name (`Enter`, `ArrowUp`, `F5`, `a`, `Esc`, ...).
fn key(name: &str) -> Option<Key> {
    let lower = name.to_ascii_lowercase();
    let k = match lower.as_str() {
        "enter" | "return" => named("Enter", "Enter", 13, Some("\r")),
        "tab" => named("Tab", "Tab", 9, None),
        "backspace" => named("Backspace", "Backspace", 8, None),
        "delete" | "del" => named("Delete", "Delete", 46, None),
        "escape" | "esc" => named("Escape", "Escape", 27, None),
        "space" => named(" ", "Space", 32, Some(" ")),
        "arrowup" | "up" => named("ArrowUp", "ArrowUp", 38, None),
        "arrowdown" | "down" => named("ArrowDown", "ArrowDown", 40, None),
        "arrowleft" | "left" => named("ArrowLeft", "ArrowLeft", 37, None),
        "arrowright" | "right" => named("ArrowRight", "ArrowRight", 39, None),
        "home" => named("Home", "Home", 36, None),
        "end" => named("End", "End", 35, None),
        "pageup" => named("PageUp", "PageUp", 33, None),
        "pagedown" => named("PageDown", "PageDown", 34, None),
        "insert" => named("Insert", "Insert", 45, None),
        "alt" | "option" => named("Alt", "AltLeft", 18, None),
        "control" | "ctrl" => named("Control", "ControlLeft", 17, None),
        "meta" | "cmd" | "command" => named("Meta", "MetaLeft", 91, None),
        "shift" => named("Shift", "ShiftLeft", 16, None),
        _ => {
            if let Some(n) = lower
                .strip_prefix('f')
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| (1..=24).contains(n))
            {
                return Some(named(&format!("F{n}"), &format!("F{n}"), 111 + n, None));
            }
            let mut chars = name.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            let (code, key_code) = if c.is_ascii_alphabetic() {
                let up = c.to_ascii_uppercase();
                (format!("Key{up}"), up as u32)
            } else if c.is_ascii_digit() {
                (format!("Digit{c}"), c as u32)
            } else {
                (String::new(), 0)
            };
            Key {
                key: c.to_string(),
                code,
                key_code,
                text: Some(c.to_string()),
            }
        }
    };
    Some(k)
}

/// Parses `Control+Shift+T` into the modifier bits and the main key.
fn chord(text: &str) -> Result<(u32, Key)> {
    let text = text.trim();
    if text.is_empty() {
        return Err(invalid("key is required".into()));
    }
    // A lone "+" or a chord ending in "+" ("Control++") presses the plus key.
    let (mods, last) = match text.strip_suffix("++") {
        Some(rest) => (rest, "+"),
        None if text == "+" => ("", "+"),
        None => text.rsplit_once('+').unwrap_or(("", text)),
    };
    let mut bits = 0;
    for m in mods.split('+').filter(|m| !m.is_empty()) {
        bits |= modifier(m).ok_or_else(|| invalid(format!("unknown modifier {m} in {text}")))?;
    }
    let k = key(last).ok_or_else(|| invalid(format!("unknown key {last}")))?;
    Ok((bits, k))
}

/// Checks a key name without pressing it.
pub fn check_key(text: &str) -> Result<()> {
    chord(text).map(drop)
}

async fn key_event(page: &Page, kind: &str, k: &Key, bits: u32, text: Option<&str>) -> Result<()> {
    let mut params = json!({
        "type": kind,
        "key": k.key,
        "code": k.code,
        "windowsVirtualKeyCode": k.key_code,
        "nativeVirtualKeyCode": k.key_code,
        "modifiers": bits,
    });
    if let Some(t) = text {
        params["text"] = json!(t);
        params["unmodifiedText"] = json!(t);
    }
    page_call(page, "Input.dispatchKeyEvent", params)
        .await
        .map(drop)
}

/// Presses and releases a key chord, holding `delay` between down and up.
pub async fn press(page: &Page, combo: &str, delay: Duration) -> Result<()> {
    let (bits, k) = chord(combo)?;
    let held: Vec<(u32, Key)> = [
        (ALT, "Alt"),
        (CONTROL, "Control"),
        (META, "Meta"),
        (SHIFT, "Shift"),
    ]
    .into_iter()
    .filter(|(b, _)| bits & b != 0)
    .filter_map(|(b, name)| Some((b, key(name)?)))
    .collect();
    let mut down = 0;
    for (b, m) in &held {
        down |= b;
        key_event(page, "rawKeyDown", m, down, None).await?;
    }
    // Text is only typed when no command modifier is held.
    let text = k
        .text
        .as_deref()
        .filter(|_| bits & (CONTROL | META | ALT) == 0);
    let text = text.map(|t| {
        if bits & SHIFT != 0 {
            t.to_uppercase()
        } else {
            t.to_string()
        }
    });
    let kind = if text.is_some() {
        "keyDown"
    } else {
        "rawKeyDown"
    };
    key_event(page, kind, &k, bits, text.as_deref()).await?;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    key_event(page, "keyUp", &k, bits, None).await?;
    for (b, m) in held.iter().rev() {
        down &= !b;
        key_event(page, "keyUp", m, down, None).await?;
    }
    Ok(())
}

/// Types text into the focused element as one insertion (fires `input`).
pub async fn insert_text(page: &Page, text: &str) -> Result<()> {
    page_call(page, "Input.insertText", json!({ "text": text }))
        .await
        .map(drop)
}

/// Types text one character at a time with key events, `delay` apart.
pub async fn type_slowly(page: &Page, text: &str, delay: Duration) -> Result<()> {
    for c in text.chars() {
        let s = c.to_string();
        let k = match c {
            '\n' | '\r' => key("Enter"),
            _ => key(&s),
        }
        .unwrap_or_else(|| named(&s, "", 0, Some(&s)));
        key_event(page, "keyDown", &k, 0, k.text.as_deref()).await?;
        key_event(page, "keyUp", &k, 0, None).await?;
        tokio::time::sleep(delay).await;
    }
    Ok(())
}

async fn mouse(
    page: &Page,
    kind: &str,
    (x, y): (f64, f64),
    button: Option<Button>,
    clicks: u32,
    bits: u32,
) -> Result<()> {
    let pressed = kind == "mousePressed";
    page_call(
        page,
        "Input.dispatchMouseEvent",
        json!({
            "type": kind,
            "x": x,
            "y": y,
            "button": button.map_or("none", Button::name),
            "buttons": if pressed { button.map_or(0, Button::mask) } else { 0 },
            "clickCount": clicks,
            "modifiers": bits,
        }),
    )
    .await
    .map(drop)
}

/// Moves the mouse to a point.
pub async fn move_to(page: &Page, at: (f64, f64)) -> Result<()> {
    mouse(page, "mouseMoved", at, None, 0, 0).await
}

/// Clicks (or double-clicks) at a point, holding `delay` between press and
/// release.
pub async fn click(
    page: &Page,
    at: (f64, f64),
    button: Button,
    double: bool,
    bits: u32,
    delay: Duration,
) -> Result<()> {
    move_to(page, at).await?;
    for clicks in 1..=if double { 2 } else { 1 } {
        mouse(page, "mousePressed", at, Some(button), clicks, bits).await?;
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        mouse(page, "mouseReleased", at, Some(button), clicks, bits).await?;
    }
    Ok(())
}

/// Drags with the left button from one point to another in small steps.
pub async fn drag(page: &Page, from: (f64, f64), to: (f64, f64)) -> Result<()> {
    const STEPS: u32 = 8;
    move_to(page, from).await?;
    mouse(page, "mousePressed", from, Some(Button::Left), 1, 0).await?;
    for i in 1..=STEPS {
        let t = f64::from(i) / f64::from(STEPS);
        let p = (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t);
        page_call(
            page,
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": p.0, "y": p.1, "button": "left", "buttons": 1 }),
        )
        .await?;
    }
    mouse(page, "mouseReleased", to, Some(Button::Left), 1, 0).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_and_aliases() {
        let (bits, k) = chord("Control+Shift+T").unwrap();
        assert_eq!(bits, CONTROL | SHIFT);
        assert_eq!(
            (k.key.as_str(), k.code.as_str(), k.key_code),
            ("T", "KeyT", 84)
        );
        assert_eq!(chord("Esc").unwrap().1.key, "Escape");
        assert_eq!(chord("Return").unwrap().1.text.as_deref(), Some("\r"));
        assert_eq!(chord("Ctrl+a").unwrap().0, CONTROL);
        assert_eq!(chord("Cmd+Del").unwrap(), (META, key("Delete").unwrap()));
        assert_eq!(chord("Control++").unwrap().1.key, "+");
        assert_eq!(chord("F12").unwrap().1.key_code, 123);
        for bad in ["", "Hyper+a", "NotAKey", "Control+"] {
            assert!(chord(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn modifier_lists() {
        let names = ["Alt", "Shift"].map(String::from);
        assert_eq!(modifiers(&names).unwrap(), ALT | SHIFT);
        assert!(modifiers(&["Hyper".to_string()]).is_err());
    }
}

/// What a person does in a live view of a page (a hand-off), as the view
/// sends it: points are CSS pixels of the page's viewport.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum PersonInput {
    /// The mouse moves, or a button goes down or up.
    #[serde(rename_all = "camelCase")]
    Mouse {
        /// `move`, `down` or `up`.
        action: MouseAction,
        /// Where, across.
        x: f64,
        /// Where, down.
        y: f64,
        /// `left` (the default), `right` or `middle`.
        #[serde(default)]
        button: Option<String>,
        /// 1 for a click, 2 for the second of a double click.
        #[serde(default)]
        clicks: Option<u32>,
        /// Alt 1, Control 2, Meta 4, Shift 8.
        #[serde(default)]
        modifiers: Option<u32>,
    },
    /// The wheel turns over a point.
    #[serde(rename_all = "camelCase")]
    Wheel {
        /// Where, across.
        x: f64,
        /// Where, down.
        y: f64,
        /// How far across, in CSS pixels.
        delta_x: f64,
        /// How far down.
        delta_y: f64,
    },
    /// A key goes down or up (its DOM `key`: `a`, `Enter`, `Backspace`).
    Key {
        /// `down` or `up`.
        action: KeyAction,
        /// The key.
        key: String,
        /// Alt 1, Control 2, Meta 4, Shift 8.
        #[serde(default)]
        modifiers: Option<u32>,
    },
    /// Text typed at once (a paste, a phone's keyboard).
    Text {
        /// The text.
        text: String,
    },
    /// A finger's tap: a click at a point.
    Tap {
        /// Where, across.
        x: f64,
        /// Where, down.
        y: f64,
    },
}

/// What the mouse does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MouseAction {
    /// It moves.
    Move,
    /// A button goes down.
    Down,
    /// A button comes up.
    Up,
}

/// What a key does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyAction {
    /// It goes down.
    Down,
    /// It comes up.
    Up,
}

/// The longest text a person's view may insert at once.
const MAX_PERSON_TEXT: usize = 10_000;

/// A point of the page, refused when it is not a number a viewport has.
fn point(x: f64, y: f64) -> Result<(f64, f64)> {
    let fine = |v: f64| v.is_finite() && (-1.0..=100_000.0).contains(&v);
    if fine(x) && fine(y) {
        Ok((x, y))
    } else {
        Err(invalid(format!("no point {x}, {y} in a page")))
    }
}

/// Does to `page` what a person did in its live view. A key this does not
/// know (a dead key, an IME's) is left alone.
pub async fn person(page: &Page, input: &PersonInput) -> Result<()> {
    match input {
        PersonInput::Mouse {
            action,
            x,
            y,
            button,
            clicks,
            modifiers,
        } => {
            let at = point(*x, *y)?;
            let bits = modifiers.unwrap_or(0) & (ALT | CONTROL | META | SHIFT);
            let button = Button::parse(button.as_deref())?;
            let clicks = clicks.unwrap_or(1).clamp(1, 3);
            match action {
                MouseAction::Move => mouse(page, "mouseMoved", at, None, 0, bits).await,
                MouseAction::Down => {
                    mouse(page, "mousePressed", at, Some(button), clicks, bits).await
                }
                MouseAction::Up => {
                    mouse(page, "mouseReleased", at, Some(button), clicks, bits).await
                }
            }
        }
        PersonInput::Wheel {
            x,
            y,
            delta_x,
            delta_y,
        } => {
            let (x, y) = point(*x, *y)?;
            let (dx, dy) = point(delta_x.abs(), delta_y.abs())
                .map(|_| (*delta_x, *delta_y))
                .map_err(|_| invalid("a wheel turn too large".into()))?;
            page_call(
                page,
                "Input.dispatchMouseEvent",
                json!({ "type": "mouseWheel", "x": x, "y": y, "deltaX": dx, "deltaY": dy }),
            )
            .await
            .map(drop)
        }
        PersonInput::Key {
            action,
            key: name,
            modifiers,
        } => {
            let Some(k) = key(name) else { return Ok(()) };
            let bits = modifiers.unwrap_or(0) & (ALT | CONTROL | META | SHIFT);
            match action {
                KeyAction::Up => key_event(page, "keyUp", &k, bits, None).await,
                KeyAction::Down => {
                    // A character is typed only without a command modifier.
                    let text = k
                        .text
                        .as_deref()
                        .filter(|_| bits & (CONTROL | META | ALT) == 0);
                    let kind = if text.is_some() {
                        "keyDown"
                    } else {
                        "rawKeyDown"
                    };
                    key_event(page, kind, &k, bits, text).await
                }
            }
        }
        PersonInput::Text { text } => {
            if text.len() > MAX_PERSON_TEXT {
                return Err(invalid(format!(
                    "at most {MAX_PERSON_TEXT} bytes of text at once"
                )));
            }
            insert_text(page, text).await
        }
        PersonInput::Tap { x, y } => {
            click(page, point(*x, *y)?, Button::Left, false, 0, Duration::ZERO).await
        }
    }
}

#[cfg(test)]
mod person_tests {
    use super::*;

    #[test]
    fn a_live_views_events_read_as_input() {
        let read = |text: &str| serde_json::from_str::<PersonInput>(text);
        assert_eq!(
            read(r#"{"type":"key","action":"down","key":"A","modifiers":0}"#).unwrap(),
            PersonInput::Key {
                action: KeyAction::Down,
                key: "A".into(),
                modifiers: Some(0)
            }
        );
        assert!(read(r#"{"type":"mouse","action":"down","x":1,"y":2,"button":"left","clicks":1,"modifiers":0}"#).is_ok());
        assert!(read(r#"{"type":"wheel","x":1,"y":2,"deltaX":0,"deltaY":120}"#).is_ok());
        assert!(read(r#"{"type":"text","text":"hi"}"#).is_ok());
        assert!(read(r#"{"type":"tap","x":1,"y":2}"#).is_ok());
        assert!(read(r#"{"type":"key","action":"down","key":"a","extra":1}"#).is_err());
    }
}
