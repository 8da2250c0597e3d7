//! Form actions, each verified by reading the field back: type, fill,
//! select (native selects and ARIA comboboxes), check/uncheck, upload.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::checks::{Needs, element_from, prepare};
use super::request::Field;
use super::target::{Aim, Strategy, Target};
use super::{Attempt, Code, Step, Stop, Tab, fail};
use crate::element::call_on;
use crate::input;

/// How long after typing the value is read again, to catch a page that
/// rejects or reverts it.
const SETTLE: Duration = Duration::from_millis(60);
/// Between the keys of key-by-key typing.
const KEY_GAP: Duration = Duration::from_millis(5);

/// The element's text: an input's value, or an editable element's text.
const READ: &str = r#"function() {
  const el = this.localName === 'label' && this.control ? this.control : this;
  if ('value' in el && ['input', 'textarea', 'select'].includes(el.localName)) return el.value;
  return el.innerText.replace(/\n$/, '');
}"#;

/// Selects the field's whole text, so typing replaces it; or puts the caret
/// at its end (`end`), so typing adds to it. Inputs without a selection
/// API (email, number) are selected whole; it answers `"end"` when the
/// caret must then be moved to the end with the End key.
const PLACE_CARET: &str = r#"function(end) {
  const el = this;
  el.focus();
  if (el.localName === 'input' || el.localName === 'textarea') {
    if (el.selectionStart === null) {
      el.select();
      return end ? 'end' : null;
    }
    const n = el.value.length;
    el.setSelectionRange(end ? n : 0, n);
    return null;
  }
  if (typeof el.select === 'function' && !end) { el.select(); return null; }
  if (el.isContentEditable) {
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    if (end) range.collapse(false);
    const sel = el.ownerDocument.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  return null;
}"#;

/// Inputs whose value is picked, not typed (date, colour, range): set with
/// the native setter and announced, as a picker would.
const SET_PICKED: &str = r#"function(text) {
  const picked = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];
  if (this.localName !== 'input' || !picked.includes(this.type)) return false;
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  setter.call(this, text);
  this.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
}"#;

