//! A desktop for black-box tests of the app: a private X server (Xvfb), a
//! private D-Bus session bus with its accessibility bus (AT-SPI) up, as a
//! person's desktop has it, and on it either a real notification daemon
//! (dunst, whose action menu a script answers as a person would) or a
//! recording notification server for what no daemon can show (the exact
//! text and action keys sent, a notification replaced in place).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Fails the test unless the desktop tools are installed.
pub fn require() {
    crate::require_tools(
        &["Xvfb", "dbus-daemon", "trayer", "xdotool"],
        "xvfb, dbus, trayer and xdotool",
    );
}

/// A child process that is killed when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cmd` and returns it with the first line it prints (tools that
/// announce readiness on stdout: `Xvfb -displayfd 1`, `dbus-daemon --print-address=1`).
fn start_announcing(mut cmd: Command) -> (Guard, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(!line.trim().is_empty(), "{cmd:?} announced nothing");
    (Guard(child), line.trim().to_string())
}

/// Starts the daemon `cmd` builds, with its output in `log`, and returns it
/// once `ready` holds. One that exits, or is not ready within 20 s, is
/// stopped and started again, twice at most, and the test's output says so
/// (seen under the full suite's load: a trayer whose panel never showed, a
/// dunst that never served); a third failure fails the test with what the
/// daemon printed.
fn start_daemon(
    cmd: impl Fn() -> Command,
    log: &std::path::Path,
    mut ready: impl FnMut() -> bool,
) -> Guard {
    for attempt in 1..=3 {
        let mut cmd = cmd();
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            if ready() {
                return Guard(child);
            }
            let exited = child.try_wait().ok().flatten();
            if exited.is_some() || std::time::Instant::now() >= deadline {
                drop(Guard(child));
                let said = std::fs::read_to_string(log).unwrap_or_default();
                let program = cmd.get_program().to_string_lossy().into_owned();
                let exited = exited.map_or("still running after 20 s".into(), |s| s.to_string());
                assert!(
                    attempt < 3,
                    "{program} was not ready after 3 tries (last: {exited}); it printed:\n{said}"
                );
                #[allow(
                    clippy::print_stderr,
                    reason = "a daemon that was not ready is started again; the log says so"
                )]
                {
                    eprintln!(
                        "{program} was not ready (try {attempt}: {exited}); it printed:\n{said}\nstarting it again"
                    );
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    unreachable!("the third try returns or fails")
}

/// An X display and a session bus, both private to one test.
pub struct Desktop {
    /// `DISPLAY`.
    pub display: String,
    /// `DBUS_SESSION_BUS_ADDRESS`.
    pub bus: String,
    /// The address of the session's accessibility bus (AT-SPI), up with
    /// its registry before anything starts on the desktop.
    pub accessibility: String,
    // Dropped in order: clients before the servers they talk to.
    extra: Vec<Guard>,
    _dbus: Guard,
    _x: Guard,
    /// Where the daemons started on it (trayer) log, and the session's
    /// `XDG_RUNTIME_DIR`.
    dir: tempfile::TempDir,
}

/// Brings up the accessibility bus of the session bus at `bus` and its
/// registry, as a person's desktop has them before any app starts, and
/// returns the accessibility bus's address.
///
/// GTK's AT-SPI bridge in each app (and WebKit's, in each web process)
/// asks the session bus's `org.a11y.Bus` for that address, connects, and
/// registers with `org.a11y.atspi.Registry` there. Started by the first
/// app instead, the bus and the registry would be started while the app
/// waits on them. `GetAddress` starts at-spi-bus-launcher and answers
/// once its bus listens; `StartServiceByName` answers once the registry
/// owns its name: both are waited on as the bus tells them, not slept on.
///
/// The socket is in the desktop's own runtime directory (see `start`):
/// on one shared path, every desktop's launcher took the socket over from
/// the one before, and an app was sent to another test's accessibility
/// bus, whose daemon refused it ("Couldn't register with accessibility
/// bus: Did not receive a reply", as in CI of issue #44: the GUID in the
/// address was the other bus's) or had already gone with its test.
///
/// They take milliseconds; each is given beyond the session bus's own 120 s
/// for a service to start, so the bus's own error is the one shown.
fn start_accessibility(bus: &str) -> String {
    let within = Duration::from_secs(150);
    let session = zbus::blocking::connection::Builder::address(bus)
        .map(|b| b.method_timeout(within))
        .and_then(|b| b.build())
        .unwrap_or_else(|e| panic!("the session bus at {bus}: {e}"));
    let address: String = session
        .call_method(
            Some("org.a11y.Bus"),
            "/org/a11y/bus",
            Some("org.a11y.Bus"),
            "GetAddress",
            &(),
        )
        .and_then(|reply| reply.body().deserialize())
        .unwrap_or_else(|e| {
            panic!("the session bus started no accessibility bus (is at-spi2-core installed?): {e}")
        });
    let a11y = zbus::blocking::connection::Builder::address(address.as_str())
        .map(|b| b.method_timeout(within))
        .and_then(|b| b.build())
        .unwrap_or_else(|e| panic!("the accessibility bus at {address}: {e}"));
    let registry = "org.a11y.atspi.Registry".try_into().expect("a bus name");
    zbus::blocking::fdo::DBusProxy::new(&a11y)
        .expect("the accessibility bus's driver")
        .start_service_by_name(registry, 0)
        .unwrap_or_else(|e| panic!("the accessibility bus started no registry: {e}"));
    address
}

impl Desktop {
    /// Starts Xvfb (it picks a free display) and a session bus, with its
    /// accessibility bus up.
    pub fn start() -> Desktop {
        let mut x = Command::new("Xvfb");
        x.args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
        ]);
        let (x_guard, number) = start_announcing(x);
        let dir = tempfile::tempdir().unwrap();
        let mut dbus = Command::new("dbus-daemon");
        dbus.args(["--session", "--nofork", "--print-address=1"])
            // The services the bus starts (the accessibility bus among them)
            // get a runtime directory of this desktop's own, as a person's
            // session has /run/user/<uid>: at-spi-bus-launcher puts the
            // accessibility bus's socket at `$XDG_RUNTIME_DIR/at-spi/bus`,
            // which without one is ~/.cache/at-spi/bus, one path for every
            // test desktop on the machine (see `start_accessibility`).
            .env("XDG_RUNTIME_DIR", dir.path())
            // And no display: one they started would not be this desktop's
            // (a developer's own, or none), and a notification daemon the
            // bus starts from the machine's service file (a `dunstctl`
            // racing the test's dunst) must not show up beside the test's.
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY");
        let (dbus_guard, bus) = start_announcing(dbus);
        let accessibility = start_accessibility(&bus);
        Desktop {
            display: format!(":{number}"),
            bus,
            accessibility,
            _x: x_guard,
            _dbus: dbus_guard,
            extra: Vec::new(),
            dir,
        }
    }

    /// Starts a system tray (trayer, an XEmbed tray host) at the top right;
    /// returns once its panel shows.
    pub fn tray(&mut self) {
        let trayer = start_daemon(
            || {
                let mut cmd = Command::new("trayer");
                cmd.args([
                    "--edge",
                    "top",
                    "--align",
                    "right",
                    "--widthtype",
                    "pixel",
                    "--width",
                    "120",
                    "--height",
                    "32",
                ])
                .args(["--SetDockType", "true"]);
                self.apply(&mut cmd);
                cmd
            },
            &self.dir.path().join("trayer.log"),
            || self.find_window(&["--classname", "^panel$"]).is_some(),
        );
        self.extra.push(trayer);
    }

    /// The windows matching `search` (xdotool's), if any, now.
    fn find_window(&self, search: &[&str]) -> Option<Vec<String>> {
        let mut cmd = Command::new("xdotool");
        cmd.arg("search").args(search);
        self.apply(&mut cmd);
        let out = cmd.output().expect("xdotool");
        let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        (out.status.success() && !ids.is_empty()).then_some(ids)
    }

    /// Runs xdotool on this display (giving up after 20 s) and returns what
    /// it printed.
    pub fn xdotool(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("timeout");
        cmd.arg("20").arg("xdotool").args(args);
        self.apply(&mut cmd);
        let out = cmd.output().expect("xdotool");
        assert!(
            out.status.success(),
            "xdotool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Waits until a window matches `search` (xdotool search options and a
    /// pattern) and returns the ids found. xdotool's own `--sync` can die
    /// on a window that vanishes while it walks the tree, so this retries.
    pub fn wait_window(&self, search: &[&str]) -> Vec<String> {
        self.window_within(search, Duration::from_secs(20))
            .unwrap_or_else(|| {
                panic!(
                    "no window matches {search:?}; visible windows: {:?}",
                    self.visible_windows()
                )
            })
    }

    /// The windows matching `search`, once some do within `timeout`.
    fn window_within(&self, search: &[&str], timeout: Duration) -> Option<Vec<String>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(ids) = self.find_window(search) {
                return Some(ids);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Opens the app's tray menu and picks its `n`th enabled item (1: Open
    /// Settings…, 2: Approvals…, …, 9: Start/Stop Browser, 10: Quit) with
    /// the keyboard, as a person would, until `done` holds: up to three
    /// picks, each given ten seconds. Returns whether `done` held.
    ///
    /// A pick can be lost, and a person would simply pick again: GTK closes
    /// a menu whose opening click is released over half a second after its
    /// press (its `MENU_SHELL_TIMEOUT`), which a loaded two-core machine's
    /// scheduling made happen once in CI (stop 42: Runs… never opened), and
    /// the keys then went to no menu.
    pub fn tray_pick_until(&self, n: usize, mut done: impl FnMut() -> bool) -> bool {
        for _ in 0..3 {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            let menu = self.tray_pick(n);
            while menu && std::time::Instant::now() < deadline {
                if done() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            #[allow(
                clippy::print_stderr,
                reason = "a lost pick is retried; the log says so"
            )]
            {
                eprintln!(
                    "tray pick {n} did nothing in 10 s (the menu {}); visible windows: {:?}; \
                     picking again",
                    if menu { "showed" } else { "never showed" },
                    self.visible_windows()
                );
            }
        }
        false
    }

    /// Opens the tray menu and picks its `n`th enabled item once (see
    /// `tray_pick_until`); whether the menu showed.
    fn tray_pick(&self, n: usize) -> bool {
        let icon = self
            .wait_window(&["--classname", "^tray-icon tray app clawdis$"])
            .remove(0);
        // Pressed and released in one go (`click` sleeps between them),
        // which keeps the two close together (see `tray_pick_until`).
        self.xdotool(&[
            "mousemove",
            "--window",
            &icon,
            "10",
            "10",
            "mousedown",
            "1",
            "mouseup",
            "1",
        ]);
        // The menu is a visible window named like the app itself.
        let menu = &[
            "--all",
            "--onlyvisible",
            "--classname",
            "--name",
            "^clawdis$",
        ];
        if self.window_within(menu, Duration::from_secs(10)).is_none() {
            return false;
        }
        let mut keys = vec!["key", "--delay", "50"];
        keys.extend(std::iter::repeat_n("Down", n));
        keys.push("Return");
        self.xdotool(&keys);
        true
    }

    /// Whether a visible window is named `title` exactly, now.
    pub fn shows(&self, title: &str) -> bool {
        self.visible_windows().iter().any(|name| name == title)
    }

    /// The names of the visible, named windows, now.
    fn visible_windows(&self) -> Vec<String> {
        let ids = self
            .find_window(&["--onlyvisible", "--name", "."])
            .unwrap_or_default();
        ids.iter()
            .filter_map(|id| {
                let mut cmd = Command::new("xdotool");
                cmd.args(["getwindowname", id]);
                self.apply(&mut cmd);
                let out = cmd.output().ok()?;
                out.status
                    .success()
                    .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            })
            .collect()
    }

    /// The process ids of the connections on this desktop's accessibility
    /// bus, now (the registry's, and each app's that registered there).
    pub fn accessibility_clients(&self) -> Vec<u32> {
        let a11y = zbus::blocking::connection::Builder::address(self.accessibility.as_str())
            .and_then(|b| b.build())
            .expect("the accessibility bus");
        let dbus = zbus::blocking::fdo::DBusProxy::new(&a11y).expect("its bus driver");
        dbus.list_names()
            .expect("the accessibility bus's names")
            .into_iter()
            .filter(|name| name.starts_with(':'))
            .filter_map(|name| dbus.get_connection_unix_process_id(name.as_ref()).ok())
            .filter(|pid| *pid != std::process::id())
            .collect()
    }

    /// Points `cmd` at this desktop.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env("DISPLAY", &self.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .env_remove("WAYLAND_DISPLAY");
    }
}

