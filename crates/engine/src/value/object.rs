//! JSON objects with JavaScript property order.
//!
//! Entries live in one vector (most objects have a handful of keys, so a
//! linear scan beats hashing); objects that grow past `INDEX_AT` keys get
//! a hash index so huge objects stay linear-time to build. Keys are shared
//! `Arc<str>`s, interned while parsing JSON, so a stream of similar records
//! stores each key name once.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use crate::value::Value;

/// Number of keys from which an object keeps a hash index.
const INDEX_AT: usize = 24;

/// An object key.
pub type Key = Arc<str>;

/// An object whose keys iterate in JavaScript property order: array-index
/// keys ascending first, then the other keys in insertion order.
#[derive(Clone, Debug, Default)]
pub struct Object {
    entries: Vec<(Key, Value)>,
    index: Option<Box<HashMap<Key, usize>>>,
}

impl PartialEq for Object {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

/// `Some(n)` when `key` is a canonical array index (`"0"`, `"17"`, not `"01"`).
pub fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u64>()
        .ok()
        .filter(|n| *n < u32::MAX as u64)
        .map(|n| n as u32)
}

/// Interned keys: the last few seen (records repeat their keys, so this
/// usually hits) in front of a bounded map.
#[derive(Default)]
struct Interner {
    recent: [Option<Key>; 8],
    next: usize,
    map: HashMap<Box<str>, Key>,
}

thread_local! {
    static INTERNED: RefCell<Interner> = RefCell::new(Interner::default());
}

/// Returns a shared key for `s`, reusing earlier allocations of short keys.
pub fn intern(s: &str) -> Key {
    if s.len() > 48 {
        return Key::from(s);
    }
    INTERNED.with(|cell| {
        let mut interner = cell.borrow_mut();
        if let Some(k) = interner.recent.iter().flatten().find(|k| &***k == s) {
            return k.clone();
        }
        let key = match interner.map.get(s) {
            Some(k) => k.clone(),
            None => {
                let key = Key::from(s);
                if interner.map.len() < 8192 {
                    interner.map.insert(Box::from(s), key.clone());
                }
                key
            }
        };
        let slot = interner.next;
        interner.recent[slot] = Some(key.clone());
        interner.next = (slot + 1) % 8;
        key
    })
}

impl Object {
    /// An empty object.
    pub fn new() -> Self {
        Object::default()
    }

    /// An empty object with room for `n` keys.
    pub fn with_capacity(n: usize) -> Self {
        Object {
            entries: Vec::with_capacity(n),
            index: None,
        }
    }

    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| &**k == key),
        }
    }

    fn reindex(&mut self) {
        if self.entries.len() >= INDEX_AT {
            let map = self
                .entries
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect();
            self.index = Some(Box::new(map));
        } else {
            self.index = None;
        }
    }

    /// Sets `key` like a JavaScript property assignment: an existing key keeps
    /// its position; a new array-index key goes before all non-index keys.
    pub fn insert(&mut self, key: impl AsRef<str>, value: Value) {
        let key = key.as_ref();
        if let Some(pos) = self.position(key) {
            self.entries[pos].1 = value;
            return;
        }
        self.insert_new(intern(key), value);
    }

    /// [`Object::insert`] with an already shared key.
    pub fn insert_key(&mut self, key: Key, value: Value) {
        if let Some(pos) = self.position(&key) {
            self.entries[pos].1 = value;
            return;
        }
        self.insert_new(key, value);
    }

    fn insert_new(&mut self, key: Key, value: Value) {
        match array_index(&key) {
            None => {
                if let Some(index) = &mut self.index {
                    index.insert(key.clone(), self.entries.len());
                }
                self.entries.push((key, value));
                if self.index.is_none() && self.entries.len() >= INDEX_AT {
                    self.reindex();
                }
            }
            Some(idx) => {
                let pos = self
                    .entries
                    .iter()
                    .position(|(k, _)| array_index(k).is_none_or(|other| other > idx))
                    .unwrap_or(self.entries.len());
                self.entries.insert(pos, (key, value));
                self.reindex();
            }
        }
    }

    /// The value at `key` (`None` when missing or undefined).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position(key)
            .map(|i| &self.entries[i].1)
            .filter(|v| !matches!(v, Value::Undefined))
    }

    /// Removes `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.position(key)?;
        let (_, v) = self.entries.remove(pos);
        self.reindex();
        Some(v)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries in property order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (&**k, v))
    }

    /// Entries whose value is not `undefined` (what `JSON.stringify` keeps).
    pub fn defined(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.iter().filter(|(_, v)| !matches!(v, Value::Undefined))
    }

    /// Keys in property order (`Object.keys`: undefined values included).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| &**k)
    }

    /// Appends without JavaScript ordering (used to build sorted-key copies).
    pub(crate) fn push_unordered(&mut self, key: Key, value: Value) {
        self.entries.push((key, value));
        self.reindex_if_large();
    }

    fn reindex_if_large(&mut self) {
        if self.entries.len() >= INDEX_AT {
            self.reindex();
        }
    }
}

thread_local! {
    /// The keys of the last object built at each nesting depth that did not
    /// follow the one before it (see [`ObjectBuilder`]).
    static SHAPES: RefCell<Vec<Rc<[Key]>>> = const { RefCell::new(Vec::new()) };
}

