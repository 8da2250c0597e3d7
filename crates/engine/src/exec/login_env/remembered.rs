//! What earlier `lobster` processes learnt about the login profile, kept in
//! `<state dir>/login-env.json` (mode 0600: profiles may export secrets).
//!
//! An entry is keyed by what the profile can see: the shell, the working
//! directory, the contents of the profile files shells read, and the
//! inherited variables those files name. Only plain profiles get this far
//! ([`super::plain`]), whose effect is a function of exactly that; still,
//! an entry is used only after two captures agreed and only for
//! [`FRESH_FOR`] after the last capture, a second guard should a capture
//! itself go wrong.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{LoginEnv, shell_owned};
use crate::context::Env;

const FILE: &str = "login-env.json";
/// How long a confirmed capture stands in for the login shell.
const FRESH_FOR: Duration = Duration::from_secs(60);
/// Profiles kept (distinct environments, directories or shells).
const KEEP: usize = 16;

/// Files login shells read (sh, bash, zsh; macOS `path_helper` inputs).
pub const SYSTEM_FILES: [&str; 12] = [
    "/etc/profile",
    "/etc/environment",
    "/etc/paths",
    "/etc/bashrc",
    "/etc/bash.bashrc",
    "/etc/zshenv",
    "/etc/zprofile",
    "/etc/zlogin",
    "/etc/zsh/zshenv",
    "/etc/zsh/zprofile",
    "/etc/zsh/zlogin",
    "/etc/zshrc",
];
/// Directories of profile files (`/etc/profile` sources the first).
pub const SYSTEM_DIRS: [&str; 2] = ["/etc/profile.d", "/etc/paths.d"];
/// Variables in every key, whether or not a profile file names them.
const ALWAYS_KEYED: [&str; 9] = [
    "HOME", "PATH", "ZDOTDIR", "ENV", "SHELL", "USER", "LOGNAME", "LANG", "LC_ALL",
];
const HOME_FILES: [&str; 8] = [
    ".profile",
    ".bash_profile",
    ".bash_login",
    ".bashrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zshrc",
];

#[derive(Debug, Default, Serialize, Deserialize)]
struct Remembered {
    entries: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    key: String,
    /// The capture; `None` when the profile cannot be replayed.
    login: Option<LoginEnv>,
    /// Two captures in a row agreed.
    confirmed: bool,
    /// Seconds since the epoch of the last capture.
    checked_at: u64,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Hashes a file's identity: size, mtime, inode (or that it is missing).
fn hash_identity(h: &mut Sha256, path: &Path) {
    h.update(path.as_os_str().as_encoded_bytes());
    match std::fs::metadata(path) {
        Ok(m) => {
            h.update(m.len().to_le_bytes());
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .unwrap_or_default();
            h.update(mtime.as_nanos().to_le_bytes());
            #[cfg(unix)]
            h.update(std::os::unix::fs::MetadataExt::ino(&m).to_le_bytes());
        }
        Err(_) => h.update(b"-"),
    }
    h.update([0]);
}

/// The profile files a login shell may read, as named by `env`.
fn profile_files(env: &Env) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = SYSTEM_FILES.iter().map(PathBuf::from).collect();
    for dir in SYSTEM_DIRS {
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut inside: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            inside.sort();
            files.extend(inside);
        }
    }
    for var in ["HOME", "ZDOTDIR"] {
        if let Some(dir) = env.get(var).filter(|d| !d.is_empty()) {
            files.extend(HOME_FILES.iter().map(|f| Path::new(dir).join(f)));
        }
    }
    // `ENV`: sh and dash; `BASH_ENV`: bash when not interactive.
    for var in ["ENV", "BASH_ENV"] {
        if let Some(file) = env.get(var).filter(|f| !f.is_empty()) {
            files.push(PathBuf::from(file));
        }
    }
    files
}

/// The variables that choose which profile files a shell reads.
const FILE_CHOOSERS: [&str; 4] = ["HOME", "ZDOTDIR", "ENV", "BASH_ENV"];

/// The profile files' part of a key, read once for a run: their contents
/// and the words in them that could name variables (as hashes: a word
/// mistaken for another only adds a variable to the key).
#[derive(Debug)]
pub(super) struct Profiles {
    /// The values of [`FILE_CHOOSERS`] the files were found with.
    chosen_by: Vec<Option<String>>,
    digest: [u8; 32],
    words: HashSet<u64>,
    /// Every file is missing or plain ([`super::plain`]): the login shell's
    /// effect depends on nothing but the files and the variables they name.
    pub(super) plain: bool,
}

/// Profile files read so far.
struct Reading {
    digest: Sha256,
    words: HashSet<u64>,
    plain: bool,
}

impl Default for Reading {
    fn default() -> Reading {
        Reading {
            digest: Sha256::default(),
            words: HashSet::new(),
            plain: true,
        }
    }
}