/// A notification as the server received it.
#[derive(Clone, Debug)]
pub struct Shown {
    /// The id the server gave it.
    pub id: u32,
    /// Sending application.
    pub app_name: String,
    /// Title.
    pub summary: String,
    /// Text.
    pub body: String,
    /// Action keys and labels, flattened as on the wire: `[key, label, ...]`.
    pub actions: Vec<String>,
}

/// The recording server; a module of its own because `zbus::interface`
/// generates public helpers that have no docs.
#[allow(missing_docs)]
mod server {
    use super::*;

    pub(super) struct Server {
        pub(super) shown: mpsc::Sender<Shown>,
        pub(super) next: u32,
        /// Who sent each notification: like a real server, this one answers
        /// that connection only.
        pub(super) senders: HashMap<u32, zbus::names::OwnedUniqueName>,
    }

    #[zbus::interface(name = "org.freedesktop.Notifications")]
    impl Server {
        /// Notify: records the notification and answers its id.
        #[allow(clippy::too_many_arguments)]
        fn notify(
            &mut self,
            #[zbus(header)] header: zbus::message::Header<'_>,
            app_name: String,
            replaces_id: u32,
            _app_icon: String,
            summary: String,
            body: String,
            actions: Vec<String>,
            _hints: HashMap<String, zbus::zvariant::OwnedValue>,
            _expire_timeout: i32,
        ) -> u32 {
            // Like a real server: replacing keeps the id.
            let id = if replaces_id != 0 {
                replaces_id
            } else {
                self.next += 1;
                self.next
            };
            if let Some(sender) = header.sender() {
                self.senders.insert(id, sender.to_owned().into());
            }
            let _ = self.shown.send(Shown {
                id,
                app_name,
                summary,
                body,
                actions,
            });
            id
        }

