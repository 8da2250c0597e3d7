//! Accessibility snapshots with element refs: `aria` (flat nodes, `axN`
//! refs, from Chromium's `Accessibility.getFullAXTree`, per frame, so
//! iframes are included), `ai` (an indented role/name text, `[ref=eN]`,
//! with a refs map, from the in-page `walker`) and `domSnapshot` (a DOM
//! walk).

use std::collections::{HashMap, HashSet};

use chromiumoxide::Page;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::cdp::page_call;
use crate::refs::{NodeKey, PageRef, RefEntry, RefTable};
use crate::{BrowserError, Result};

mod walker;

pub use walker::{WORLD, capture as capture_rendered, resolve};

/// Roles an agent acts on; these always carry a ref.
pub const INTERACTIVE_ROLES: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "treeitem",
    "PopUpButton",
    "textField",
    "ToggleButton",
];

/// Non-interactive roles that still get a ref (things worth pointing at).
const REF_ROLES: &[&str] = &[
    "heading",
    "img",
    "image",
    "Iframe",
    "cell",
    "row",
    "dialog",
    "alertdialog",
];

/// Roles that are pure structure: unnamed ones are hoisted away.
const STRUCTURAL_ROLES: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "group",
    "Section",
    "div",
    "LayoutTable",
    "LayoutTableRow",
    "LayoutTableCell",
    "paragraph",
    "list",
    "form",
    "main",
    "article",
    "region",
    "contentinfo",
    "banner",
    "navigation",
    "complementary",
    "MenuListPopup",
    "LabelText",
    "Pre",
    "blockquote",
    "figure",
    "Canvas",
    "Abbr",
    "Legend",
    "Ruby",
    "Mark",
    "Time",
    "DescriptionList",
    "Details",
    "emphasis",
    "strong",
    "code",
    "subscript",
    "superscript",
    "insertion",
    "deletion",
];

/// Options shared by the snapshot formats.
#[derive(Clone, Debug, Default)]
pub struct SnapshotOptions {
    /// `aria` node count limit (default 500, 1..=2000); `domSnapshot` too (default 800, max 5000).
    pub limit: Option<usize>,
    /// Cut the `ai` text at this many characters.
    pub max_chars: Option<usize>,
    /// Only interactive elements, as a flat list.
    pub interactive: bool,
    /// Drop unnamed structural nodes of every role.
    pub compact: bool,
    /// Deepest level rendered.
    pub depth: Option<usize>,
    /// Scope to the first element matching this CSS selector.
    pub selector: Option<String>,
    /// Append link targets (`- link "Docs" [ref=e4] -> https://…`).
    pub urls: bool,
}

/// One node of the `aria` format.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AriaNode {
    /// `axN`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Accessibility role.
    pub role: String,
    /// Accessible name.
    pub name: String,
    /// Current value, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Description, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The DOM node.
    #[serde(rename = "backendDOMNodeId", skip_serializing_if = "Option::is_none")]
    pub backend_dom_node_id: Option<i64>,
    /// Depth below the root.
    pub depth: usize,
}

/// The `ai` format's output.
#[derive(Clone, Debug, Serialize)]
pub struct AiSnapshot {
    /// The indented text.
    pub snapshot: String,
    /// Whether `maxChars` cut it.
    pub truncated: bool,
    /// `eN -> {role, name}` for every ref in the text.
    pub refs: Map<String, Value>,
    /// Line, character, ref and interactive-element counts.
    pub stats: Value,
}

/// Marker appended to a cut snapshot.
pub const TRUNCATION_MARKER: &str = "\n[... truncated; narrow with selector, interactive or depth]";

/// One accessibility node, simplified.
#[derive(Clone, Debug)]
struct AxNode {
    id: String,
    ignored: bool,
    role: String,
    name: String,
    value: Option<String>,
    description: Option<String>,
    backend: Option<i64>,
    page_ref: Option<PageRef>,
    props: Vec<(String, Value)>,
    children: Vec<String>,
}

