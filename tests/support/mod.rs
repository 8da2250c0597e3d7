//! Helpers for black-box tests: locating workspace binaries and running them.

pub mod control;
pub mod desktop;
pub mod phone;
pub mod plain_system;
pub mod webdriver;
pub mod webhooks;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Path of a binary built from this workspace (`cargo test --workspace`
/// builds every binary next to the test executables).
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing; run the suite with ./scripts/test (it builds the binaries first)",
        path.display()
    );
    path
}

/// The shared materials directory beside the project (`../shared`), or
/// `CLAWDIS_SHARED_DIR`.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("CLAWDIS_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            workspace_root()
                .parent()
                .map(|p| p.join("shared"))
                .unwrap_or_default()
        });
    dir.is_dir().then_some(dir)
}

/// The `lobster` binary as it is installed: `scripts/build-lobster --debug`
/// (statically linked on Linux), which `scripts/test` builds and names in
/// `CLAWDIS_SHIPPED_LOBSTER`; a run without it fails.
pub fn shipped_lobster() -> PathBuf {
    let path = std::env::var_os("CLAWDIS_SHIPPED_LOBSTER")
        .map(PathBuf::from)
        .expect("CLAWDIS_SHIPPED_LOBSTER is not set: run the suite with ./scripts/test, which builds the shipped lobster and sets it");
    assert!(
        path.is_file(),
        "CLAWDIS_SHIPPED_LOBSTER names {}, which is missing",
        path.display()
    );
    path
}

/// Runs the public Lobster conformance corpus (`../shared`) against the
/// `lobster` at `bin` and fails with the runner's report unless every case
/// passes, or when `../shared` is missing.
pub fn assert_public_corpus_passes(bin: &Path) {
    let shared = shared_dir().expect("../shared (the Lobster conformance corpus) is not beside the checkout; set CLAWDIS_SHARED_DIR");
    let lobster = shared.join("conformance/lobster");
    let out = Command::new("python3")
        .arg(lobster.join("run.py"))
        .arg("--bin")
        .arg(bin)
        .arg("--cases")
        .arg(lobster.join("public"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        out.status.success() && summary.ends_with(" passed, 0 failed"),
        "conformance failures ({}):\n{stdout}",
        bin.display()
    );
}

/// A `lobster` command with an isolated state directory and home.
pub fn lobster(state: &Path) -> Command {
    lobster_at(&bin("lobster"), state)
}

/// [`lobster`] for the binary at `path`.
pub fn lobster_at(path: &Path, state: &Path) -> Command {
    let mut cmd = Command::new(path);
    cmd.env("LOBSTER_STATE_DIR", state)
        .env("HOME", state)
        .env_remove("CLAWDIS_HOME");
    cmd
}

/// Parses the last JSON document on stdout.
pub fn envelope(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.rfind("\n{").map_or(0, |i| i + 1);
    serde_json::from_str(&text[start..])
        .unwrap_or_else(|e| panic!("no JSON envelope ({e}) in: {text}"))
}

/// Fails the test unless every tool in `tools` is on PATH, naming the
/// Debian `packages` that scripts/test installs: a test never passes for
/// want of its material.
pub fn require_tools(tools: &[&str], packages: &str) {
    let have = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    assert!(
        missing.is_empty(),
        "missing {missing:?}: scripts/test installs them (packages: {packages})"
    );
}

/// A workflow that pauses on two mails (from `mails.json` in its directory)
/// and, once approved, appends `sent` to `sent.txt` and outputs `done`.
pub const MAIL_FLOW: &str = "exec --json --shell 'cat mails.json' | approve --prompt 'Send 2 mails?' | exec --shell 'echo sent >> sent.txt; echo done'";

/// A scratch area for one test: a Clawdis home, a state directory for runs
/// and a working directory holding `mails.json` for [`MAIL_FLOW`].
pub struct Scratch {
    /// Removed on drop.
    pub dir: tempfile::TempDir,
    /// `<dir>/home`.
    pub home: PathBuf,
    /// `<dir>/state`.
    pub state: PathBuf,
    /// `<dir>/work`.
    pub work: PathBuf,
}

impl Scratch {
    /// Creates the directories and `work/mails.json`.
    pub fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let (home, state, work) = (
            dir.path().join("home"),
            dir.path().join("state"),
            dir.path().join("work"),
        );
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("mails.json"), r#"[{"to":"ann"},{"to":"bob"}]"#).unwrap();
        Scratch {
            dir,
            home,
            state,
            work,
        }
    }

    /// Runs `lobster run --mode tool <flow>` in `work` with runs in `state`;
    /// its envelope.
    pub fn run(&self, flow: &str) -> serde_json::Value {
        let out = lobster(&self.state)
            .current_dir(&self.work)
            .args(["run", "--mode", "tool", flow])
            .output()
            .unwrap();
        envelope(&out)
    }

    /// Runs `lobster resume --token <token> <args…>` like an agent would.
    pub fn resume(&self, token: &str, args: &[&str]) -> Output {
        lobster(&self.state)
            .current_dir(&self.work)
            .args(["resume", "--token", token])
            .args(args)
            .output()
            .unwrap()
    }

    /// `clawdis <args>` on this home, with its runs' state directory: the
    /// store the app started for this scratch reads (tokens, devices).
    pub fn clawdis(&self, args: &[&str]) -> Output {
        Command::new(bin("clawdis"))
            .arg("--home")
            .arg(&self.home)
            .args(args)
            .env("LOBSTER_STATE_DIR", &self.state)
            .env("CLAWDIS_KEYCHAIN", "off")
            .output()
            .expect("clawdis runs")
    }

    /// The lines the mail flow's last step wrote.
    pub fn sent(&self) -> String {
        std::fs::read_to_string(self.work.join("sent.txt")).unwrap_or_default()
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch::new()
    }
}