/// A key read while building an object, and whether it was the key the
/// depth's shape has at that position.
pub struct BuiltKey {
    key: Key,
    on_shape: bool,
}

/// Builds one parsed object. Records in a stream repeat their keys in the
/// same order, so each depth remembers the keys of a recent object (its
/// shape): a key equal to the shape's key at its position shares it
/// without interning and, since a shape's keys are distinct and none is an
/// array index, is appended without looking for a duplicate.
pub struct ObjectBuilder {
    depth: usize,
    /// The depth's shape when the object began.
    shape: Option<Rc<[Key]>>,
    obj: Object,
    /// Every key so far was the shape's key at its position.
    on_shape: bool,
}

impl ObjectBuilder {
    /// A builder for an object at nesting `depth` with room for `n` keys
    /// (as many as the depth's shape has when `n` is 0).
    pub fn new(depth: usize, n: usize) -> Self {
        let shape = SHAPES.with(|shapes| shapes.borrow().get(depth).cloned());
        let n = if n > 0 {
            n
        } else {
            shape.as_ref().map_or(0, |s| s.len())
        };
        ObjectBuilder {
            depth,
            shape,
            obj: Object::with_capacity(n),
            on_shape: true,
        }
    }

    /// The shared key for `s`, the next key of this object.
    pub fn key(&self, s: &str) -> BuiltKey {
        if self.on_shape
            && let Some(key) = self
                .shape
                .as_ref()
                .and_then(|shape| shape.get(self.obj.entries.len()))
                .filter(|k| ***k == *s)
        {
            return BuiltKey {
                key: key.clone(),
                on_shape: true,
            };
        }
        BuiltKey {
            key: intern(s),
            on_shape: false,
        }
    }

    /// A key that is not a string (YAML), as JavaScript names it.
    pub fn other_key(&self, s: &str) -> BuiltKey {
        BuiltKey {
            key: intern(s),
            on_shape: false,
        }
    }

    /// Sets `key` to `value` as [`Object::insert_key`] does.
    pub fn insert(&mut self, key: BuiltKey, value: Value) {
        if key.on_shape && self.on_shape {
            self.obj.entries.push((key.key, value));
        } else {
            self.on_shape = false;
            self.obj.insert_key(key.key, value);
        }
    }

    /// The object; one that left its depth's shape becomes the new shape
    /// when it can be one.
    pub fn finish(self) -> Object {
        let obj = self.obj;
        if !self.on_shape
            && obj.entries.len() < INDEX_AT
            && obj.keys().all(|k| array_index(k).is_none())
        {
            SHAPES.with(|shapes| {
                let mut shapes = shapes.borrow_mut();
                if shapes.len() <= self.depth {
                    shapes.resize_with(self.depth + 1, || Rc::from([]));
                }
                shapes[self.depth] = obj.entries.iter().map(|(k, _)| k.clone()).collect();
            });
        }
        obj
    }
}

impl IntoIterator for Object {
    type Item = (String, Value);
    type IntoIter =
        std::iter::Map<std::vec::IntoIter<(Key, Value)>, fn((Key, Value)) -> (String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter().map(|(k, v)| (k.to_string(), v))
    }
}

impl<K: AsRef<str>> FromIterator<(K, Value)> for Object {
    fn from_iter<T: IntoIterator<Item = (K, Value)>>(iter: T) -> Self {
        let mut obj = Object::new();
        for (k, v) in iter {
            obj.insert(k, v);
        }
        obj
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_objects_index_and_keep_order() {
        let mut o = Object::new();
        for i in 0..100 {
            o.insert(format!("k{i}"), Value::from(i as f64));
        }
        o.insert("k5", Value::from(-1.0));
        o.insert("7", Value::Null);
        assert_eq!(o.len(), 101);
        assert_eq!(o.get("k5"), Some(&Value::from(-1.0)));
        assert_eq!(o.keys().next(), Some("7"));
        assert_eq!(o.remove("k0"), Some(Value::from(0.0)));
        assert_eq!(o.get("k99"), Some(&Value::from(99.0)));
        assert!(Arc::ptr_eq(&intern("abc"), &intern("abc")));
    }

    #[test]
    fn parsed_objects_off_their_shape_keep_javascript_semantics() {
        // Each object is parsed with the one before it as its shape.
        let text = r#"[{"a":1,"b":2},{"a":3,"b":4,"a":5},{"b":1,"a":2},{"1":0,"a":1,"0":2},{"1":0,"a":1,"0":2},
            {"a":1},{"a":1,"b":{"a":[{"c":1},{"c":2,"c":3}]}},{"a":1,"b":{"a":[{"c":4,"d":5}]}}]"#;
        let parsed = Value::from_json(text).unwrap();
        assert_eq!(
            parsed.to_json(),
            r#"[{"a":1,"b":2},{"a":5,"b":4},{"b":1,"a":2},{"0":2,"1":0,"a":1},{"0":2,"1":0,"a":1},{"a":1},{"a":1,"b":{"a":[{"c":1},{"c":3}]}},{"a":1,"b":{"a":[{"c":4,"d":5}]}}]"#
        );
    }
}
