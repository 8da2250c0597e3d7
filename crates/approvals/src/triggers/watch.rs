//! Watch triggers: a glob (`~/inbox/*.json`) read as a directory to watch
//! through the OS's file events and a pattern the changed files must
//! match; changes gathered into one batch until the files are quiet.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

/// How long the files must be quiet before a batch fires.
pub(crate) const QUIET: Duration = Duration::from_millis(500);

/// The longest a batch waits for quiet files (a file written without
/// pause fires at least this often).
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(10);

/// A watch trigger's glob, read.
#[derive(Clone, Debug)]
pub(crate) struct Glob {
    /// The deepest directory without a wildcard: the one watched.
    pub base: PathBuf,
    /// What a changed file must match (absolute).
    pub pattern: glob::Pattern,
    /// Whether the wildcards reach below `base`.
    pub recursive: bool,
}

const MATCH: glob::MatchOptions = glob::MatchOptions {
    case_sensitive: true,
    require_literal_separator: true,
    require_literal_leading_dot: true,
};

impl Glob {
    /// Reads `spec`: `~/` is the home directory; a relative glob is read
    /// from `dir` (the workflow file's directory); a glob without
    /// wildcards names one file, or every file of a directory.
    pub fn parse(spec: &str, dir: &Path) -> Result<Glob, String> {
        let expanded = match spec.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(|home| PathBuf::from(home).join(rest))
                .ok_or("~ needs HOME to be set")?,
            None if spec == "~" => std::env::var_os("HOME")
                .map(PathBuf::from)
                .ok_or("~ needs HOME to be set")?,
            None => dir.join(spec),
        };
        let mut base = PathBuf::new();
        let mut rest: Vec<String> = Vec::new();
        for component in expanded.components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir if rest.is_empty() => {
                    base.pop();
                }
                Component::ParentDir => {
                    return Err("`..` after a wildcard is not supported".into());
                }
                Component::Normal(part) => {
                    let part = part
                        .to_str()
                        .ok_or_else(|| format!("{spec:?} is not UTF-8"))?;
                    if rest.is_empty() && !part.contains(['*', '?', '[']) {
                        base.push(part);
                    } else {
                        rest.push(part.to_string());
                    }
                }
                other => base.push(other.as_os_str()),
            }
        }
        if rest.is_empty() {
            // No wildcard: a directory means its files, else the one file.
            if base.is_dir() {
                rest.push("*".into());
            } else {
                let name = base
                    .file_name()
                    .and_then(|n| n.to_str())
                    .ok_or_else(|| format!("{spec:?} names no file"))?
                    .to_string();
                base.pop();
                rest.push(glob::Pattern::escape(&name));
            }
        }
        let text = format!(
            "{}/{}",
            glob::Pattern::escape(&base.to_string_lossy()).trim_end_matches('/'),
            rest.join("/")
        );
        let pattern = glob::Pattern::new(&text).map_err(|e| format!("{spec:?}: {e}"))?;
        Ok(Glob {
            recursive: rest.len() > 1 || rest.iter().any(|p| p.contains("**")),
            base,
            pattern,
        })
    }

    /// Whether `path` is one of the files this glob names.
    pub fn matches(&self, path: &Path) -> bool {
        self.pattern.matches_path_with(path, MATCH)
    }

    /// The files the glob names that changed after `mark` (by their
    /// modification time): what changed while no backend watched.
    pub fn changed_since(&self, mark: DateTime<Utc>) -> Vec<PathBuf> {
        let Ok(found) = glob::glob_with(self.pattern.as_str(), MATCH) else {
            return Vec::new();
        };
        found
            .filter_map(Result::ok)
            .filter(|path| changed_after(path, mark) && path.is_file())
            .collect()
    }
}

/// How far a file's modification time may lag the clock: kernels stamp
/// files from a coarse clock that advances once a tick (1 to 10 ms).
const FILE_CLOCK_GRAIN: chrono::TimeDelta = chrono::TimeDelta::milliseconds(25);

/// Whether file `path` was modified after `mark` (a file stamped within
/// the file clock's grain before it counts as after).
fn changed_after(path: &Path, mark: DateTime<Utc>) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| DateTime::<Utc>::from(t) > mark - FILE_CLOCK_GRAIN)
}