impl Reading {
    fn add(&mut self, file: &Path) {
        self.digest.update(file.as_os_str().as_encoded_bytes());
        match std::fs::read(file) {
            Ok(text_bytes) => {
                self.digest.update(Sha256::digest(&text_bytes));
                let text = String::from_utf8_lossy(&text_bytes);
                self.words.extend(
                    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .filter(|w| !w.is_empty())
                        .map(word_hash),
                );
                self.plain &= std::str::from_utf8(&text_bytes).is_ok_and(super::plain::is_plain);
            }
            Err(e) => {
                // A file the shell would find but we cannot read may do anything.
                self.plain &= matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                );
                self.digest.update(format!("{:?}", e.kind()));
            }
        }
        self.digest.update([0]);
    }

    fn finish(self, env: &Env) -> Profiles {
        Profiles {
            chosen_by: Profiles::choosers(env),
            digest: self.digest.finalize().into(),
            words: self.words,
            plain: self.plain,
        }
    }
}

fn word_hash(word: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(word)
}

impl Profiles {
    /// Reads the profile files `env` names.
    pub(super) fn read(env: &Env) -> Profiles {
        let mut reading = Reading::default();
        for file in profile_files(env) {
            reading.add(&file);
        }
        reading.finish(env)
    }

    /// [`Profiles::read`], yielding to the runtime after each file so that
    /// a task on the same thread, such as one waiting on SQLite's replies,
    /// is not held up for the whole read.
    pub(super) async fn read_yielding(env: &Env) -> Profiles {
        let mut reading = Reading::default();
        for file in profile_files(env) {
            reading.add(&file);
            tokio::task::yield_now().await;
        }
        reading.finish(env)
    }

    /// Whether a shell with `env` reads the same files.
    pub(super) fn fits(&self, env: &Env) -> bool {
        self.chosen_by == Profiles::choosers(env)
    }

    fn choosers(env: &Env) -> Vec<Option<String>> {
        FILE_CHOOSERS.iter().map(|v| env.get(*v).cloned()).collect()
    }
}

