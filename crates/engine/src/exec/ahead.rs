//! Working ahead on a command's JSON output while the command still
//! writes it.
//!
//! `exec --json` hands on no item before the whole output is known to be
//! valid JSON, as `JSON.parse` does. The pure stages right after it
//! ([`crate::commands::is_pure`]) have no effects, so running them early
//! cannot be seen: a worker thread parses the array's elements as the bytes
//! arrive and runs those stages over them. Their result is used only when
//! the command succeeded and its output was a strict JSON array; otherwise
//! it is dropped and the output takes the ordinary path. When the stages
//! are `where`s then a `pick`, only the object properties they can see are
//! built; the others are checked as strictly as building them would be.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use crate::commands;
use crate::error::{Error, Result};
use crate::items::Items;
use crate::json_stream::ChunkedArray;
use crate::pipeline::parse::Stage;
use crate::value::{Projection, Value};

/// What the worker made of the command's output.
pub struct Outcome {
    /// Every byte of the output.
    pub bytes: Vec<u8>,
    /// The stages' result, when the output was a strict JSON array.
    pub items: Option<Result<Items>>,
}

/// A worker running pure stages over output as it arrives.
pub struct Ahead {
    done: tokio::sync::oneshot::Receiver<Outcome>,
}

impl Ahead {
    /// Starts a worker for `stages`, which reads the command's stdout from
    /// the file sent to the returned sender. `None` when no thread could be
    /// started.
    pub fn start(stages: Vec<Stage>) -> Option<(Sender<std::fs::File>, Ahead)> {
        let (stdout_tx, stdout) = std::sync::mpsc::channel();
        let (done_tx, done) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("lobster-ahead".into())
            .stack_size(8 << 20)
            .spawn(move || {
                let _ = done_tx.send(work(stdout, &stages));
            })
            .ok()?;
        Some((stdout_tx, Ahead { done }))
    }

    /// Waits for the worker, which finishes once the output has ended.
    pub async fn finish(self) -> Option<Outcome> {
        self.done.await.ok()
    }
}

/// The worker: the stages over the elements, then the rest of the input
/// validated.
#[tracing::instrument(level = "debug", skip_all, fields(stages = stages.len()))]
fn work(stdout: Receiver<std::fs::File>, stages: &[Stage]) -> Outcome {
    // No file means the command never started.
    let Ok(stdout) = stdout.recv() else {
        return Outcome {
            bytes: Vec::new(),
            items: None,
        };
    };
    let returned = Arc::new(Mutex::new(None));
    let keep = commands::transform::keys_seen(stages);
    let source = Elements {
        array: Some(ChunkedArray::new(Box::new(stdout))),
        keep,
        returned: returned.clone(),
    };
    let items = std::panic::catch_unwind(AssertUnwindSafe(|| {
        commands::run_pure(stages, Items::Lazy(Box::new(source))).map(Items::materialise)
    }));
    // Every stage is done with the source, so it has come back.
    let array = returned
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let Some(mut array) = array else {
        // Only a panic inside the source's drop gets here.
        return Outcome {
            bytes: Vec::new(),
            items: Some(Err(Error::runtime("exec --json output was lost"))),
        };
    };
    let clean = array.finish();
    tracing::debug!(clean, "output ended");
    Outcome {
        bytes: array.into_bytes(),
        items: items.ok().filter(|_| clean),
    }
}

/// The array's elements as items; hands the array back when dropped.
struct Elements {
    array: Option<ChunkedArray>,
    /// The only properties of an object the stages can see, if limited:
    /// the others are checked but not built.
    keep: Option<Vec<String>>,
    returned: Arc<Mutex<Option<ChunkedArray>>>,
}

impl Iterator for Elements {
    type Item = Result<Value>;

    fn next(&mut self) -> Option<Result<Value>> {
        let array = self.array.as_mut()?;
        let element = match &self.keep {
            Some(keep) => array.next_element_seed(&Projection { keep }),
            None => array.next_element::<Value>(),
        };
        match element {
            Some(value) => Some(Ok(value)),
            // Whatever the stages make of this is thrown away.
            None if array.broken() => Some(Err(Error::runtime(
                "exec --json output is not a JSON array",
            ))),
            None => None,
        }
    }
}

impl Drop for Elements {
    fn drop(&mut self) {
        *self.returned.lock().unwrap_or_else(PoisonError::into_inner) = self.array.take();
    }
}
