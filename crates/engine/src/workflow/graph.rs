//! `lobster graph`: render a workflow's steps and their dependencies as
//! Mermaid, Graphviz DOT or plain text.

use crate::value::{Object, Value, is_js_space};

use super::args::resolve_workflow_args;
use super::file::{Exec, Step, Workflow};
use super::template::{refs_in, resolve_args};

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Mermaid flowchart.
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// Plain text.
    Ascii,
}

impl Format {
    /// Parses `mermaid`, `dot` or `ascii`.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "mermaid" => Some(Format::Mermaid),
            "dot" => Some(Format::Dot),
            "ascii" => Some(Format::Ascii),
            _ => None,
        }
    }
}

struct Node {
    id: String,
    kind: &'static str,
    gate: bool,
    detail: String,
}

struct Edge {
    from: String,
    to: String,
    label: String,
}

/// Cuts to `max` UTF-16 units (JavaScript string length), ending with `…`
/// when shortened; a surrogate pair cut in half prints as U+FFFD, as Node
/// writes a lone surrogate.
fn truncate(s: &str, max: usize) -> String {
    if s.encode_utf16().count() <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut units = 0;
    for c in s.chars() {
        let width = c.len_utf16();
        if units + width > max - 1 {
            if units < max - 1 {
                out.push('\u{FFFD}');
            }
            break;
        }
        out.push(c);
        units += width;
    }
    out + "…"
}

fn node_for(step: &Step, args: &Object) -> Node {
    let (kind, detail) = match &step.exec {
        Exec::Shell(c) => ("run", format!("run: {}", resolve_args(c, args))),
        Exec::Pipeline(p) => ("pipeline", format!("pipeline: {}", resolve_args(p, args))),
        Exec::Workflow { path, .. } => (
            "workflow",
            format!("workflow: {}", resolve_args(path, args)),
        ),
        Exec::Parallel(p) => (
            "parallel",
            format!("parallel ({})", if p.wait_any { "any" } else { "all" }),
        ),
        Exec::ForEach(fe) => {
            let over = match &fe.over {
                Value::String(s) => s.clone(),
                other => other.to_json(),
            };
            ("for_each", format!("for_each: {over}"))
        }
        Exec::Gobby(action) => (action.kind(), action.describe()),
        Exec::None if step.input.is_some() => ("input", "input request".to_string()),
        Exec::None => ("approval", "approval gate".to_string()),
    };
    Node {
        id: step.id.clone(),
        kind,
        gate: step.approval.is_some(),
        detail: truncate(&detail, 80),
    }
}

/// Step ids referenced as `$id.…` in `text`.
fn ref_ids(text: &str) -> Vec<String> {
    refs_in(text).into_iter().map(|(id, _)| id).collect()
}

/// Step ids referenced in a value: its strings, inside arrays and objects too.
fn value_ref_ids(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => ref_ids(s),
        Value::Array(items) => items.iter().flat_map(value_ref_ids).collect(),
        Value::Object(o) => o.iter().flat_map(|(_, v)| value_ref_ids(v)).collect(),
        _ => Vec::new(),
    }
}

fn build(workflow: &Workflow, provided: &Value) -> (Vec<Node>, Vec<Edge>) {
    let args = resolve_workflow_args(workflow, provided);
    let nodes: Vec<Node> = workflow.steps.iter().map(|s| node_for(s, &args)).collect();
    let ids: Vec<&str> = workflow.steps.iter().map(|s| s.id.as_str()).collect();
    let mut edges: Vec<Edge> = Vec::new();
    let mut push = |from: String, to: String, label: String| {
        if ids.contains(&from.as_str())
            && !edges
                .iter()
                .any(|e| e.from == from && e.to == to && e.label == label)
        {
            edges.push(Edge { from, to, label });
        }
    };
    for (i, step) in workflow.steps.iter().enumerate() {
        if i > 0 {
            push(
                workflow.steps[i - 1].id.clone(),
                step.id.clone(),
                "next".into(),
            );
        }
        for r in step.stdin.iter().flat_map(value_ref_ids) {
            push(r, step.id.clone(), "stdin".into());
        }
        if let Exec::ForEach(fe) = &step.exec
            && let Value::String(s) = &fe.over
        {
            for r in ref_ids(s) {
                push(r, step.id.clone(), "for_each".into());
            }
        }
        if let Some(Value::String(cond)) = &step.when {
            for r in ref_ids(cond) {
                push(
                    r,
                    step.id.clone(),
                    truncate(&format!("when: {}", cond.trim()), 70),
                );
            }
        }
    }
    (nodes, edges)
}

