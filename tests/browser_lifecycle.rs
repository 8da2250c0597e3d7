//! The clawd browser's lifecycle through the control API, black-box:
//! isolation, theming, headless, stop, `kill -9` recovery, attach-only,
//! port conflicts, and a restarted server adopting its browser
//! (browser.md §5, 5–15 and 50).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clawdis_e2e::control::{
    Client, fixture_server, free_port, start_server_full, start_server_with,
};
use clawdis_e2e::{cmdline, signal};
use serde_json::{Value, json};

/// Browser (not helper) processes running on this user-data-dir.
fn browsers_on(dir: &Path) -> Vec<i32> {
    let flag = format!("--user-data-dir={}", dir.display());
    clawdis_e2e::processes(|args| {
        args.contains(&flag) && !args.iter().any(|a| a.starts_with("--type="))
    })
}

fn port_open(port: u16) -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200)).is_ok()
}

/// Polls `f` until it holds or `limit` passes; true when it held.
fn within(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `GET /json/version` on Chromium's DevTools port (which keeps the
/// connection open, so the response is read up to its length).
fn devtools_version(port: u16) -> Option<Value> {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(format!("GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes())
        .ok()?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).ok().filter(|n| *n > 0)?;
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw);
        if let Some((_, body)) = text.split_once("\r\n\r\n")
            && let Ok(v) = serde_json::from_str::<Value>(body)
        {
            return Some(v);
        }
    }
}

