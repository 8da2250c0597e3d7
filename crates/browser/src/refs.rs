//! Element refs from snapshots. A ref is bound to one document (the main
//! frame's loader) and one DOM node (its backendNodeId, or for the `ai`
//! format its number in the in-page walker's registry, which maps to the
//! node when acted on): the same node keeps its number across snapshots of
//! the same document, and every ref of a document that has been navigated
//! away from is stale.

use std::collections::HashMap;

use crate::{BrowserError, Result};

/// An element numbered by the `ai` snapshot's in-page walker: its number in
/// the registry of the frame's isolated world.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PageRef {
    /// The frame whose isolated world holds the registry.
    pub frame: String,
    /// The element's number there.
    pub id: u64,
}

/// What a snapshot node is keyed on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NodeKey {
    /// A DOM node (`backendDOMNodeId`).
    Dom(i64),
    /// An element the in-page walker numbered.
    Page(PageRef),
    /// An accessibility node with no DOM node.
    Ax(String),
}

/// What a ref points at.
#[derive(Clone, Debug, PartialEq)]
pub struct RefEntry {
    /// The DOM node, when the snapshot knew it.
    pub backend_node_id: Option<i64>,
    /// The element in the walker's registry, resolved when acted on.
    pub page_ref: Option<PageRef>,
    /// Its accessibility role.
    pub role: String,
    /// Its accessible name.
    pub name: String,
}

/// The refs handed out for one tab.
#[derive(Debug, Default)]
pub struct RefTable {
    document: String,
    next: u32,
    by_key: HashMap<NodeKey, u32>,
    entries: HashMap<u32, RefEntry>,
    snapshots: u32,
}

impl RefTable {
    /// Starts a snapshot of `document`: a new document discards every ref.
    /// True when this document was snapshotted before.
    pub fn begin(&mut self, document: &str) -> bool {
        if self.document != document {
            *self = RefTable {
                document: document.to_string(),
                ..RefTable::default()
            };
        }
        self.snapshots += 1;
        self.snapshots > 1
    }

    /// The number for a node, reusing the one it had in an earlier snapshot
    /// of the document; true when the node is new.
    pub fn number(&mut self, key: NodeKey, entry: RefEntry) -> (u32, bool) {
        let (n, fresh) = match self.by_key.get(&key) {
            Some(n) => (*n, false),
            None => {
                self.next += 1;
                self.by_key.insert(key, self.next);
                (self.next, true)
            }
        };
        self.entries.insert(n, entry);
        (n, fresh)
    }

    /// Looks a ref up for an action on `document`.
    pub fn lookup(&self, text: &str, document: &str) -> Result<RefEntry> {
        let n = parse_ref(text)?;
        if self.document != document {
            return Err(BrowserError::StaleRef(format!(
                "Unknown ref \"{}\": the page changed since that snapshot. Re-snapshot and use a ref from the new snapshot.",
                text.trim()
            )));
        }
        self.entries.get(&n).cloned().ok_or_else(|| {
            BrowserError::StaleRef(format!(
                "Unknown ref \"{}\": no snapshot of this page gave it. Take a snapshot and use one of its refs.",
                text.trim()
            ))
        })
    }
}

/// Accepts `e12`, `ax12`, `12`, `@e12` and `ref=e12`.
pub fn parse_ref(text: &str) -> Result<u32> {
    let t = text.trim();
    let t = t.strip_prefix("ref=").unwrap_or(t);
    let t = t.strip_prefix('@').unwrap_or(t);
    let digits = t
        .strip_prefix("ax")
        .or_else(|| t.strip_prefix('e'))
        .unwrap_or(t);
    digits
        .parse::<u32>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            BrowserError::invalid_code(
                "ACT_INVALID_REQUEST",
                format!("not a snapshot ref: \"{text}\" (expected e12, ax12 or 12)"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: i64) -> RefEntry {
        RefEntry {
            backend_node_id: Some(id),
            page_ref: None,
            role: "button".into(),
            name: "Go".into(),
        }
    }

    #[test]
    fn refs_survive_resnapshots_and_go_stale_on_navigation() {
        let mut t = RefTable::default();
        assert!(!t.begin("doc1"), "first snapshot");
        let (a, fresh) = t.number(NodeKey::Dom(40), entry(40));
        assert!(fresh);
        let (b, _) = t.number(NodeKey::Dom(41), entry(41));
        assert!(t.begin("doc1"), "a repeat");
        assert_eq!(
            t.number(NodeKey::Dom(41), entry(41)),
            (b, false),
            "same node, same ref, not new"
        );
        assert_eq!(
            t.lookup(&format!("e{a}"), "doc1").unwrap().backend_node_id,
            Some(40)
        );
        assert_eq!(
            t.lookup(&format!("ax{b}"), "doc1").unwrap().backend_node_id,
            Some(41)
        );
        assert!(matches!(
            t.lookup("e1", "doc2"),
            Err(BrowserError::StaleRef(_))
        ));
        assert!(!t.begin("doc2"), "a new document starts over");
        assert!(matches!(
            t.lookup("e2", "doc2"),
            Err(BrowserError::StaleRef(_))
        ));
    }

    #[test]
    fn ref_spellings() {
        for ok in ["e12", "12", "ax12", "@e12", "ref=e12", " e12 "] {
            assert_eq!(parse_ref(ok).unwrap(), 12, "{ok}");
        }
        for bad in ["", "e", "x12", "e0", "e-1"] {
            assert!(parse_ref(bad).is_err(), "{bad}");
        }
    }
}