fn mermaid_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "&#124;")
}

/// Renders the graph.
pub fn render(workflow: &Workflow, provided: &Value, format: Format) -> String {
    let (nodes, edges) = build(workflow, provided);
    // Labels carry a literal `\n` between id and detail.
    let label = |n: &Node| {
        if n.detail.is_empty() {
            n.id.clone()
        } else {
            format!("{}\\n{}", n.id, n.detail)
        }
    };
    let mut out = String::new();
    match format {
        Format::Mermaid => {
            out.push_str("flowchart TD\n");
            for n in &nodes {
                let (open, close) = if n.gate {
                    ("{\"", "\"}")
                } else {
                    ("[\"", "\"]")
                };
                out.push_str(&format!(
                    "  {}{open}{}{close}\n",
                    mermaid_id(&n.id),
                    html_escape(&label(n))
                ));
            }
            out.push('\n');
            for e in &edges {
                out.push_str(&format!(
                    "  {} -->|{}| {}\n",
                    mermaid_id(&e.from),
                    html_escape(&e.label),
                    mermaid_id(&e.to)
                ));
            }
        }
        Format::Dot => {
            let q = |s: &str| {
                s.replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n")
            };
            out.push_str("digraph workflow {\n  rankdir=TB;\n");
            for n in &nodes {
                let shape = if n.gate { "diamond" } else { "box" };
                out.push_str(&format!(
                    "  \"{}\" [shape={shape},label=\"{}\"];\n",
                    q(&n.id),
                    q(&label(n))
                ));
            }
            out.push('\n');
            for e in &edges {
                out.push_str(&format!(
                    "  \"{}\" -> \"{}\" [label=\"{}\"];\n",
                    q(&e.from),
                    q(&e.to),
                    q(&e.label)
                ));
            }
            out.push_str("}\n");
        }
        Format::Ascii => {
            out.push_str("Workflow Graph\n\nNodes:\n");
            for n in &nodes {
                // The text between the label's first and second `\n`: a
                // literal `\n` in the detail ends it.
                let label = label(n);
                let line = match label.split("\\n").nth(1) {
                    Some(detail) => format!("- {} [{}] ({detail})", n.id, n.kind),
                    None => format!("- {} [{}]", n.id, n.kind),
                };
                out.push_str(line.trim_end_matches(is_js_space));
                out.push('\n');
            }
            out.push_str("\nEdges:\n");
            for e in &edges {
                if e.label.is_empty() {
                    out.push_str(&format!("- {} -> {}\n", e.from, e.to));
                } else {
                    out.push_str(&format!("- {} -> {} ({})\n", e.from, e.to, e.label));
                }
            }
            if edges.is_empty() {
                out.push_str("- (none)\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ascii(yaml: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wf.lobster");
        std::fs::write(&path, yaml).unwrap();
        let workflow = super::super::file::load(&path).unwrap();
        render(&workflow, &Value::Object(Object::new()), Format::Ascii)
    }

    /// Regressions: the plain-text graph says `(none)` without edges, and a
    /// node's detail ends at a literal `\n` in it, as Lobster splits its label.
    #[test]
    fn ascii_matches_lobster_labels_and_empty_edges() {
        let out = ascii("steps:\n  - id: a\n    run: printf '%s\\n' \"$x\"\n");
        assert_eq!(
            out,
            "Workflow Graph\n\nNodes:\n- a [run] (run: printf '%s)\n\nEdges:\n- (none)\n"
        );
        let out = ascii(
            "steps:\n  - id: a\n    run: echo 1\n  - id: b\n    run: cat\n    stdin: [\"$a.json\", {k: \"$a.stdout\"}]\n",
        );
        assert!(
            out.ends_with("Edges:\n- a -> b (next)\n- a -> b (stdin)\n"),
            "{out}"
        );
    }

    #[test]
    fn truncation_counts_utf16_units() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("ab😀d", 4), "ab\u{FFFD}…", "half a surrogate pair");
        assert_eq!(truncate("a😀", 4), "a😀");
    }
}
