//! What an action points at, and finding it: a snapshot ref, or a layered
//! selector (strategies tried in order), strict unless `nth` picks one.

use serde_json::{Map, Value, json};

use super::request::bad;
use super::{Code, GROUP, Step, Stop, Tab, Verb, fail};
use crate::cdp::{Dom, page_call};
use crate::frames::{self, FrameSession, RemoteFrame};
use crate::inspect::exception_message;
use crate::{BrowserError, Result};

const QUERY: &str = include_str!("query.js");

/// One way of naming elements.
#[derive(Clone, Debug, PartialEq)]
pub enum Strategy {
    /// By accessible role and (optionally) name.
    Aria {
        /// The ARIA role.
        role: String,
        /// The accessible name.
        name: Option<String>,
        /// Match the name exactly (else case-insensitive substring).
        exact: bool,
    },
    /// By visible text.
    Text {
        /// The text.
        text: String,
        /// Match exactly (else case-insensitive substring).
        exact: bool,
    },
    /// By the text of a label (`<label>`, `aria-label`, `aria-labelledby`).
    Label {
        /// The label's text.
        text: String,
        /// Match exactly.
        exact: bool,
    },
    /// By `data-testid`.
    TestId(String),
    /// By CSS selector.
    Css(String),
    /// By XPath expression.
    Xpath(String),
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Strategy::Aria { role, name, .. } => match name {
                Some(name) => write!(f, "role {role} named \"{name}\""),
                None => write!(f, "role {role}"),
            },
            Strategy::Text { text, .. } => write!(f, "text \"{text}\""),
            Strategy::Label { text, .. } => write!(f, "label \"{text}\""),
            Strategy::TestId(id) => write!(f, "test id {id}"),
            Strategy::Css(s) => write!(f, "selector {s}"),
            Strategy::Xpath(x) => write!(f, "xpath {x}"),
        }
    }
}

/// A ref or a selector.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// A ref from `/snapshot` of the tab.
    Ref(String),
    /// Strategies tried in order.
    Selector(Vec<Strategy>),
}

/// A target with its options.
#[derive(Clone, Debug, PartialEq)]
pub struct Aim {
    /// What to find.
    pub target: Target,
    /// Which of several matches (0-based).
    pub nth: Option<usize>,
    /// The frame a selector is scoped to: an iframe's ref, or a substring
    /// of the frame's URL.
    pub frame: Option<String>,
}

impl std::fmt::Display for Aim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.target {
            Target::Ref(r) => write!(f, "ref {r}")?,
            Target::Selector(list) => {
                let names: Vec<String> = list.iter().map(ToString::to_string).collect();
                write!(f, "{}", names.join(" or "))?;
            }
        }
        if let Some(n) = self.nth {
            write!(f, " (match {n})")?;
        }
        Ok(())
    }
}

fn text_field(o: &Map<String, Value>, key: &str, kind: &str) -> Result<String> {
    o.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| bad(format!("a {kind} selector needs {key}")))
}

fn exact(o: &Map<String, Value>) -> Result<bool> {
    match o.get("exact") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad("exact must be true or false")),
    }
}

fn strategy(v: &Value) -> Result<Strategy> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Ok(Strategy::Css(s.clone())),
        Value::Object(o) => {
            let kind = o.get("type").and_then(Value::as_str).unwrap_or_default();
            Ok(match kind {
                "aria" => Strategy::Aria {
                    role: text_field(o, "role", kind)?,
                    name: o.get("name").and_then(Value::as_str).map(str::to_string),
                    exact: exact(o)?,
                },
                "text" => Strategy::Text {
                    text: text_field(o, "text", kind)?,
                    exact: exact(o)?,
                },
                "label" => Strategy::Label {
                    text: text_field(o, "text", kind)?,
                    exact: exact(o)?,
                },
                "testid" => Strategy::TestId(text_field(o, "id", kind)?),
                "css" => Strategy::Css(text_field(o, "selector", kind)?),
                "xpath" => Strategy::Xpath(text_field(o, "expression", kind)?),
                other => {
                    return Err(bad(format!(
                        "selector type must be aria, text, label, testid, css or xpath, not {other:?}"
                    )));
                }
            })
        }
        _ => Err(bad(
            "a selector is a CSS string, a {type, ...} object, or a list of them",
        )),
    }
}