/// Letters and digits only, lower-cased: what a masked input keeps of the
/// typed text.
fn masked(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn same(shown: &str, wanted: &str) -> bool {
    shown == wanted || masked(shown) == masked(wanted)
}

async fn read(tab: &Tab<'_>, backend: i64) -> Step<String> {
    Ok(call_on(tab.dom, backend, READ, &[])
        .await?
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// Types `text` into the element (replacing its text when `clear`), reads
/// it back, and on a mismatch types it again key by key.
pub(crate) async fn type_text(
    tab: &Tab<'_>,
    aim: &Aim,
    text: &str,
    clear: bool,
    slowly: bool,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    let ready = prepare(tab, aim, Needs::Edit, deadline, attempt).await?;
    let backend = editable_of(tab, ready.backend).await?;
    let before = if clear {
        String::new()
    } else {
        read(tab, backend).await?
    };
    let wanted = format!("{before}{text}");
    if call_on(tab.dom, backend, SET_PICKED, &[json!(text)]).await? == json!(true) {
        let shown = read(tab, backend).await?;
        if !same(&shown, text) {
            return Err(fail(
                Code::VerifyFailed,
                format!("{aim}: the field does not take \"{text}\" (it shows \"{shown}\")"),
            ));
        }
        return Ok(Some(json!({ "value": shown })));
    }
    replace(tab, backend, text, clear, slowly).await?;
    let mut shown = read(tab, backend).await?;
    let mut how = if slowly { "keys" } else { "inserted" };
    if !same(&shown, &wanted) && !slowly {
        tracing::info!(%shown, "the field did not take the inserted text; typing key by key");
        attempt.retries += 1;
        replace(tab, backend, text, clear, true).await?;
        shown = read(tab, backend).await?;
        how = "keys";
    }
    if same(&shown, &wanted) {
        tokio::time::sleep(SETTLE).await;
        shown = read(tab, backend).await?;
    }
    if !same(&shown, &wanted) {
        return Err(fail(
            Code::VerifyFailed,
            format!("{aim}: typed \"{text}\" but the field shows \"{shown}\""),
        ));
    }
    Ok(Some(json!({ "value": shown, "typed": how })))
}

/// The element that takes the text: a label's control, else the element.
async fn editable_of(tab: &Tab<'_>, backend: i64) -> Step<i64> {
    Ok(element_from(
        tab,
        backend,
        "function() { return this.localName === 'label' && this.control ? this.control : this; }",
    )
    .await?
    .unwrap_or(backend))
}

/// Focuses the field, selects its text (or goes to its end), and enters
/// `text`: as one insertion, or key by key.
async fn replace(tab: &Tab<'_>, backend: i64, text: &str, clear: bool, keys: bool) -> Step<()> {
    tab.dom
        .call("DOM.focus", json!({ "backendNodeId": backend }))
        .await
        .map_err(|e| {
            fail(
                Code::NotEditable,
                format!("the element cannot take focus: {e}"),
            )
        })?;
    if call_on(tab.dom, backend, PLACE_CARET, &[json!(!clear)]).await? == json!("end") {
        input::press(tab.page, "End", Duration::ZERO).await?;
    }
    if clear && (keys || text.is_empty()) {
        input::press(tab.page, "Delete", Duration::ZERO).await?;
    }
    if text.is_empty() {
        return Ok(());
    }
    if keys {
        input::type_slowly(tab.page, text, KEY_GAP).await?;
    } else {
        input::insert_text(tab.page, text).await?;
    }
    Ok(())
}

/// What kind of field an element is, for `fill`.
const KIND: &str = r#"function() {
  const el = this.localName === 'label' && this.control ? this.control : this;
  if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) return 'check';
  if (el.localName === 'select') return 'select';
  const role = (el.getAttribute('role') || '').trim();
  if (['checkbox', 'radio', 'switch', 'menuitemcheckbox'].includes(role)) return 'check';
  if (role === 'combobox' && el.localName !== 'input') return 'select';
  return 'text';
}"#;

/// Sets each field in turn, each verified; stops at the first that fails.
pub(crate) async fn fill(
    tab: &Tab<'_>,
    fields: &[Field],
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    let mut done = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let label = |stop: Stop| match stop {
            Stop::Fail(f) => Stop::Fail(super::Failure {
                message: format!("field {i} ({}): {}", field.aim, f.message),
                ..f
            }),
            other => other,
        };
        let ready = prepare(
            tab,
            &field.aim,
            super::checks::Needs::Attached,
            deadline,
            attempt,
        )
        .await
        .map_err(label)?;
        let kind = call_on(tab.dom, ready.backend, KIND, &[]).await?;
        let text = match &field.value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let result = match kind.as_str() {
            Some("check") => check(tab, &field.aim, truthy(&field.value), deadline, attempt).await,
            Some("select") => select(tab, &field.aim, &[text], deadline, attempt).await,
            _ => type_text(tab, &field.aim, &text, true, false, deadline, attempt).await,
        };
        done.push(result.map_err(label)?.unwrap_or(Value::Null));
    }
    Ok(Some(json!({ "fields": done })))
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

/// A checkbox's, radio's or switch's state: true, false, or "mixed"; null
/// for anything else.
const CHECKED: &str = r#"function() {
  const el = this.localName === 'label' && this.control ? this.control : this;
  if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) return el.indeterminate ? 'mixed' : el.checked;
  const holder = el.closest('[role=checkbox], [role=radio], [role=switch], [role=menuitemcheckbox], [role=menuitemradio], [aria-checked]');
  if (!holder) return null;
  const state = holder.getAttribute('aria-checked');
  return state === 'mixed' ? 'mixed' : state === 'true';
}"#;