        /// GetCapabilities: actions, body and persistence, like dunst.
        fn get_capabilities(&self) -> Vec<String> {
            ["actions", "body", "persistence"]
                .map(String::from)
                .to_vec()
        }

        /// GetServerInformation.
        fn get_server_information(&self) -> (String, String, String, String) {
            (
                "clawdis-test".into(),
                "clawdis".into(),
                "1".into(),
                "1.2".into(),
            )
        }

        /// CloseNotification: tells the sender it was closed.
        async fn close_notification(
            &mut self,
            id: u32,
            #[zbus(signal_emitter)] emitter: zbus::object_server::SignalEmitter<'_>,
        ) {
            if let Some(sender) = self.senders.remove(&id) {
                // 3: closed by a call to CloseNotification.
                let _ = Server::notification_closed(&emitter.set_destination(sender.into()), id, 3)
                    .await;
            }
        }

        /// The NotificationClosed signal.
        #[zbus(signal)]
        async fn notification_closed(
            emitter: &zbus::object_server::SignalEmitter<'_>,
            id: u32,
            reason: u32,
        ) -> zbus::Result<()>;
    }
}
use server::Server;

/// The session's notification server (`org.freedesktop.Notifications`),
/// recording what it is sent.
pub struct Notifications {
    _conn: zbus::blocking::Connection,
    shown: mpsc::Receiver<Shown>,
}