fn text_of(v: Option<&Value>) -> Option<String> {
    let v = v?.get("value")?;
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn parse_nodes(tree: &Value, prefix: &str) -> Vec<AxNode> {
    tree.get("nodes")
        .and_then(Value::as_array)
        .map(|nodes| {
            nodes
                .iter()
                .map(|n| AxNode {
                    id: format!(
                        "{prefix}{}",
                        n.get("nodeId").and_then(Value::as_str).unwrap_or_default()
                    ),
                    ignored: n.get("ignored").and_then(Value::as_bool).unwrap_or(false),
                    role: text_of(n.get("role")).unwrap_or_default(),
                    name: text_of(n.get("name")).unwrap_or_default(),
                    value: text_of(n.get("value")).filter(|v| !v.is_empty()),
                    description: text_of(n.get("description")).filter(|v| !v.is_empty()),
                    backend: n.get("backendDOMNodeId").and_then(Value::as_i64),
                    page_ref: None,
                    props: n
                        .get("properties")
                        .and_then(Value::as_array)
                        .map(|ps| {
                            ps.iter()
                                .filter_map(|p| {
                                    Some((
                                        p.get("name")?.as_str()?.to_string(),
                                        p.pointer("/value/value")?.clone(),
                                    ))
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                    children: n
                        .get("childIds")
                        .and_then(Value::as_array)
                        .map(|c| {
                            c.iter()
                                .filter_map(Value::as_str)
                                .map(|c| format!("{prefix}{c}"))
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The whole page's accessibility forest with iframes grafted under their
/// owner elements, walked depth-first.
struct Forest {
    nodes: HashMap<String, AxNode>,
    root: Option<String>,
    /// Extra children: frame roots under their `<iframe>` owner's node id.
    grafts: HashMap<String, Vec<String>>,
}

fn root_of(nodes: &[AxNode]) -> Option<String> {
    let children: HashSet<&str> = nodes
        .iter()
        .flat_map(|n| n.children.iter().map(String::as_str))
        .collect();
    nodes
        .iter()
        .find(|n| !children.contains(n.id.as_str()))
        .map(|n| n.id.clone())
}

impl Forest {
    fn children(&self, id: &str) -> impl Iterator<Item = &String> {
        let own = self
            .nodes
            .get(id)
            .map(|n| n.children.as_slice())
            .unwrap_or_default();
        own.iter()
            .chain(self.grafts.get(id).map(Vec::as_slice).unwrap_or_default())
    }
}

/// The main frame's loader id: the document identity refs are bound to.
pub async fn document_id(page: &Page) -> Result<String> {
    let tree = page_call(page, "Page.getFrameTree", json!({})).await?;
    Ok(tree
        .pointer("/frameTree/frame/loaderId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string())
}

fn child_frames(tree: &Value, out: &mut Vec<String>) {
    for child in tree
        .get("childFrames")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(id) = child.pointer("/frame/id").and_then(Value::as_str) {
            out.push(id.to_string());
        }
        child_frames(child, out);
    }
}

/// Reads one child frame's accessibility tree and the DOM node owning it;
/// `None` for frames this session cannot read (out-of-process iframes).
async fn frame_tree(page: &Page, frame: &str) -> Option<(Value, i64)> {
    let (sub, owner) = tokio::join!(
        page_call(
            page,
            "Accessibility.getFullAXTree",
            json!({ "frameId": frame })
        ),
        page_call(page, "DOM.getFrameOwner", json!({ "frameId": frame })),
    );
    Some((sub.ok()?, owner.ok()?.get("backendNodeId")?.as_i64()?))
}

/// The main frame's tree with same-process child frames grafted under
/// their `<iframe>` nodes.
async fn forest(page: &Page, frame_tree_json: &Value, main: &Value) -> Forest {
    let main_nodes = parse_nodes(main, "");
    let root = root_of(&main_nodes);
    let mut nodes: HashMap<String, AxNode> =
        main_nodes.into_iter().map(|n| (n.id.clone(), n)).collect();
    let mut grafts: HashMap<String, Vec<String>> = HashMap::new();
    let mut frames = Vec::new();
    if let Some(t) = frame_tree_json.get("frameTree") {
        child_frames(t, &mut frames);
    }
    let subs = futures::future::join_all(frames.iter().map(|f| frame_tree(page, f))).await;
    for (i, (sub, owner_backend)) in subs
        .into_iter()
        .enumerate()
        .filter_map(|(i, s)| Some((i, s?)))
    {
        let sub_nodes = parse_nodes(&sub, &format!("f{i}:"));
        let Some(sub_root) = root_of(&sub_nodes) else {
            continue;
        };
        let Some(owner_id) = nodes
            .values()
            .find(|n| n.backend == Some(owner_backend))
            .map(|n| n.id.clone())
        else {
            continue;
        };
        grafts.entry(owner_id).or_default().push(sub_root);
        nodes.extend(sub_nodes.into_iter().map(|n| (n.id.clone(), n)));
    }
    Forest {
        nodes,
        root,
        grafts,
    }
}

/// The backend node ids inside the first element matching `selector`.
async fn scope(page: &Page, selector: &str) -> Result<HashSet<i64>> {
    let found = page_call(
        page,
        "Runtime.evaluate",
        json!({ "expression": format!("document.querySelector({})", serde_json::to_string(selector).unwrap_or_default()) }),
    )
    .await?;
    if found.get("exceptionDetails").is_some() {
        return Err(BrowserError::invalid(format!(
            "invalid selector: {selector}"
        )));
    }
    let Some(object_id) = found.pointer("/result/objectId").and_then(Value::as_str) else {
        return Err(BrowserError::Missing(format!(
            "no element matches selector {selector}"
        )));
    };
    let described = page_call(
        page,
        "DOM.describeNode",
        json!({ "objectId": object_id, "depth": -1, "pierce": true }),
    )
    .await?;
    let mut ids = HashSet::new();
    fn collect(node: &Value, ids: &mut HashSet<i64>) {
        if let Some(id) = node.get("backendNodeId").and_then(Value::as_i64) {
            ids.insert(id);
        }
        for key in ["children", "shadowRoots", "pseudoElements"] {
            for c in node
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                collect(c, ids);
            }
        }
        if let Some(doc) = node.get("contentDocument") {
            collect(doc, ids);
        }
    }
    if let Some(node) = described.get("node") {
        collect(node, &mut ids);
    }
    Ok(ids)
}

fn skipped(n: &AxNode) -> bool {
    n.ignored || n.role == "InlineTextBox" || n.role == "LineBreak"
}

fn key_of(n: &AxNode) -> NodeKey {
    match (n.backend, &n.page_ref) {
        (Some(b), _) => NodeKey::Dom(b),
        (None, Some(p)) => NodeKey::Page(p.clone()),
        (None, None) => NodeKey::Ax(n.id.clone()),
    }
}

fn entry_of(n: &AxNode) -> RefEntry {
    RefEntry {
        backend_node_id: n.backend,
        page_ref: n.page_ref.clone(),
        role: n.role.clone(),
        name: n.name.clone(),
    }
}

/// What a snapshot reads from the page before it assigns refs.
pub struct Capture {
    /// The document refs are bound to.
    pub document: String,
    /// The main frame's URL when the snapshot was taken.
    pub url: String,
    forest: Forest,
    in_scope: Option<HashSet<i64>>,
}

/// Reads Chromium's accessibility forest (and the selector's scope) for
/// the `aria` format.
pub async fn capture(page: &Page, selector: Option<&str>) -> Result<Capture> {
    let (tree, main) = tokio::try_join!(
        page_call(page, "Page.getFrameTree", json!({})),
        page_call(page, "Accessibility.getFullAXTree", json!({})),
    )?;
    let forest = forest(page, &tree, &main).await;
    let in_scope = match selector.filter(|s| !s.trim().is_empty()) {
        Some(sel) => Some(scope(page, sel).await?),
        None => None,
    };
    Ok(Capture::new(&tree, forest, in_scope))
}

impl Capture {
    /// A capture of the document `Page.getFrameTree` (`tree`) names.
    fn new(tree: &Value, forest: Forest, in_scope: Option<HashSet<i64>>) -> Capture {
        let frame = tree.pointer("/frameTree/frame");
        let text = |key: &str| {
            frame
                .and_then(|f| f.get(key))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Capture {
            document: text("loaderId"),
            url: text("url") + &text("urlFragment"),
            forest,
            in_scope,
        }
    }

    /// `aria`: flat nodes in depth-first order with `axN` refs.
    pub fn aria(&self, table: &mut RefTable, opts: &SnapshotOptions) -> Vec<AriaNode> {
        let (forest, in_scope) = (&self.forest, &self.in_scope);
        let limit = opts.limit.unwrap_or(500).clamp(1, 2000);
        let mut out = Vec::new();
        {
            table.begin(&self.document);
            let mut stack: Vec<(String, usize)> =
                forest.root.iter().map(|r| (r.clone(), 0)).collect();
            while let Some((id, depth)) = stack.pop() {
                if out.len() >= limit {
                    break;
                }
                let Some(n) = forest.nodes.get(&id) else {
                    continue;
                };
                let shown = !skipped(n)
                    && in_scope
                        .as_ref()
                        .is_none_or(|s| n.backend.is_some_and(|b| s.contains(&b)));
                let next_depth = if shown { depth + 1 } else { depth };
                if shown && opts.depth.is_none_or(|d| depth <= d) {
                    let (number, _) = table.number(key_of(n), entry_of(n));
                    out.push(AriaNode {
                        reference: format!("ax{number}"),
                        role: if n.role.is_empty() {
                            "unknown".into()
                        } else {
                            n.role.clone()
                        },
                        name: n.name.clone(),
                        value: n.value.clone(),
                        description: n.description.clone(),
                        backend_dom_node_id: n.backend,
                        depth,
                    });
                }
                let children: Vec<&String> = forest.children(&id).collect();
                for c in children.into_iter().rev() {
                    stack.push((c.clone(), next_depth));
                }
            }
        }
        out
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A string-valued AX property.
fn prop_text(n: &AxNode, name: &str) -> Option<String> {
    n.props
        .iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

fn states(n: &AxNode) -> String {
    let mut s = String::new();
    for (name, value) in &n.props {
        match (name.as_str(), value) {
            ("checked" | "pressed", Value::String(v)) if v == "true" || v == "mixed" => s.push_str(
                &format!(" [{name}{}]", if v == "mixed" { "=mixed" } else { "" }),
            ),
            ("checked" | "pressed", Value::String(v)) if v == "false" => {}
            (
                "checked" | "pressed" | "disabled" | "expanded" | "selected" | "focused"
                | "required",
                Value::Bool(true),
            ) => s.push_str(&format!(" [{name}]")),
            ("level", Value::Number(l)) => s.push_str(&format!(" [level={l}]")),
            _ => {}
        }
    }
    s
}

impl Capture {
    /// `ai`: an indented role/name text with `[ref=eN]` on interactive elements.
    pub fn ai(&self, table: &mut RefTable, opts: &SnapshotOptions) -> AiSnapshot {
        let (forest, in_scope) = (&self.forest, &self.in_scope);
        let mut lines: Vec<String> = Vec::new();
        let mut ref_map = Map::new();
        let mut interactive_count = 0usize;
        // Label text repeats the name of the control it labels: say it once.
        let control_names: HashSet<&str> = forest
            .nodes
            .values()
            .filter(|n| INTERACTIVE_ROLES.contains(&n.role.as_str()) && !n.ignored)
            .map(|n| n.name.trim())
            .filter(|n| !n.is_empty())
            .collect();
        {
            let repeat = table.begin(&self.document);
            // (node id, depth, parent's name): text equal to the parent's name is noise.
            let mut stack: Vec<(String, usize, String)> = forest
                .root
                .iter()
                .map(|r| (r.clone(), 0, String::new()))
                .collect();
            while let Some((id, depth, parent_name)) = stack.pop() {
                let Some(n) = forest.nodes.get(&id) else {
                    continue;
                };
                let interactive = INTERACTIVE_ROLES.contains(&n.role.as_str());
                let structural = STRUCTURAL_ROLES.contains(&n.role.as_str()) || n.role.is_empty();
                let in_range = in_scope
                    .as_ref()
                    .is_none_or(|s| n.backend.is_some_and(|b| s.contains(&b)));
                let text = n.role == "StaticText";
                let shown = !skipped(n)
                    && n.role != "RootWebArea"
                    && in_range
                    && if opts.interactive {
                        interactive
                    } else if text {
                        !n.name.trim().is_empty()
                            && n.name.trim() != parent_name.trim()
                            && !control_names.contains(n.name.trim())
                    } else {
                        !(structural
                            && n.name.trim().is_empty()
                            && (opts.compact || n.role != "Iframe"))
                            && !(opts.compact && structural && !interactive)
                    };
                let depth_ok = opts.depth.is_none_or(|d| depth <= d);
                if shown && depth_ok {
                    let indent = if opts.interactive {
                        String::new()
                    } else {
                        "  ".repeat(depth)
                    };
                    let line = if text {
                        format!("{indent}- text: {}", n.name.trim())
                    } else {
                        let mut line = format!("{indent}- {}", n.role);
                        if !n.name.trim().is_empty() {
                            line.push(' ');
                            line.push_str(&quote(n.name.trim()));
                        }
                        line.push_str(&states(n));
                        if interactive || REF_ROLES.contains(&n.role.as_str()) {
                            let (number, fresh) = table.number(key_of(n), entry_of(n));
                            line.push_str(&format!(" [ref=e{number}]"));
                            if repeat && fresh {
                                line.push_str(" [new]");
                            }
                            ref_map.insert(
                                format!("e{number}"),
                                json!({ "role": n.role, "name": n.name.trim() }),
                            );
                        }
                        if interactive {
                            interactive_count += 1;
                        }
                        if let Some(v) =
                            n.value.as_deref().filter(|v| !v.is_empty() && *v != n.name)
                        {
                            line.push_str(": ");
                            line.push_str(v);
                        } else if opts.urls
                            && n.role == "link"
                            && let Some(url) = prop_text(n, "url")
                        {
                            line.push_str(" -> ");
                            line.push_str(&url);
                        }
                        line
                    };
                    lines.push(line);
                }
                let next_depth = if shown && !opts.interactive {
                    depth + 1
                } else {
                    depth
                };
                let name = if shown {
                    n.name.clone()
                } else {
                    parent_name.clone()
                };
                let children: Vec<&String> = forest.children(&id).collect();
                for c in children.into_iter().rev() {
                    stack.push((c.clone(), next_depth, name.clone()));
                }
            }
        }
        let mut snapshot = lines.join("\n");
        let mut truncated = false;
        if let Some(max) = opts.max_chars
            && snapshot.chars().count() > max
        {
            let cut: String = snapshot.chars().take(max).collect();
            let at_line = cut.rfind('\n').filter(|i| *i > 0).unwrap_or(cut.len());
            snapshot = format!("{}{TRUNCATION_MARKER}", &cut[..at_line]);
            truncated = true;
            ref_map.retain(|r, _| snapshot.contains(&format!("[ref={r}]")));
        }
        let stats = json!({
            "lines": snapshot.lines().count(),
            "chars": snapshot.chars().count(),
            "refs": ref_map.len(),
            "interactive": interactive_count,
        });
        AiSnapshot {
            snapshot,
            truncated,
            refs: ref_map,
            stats,
        }
    }
}

/// The JS for `domSnapshot`: a bounded DOM walk.
const DOM_WALK: &str = r#"(limit, selector) => {
  const root = selector ? document.querySelector(selector) : document.documentElement;
  if (!root) throw new Error('no element matches selector ' + selector);
  const out = [];
  const walk = (el, parentRef, depth) => {
    if (out.length >= limit) return;
    const ref = 'n' + (out.length + 1);
    const node = { ref, parentRef, depth, tag: el.tagName.toLowerCase() };
    if (el.id) node.id = el.id;
    if (typeof el.className === 'string' && el.className) node.className = el.className.slice(0, 300);
    const role = el.getAttribute('role'); if (role) node.role = role;
    const name = el.getAttribute('aria-label'); if (name) node.name = name;
    const own = Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent.trim()).join(' ').trim();
    if (own) node.text = own.length > 220 ? own.slice(0, 220) + '…' : own;
    if (el.href) node.href = String(el.href);
    if (el.type) node.type = String(el.type);
    if (typeof el.value === 'string' && el.tagName !== 'BUTTON') node.value = el.value.slice(0, 500);
    out.push(node);
    for (const child of el.children) walk(child, ref, depth + 1);
  };
  walk(root, null, 0);
  return out;
}"#;

/// `domSnapshot`: DOM nodes with `nN` refs, parentRef, tag and a few attributes.
pub async fn dom_snapshot(page: &Page, opts: &SnapshotOptions) -> Result<Value> {
    let limit = opts.limit.unwrap_or(800).clamp(1, 5000);
    let expression = format!(
        "({DOM_WALK})({limit}, {})",
        opts.selector
            .as_deref()
            .map(quote)
            .unwrap_or_else(|| "null".into())
    );
    let result = page_call(
        page,
        "Runtime.evaluate",
        json!({ "expression": expression, "returnByValue": true }),
    )
    .await?;
    if let Some(details) = result.get("exceptionDetails") {
        let message = details
            .pointer("/exception/description")
            .and_then(Value::as_str)
            .unwrap_or("domSnapshot failed");
        return Err(BrowserError::invalid(
            message.lines().next().unwrap_or(message).to_string(),
        ));
    }
    Ok(result
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Array(Vec::new())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_the_node_nobody_lists() {
        let tree = json!({ "nodes": [
            { "nodeId": "2", "role": { "value": "button" }, "name": { "value": "Go" }, "childIds": [] , "backendDOMNodeId": 7},
            { "nodeId": "1", "role": { "value": "RootWebArea" }, "childIds": ["2"] },
        ]});
        let nodes = parse_nodes(&tree, "");
        assert_eq!(root_of(&nodes).as_deref(), Some("1"));
        assert_eq!(nodes[0].backend, Some(7));
        assert_eq!(nodes[0].name, "Go");
    }

    #[test]
    fn states_render_like_playwright() {
        let n = AxNode {
            id: "1".into(),
            ignored: false,
            role: "checkbox".into(),
            name: "Agree".into(),
            value: None,
            description: None,
            backend: None,
            page_ref: None,
            props: vec![
                ("checked".into(), json!("true")),
                ("disabled".into(), json!(true)),
                ("focusable".into(), json!(true)),
            ],
            children: vec![],
        };
        assert_eq!(states(&n), " [checked] [disabled]");
    }
}