fn read_json(path: PathBuf) -> Value {
    serde_json::from_slice(
        &std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

#[test]
fn isolated_themed_headless_and_recovers_from_kill_9() {
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    // A fake $HOME shows whether the user's own Chromium profile is touched.
    let user_home = tempfile::tempdir().unwrap();
    let cdp = free_port();
    let server = start_server_full(
        home.path(),
        json!({ "cdpPort": cdp, "headless": false }),
        &[],
        &[("HOME", user_home.path())],
    );
    let c = Client::new(&server);

    let started = c.ok("POST", "/start?headless=true", None);
    assert_eq!(started["ok"], true);
    let status = c.ok("GET", "/", None);
    let pid = status["pid"].as_i64().unwrap() as i32;
    assert_eq!(
        (status["running"].as_bool(), status["headless"].as_bool()),
        (Some(true), Some(true)),
        "{status}"
    );
    let user_data = home.path().join("browser/clawd/user-data");
    assert_eq!(status["userDataDir"], user_data.display().to_string());
    let args = cmdline(pid);
    assert!(
        args.contains(&format!("--user-data-dir={}", user_data.display())),
        "{args:?}"
    );
    assert!(
        args.contains(&format!("--remote-debugging-port={cdp}")),
        "{args:?}"
    );
    assert!(args.iter().any(|a| a.starts_with("--headless")), "{args:?}");
    assert!(
        devtools_version(cdp).is_some_and(|v| v["webSocketDebuggerUrl"].is_string()),
        "CDP answers on {cdp}"
    );
    assert!(
        !port_open(9222) || TcpListener::bind("127.0.0.1:9222").is_err(),
        "never 9222"
    );

    // Theming: the profile is named clawd in lobster orange.
    let local = read_json(user_data.join("Local State"));
    assert_eq!(local["profile"]["info_cache"]["Default"]["name"], "clawd");
    assert_eq!(
        local["profile"]["info_cache"]["Default"]["profile_color_seed"],
        -47872
    );
    assert_eq!(
        read_json(user_data.join("Default/Preferences"))["browser"]["theme"]["user_color2"],
        -47872
    );

    c.ok(
        "POST",
        "/tabs/open",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/form.html") })),
    );

    // kill -9: status notices within 2 s; the next call relaunches.
    signal(pid, libc::SIGKILL);
    assert!(
        within(Duration::from_secs(2), || c.ok("GET", "/", None)["running"]
            == false),
        "running:false within 2 s of kill -9"
    );
    let tab = c.ok(
        "POST",
        "/tabs/open",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/form.html") })),
    );
    assert_eq!(tab["title"], "Form");
    let relaunched = c.ok("GET", "/", None)["pid"].as_i64().unwrap() as i32;
    assert_ne!(relaunched, pid);

    // stop: the port closes, no browser is left on the profile.
    let stopped = c.ok("POST", "/stop", None);
    assert_eq!(
        (stopped["ok"].as_bool(), stopped["stopped"].as_bool()),
        (Some(true), Some(true))
    );
    assert!(
        within(Duration::from_secs(5), || !port_open(cdp)
            && browsers_on(&user_data).is_empty()),
        "browser gone after stop"
    );
    assert_eq!(c.ok("GET", "/", None)["running"], false);
    assert_eq!(
        c.ok("GET", "/tabs", None),
        json!({ "running": false, "tabs": [] })
    );

    for dir in [".config/chromium", ".config/google-chrome"] {
        assert!(
            !user_home.path().join(dir).exists(),
            "the user's {dir} was touched"
        );
    }
}

#[test]
fn a_new_accent_colour_rethemes_the_profile_at_the_next_launch() {
    let home = tempfile::tempdir().unwrap();
    let user_data = home.path().join("browser/clawd/user-data");
    let color = |user_data: &std::path::Path| {
        read_json(user_data.join("Local State"))["profile"]["info_cache"]["Default"]["profile_color_seed"].clone()
    };
    {
        let server = start_server_full(home.path(), json!({ "cdpPort": free_port() }), &[], &[]);
        let c = Client::new(&server);
        c.ok("POST", "/start", None);
        c.ok("POST", "/stop", None);
        assert_eq!(color(&user_data), -47872);
    }
    // The settings window saved another colour: #1E90FF is ARGB 0xFF1E90FF.
    let server = start_server_full(
        home.path(),
        json!({ "cdpPort": free_port(), "accentColor": "#1E90FF" }),
        &[],
        &[],
    );
    let c = Client::new(&server);
    c.ok("POST", "/start", None);
    assert_eq!(color(&user_data), 0xFF1E90FFu32 as i32);
    assert_eq!(
        read_json(user_data.join("Default/Preferences"))["browser"]["theme"]["user_color2"],
        0xFF1E90FFu32 as i32
    );
    c.ok("POST", "/stop", None);
}

#[test]
fn attach_only_connects_and_never_launches() {
    let home = tempfile::tempdir().unwrap();
    let cdp = free_port();
    let server = start_server_full(
        home.path(),
        json!({ "cdpPort": cdp }),
        &["--attach-only"],
        &[],
    );
    let c = Client::new(&server);
    let (status, body) = c.call("POST", "/start", None);
    assert!(
        (400..500).contains(&status) && body["error"].is_string(),
        "{status} {body}"
    );
    assert!(browsers_on(&home.path().join("browser/clawd/user-data")).is_empty());
    assert_eq!(c.ok("GET", "/", None)["attachOnly"], true);

    drop(server);

    // A browser someone else started is used. It picks its own port (so no
    // other test can take it first) and the server is pointed at it.
    let theirs = tempfile::tempdir().unwrap();
    let mut chromium = Command::new("/usr/bin/chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--no-first-run",
            "--remote-debugging-port=0",
            &format!("--user-data-dir={}", theirs.path().display()),
            "about:blank",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let port_file = theirs.path().join("DevToolsActivePort");
    let mut port = 0u16;
    assert!(
        within(Duration::from_secs(20), || {
            port = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.lines().next()?.parse().ok())
                .unwrap_or(0);
            port != 0 && devtools_version(port).is_some()
        }),
        "hand-started chromium answers"
    );
    let server = start_server_full(
        home.path(),
        json!({ "cdpPort": port }),
        &["--attach-only"],
        &[],
    );
    let c = Client::new(&server);
    c.ok("POST", "/start", None);
    let tabs = c.ok("GET", "/tabs", None);
    assert_eq!(tabs["running"], true);
    assert!(
        tabs["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["url"] == "about:blank"),
        "{tabs}"
    );
    let _ = chromium.kill();
    let _ = chromium.wait();
}

#[test]
fn an_occupied_cdp_port_is_reported_and_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let squatter = TcpListener::bind("127.0.0.1:0").unwrap();
    let cdp = squatter.local_addr().unwrap().port();
    let server = start_server_with(home.path(), json!({ "cdpPort": cdp }));
    let c = Client::new(&server);
    let began = Instant::now();
    let (status, body) = c.call("POST", "/start", None);
    assert!(began.elapsed() < Duration::from_secs(20));
    assert!(
        status >= 400 && body["error"].as_str().unwrap().contains(&cdp.to_string()),
        "{status} {body}"
    );
    assert!(
        TcpStream::connect(("127.0.0.1", cdp)).is_ok(),
        "the other process keeps its port"
    );
    let doctor = c.ok("GET", "/doctor", None);
    let find = |id: &str| {
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["id"] == id)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(
        (
            find("cdp-port")["status"].as_str(),
            find("executable")["status"].as_str()
        ),
        (Some("warn"), Some("pass")),
        "{doctor}"
    );
    assert!(
        find("cdp-port")["summary"]
            .as_str()
            .unwrap()
            .contains(&cdp.to_string())
    );
    assert!(browsers_on(&home.path().join("browser/clawd/user-data")).is_empty());
}

#[test]
fn port_9222_is_refused() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("settings.json"), r#"{"cdpPort":9222}"#).unwrap();
    let out = Command::new(clawdis_e2e::bin("clawdis"))
        .args([
            "--home",
            home.path().to_str().unwrap(),
            "serve",
            "--port",
            &free_port().to_string(),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("9222"));
    let out = Command::new(clawdis_e2e::bin("clawdis"))
        .args([
            "--home",
            home.path().to_str().unwrap(),
            "serve",
            "--cdp-port",
            "9222",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("9222"));
}

#[test]
fn a_restarted_server_adopts_its_browser() {
    let home = tempfile::tempdir().unwrap();
    let cdp = free_port();
    let user_data = home.path().join("browser/clawd/user-data");
    let first = start_server_with(home.path(), json!({ "cdpPort": cdp }));
    let pid = Client::new(&first).ok("POST", "/start", None);
    let pid = pid["pid"].as_i64().unwrap_or_else(|| {
        Client::new(&first).ok("GET", "/", None)["pid"]
            .as_i64()
            .unwrap()
    });
    // The server dies without stopping Chromium.
    signal(first.child.id() as i32, libc::SIGKILL);
    drop(first);
    assert_eq!(
        browsers_on(&user_data),
        vec![pid as i32],
        "chromium outlives the server"
    );

    let second = start_server_with(home.path(), json!({ "cdpPort": cdp }));
    let c = Client::new(&second);
    c.ok("POST", "/start", None);
    assert_eq!(
        c.ok("GET", "/", None)["pid"],
        pid,
        "adopted, not relaunched"
    );
    assert_eq!(
        browsers_on(&user_data).len(),
        1,
        "no second chromium on the profile"
    );
    assert_eq!(
        c.ok("POST", "/tabs/open", Some(json!({ "url": "about:blank" })))["url"],
        "about:blank"
    );
    drop(second);
    assert!(
        within(Duration::from_secs(10), || browsers_on(&user_data)
            .is_empty()),
        "the adopted browser is stopped with the server"
    );
}

#[test]
fn reset_profile_moves_it_aside_and_the_next_start_is_fresh() {
    let home = tempfile::tempdir().unwrap();
    let server = start_server_with(home.path(), json!({}));
    let c = Client::new(&server);
    c.ok("POST", "/tabs/open", Some(json!({ "url": "about:blank" })));
    let user_data = home.path().join("browser/clawd/user-data");
    std::fs::write(user_data.join("marker"), "old").unwrap();
    let reset = c.ok("POST", "/reset-profile", None);
    assert_eq!(
        (reset["moved"].as_bool(), reset["from"].as_str()),
        (Some(true), Some(user_data.to_str().unwrap())),
        "{reset}"
    );
    let moved = PathBuf::from(reset["to"].as_str().unwrap());
    assert!(moved.join("marker").exists() && !user_data.exists());
    assert_eq!(
        c.ok("GET", "/", None)["running"],
        false,
        "the browser was stopped first"
    );
    c.ok("POST", "/tabs/open", Some(json!({ "url": "about:blank" })));
    assert!(!user_data.join("marker").exists(), "a fresh profile");
    assert_eq!(
        read_json(user_data.join("Local State"))["profile"]["info_cache"]["Default"]["name"],
        "clawd",
        "themed again"
    );
}

#[test]
fn doctor_names_a_missing_browser() {
    let home = tempfile::tempdir().unwrap();
    let server = start_server_with(
        home.path(),
        json!({ "executablePath": "/nonexistent/chromium" }),
    );
    let c = Client::new(&server);
    let doctor = c.ok("GET", "/doctor", None);
    assert_eq!(doctor["ok"], false, "{doctor}");
    let exe = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == "executable")
        .unwrap();
    assert_eq!(exe["status"], "fail");
    assert!(exe["fixHint"].is_string());
    assert_eq!(
        c.call("POST", "/start", None).0,
        500,
        "start fails the same way"
    );
}

/// Issue #20: on a machine without Chromium the backend still starts, and
/// the first browser call says which package to install.
#[test]
fn without_a_browser_the_backend_starts_and_names_the_package() {
    let home = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let server = clawdis_e2e::control::start_server_full(
        home.path(),
        json!({}),
        &[],
        &[("PATH", empty.path())],
    );
    let c = Client::new(&server);
    assert_eq!(c.ok("GET", "/", None)["running"], false);
    for (method, path, body) in [
        ("POST", "/tabs/open", Some(json!({ "url": "about:blank" }))),
        ("POST", "/start", None),
    ] {
        let (status, err) = c.call(method, path, body);
        let message = err["error"].as_str().unwrap_or_default();
        assert_eq!(status, 500, "{path}: {err}");
        assert!(
            message.contains("no browser found") && message.contains("apt-get install chromium"),
            "{path}: {message}"
        );
    }
    let doctor = c.ok("GET", "/doctor", None);
    let exe = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == "executable")
        .unwrap()
        .clone();
    assert!(
        exe["fixHint"]
            .as_str()
            .unwrap()
            .contains("apt-get install chromium"),
        "{exe}"
    );
    assert_eq!(c.ok("GET", "/", None)["running"], false, "still serving");
}