/// Reads `ref` or `selector` (with `nth` and `frame`) from a body.
pub fn parse_aim(body: &Map<String, Value>) -> Result<Aim> {
    let target = match (body.get("ref"), body.get("selector")) {
        (Some(Value::String(r)), None) if !r.trim().is_empty() => Target::Ref(r.trim().to_string()),
        (None, Some(Value::Array(list))) if !list.is_empty() => {
            Target::Selector(list.iter().map(strategy).collect::<Result<_>>()?)
        }
        (None, Some(one)) => Target::Selector(vec![strategy(one)?]),
        (Some(_), Some(_)) => return Err(bad("give ref or selector, not both")),
        _ => return Err(bad("a target needs ref (from /snapshot) or selector")),
    };
    // A whole number past any count of matches is just not there (a
    // failed action, not a bad request).
    let nth = match body.get("nth") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            super::request::whole(v)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                .or_else(|| {
                    v.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f > 0.0)
                        .map(|_| usize::MAX)
                })
                .ok_or_else(|| bad("nth must be a number from 0"))?,
        ),
    };
    let frame = match body.get("frame") {
        None | Some(Value::Null) => None,
        Some(Value::String(f)) if !f.is_empty() => Some(f.clone()),
        Some(_) => return Err(bad("frame must be an iframe's ref or part of its URL")),
    };
    if frame.is_some() && matches!(target, Target::Ref(_)) {
        return Err(bad(
            "frame scopes a selector; a ref already names its frame",
        ));
    }
    Ok(Aim { target, nth, frame })
}

/// An element found for an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// Its DOM backend node id.
    pub backend: i64,
}

/// Finds the one element `aim` names now. `not_found` when nothing
/// matches (the caller may retry), `ambiguous` when several do.
pub(crate) async fn resolve(tab: &Tab<'_>, aim: &Aim) -> Step<Found> {
    match &aim.target {
        Target::Ref(r) => resolve_ref(tab, r).await,
        Target::Selector(strategies) => {
            let root = scope_root(tab, aim.frame.as_deref()).await?;
            let mut ambiguous = None;
            for s in strategies {
                let matches = matches(tab, &root, s, STRICT_LIMIT).await?;
                let picked = match aim.nth {
                    Some(n) => matches.get(n).copied(),
                    None if matches.len() == 1 => Some(matches[0]),
                    None if matches.len() > 1 => {
                        // Strict, among what a person can see.
                        let shown = visible_only(tab, &matches).await?;
                        if shown.len() == 1 {
                            Some(shown[0])
                        } else {
                            ambiguous.get_or_insert((s, matches.len()));
                            None
                        }
                    }
                    None => None,
                };
                if let Some(backend) = picked {
                    return Ok(Found { backend });
                }
            }
            match ambiguous {
                Some((s, n)) => Err(fail(
                    Code::Ambiguous,
                    format!(
                        "{s} matches {n} elements; give nth (0 to {}) or a narrower selector",
                        n - 1
                    ),
                )),
                None => Err(fail(Code::NotFound, format!("no element matches {aim}"))),
            }
        }
    }
}

/// How many matches a strict resolution looks at.
const STRICT_LIMIT: usize = 50;

/// Up to `limit` elements `aim` names, from the first of its strategies
/// that matches any (no strictness; `nth` ignored).
pub(crate) async fn all(tab: &Tab<'_>, aim: &Aim, limit: usize) -> Step<Vec<i64>> {
    match &aim.target {
        Target::Ref(r) => Ok(vec![resolve_ref(tab, r).await?.backend]),
        Target::Selector(strategies) => {
            let root = scope_root(tab, aim.frame.as_deref()).await?;
            for s in strategies {
                let found = matches(tab, &root, s, limit).await?;
                if !found.is_empty() {
                    return Ok(found);
                }
            }
            Ok(Vec::new())
        }
    }
}

/// A ref's element; a node gone from the page is re-found by its role and
/// name when exactly one element has them, else the ref is `detached`.
async fn resolve_ref(tab: &Tab<'_>, reference: &str) -> Step<Found> {
    match tab
        .manager
        .element_in(tab.target_id, tab.page, tab.dom, reference)
        .await
    {
        Ok(backend) if alive(tab, backend).await => Ok(Found { backend }),
        Ok(_) | Err(BrowserError::StaleRef(_)) => refind(tab, reference).await,
        Err(e) => Err(e.into()),
    }
}