impl Notifications {
    /// Owns the notification name on `desktop`'s bus.
    pub fn serve(desktop: &Desktop) -> Notifications {
        let (tx, rx) = mpsc::channel();
        let conn = zbus::blocking::connection::Builder::address(desktop.bus.as_str())
            .unwrap()
            .name("org.freedesktop.Notifications")
            .unwrap()
            .serve_at(
                "/org/freedesktop/Notifications",
                Server {
                    shown: tx,
                    next: 0,
                    senders: HashMap::new(),
                },
            )
            .unwrap()
            .build()
            .unwrap();
        Notifications {
            _conn: conn,
            shown: rx,
        }
    }

    /// The next notification shown, within `timeout`.
    pub fn next(&self, timeout: Duration) -> Option<Shown> {
        self.shown.recv_timeout(timeout).ok()
    }
}

/// dunst, a real notification daemon, on a test desktop. Its context menu
/// (`dunstctl context`) goes through a dmenu stand-in script that records
/// the menu and picks the line the test asked for, as a person picking an
/// action would; dunst then sends `ActionInvoked` as it does on any desktop.
pub struct Dunst {
    dir: tempfile::TempDir,
    display: String,
    bus: String,
    _daemon: Guard,
}

impl Dunst {
    /// Starts dunst on `desktop`; returns once it serves notifications.
    pub fn start(desktop: &Desktop) -> Dunst {
        crate::require_tools(&["dunst", "dunstctl"], "dunst");
        let dir = tempfile::tempdir().unwrap();
        let pick = dir.path().join("pick");
        std::fs::write(
            &pick,
            format!(
                "#!/bin/sh\ncat > '{0}/menu.part'\nmv '{0}/menu.part' '{0}/menu'\ngrep -F -m1 -e \"$(cat '{0}/choice')\" '{0}/menu'\n",
                dir.path().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&pick, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let conf = dir.path().join("dunstrc");
        // Markup on, as dunst's own example configuration has it: what the
        // app sends is read as Pango markup.
        std::fs::write(
            &conf,
            format!(
                "[global]\n    dmenu = {}\n    markup = full\n",
                pick.display()
            ),
        )
        .unwrap();
        let daemon = start_daemon(
            || {
                let mut cmd = Command::new("dunst");
                cmd.arg("-conf")
                    .arg(&conf)
                    .env("XDG_RUNTIME_DIR", dir.path());
                desktop.apply(&mut cmd);
                cmd
            },
            &dir.path().join("dunst.log"),
            || {
                dunstctl(&desktop.display, &desktop.bus, &["count", "displayed"]).as_deref()
                    == Some("0")
            },
        );
        Dunst {
            display: desktop.display.clone(),
            bus: desktop.bus.clone(),
            _daemon: daemon,
            dir,
        }
    }

    fn dunstctl(&self, args: &[&str]) -> Option<String> {
        dunstctl(&self.display, &self.bus, args)
    }

    /// Waits up to `timeout` until dunst shows `n` notifications.
    pub fn wait_displayed(&self, n: usize, timeout: Duration) {
        let deadline = std::time::Instant::now() + timeout;
        let mut seen = None;
        while std::time::Instant::now() < deadline {
            seen = self.dunstctl(&["count", "displayed"]);
            if seen.as_deref() == Some(n.to_string().as_str()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("dunst shows {seen:?} notifications, not {n}, after {timeout:?}");
    }

    /// Closes the newest notification, as a person dismissing it does.
    pub fn close(&self) {
        assert!(self.dunstctl(&["close"]).is_some(), "dunstctl close failed");
    }

    /// The bodies of the notifications dunst has closed, newest first, as
    /// it received them.
    pub fn history_bodies(&self) -> Vec<String> {
        let text = self.dunstctl(&["history"]).expect("dunstctl history");
        let history: serde_json::Value = serde_json::from_str(&text).unwrap();
        history["data"][0]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|n| n["body"]["data"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Opens dunst's action menu and picks the first line containing
    /// `choice` (such as `Approve (`); returns the menu's lines.
    pub fn pick(&self, choice: &str) -> Vec<String> {
        let (menu, chosen) = (self.dir.path().join("menu"), self.dir.path().join("choice"));
        let _ = std::fs::remove_file(&menu);
        std::fs::write(&chosen, choice).unwrap();
        assert!(
            self.dunstctl(&["context"]).is_some(),
            "dunstctl context failed"
        );
        // dunst runs the menu on a thread of its own.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(text) = std::fs::read_to_string(&menu) {
                return text.lines().map(str::to_string).collect();
            }
            assert!(std::time::Instant::now() < deadline, "dunst opened no menu");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// What `dunstctl args` prints for the dunst on `display` and `bus`, if it
/// succeeds.
fn dunstctl(display: &str, bus: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("dunstctl")
        .args(args)
        .env("DISPLAY", display)
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .output()
        .expect("dunstctl");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The menu-bar app (`clawdis` with no subcommand) on a test desktop,
/// stopped on drop.
pub struct App {
    child: Child,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The control API's port.
    pub port: u16,
}

impl App {
    /// Starts the app for `home` (runs in `state`) with `settings` and the
    /// control API on a free port; returns once it watches for approvals.
    pub fn start(
        desktop: &Desktop,
        home: &std::path::Path,
        state: &std::path::Path,
        mut settings: serde_json::Value,
    ) -> App {
        std::fs::create_dir_all(home).unwrap();
        let port = crate::control::free_port();
        settings["controlUrl"] = format!("http://127.0.0.1:{port}").into();
        std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
        let mut cmd = Command::new(crate::bin("clawdis"));
        cmd.args(["--home", home.to_str().unwrap()])
            .env("LOBSTER_STATE_DIR", state)
            .env("CLAWDIS_KEYCHAIN", "off")
            .env("CLAWDIS_LOG", "info,clawdis=debug")
            .env("XDG_RUNTIME_DIR", home)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        desktop.apply(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if line.contains("watching approvals") {
                    let _ = ready_tx.send(());
                }
                sink.lock().unwrap().push(line);
            }
        });
        let app = App { child, log, port };
        if ready_rx.recv_timeout(Duration::from_secs(30)).is_err() {
            panic!("the app did not start:\n{}", app.log());
        }
        app
    }

    /// Waits up to `timeout` for the app to exit; its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if std::time::Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Everything the app logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// The app's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for App {
    fn drop(&mut self) {
        super::signal(self.child.id() as i32, libc::SIGTERM);
        let _ = self.child.wait();
    }
}
