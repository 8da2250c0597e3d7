//! Streams of items flowing between pipeline stages.

use crate::error::Result;
use crate::value::Value;

/// A lazily evaluated stream of items; errors surface when it is pulled.
pub type ItemIter = Box<dyn Iterator<Item = Result<Value>> + Send>;

/// The items one stage hands to the next: a list, or a lazy stream so that
/// filters like `where | pick | head` never hold more than they must.
pub enum Items {
    /// Materialised items.
    List(Vec<Value>),
    /// A lazy stream.
    Lazy(ItemIter),
}

impl Default for Items {
    fn default() -> Self {
        Items::List(Vec::new())
    }
}

impl From<Vec<Value>> for Items {
    fn from(v: Vec<Value>) -> Self {
        Items::List(v)
    }
}

impl IntoIterator for Items {
    type Item = Result<Value>;
    type IntoIter = ItemIter;

    /// The items as a lazy iterator.
    fn into_iter(self) -> ItemIter {
        match self {
            Items::List(v) => Box::new(v.into_iter().map(Ok)),
            Items::Lazy(it) => it,
        }
    }
}

impl Items {
    /// No items.
    pub fn empty() -> Self {
        Items::List(Vec::new())
    }

    /// Pulls every item, stopping at the first error.
    pub fn collect(self) -> Result<Vec<Value>> {
        match self {
            Items::List(v) => Ok(v),
            Items::Lazy(it) => it.collect(),
        }
    }

    /// Pulls and discards every item (surfacing errors from upstream stages).
    pub fn drain(self) -> Result<()> {
        if let Items::Lazy(it) = self {
            for item in it {
                item?;
            }
        }
        Ok(())
    }

    /// Pulls every item now, keeping the first failure in its place: the
    /// result yields what this stream would have, in the same order.
    pub fn materialise(self) -> Items {
        let Items::Lazy(it) = self else { return self };
        let mut done = Vec::new();
        for item in it {
            match item {
                Ok(v) => done.push(v),
                Err(e) => {
                    return Items::Lazy(Box::new(
                        done.into_iter().map(Ok).chain(std::iter::once(Err(e))),
                    ));
                }
            }
        }
        Items::List(done)
    }

    /// Applies a fallible per-item transform lazily; `None` drops the item.
    pub fn filter_map<F>(self, mut f: F) -> Items
    where
        F: FnMut(Value) -> Result<Option<Value>> + Send + 'static,
    {
        Items::Lazy(Box::new(self.into_iter().filter_map(
            move |item| match item {
                Ok(v) => f(v).transpose(),
                Err(e) => Some(Err(e)),
            },
        )))
    }
}