async fn alive(tab: &Tab<'_>, backend: i64) -> bool {
    tab.dom
        .call(
            "DOM.resolveNode",
            json!({ "backendNodeId": backend, "objectGroup": GROUP }),
        )
        .await
        .ok()
        .and_then(|r| {
            r.pointer("/object/objectId")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .is_some()
        && is_connected(tab, backend).await
}

async fn is_connected(tab: &Tab<'_>, backend: i64) -> bool {
    crate::element::call_on(
        tab.dom,
        backend,
        "function() { return this.isConnected; }",
        &[],
    )
    .await
    .ok()
    .and_then(|v| v.as_bool())
    .unwrap_or(false)
}

async fn refind(tab: &Tab<'_>, reference: &str) -> Step<Found> {
    let gone = || {
        fail(
            Code::Detached,
            format!(
                "ref {reference} is gone from the page and nothing equivalent replaced it. Re-snapshot and use a ref from the new snapshot."
            ),
        )
    };
    let document = crate::snapshot::document_id(tab.page).await?;
    // A ref no snapshot of this document gave says so, as `/act` does.
    let entry = match tab
        .manager
        .with_refs(tab.target_id, |t| t.lookup(reference, &document))
    {
        Ok(entry) => entry,
        Err(BrowserError::StaleRef(unknown)) => return Err(fail(Code::Detached, unknown)),
        Err(_) => return Err(gone()),
    };
    if entry.name.is_empty() {
        return Err(gone());
    }
    let root = scope_root(tab, None).await?;
    let same = aria(tab, &root, &entry.role, Some(&entry.name), true).await?;
    match same.as_slice() {
        [one] => {
            tracing::info!(reference, role = %entry.role, "re-found a re-rendered element by role and name");
            Ok(Found { backend: *one })
        }
        _ => Err(gone()),
    }
}

/// The document a selector searches: the page's, or a frame's.
pub(crate) struct Root {
    object: String,
    backend: i64,
}

async fn scope_root(tab: &Tab<'_>, frame: Option<&str>) -> Step<Root> {
    // In an out-of-process frame the engine entered, its document is the
    // root (`frame` named it).
    let frame = frame.filter(|_| matches!(tab.dom, Dom::Page(_)));
    let Some(frame) = frame else {
        let doc = tab
            .dom
            .call(
                "Runtime.evaluate",
                json!({ "expression": "document", "objectGroup": GROUP }),
            )
            .await?;
        let object = object_of(&doc)?;
        let backend = backend_of(tab, &object).await?;
        return Ok(Root { object, backend });
    };
    let owner = if crate::refs::parse_ref(frame).is_ok() {
        tab.manager.element(tab.target_id, tab.page, frame).await?
    } else {
        frame_owner_by_url(tab, frame).await?
    };
    let node = tab
        .dom
        .call(
            "DOM.describeNode",
            json!({ "backendNodeId": owner, "depth": 0, "pierce": false }),
        )
        .await?;
    let Some(document) = node
        .pointer("/node/contentDocument/backendNodeId")
        .and_then(Value::as_i64)
    else {
        return Err(fail(
            Code::NotFound,
            format!("frame {frame} shows no document (it is not an iframe)"),
        ));
    };
    let resolved = tab
        .dom
        .call(
            "DOM.resolveNode",
            json!({ "backendNodeId": document, "objectGroup": GROUP }),
        )
        .await?;
    let object = resolved
        .pointer("/object/objectId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| fail(Code::NotFound, format!("frame {frame} has no document")))?;
    Ok(Root {
        object,
        backend: document,
    })
}

/// The ids of the page's in-process frames whose URL contains `part`.
async fn local_frames(tab: &Tab<'_>, part: &str) -> Step<Vec<String>> {
    let tree = page_call(tab.page, "Page.getFrameTree", json!({})).await?;
    let mut matching = Vec::new();
    let mut stack: Vec<&Value> = tree
        .pointer("/frameTree/childFrames")
        .and_then(Value::as_array)
        .map(|v| v.iter().rev().collect())
        .unwrap_or_default();
    while let Some(node) = stack.pop() {
        let url = node
            .pointer("/frame/url")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if url.contains(part) {
            matching.push(
                node.pointer("/frame/id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            );
        }
        if let Some(children) = node.get("childFrames").and_then(Value::as_array) {
            stack.extend(children.iter().rev());
        }
    }
    Ok(matching)
}

async fn frame_owner_by_url(tab: &Tab<'_>, part: &str) -> Step<i64> {
    let matching = local_frames(tab, part).await?;
    let id = match matching.as_slice() {
        [] => return Err(no_such_frame(tab, part).await),
        [one] => one,
        many => {
            return Err(fail(
                Code::Ambiguous,
                format!(
                    "frame {part} matches {} frames; give more of the URL or the iframe's ref",
                    many.len()
                ),
            ));
        }
    };
    let owner = tab
        .dom
        .call("DOM.getFrameOwner", json!({ "frameId": id }))
        .await?;
    owner
        .get("backendNodeId")
        .and_then(Value::as_i64)
        .ok_or_else(|| fail(Code::NotFound, format!("frame {part} has no element")))
}

/// Enters the out-of-process frame (a frame from another site) the
/// action's targets are scoped to: `None` when they are in the page or in
/// an in-process frame, which the page session reaches itself. A frame
/// still loading is waited for until `deadline`.
pub(crate) async fn enter(
    tab: &Tab<'_>,
    verb: &Verb,
    deadline: tokio::time::Instant,
) -> Step<Option<std::sync::Arc<FrameSession>>> {
    let mut aims: Vec<&Aim> = verb.aim().into_iter().collect();
    match verb {
        Verb::Drag { to, .. } => aims.push(to),
        Verb::Fill(fields) => aims.extend(fields.iter().map(|f| &f.aim)),
        _ => {}
    }
    // A ref from a frame of another site names its frame itself.
    let mut of_refs = Vec::new();
    for aim in &aims {
        of_refs.push(match &aim.target {
            Target::Ref(r) => ref_frame(tab, r).await?,
            Target::Selector(_) => None,
        });
    }
    if let Some(remote) = of_refs.iter().flatten().next().cloned() {
        if of_refs
            .iter()
            .any(|f| f.as_ref().map(|f| &f.target_id) != Some(&remote.target_id))
        {
            return Err(Stop::Request(bad(
                "a ref is in a frame from another site: every target of the action must be a ref of that frame",
            )));
        }
        let cdp = tab.manager.connected()?;
        return Ok(Some(frames::enter(&cdp, tab.page, &remote).await?));
    }
    let Some(part) = aims.iter().find_map(|a| a.frame.as_deref()) else {
        return Ok(None);
    };
    let Some(remote) = remote_frame(tab, part, deadline).await? else {
        return Ok(None);
    };
    if aims.iter().any(|a| a.frame.as_deref() != Some(part)) {
        return Err(Stop::Request(bad(format!(
            "frame {part} is from another site: every target of the action must name that frame"
        ))));
    }
    let cdp = tab.manager.connected()?;
    Ok(Some(frames::enter(&cdp, tab.page, &remote).await?))
}

/// The out-of-process frame the element of snapshot ref `reference` is
/// in, if it is in one. A ref that is not known is left to the action to
/// report.
async fn ref_frame(tab: &Tab<'_>, reference: &str) -> Step<Option<RemoteFrame>> {
    let document = crate::snapshot::document_id(tab.page).await?;
    let Ok(entry) = tab
        .manager
        .with_refs(tab.target_id, |t| t.lookup(reference, &document))
    else {
        return Ok(None);
    };
    let Some(page_ref) = entry.page_ref else {
        return Ok(None);
    };
    if page_ref.frame == *tab.page.target_id().inner() {
        return Ok(None);
    }
    let cdp = tab.manager.connected()?;
    Ok(frames::remote_frames(&cdp, tab.target_id)
        .await?
        .into_iter()
        .find(|f| f.target_id == page_ref.frame))
}

/// The out-of-process frame `part` (an iframe's ref, or part of a URL)
/// names, if it names one.
async fn remote_frame(
    tab: &Tab<'_>,
    part: &str,
    deadline: tokio::time::Instant,
) -> Step<Option<RemoteFrame>> {
    let cdp = tab.manager.connected()?;
    if crate::refs::parse_ref(part).is_ok() {
        let owner = tab.manager.element(tab.target_id, tab.page, part).await?;
        let Some(id) = frames::remote_frame_of(tab.page, owner).await? else {
            return Ok(None);
        };
        let remote = frames::remote_frames(&cdp, tab.target_id).await?;
        return match remote.into_iter().find(|f| f.target_id == id) {
            Some(found) => Ok(Some(found)),
            None => Err(fail(
                Code::NotFound,
                format!("frame {part} has not loaded a document yet"),
            )),
        };
    }
    loop {
        let all = frames::remote_frames(&cdp, tab.target_id).await?;
        let local: Vec<String> = local_frames(tab, part)
            .await?
            .into_iter()
            .filter(|id| !all.iter().any(|f| &f.target_id == id))
            .collect();
        let remote: Vec<RemoteFrame> = all.into_iter().filter(|f| f.url.contains(part)).collect();
        match (remote.len(), local.len()) {
            (0, _) if !local.is_empty() => return Ok(None),
            (1, 0) => return Ok(remote.into_iter().next()),
            (0, 0) => {}
            (r, l) => {
                return Err(fail(
                    Code::Ambiguous,
                    format!(
                        "frame {part} matches {} frames; give more of the URL or the iframe's ref",
                        r + l
                    ),
                ));
            }
        }
        // Nothing yet: wait while an iframe that will show it is loading.
        if !frame_loading(tab, part).await || tokio::time::Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Whether an `<iframe>` of the page has a `src` containing `part`.
async fn frame_loading(tab: &Tab<'_>, part: &str) -> bool {
    page_call(
        tab.page,
        "Runtime.evaluate",
        json!({
            "expression": format!(
                "Array.from(document.querySelectorAll('iframe, frame')).some((f) => (f.src || '').includes({}))",
                json!(part)
            ),
            "returnByValue": true,
        }),
    )
    .await
    .ok()
    .and_then(|r| r.pointer("/result/value").and_then(Value::as_bool))
    .unwrap_or(false)
}

/// Why no frame matched `part`: none at all, or one still loading.
async fn no_such_frame(tab: &Tab<'_>, part: &str) -> Stop {
    if frame_loading(tab, part).await {
        fail(
            Code::NotFound,
            format!("frame {part} has not loaded a document yet"),
        )
    } else {
        fail(Code::NotFound, format!("no frame's URL contains {part}"))
    }
}

fn object_of(evaluated: &Value) -> Step<String> {
    if let Some(details) = evaluated.get("exceptionDetails") {
        return Err(fail(Code::Crashed, exception_message(details)));
    }
    evaluated
        .pointer("/result/objectId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| fail(Code::Crashed, "the page returned no document"))
}

async fn backend_of(tab: &Tab<'_>, object: &str) -> Step<i64> {
    let node = tab
        .dom
        .call("DOM.describeNode", json!({ "objectId": object }))
        .await?;
    node.pointer("/node/backendNodeId")
        .and_then(Value::as_i64)
        .ok_or_else(|| fail(Code::Detached, "the element has no DOM node"))
}

/// Every element `s` matches under `root`, in document order.
async fn matches(tab: &Tab<'_>, root: &Root, s: &Strategy, limit: usize) -> Step<Vec<i64>> {
    let query = match s {
        Strategy::Aria { role, name, exact } => {
            let mut found = aria(tab, root, role, name.as_deref(), *exact).await?;
            found.truncate(limit);
            return Ok(found);
        }
        Strategy::Text { text, exact } => json!({ "type": "text", "text": text, "exact": exact }),
        Strategy::Label { text, exact } => json!({ "type": "label", "text": text, "exact": exact }),
        Strategy::TestId(id) => json!({ "type": "testid", "id": id }),
        Strategy::Css(selector) => json!({ "type": "css", "selector": selector }),
        Strategy::Xpath(expression) => json!({ "type": "xpath", "expression": expression }),
    };
    let mut query = query;
    query["limit"] = json!(limit);
    let found = tab
        .dom
        .call(
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": QUERY,
                "objectId": root.object,
                "arguments": [{ "value": query }],
                "objectGroup": GROUP,
            }),
        )
        .await?;
    if let Some(details) = found.get("exceptionDetails") {
        return Err(Stop::Request(bad(format!(
            "invalid {s}: {}",
            exception_message(details)
        ))));
    }
    let result = object_of(&found)?;
    let elements = property(tab, &result, "elements").await?;
    let Some(elements) = elements else {
        return Ok(Vec::new());
    };
    let listed = tab
        .dom
        .call(
            "Runtime.getProperties",
            json!({ "objectId": elements, "ownProperties": true }),
        )
        .await?;
    let mut ids = Vec::new();
    for p in listed
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| {
            p.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| n.parse::<usize>().is_ok())
        })
    {
        if let Some(object) = p.pointer("/value/objectId").and_then(Value::as_str) {
            ids.push(backend_of(tab, object).await?);
        }
    }
    Ok(ids)
}

async fn property(tab: &Tab<'_>, object: &str, name: &str) -> Step<Option<String>> {
    let props = tab
        .dom
        .call(
            "Runtime.getProperties",
            json!({ "objectId": object, "ownProperties": true }),
        )
        .await?;
    Ok(props
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|p| p.pointer("/value/objectId").and_then(Value::as_str))
        .map(str::to_string))
}

/// Elements with `role` (and `name`) in Chromium's own accessibility tree
/// under `root`: the role and name a screen reader would announce, shadow
/// trees included.
async fn aria(
    tab: &Tab<'_>,
    root: &Root,
    role: &str,
    name: Option<&str>,
    exact: bool,
) -> Step<Vec<i64>> {
    let role = match role {
        "img" => "image",
        other => other,
    };
    let found = tab
        .dom
        .call(
            "Accessibility.queryAXTree",
            json!({ "backendNodeId": root.backend, "role": role }),
        )
        .await?;
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let wanted = name.map(norm);
    Ok(found
        .get("nodes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|n| n.get("ignored").and_then(Value::as_bool) != Some(true))
        .filter(|n| {
            let Some(wanted) = &wanted else { return true };
            let have = norm(
                n.pointer("/name/value")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            );
            if exact {
                &have == wanted
            } else {
                have.to_lowercase().contains(&wanted.to_lowercase())
            }
        })
        .filter_map(|n| n.get("backendDOMNodeId").and_then(Value::as_i64))
        .collect())
}

/// The elements of `ids` a person can see.
async fn visible_only(tab: &Tab<'_>, ids: &[i64]) -> Step<Vec<i64>> {
    let mut shown = Vec::new();
    for id in ids {
        let v = crate::element::call_on(tab.dom, *id, VISIBLE, &[]).await;
        if v.ok().and_then(|v| v.as_bool()) == Some(true) {
            shown.push(*id);
        }
    }
    Ok(shown)
}

pub(crate) const VISIBLE: &str = "function() { const r = this.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(this).visibility === 'visible'; }";

#[cfg(test)]
mod tests {
    use super::*;

    fn aim(body: Value) -> Result<Aim> {
        parse_aim(body.as_object().unwrap())
    }

    #[test]
    fn layered_selectors() {
        let a = aim(json!({ "selector": [
            { "type": "testid", "id": "save" },
            { "type": "aria", "role": "button", "name": "Save" },
            "#save"
        ], "nth": 1 }))
        .unwrap();
        assert_eq!(
            a.target,
            Target::Selector(vec![
                Strategy::TestId("save".into()),
                Strategy::Aria {
                    role: "button".into(),
                    name: Some("Save".into()),
                    exact: false
                },
                Strategy::Css("#save".into()),
            ])
        );
        assert_eq!(a.nth, Some(1));
        assert_eq!(
            aim(json!({ "ref": " e5 " })).unwrap().target,
            Target::Ref("e5".into())
        );
        // Issue #36: schemathesis sent an nth past u64 (1.6e21), which the
        // document allows; it was refused as a bad request.
        assert_eq!(
            aim(json!({ "selector": "#a", "nth": 1_614_387_212_188_033_744_896.0 }))
                .unwrap()
                .nth,
            Some(usize::MAX)
        );
        for bad in [
            json!({}),
            json!({ "ref": "e1", "selector": "#a" }),
            json!({ "selector": [] }),
            json!({ "selector": { "type": "magic" } }),
            json!({ "selector": { "type": "text" } }),
            json!({ "selector": "#a", "nth": -1 }),
            json!({ "ref": "e1", "frame": "x" }),
        ] {
            assert!(aim(bad.clone()).is_err(), "{bad}");
        }
    }
}