/// A stand-in for an HTTP service we do not own: answers every POST with
/// the JSON `reply`; returns its URL (`http://127.0.0.1:<port>`) and the
/// request bodies it received.
pub fn json_stub(reply: &'static str) -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            log.lock()
                .unwrap()
                .push(serde_json::from_slice(&body).unwrap());
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, seen)
}

/// Sends `sig` to process `pid` (`kill(2)`).
pub fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) only sends a signal; it touches no memory of ours.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// The arguments process `pid` was started with (empty once it is gone).
pub fn cmdline(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The processes, found in /proc, whose arguments satisfy `wanted`.
pub fn processes(wanted: impl Fn(&[String]) -> bool) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|pid| wanted(&cmdline(*pid)))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether process `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

/// `dir/home` with a workflow library holding `flows` (name → the text of
/// `workflows/<name>.lobster`).
pub fn home_with(dir: &Path, flows: &[(&str, &str)]) -> PathBuf {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    for (name, text) in flows {
        std::fs::write(home.join("workflows").join(format!("{name}.lobster")), text).unwrap();
    }
    home
}

/// Waits up to `limit` for process `pid` to be gone; whether it went.
pub fn gone_within(pid: i32, limit: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while alive(pid) {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

/// The JSON a successful command printed on stdout; fails the test with
/// its stderr otherwise.
pub fn stdout_json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// `clawdis --home <home> <args…>` with the home's file secrets and the
/// state directory the home's backend reads.
pub fn clawdis_cli(home: &Path, args: &[&str]) -> Output {
    Command::new(bin("clawdis"))
        .arg("--home")
        .arg(home)
        .args(args)
        .env("CLAWDIS_KEYCHAIN", "off")
        .env_remove("LOBSTER_STATE_DIR")
        .output()
        .expect("clawdis runs")
}

/// A new named token of `role` in `home`. An agent token comes from
/// `clawdis token create`; an approver token is made as the app makes it
/// once the person confirms a request (which `tests/desktop_windows.rs`
/// and `tests/tokens.rs` drive), recorded as confirmed in the app.
pub fn create_token(home: &Path, name: &str, role: &str) -> String {
    if role == "approver" {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        return runtime.block_on(async {
            let store = clawdis_store::Store::open_dir(home).await.unwrap();
            let person = clawdis_store::Issuer {
                by: Some("person".into()),
                via: "app".into(),
                presence: Some(clawdis_store::Presence::Click),
            };
            clawdis_server::create_token(&store, name, clawdis_store::Role::Approver, &person)
                .await
                .unwrap()
        });
    }
    let out = clawdis_cli(home, &["token", "create", "--name", name, "--role", role]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Runs `lobster run --mode tool <flow>` in `work` with runs in `state`
/// (a home, for tests that start a backend on it); its envelope.
pub fn run_tool(state: &Path, work: &Path, flow: &str) -> serde_json::Value {
    envelope(
        &lobster(state)
            .current_dir(work)
            .args(["run", "--mode", "tool", flow])
            .output()
            .expect("lobster runs"),
    )
}

/// The Python with the reference libraries the tests check against
/// (`modules`): `CLAWDIS_TEST_PYTHON`, which `scripts/test` sets to the
/// virtual environment it installs. A run without it fails.
pub fn test_python(modules: &[&str]) -> PathBuf {
    let python = std::env::var_os("CLAWDIS_TEST_PYTHON")
        .map(PathBuf::from)
        .expect("CLAWDIS_TEST_PYTHON is not set: run the suite with ./scripts/test, which installs a Python with the reference libraries and sets it");
    let probe = Command::new(&python)
        .args(["-c", &format!("import {}", modules.join(", "))])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    assert!(
        probe.status.success(),
        "{} cannot import {}: {}",
        python.display(),
        modules.join(", "),
        String::from_utf8_lossy(&probe.stderr)
    );
    python
}