/// Checks or unchecks by clicking, when the state is not already the one
/// wanted; the state must then have flipped.
pub(crate) async fn check(
    tab: &Tab<'_>,
    aim: &Aim,
    on: bool,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    let ready = prepare(tab, aim, Needs::Attached, deadline, attempt).await?;
    let state = call_on(tab.dom, ready.backend, CHECKED, &[]).await?;
    if state.is_null() {
        return Err(fail(
            Code::NotEditable,
            format!("{aim} is not a checkbox, radio button or switch"),
        ));
    }
    if state == json!(on) {
        return Ok(Some(json!({ "checked": on, "changed": false })));
    }
    if !on && call_on(tab.dom, ready.backend, "function() { const el = this.localName === 'label' && this.control ? this.control : this; return el.type === 'radio' || el.getAttribute('role') === 'radio'; }", &[]).await? == json!(true) {
        return Err(fail(
            Code::VerifyFailed,
            format!("{aim} is a radio button: it is unchecked by checking another one"),
        ));
    }
    let click = super::request::Click::plain(aim.clone());
    super::pointer::click(tab, &click, deadline, attempt).await?;
    // The element the click reached may have been re-rendered: read afresh.
    let after = afresh(tab, aim, deadline, attempt).await?;
    let now = call_on(tab.dom, after.backend, CHECKED, &[]).await?;
    if now != json!(on) {
        return Err(fail(
            Code::VerifyFailed,
            format!("clicking {aim} did not change its state (it is {now})"),
        ));
    }
    Ok(Some(json!({ "checked": on, "changed": true })))
}

/// Chooses options of a native `<select>`, verified by its selected
/// options.
const SELECT_NATIVE: &str = r#"function(values) {
  const el = this.localName === 'label' && this.control ? this.control : this;
  if (el.localName !== 'select') return null;
  if (!el.multiple && values.length > 1) return { error: 'the <select> takes one value' };
  const options = Array.from(el.options);
  const norm = (s) => s.replace(/\s+/g, ' ').trim();
  const picked = [];
  for (const v of values) {
    const o = options.find((o) => o.value === v) || options.find((o) => norm(o.label) === norm(v) || norm(o.text) === norm(v));
    if (!o) return { error: `no option "${v}" (the options are: ${options.map((o) => norm(o.text) || o.value).join(', ')})` };
    if (o.disabled) return { error: `option "${v}" is disabled` };
    picked.push(o);
  }
  for (const o of options) o.selected = picked.includes(o);
  el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  const now = Array.from(el.selectedOptions, (o) => o.value);
  return { values: picked.map((o) => o.value), now };
}"#;

/// Chooses `values`: on a native select directly; on an ARIA combobox (or
/// a button opening a listbox) by opening it and clicking the option,
/// verified by the combobox showing it.
pub(crate) async fn select(
    tab: &Tab<'_>,
    aim: &Aim,
    values: &[String],
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    let ready = prepare(tab, aim, Needs::Choose, deadline, attempt).await?;
    let native = call_on(tab.dom, ready.backend, SELECT_NATIVE, &[json!(values)]).await?;
    if !native.is_null() {
        if let Some(error) = native.get("error").and_then(Value::as_str) {
            return Err(fail(Code::VerifyFailed, format!("{aim}: {error}")));
        }
        let (picked, now) = (native.get("values"), native.get("now"));
        if picked != now {
            return Err(fail(
                Code::VerifyFailed,
                format!(
                    "{aim}: the page changed the selection to {}",
                    now.cloned().unwrap_or_default()
                ),
            ));
        }
        return Ok(Some(json!({ "values": picked })));
    }
    let [value] = values else {
        return Err(fail(
            Code::VerifyFailed,
            format!("{aim} is not a native <select>: it takes one value at a time"),
        ));
    };
    combobox(tab, aim, value, deadline, attempt).await
}

