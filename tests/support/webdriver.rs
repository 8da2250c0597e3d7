//! A small W3C WebDriver client for driving the app's windows in their
//! real web engine: WebKitGTK's own WebKitWebDriver, spoken to directly
//! (tauri-driver only forwards to it, and its pooled connections were reset
//! under load).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::control::{free_port, try_request};
use crate::desktop::Desktop;

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Fails the test unless `WebKitWebDriver` is installed.
pub fn require() {
    crate::require_tools(&["WebKitWebDriver"], "webkit2gtk-driver");
}

/// A WebDriver session on the app, started with `args`; the app and the
/// driver are stopped on drop, the app surely first (see `Drop`).
pub struct Session {
    driver: Child,
    port: u16,
    id: String,
    /// The app the driver started, once seen.
    app: Option<i32>,
    /// What the driver and the app it started printed, shown when a
    /// request fails.
    output: tempfile::NamedTempFile,
}

impl Session {
    /// Starts WebKitWebDriver on `desktop` (with `env`) and the app with `args`.
    pub fn start(desktop: &Desktop, env: &[(&str, &Path)], args: &[&str]) -> Session {
        let port = free_port();
        let output = tempfile::NamedTempFile::new().expect("a file for the driver's output");
        let printed = output.reopen().expect("the driver's output");
        let mut cmd = Command::new("WebKitWebDriver");
        cmd.arg(format!("--port={port}"))
            .arg("--host=127.0.0.1")
            // Lets the app's webviews accept automation (what tauri-driver sets).
            .env("TAURI_WEBVIEW_AUTOMATION", "true")
            .envs(env.iter().copied())
            .env("CLAWDIS_KEYCHAIN", "off")
            .stdout(Stdio::from(
                printed.try_clone().expect("the driver's output"),
            ))
            .stderr(Stdio::from(printed));
        desktop.apply(&mut cmd);
        let driver = cmd.spawn().expect("WebKitWebDriver");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "WebKitWebDriver did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "wry",
            "webkitgtk:browserOptions": {"binary": crate::bin("clawdis"), "args": args},
        }}});
        let mut session = Session {
            driver,
            port,
            id: String::new(),
            app: None,
            output,
        };
        let created = session.create(caps);
        session.id = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        session
    }

    /// `POST /session`: the driver starts the app and answers once it has
    /// connected to it. It never answers when the app exits first (its
    /// `SessionHost` then stops trying to connect, and nothing completes
    /// the request), as a second instance of the app does: it hands its
    /// arguments to the running one and exits. So the app is watched
    /// while the request waits, and one that exits fails the test at once
    /// with what it printed, instead of after the request's 120 s.
    fn create(&mut self, caps: Value) -> Value {
        let port = self.port;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(try_request(
                port,
                "POST",
                "/session",
                &[("Content-Type", "application/json")],
                &caps.to_string(),
            ));
        });
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(answer) => {
                    self.app = self.app.or_else(|| self.started_app());
                    return self.answer("POST", "/session", answer);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => match self.app {
                    Some(pid) if !crate::alive(pid) => panic!(
                        "the app (pid {pid}) exited before WebKitWebDriver started its session, \
                         which would then never start (is another instance of the app running \
                         on this desktop?); the driver and the app printed:\n{}",
                        self.printed()
                    ),
                    Some(_) => {}
                    None => self.app = self.started_app(),
                },
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    unreachable!("the request's thread sends its answer")
                }
            }
        }
    }

    /// The app the driver started (its child running the app's binary),
    /// if it runs now.
    fn started_app(&self) -> Option<i32> {
        let binary = crate::bin("clawdis").to_string_lossy().into_owned();
        let driver = self.driver.id() as i32;
        crate::processes(|args| args.first() == Some(&binary))
            .into_iter()
            .find(|pid| parent(*pid) == Some(driver) && crate::alive(*pid))
    }

    /// What the driver and the app printed so far.
    fn printed(&self) -> String {
        std::fs::read_to_string(self.output.path()).unwrap_or_default()
    }

    fn send(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let answer = try_request(
            self.port,
            method,
            path,
            &[("Content-Type", "application/json")],
            &body,
        );
        self.answer(method, path, answer)
    }

    /// The value of the driver's `answer` to `method path`; fails the test
    /// with what the driver and the app printed if there is none.
    fn answer(&self, method: &str, path: &str, answer: std::io::Result<(u16, String)>) -> Value {
        let (status, text) = answer.unwrap_or_else(|e| {
            panic!(
                "{method} {path}: {e}; the driver and the app printed:\n{}",
                self.printed()
            )
        });
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {text}"));
        assert!(status < 400, "{method} {path} -> {status}: {value}");
        value["value"].clone()
    }

    fn at(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.id)
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page.
    pub fn run(&self, script: &str, args: Value) -> Value {
        self.send(
            "POST",
            &self.at("/execute/sync"),
            Some(json!({"script": script, "args": args})),
        )
    }

    /// Resolves once the page's `check` expression (over `arg`) is truthy,
    /// re-checking on every DOM change (and every 50 ms, for input values),
    /// or fails after `timeout`.
    pub fn wait_for(&self, check: &str, arg: Value, timeout: Duration) -> Value {
        self.send(
            "POST",
            &self.at("/timeouts"),
            Some(json!({"script": timeout.as_millis() as u64 + 1000})),
        );
        let script = format!(
            "const arg = arguments[0], done = arguments[arguments.length - 1];
             const check = () => {{ try {{ return ({check}); }} catch (e) {{ return null; }} }};
             const first = check();
             if (first) return done(first);
             let finished = false;
             const finish = (v) => {{ if (finished) return; finished = true; obs.disconnect(); clearInterval(poll); clearTimeout(timer); done(v); }};
             const recheck = () => {{ const v = check(); if (v) finish(v); }};
             const obs = new MutationObserver(recheck);
             obs.observe(document, {{ subtree: true, childList: true, characterData: true, attributes: true }});
             // Input values are properties, not DOM: look again now and then too.
             const poll = setInterval(recheck, 50);
             const timer = setTimeout(() => finish(null), {ms});",
            ms = timeout.as_millis()
        );
        let value = self.send(
            "POST",
            &self.at("/execute/async"),
            Some(json!({"script": script, "args": [arg]})),
        );
        assert!(
            !value.is_null(),
            "timed out after {timeout:?} waiting for `{check}`"
        );
        value
    }

    /// The first element matching `css`.
    pub fn find(&self, css: &str) -> String {
        let found = self.send(
            "POST",
            &self.at("/element"),
            Some(json!({"using": "css selector", "value": css})),
        );
        found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_string()
    }

    /// Clicks the element matching `css`.
    pub fn click(&self, css: &str) {
        let id = self.find(css);
        self.send(
            "POST",
            &self.at(&format!("/element/{id}/click")),
            Some(json!({})),
        );
    }

    /// Presses `keys` on whatever has the focus, one after another, as a
    /// keyboard does (WebDriver's key codes: `\u{E007}` is Enter,
    /// `\u{E00C}` Escape).
    pub fn press(&self, keys: &str) {
        let actions: Vec<Value> = keys
            .chars()
            .flat_map(|k| {
                [
                    json!({"type": "keyDown", "value": k.to_string()}),
                    json!({"type": "keyUp", "value": k.to_string()}),
                ]
            })
            .collect();
        self.send(
            "POST",
            &self.at("/actions"),
            Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
        );
    }

    /// Closes the window, as a person does with its close button.
    pub fn close_window(&self) {
        self.send("DELETE", &self.at("/window"), None);
    }

    /// Reloads the page.
    pub fn refresh(&self) {
        self.send("POST", &self.at("/refresh"), Some(json!({})));
    }

    /// Replaces the text of the input matching `css`.
    pub fn fill(&self, css: &str, text: &str) {
        let id = self.find(css);
        self.send(
            "POST",
            &self.at(&format!("/element/{id}/clear")),
            Some(json!({})),
        );
        if !text.is_empty() {
            self.send(
                "POST",
                &self.at(&format!("/element/{id}/value")),
                Some(json!({"text": text})),
            );
        }
    }

    /// A PNG screenshot of the window as it is drawn now. WebKitGTK's
    /// WebDriver screenshot waits for the page's next rendering update;
    /// drawn without GL (the app sets GDK_GL=disable), a page that has
    /// stopped changing never sends one, so one is kept coming until it is
    /// taken.
    pub fn picture(&self) -> Vec<u8> {
        self.run(
            "window.__repaint = setInterval(() => { document.body.style.opacity = document.body.style.opacity ? '' : '0.999'; }, 100); return null;",
            json!([]),
        );
        let shot = self.screenshot();
        self.run(
            "clearInterval(window.__repaint); document.body.style.opacity = ''; return null;",
            json!([]),
        );
        shot
    }

    /// A PNG screenshot of the window.
    pub fn screenshot(&self) -> Vec<u8> {
        use base64::Engine;
        let b64 = self.send("GET", &self.at("/screenshot"), None);
        base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Session {
    /// Deletes the session, waits until the app is gone, and only then
    /// stops the driver.
    ///
    /// WebKitWebDriver stops the app on `DELETE`, but not before it
    /// answers: GLib's `g_subprocess_force_exit` hands the SIGKILL to its
    /// worker thread, which may send it after the answer has gone out, and
    /// a driver killed as soon as it has answered never sends it. The app
    /// left running still owns its single-instance name on the desktop's
    /// bus, so the next app a test starts there hands its arguments to it
    /// and exits, and that session never starts: CI of issue #44 waited
    /// 121 s on `POST /session` in
    /// the_app_pairs_a_device_and_confirms_a_pairing_a_shell_asked_for,
    /// whose second window is a second app on the same desktop. With both
    /// CPUs loaded, that test failed so in 4 runs of 5 before this wait.
    fn drop(&mut self) {
        if !self.id.is_empty() {
            let _ = try_request(self.port, "DELETE", &self.at(""), &[], "");
        }
        if let Some(pid) = self
            .app
            .filter(|pid| !crate::gone_within(*pid, Duration::from_secs(10)))
        {
            #[allow(
                clippy::print_stderr,
                reason = "an app the driver did not stop is stopped here; the log says so"
            )]
            {
                eprintln!("the app (pid {pid}) outlived its deleted session by 10 s; killing it");
            }
            crate::signal(pid, libc::SIGKILL);
            crate::gone_within(pid, Duration::from_secs(10));
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// The parent of process `pid`, if it runs.
fn parent(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's name, which is in parentheses and may hold any
    // character: the state, then the parent's id.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// How many distinct colours a PNG has: a blank window has one or two.
pub fn distinct_colours(png_bytes: &[u8]) -> usize {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let mut seen = std::collections::HashSet::new();
    for px in buf[..info.buffer_size()].chunks(channels) {
        seen.insert(px.to_vec());
    }
    seen.len()
}