/// The key for `shell` run in `cwd` with `env`, whose profile files are
/// `profiles`: the shell, the directory, the profile files' contents, and
/// the variables those files name (plus the few every profile depends on).
/// Variables no profile file mentions, such as a per-call id an agent
/// sets, do not split the key.
pub(super) fn key(shell: &str, env: &Env, cwd: &Path, profiles: &Profiles) -> String {
    let mut h = Sha256::new();
    hash_identity(&mut h, Path::new(shell));
    h.update(cwd.as_os_str().as_encoded_bytes());
    h.update([0]);
    h.update(profiles.digest);
    let named = |k: &str| ALWAYS_KEYED.contains(&k) || profiles.words.contains(&word_hash(k));
    for (k, v) in env.iter().filter(|(k, _)| !shell_owned(k) && named(k)) {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.as_bytes());
        h.update([0]);
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn load(state_dir: &Path) -> Remembered {
    std::fs::read(state_dir.join(FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// A confirmed, fresh capture for this shell, environment and directory:
/// `Some(None)` when the profile is known not to be replayable.
pub(super) fn lookup(state_dir: &Path, key: &str) -> Option<Option<LoginEnv>> {
    let entry = load(state_dir).entries.into_iter().find(|e| e.key == key)?;
    let age = now().saturating_sub(entry.checked_at);
    (entry.confirmed && age < FRESH_FOR.as_secs()).then_some(entry.login)
}

/// Records a capture; it is confirmed when it equals the last one.
pub(super) fn record(state_dir: &Path, key: &str, login: Option<&LoginEnv>) {
    let mut remembered = load(state_dir);
    let confirmed = remembered
        .entries
        .iter()
        .any(|e| e.key == key && e.login.as_ref() == login);
    remembered.entries.retain(|e| e.key != key);
    remembered.entries.insert(
        0,
        Entry {
            key: key.to_string(),
            login: login.cloned(),
            confirmed,
            checked_at: now(),
        },
    );
    remembered.entries.truncate(KEEP);
    if let Err(e) = save(state_dir, &remembered) {
        tracing::debug!(error = %e, "could not remember the login environment");
    }
}

/// Writes the file atomically (a temporary file renamed over it).
fn save(state_dir: &Path, remembered: &Remembered) -> std::io::Result<()> {
    clawdis_store::create_private_dir(state_dir).map_err(std::io::Error::other)?;
    static WRITES: AtomicUsize = AtomicUsize::new(0);
    let tmp = state_dir.join(format!(
        ".{FILE}.{}.{}",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut file = opts.open(&tmp)?;
    file.write_all(&serde_json::to_vec(remembered).map_err(std::io::Error::other)?)?;
    drop(file);
    std::fs::rename(&tmp, state_dir.join(FILE)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key with the profile files read now.
    fn key_now(shell: &str, env: &Env, cwd: &Path) -> String {
        key(shell, env, cwd, &Profiles::read(env))
    }

    fn env(home: &Path) -> Env {
        Env::from([("HOME".to_string(), home.to_string_lossy().into_owned())])
    }

    #[test]
    fn a_capture_counts_once_two_agree() {
        let state = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let login = LoginEnv {
            set: vec![("A".into(), "1".into())],
            unset: vec![],
        };
        let (env, cwd) = (env(home.path()), home.path());
        record(state.path(), &key_now("/bin/sh", &env, cwd), Some(&login));
        assert_eq!(lookup(state.path(), &key_now("/bin/sh", &env, cwd)), None);
        record(state.path(), &key_now("/bin/sh", &env, cwd), Some(&login));
        assert_eq!(
            lookup(state.path(), &key_now("/bin/sh", &env, cwd)),
            Some(Some(login))
        );
        // A different capture starts over.
        let other = LoginEnv {
            set: vec![("A".into(), "2".into())],
            unset: vec![],
        };
        record(state.path(), &key_now("/bin/sh", &env, cwd), Some(&other));
        assert_eq!(lookup(state.path(), &key_now("/bin/sh", &env, cwd)), None);
    }

    #[test]
    fn editing_the_profile_or_a_variable_it_names_forgets_it() {
        let state = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".profile"),
            "[ -n \"$WORK_MODE\" ] && export A=1\n",
        )
        .unwrap();
        let (env, cwd) = (env(home.path()), home.path());
        record(state.path(), &key_now("/bin/sh", &env, cwd), None);
        record(state.path(), &key_now("/bin/sh", &env, cwd), None);
        assert_eq!(
            lookup(state.path(), &key_now("/bin/sh", &env, cwd)),
            Some(None)
        );
        let mut unrelated = env.clone();
        unrelated.insert("CALL_ID".into(), "42".into());
        assert_eq!(
            lookup(state.path(), &key_now("/bin/sh", &unrelated, cwd)),
            Some(None),
            "no profile file names CALL_ID"
        );
        let mut read = env.clone();
        read.insert("WORK_MODE".into(), "x".into());
        assert_eq!(lookup(state.path(), &key_now("/bin/sh", &read, cwd)), None);
        assert_eq!(
            lookup(
                state.path(),
                &key_now("/bin/sh", &env, home.path().parent().unwrap())
            ),
            None,
            "another directory"
        );
        std::fs::write(home.path().join(".profile"), "export A=2\n").unwrap();
        assert_eq!(lookup(state.path(), &key_now("/bin/sh", &env, cwd)), None);
    }

    #[test]
    fn the_file_is_private_and_a_corrupt_one_is_ignored() {
        let state = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let (env, cwd) = (env(home.path()), home.path());
        std::fs::write(state.path().join(FILE), "{not json").unwrap();
        assert_eq!(lookup(state.path(), &key_now("/bin/sh", &env, cwd)), None);
        record(state.path(), &key_now("/bin/sh", &env, cwd), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(state.path().join(FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    /// The read that yields between files (a resume's read-ahead) finds
    /// what the plain one finds.
    #[tokio::test]
    async fn reading_while_yielding_reads_the_same() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(".profile"), "export WORK_MODE=1\n").unwrap();
        let env = env(home.path());
        let (plain, yielding) = (Profiles::read(&env), Profiles::read_yielding(&env).await);
        assert!(plain.words.contains(&word_hash("WORK_MODE")));
        assert_eq!(
            (plain.chosen_by, plain.digest, plain.words),
            (yielding.chosen_by, yielding.digest, yielding.words)
        );
    }

    /// Profiles read ahead for one environment stand in for a fresh read
    /// only where a shell would read the same files.
    #[test]
    fn profiles_read_ahead_fit_only_the_same_files() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(one.path().join(".profile"), "export A=1\n").unwrap();
        std::fs::write(two.path().join(".profile"), "export A=2\n").unwrap();
        let (env_one, env_two) = (env(one.path()), env(two.path()));
        let read = Profiles::read(&env_one);
        let mut with_call_id = env_one.clone();
        with_call_id.insert("CALL_ID".into(), "7".into());
        assert!(read.fits(&env_one) && read.fits(&with_call_id));
        assert_eq!(
            key("/bin/sh", &with_call_id, one.path(), &read),
            key_now("/bin/sh", &with_call_id, one.path())
        );
        assert!(!read.fits(&env_two), "another HOME reads other files");
        let mut with_zdotdir = env_one;
        with_zdotdir.insert("ZDOTDIR".into(), two.path().to_string_lossy().into_owned());
        assert!(!read.fits(&with_zdotdir), "ZDOTDIR adds files");
    }
}