/// Opens a custom combobox and clicks the option named `value`.
async fn combobox(
    tab: &Tab<'_>,
    aim: &Aim,
    value: &str,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    let open = super::request::Click::plain(aim.clone());
    super::pointer::click(tab, &open, deadline, attempt).await?;
    // The option, wherever the list is rendered (often a portal at the end
    // of the body): exact name first, then a case-insensitive match.
    let option = Aim {
        target: Target::Selector(vec![
            Strategy::Aria {
                role: "option".into(),
                name: Some(value.into()),
                exact: true,
            },
            Strategy::Aria {
                role: "option".into(),
                name: Some(value.into()),
                exact: false,
            },
        ]),
        nth: None,
        frame: None,
    };
    let choose = super::request::Click {
        aim: option.clone(),
        ..open.clone()
    };
    super::pointer::click(tab, &choose, deadline, attempt)
        .await
        .map_err(|stop| match stop {
            Stop::Fail(f) if f.code == Code::NotFound || f.code == Code::Timeout => fail(
                Code::VerifyFailed,
                format!(
                    "{aim} opened but no option \"{value}\" appeared ({})",
                    f.message
                ),
            ),
            other => other,
        })?;
    let shown = afresh(tab, aim, deadline, attempt).await?;
    let text = call_on(tab.dom,
        shown.backend,
        r#"function() {
  const input = this.localName === 'input' ? this : this.querySelector('input');
  return [this.innerText || '', input ? input.value : '', this.getAttribute('aria-label') || '', this.value || ''].join('\n');
}"#,
        &[],
    )
    .await?;
    let text = text.as_str().unwrap_or_default();
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    if !norm(text).contains(&norm(value)) {
        return Err(fail(
            Code::VerifyFailed,
            format!(
                "clicked option \"{value}\" but {aim} shows \"{}\"",
                text.trim()
            ),
        ));
    }
    Ok(Some(json!({ "values": [value] })))
}

/// The element found again after an action that may have re-rendered it,
/// with at least a second to find it.
async fn afresh(
    tab: &Tab<'_>,
    aim: &Aim,
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<super::checks::Ready> {
    let deadline = deadline.max(Instant::now() + Duration::from_secs(1));
    prepare(tab, aim, Needs::Attached, deadline, attempt).await
}

/// A file input's file names after they were set.
const FILE_NAMES: &str = r#"function() {
  const el = this.localName === 'label' && this.control ? this.control : this;
  if (el.localName !== 'input' || el.type !== 'file') return null;
  return Array.from(el.files || [], (f) => f.name);
}"#;

/// Sets a file input's files (a label stands for its input; the input may
/// be hidden), verified by the names the input then holds.
pub(crate) async fn upload(
    tab: &Tab<'_>,
    aim: &Aim,
    paths: &[String],
    deadline: Instant,
    attempt: &mut Attempt,
) -> Step<Option<Value>> {
    let root = crate::files::session_upload_root(tab.manager.home());
    let files: Vec<std::path::PathBuf> = paths
        .iter()
        .map(|p| crate::files::file_under(&root, p))
        .collect::<crate::Result<_>>()
        // A file that is not there is the request's fault, not the page's.
        .map_err(Stop::Request)?;
    let ready = prepare(tab, aim, Needs::Attached, deadline, attempt).await?;
    let input = editable_of(tab, ready.backend).await?;
    if call_on(tab.dom, input, FILE_NAMES, &[]).await?.is_null() {
        return Err(fail(
            Code::NotEditable,
            format!("{aim} is not a file input"),
        ));
    }
    let multiple = call_on(tab.dom, input, "function() { return this.multiple; }", &[]).await?;
    if files.len() > 1 && multiple != json!(true) {
        return Err(fail(
            Code::NotEditable,
            format!("{aim} takes one file, not {}", files.len()),
        ));
    }
    let list: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    tab.dom
        .call(
            "DOM.setFileInputFiles",
            json!({ "files": list, "backendNodeId": input }),
        )
        .await?;
    let names = call_on(tab.dom, input, FILE_NAMES, &[]).await?;
    let wanted: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    if names != json!(wanted) {
        return Err(fail(
            Code::VerifyFailed,
            format!("{aim} holds {names} after setting {wanted:?}"),
        ));
    }
    Ok(Some(json!({ "files": wanted })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_compare_by_letters_and_digits() {
        assert!(same("(555) 123-4567", "5551234567"));
        assert!(same("4242 4242 4242 4242", "4242424242424242"));
        assert!(!same("555123", "5551234567"));
        assert!(!same("Ada Lovelace", "Ada"));
        assert!(same("", ""));
    }
}