/// Changes gathered for one watch trigger until the files are quiet.
#[derive(Debug)]
pub(crate) struct Batch {
    paths: BTreeSet<PathBuf>,
    first: Instant,
    last: Instant,
}

impl Batch {
    /// A batch of `paths`, changed now.
    pub fn new(paths: impl IntoIterator<Item = PathBuf>) -> Batch {
        let now = Instant::now();
        Batch {
            paths: paths.into_iter().collect(),
            first: now,
            last: now,
        }
    }

    /// Adds paths changed now.
    pub fn add(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        self.paths.extend(paths);
        self.last = Instant::now();
    }

    /// Keeps only the files changed after `mark`.
    pub fn retain_changed_after(&mut self, mark: DateTime<Utc>) {
        self.paths.retain(|p| changed_after(p, mark));
    }

    /// When the batch is ready to fire.
    pub fn ready_at(&self) -> Instant {
        (self.last + QUIET).min(self.first + MAX_WAIT)
    }

    /// The files to pass as `paths`: those still there, sorted.
    pub fn into_paths(self) -> Vec<PathBuf> {
        self.paths.into_iter().filter(|p| p.is_file()).collect()
    }
}

/// Whether a file event says a file appeared or changed (not that it was
/// only read or removed).
pub(crate) fn is_change(kind: &notify::EventKind) -> bool {
    !matches!(
        kind,
        notify::EventKind::Access(_) | notify::EventKind::Remove(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glob_is_read_as_a_directory_and_a_pattern() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let glob = Glob::parse("inbox/*.json", d).unwrap();
        assert_eq!(glob.base, d.join("inbox"));
        assert!(!glob.recursive);
        assert!(glob.matches(&d.join("inbox/a.json")));
        assert!(!glob.matches(&d.join("inbox/a.txt")));
        assert!(
            !glob.matches(&d.join("inbox/sub/a.json")),
            "* stays in its directory"
        );
        assert!(!glob.matches(&d.join("inbox/.hidden.json")));

        let deep = Glob::parse(&format!("{}/in[b]ox/**/*.json", d.display()), d).unwrap();
        assert_eq!(deep.base, d.to_path_buf());
        assert!(deep.recursive);
        assert!(deep.matches(&d.join("inbox/x/y/a.json")));

        std::fs::create_dir(d.join("drop")).unwrap();
        let plain = Glob::parse("drop", d).unwrap();
        assert_eq!(plain.base, d.join("drop"));
        assert!(plain.matches(&d.join("drop/any.bin")));
        let one = Glob::parse("notes].md", d).unwrap();
        assert_eq!(one.base, d.to_path_buf());
        assert!(
            one.matches(&d.join("notes].md")),
            "a name without wildcards is literal"
        );
        assert!(!one.matches(&d.join("notes.md")));
        let class = Glob::parse("notes [ab].md", d).unwrap();
        assert!(
            class.matches(&d.join("notes a.md")),
            "[…] is a class, as in the shell"
        );
    }

    #[test]
    fn home_is_expanded_and_dotdot_after_a_wildcard_refused() {
        let glob = Glob::parse("~/inbox/*.json", Path::new("/w")).unwrap();
        let home = PathBuf::from(std::env::var_os("HOME").unwrap());
        assert_eq!(glob.base, home.join("inbox"));
        assert!(Glob::parse("*/../x", Path::new("/w")).is_err());
    }

    #[test]
    fn files_changed_since_the_mark_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let glob = Glob::parse("*.json", dir.path()).unwrap();
        let before = Utc::now() - chrono::TimeDelta::seconds(5);
        std::fs::write(dir.path().join("a.json"), "{}").unwrap();
        std::fs::write(dir.path().join("a.txt"), "").unwrap();
        assert_eq!(glob.changed_since(before), vec![dir.path().join("a.json")]);
        let after = Utc::now() + chrono::TimeDelta::seconds(5);
        assert!(glob.changed_since(after).is_empty());
    }

    #[test]
    fn a_batch_fires_when_quiet_or_when_it_waited_long_enough() {
        let mut batch = Batch::new([PathBuf::from("/nope/b"), PathBuf::from("/nope/a")]);
        let first = batch.ready_at();
        batch.add([PathBuf::from("/nope/a")]);
        assert!(batch.ready_at() >= first);
        assert!(batch.ready_at() <= batch.first + MAX_WAIT);
        assert!(batch.into_paths().is_empty(), "files gone are not passed");
    }
}
