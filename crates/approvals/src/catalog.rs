//! The workflow library as it is now: read once, then again as soon as a
//! workflow file is added, changed or removed, so that what depends on it
//! (the MCP server's `workflow.<name>` tools) follows without a restart.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use clawdis_engine::workflow::library::{self, Library};
use notify::Watcher as _;
use tokio::sync::{mpsc, watch};

/// How long events are gathered before the library is read again (an
/// editor's save is several events).
const SETTLE: Duration = Duration::from_millis(50);

/// How often the directories are read while one of them is missing: a
/// directory that did not exist when the watch started is seen once it does.
const REREAD: Duration = Duration::from_secs(5);

/// The workflow library of some directories, kept current.
#[derive(Debug)]
pub struct Catalog {
    current: watch::Sender<Arc<Library>>,
}

impl Catalog {
    /// Reads the library of `dirs` now and keeps it current from a task of
    /// its own, which ends when the catalog is dropped.
    pub async fn open(dirs: Vec<PathBuf>) -> Arc<Catalog> {
        let first = read(dirs.clone()).await;
        let catalog = Arc::new(Catalog {
            current: watch::Sender::new(Arc::new(first)),
        });
        tokio::spawn(follow(Arc::downgrade(&catalog), dirs));
        catalog
    }

    /// The library as last read.
    pub fn current(&self) -> Arc<Library> {
        self.current.borrow().clone()
    }

    /// A receiver told each time the library changes.
    pub fn subscribe(&self) -> watch::Receiver<Arc<Library>> {
        self.current.subscribe()
    }
}

async fn read(dirs: Vec<PathBuf>) -> Library {
    tokio::task::spawn_blocking(move || library::discover(&dirs))
        .await
        .unwrap_or_default()
}

/// Same workflows, same files, same errors.
fn same(a: &Library, b: &Library) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

/// Watches `dirs` and rereads the library on every change, for as long as
/// the catalog lives. Every (re)arming of the watcher is followed by a read,
/// so a change made while it was not watching is not missed.
async fn follow(catalog: Weak<Catalog>, dirs: Vec<PathBuf>) {
    let (events, mut changed) = mpsc::unbounded_channel::<()>();
    let mut watched: Vec<PathBuf> = Vec::new();
    let mut watcher: Option<notify::RecommendedWatcher> = None;
    loop {
        // (Re)arm the watcher when the set of existing directories changes.
        let existing: Vec<PathBuf> = dirs.iter().filter(|d| d.is_dir()).cloned().collect();
        if existing != watched || watcher.is_none() {
            let events = events.clone();
            watcher = watch_dirs(&existing, move || {
                let _ = events.send(());
            });
            watched = existing;
        }
        let fresh = read(dirs.clone()).await;
        let Some(live) = catalog.upgrade() else {
            return;
        };
        live.current.send_if_modified(|current| {
            if same(current, &fresh) {
                return false;
            }
            *current = Arc::new(fresh);
            true
        });
        drop(live);
        // Events tell of every change in a watched directory; only a
        // directory missing (or a watcher that did not start) needs looks.
        let all_watched = watcher.is_some() && watched.len() == dirs.len();
        let reread = async {
            if all_watched {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(REREAD).await;
        };
        tokio::select! {
            got = changed.recv() => {
                if got.is_none() {
                    return;
                }
                tokio::time::sleep(SETTLE).await;
                while changed.try_recv().is_ok() {}
            }
            () = reread => {}
        }
    }
}

/// Watches the workflow directories in `dirs` (each that exists), calling
/// `changed` for every event but a read; `None` when no watcher starts.
pub(crate) fn watch_dirs(
    dirs: &[PathBuf],
    changed: impl Fn() + Send + 'static,
) -> Option<notify::RecommendedWatcher> {
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|e| !e.kind.is_access()) {
            changed();
        }
    })
    .inspect_err(|e| tracing::warn!(error = %e, "watching the workflow directories"))
    .ok()?;
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        if let Err(e) = watcher.watch(dir, notify::RecursiveMode::NonRecursive) {
            tracing::warn!(dir = %dir.display(), error = %e, "watching a workflow directory");
        }
    }
    Some(watcher)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_file_added_changed_or_removed_is_seen_without_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("workflows");
        // The directory does not exist yet: it is seen once it does.
        let catalog = Catalog::open(vec![home.clone()]).await;
        assert!(catalog.current().workflows.is_empty());
        let mut changes = catalog.subscribe();
        std::fs::create_dir(&home).unwrap();
        let file = home.join("hello.lobster");
        std::fs::write(&file, "steps:\n  - id: s\n    run: echo hi\n").unwrap();
        tokio::time::timeout(Duration::from_secs(15), changes.changed())
            .await
            .expect("the new file is seen")
            .unwrap();
        assert_eq!(catalog.current().workflows[0].name, "hello");
        std::fs::write(
            &file,
            "description: changed\nsteps:\n  - id: s\n    run: echo hi\n",
        )
        .unwrap();
        tokio::time::timeout(Duration::from_secs(15), changes.changed())
            .await
            .expect("the change is seen")
            .unwrap();
        assert_eq!(
            catalog.current().workflows[0].description.as_deref(),
            Some("changed")
        );
        std::fs::remove_file(&file).unwrap();
        tokio::time::timeout(Duration::from_secs(15), changes.changed())
            .await
            .expect("the removal is seen")
            .unwrap();
        assert!(catalog.current().workflows.is_empty());
    }
}
