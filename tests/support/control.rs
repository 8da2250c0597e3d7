//! A real `clawdis serve` on loopback, raw HTTP/1.1 requests to it, and a
//! fixture web server for the browser's pages.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{bin, workspace_root};

/// A free loopback port for a server a test starts later. It comes from
/// below the kernel's ephemeral range (32768 and up on Linux), so the
/// outgoing connections of parallel tests cannot take it in the meantime,
/// and it is reserved for this test process (an advisory lock on a file
/// named for it), so a parallel test cannot pick it before the server
/// binds it (once a restarted server found its CDP port taken so).
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let seed = std::process::id().wrapping_mul(7919)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
    loop {
        let n = seed.wrapping_add(NEXT.fetch_add(4099, Ordering::Relaxed));
        let port = 20_000 + (n % 12_000) as u16;
        let free = |ip: &str| TcpListener::bind((ip, port)).is_ok();
        if reserve(port)
            && free("127.0.0.1")
            && (free("::1") || TcpListener::bind("[::1]:0").is_err())
        {
            return port;
        }
    }
}

/// Reserves `port` for this process until it exits; false when another
/// test process holds it.
fn reserve(port: u16) -> bool {
    use std::os::fd::AsRawFd;
    static HELD: std::sync::Mutex<Vec<std::fs::File>> = std::sync::Mutex::new(Vec::new());
    let dir = std::env::temp_dir().join("clawdis-e2e-ports");
    let _ = std::fs::create_dir_all(&dir);
    let Ok(file) = std::fs::File::create(dir.join(port.to_string())) else {
        return false;
    };
    // SAFETY: flock(2) on a descriptor we own; it touches no memory of ours.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if locked {
        HELD.lock().unwrap_or_else(|e| e.into_inner()).push(file);
    }
    locked
}

/// A running `clawdis serve`, stopped (SIGTERM) on drop.
pub struct Server {
    /// The process.
    pub child: Child,
    /// Its API port.
    pub port: u16,
    /// Its bearer token.
    pub token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        super::signal(self.child.id() as i32, libc::SIGTERM);
        let _ = self.child.wait();
    }
}

/// Writes `settings` (a JSON object; `cdpPort` and `headless` are filled in
/// when absent) and starts `clawdis serve` on a free port.
pub fn start_server_with(home: &Path, settings: Value) -> Server {
    start_server_full(home, settings, &[], &[])
}

/// `start_server_with` plus extra `serve` flags and environment variables.
pub fn start_server_full(
    home: &Path,
    mut settings: Value,
    flags: &[&str],
    env: &[(&str, &Path)],
) -> Server {
    // A `controlUrl` in the settings names the port (as `clawdis mcp` reads it).
    let port = settings
        .get("controlUrl")
        .and_then(Value::as_str)
        .and_then(|url| url.rsplit(':').next()?.trim_end_matches('/').parse().ok())
        .unwrap_or_else(free_port);
    if settings.get("cdpPort").is_none() {
        settings["cdpPort"] = free_port().into();
    }
    if settings.get("headless").is_none() {
        settings["headless"] = true.into();
    }
    std::fs::create_dir_all(home).unwrap();
    std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
    let mut child = Command::new(bin("clawdis"))
        .args([
            "--home",
            home.to_str().unwrap(),
            "serve",
            "--port",
            &port.to_string(),
        ])
        .args(flags)
        .envs(env.iter().copied())
        .env("CLAWDIS_LOG", "info")
        .env("CLAWDIS_KEYCHAIN", "off")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ready when the server logs that it listens.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let line = lines
            .next()
            .expect("server exited before listening")
            .unwrap();
        if line.contains("control API listening") {
            break;
        }
    }
    // CLAWDIS_TEST_SERVER_LOG=1 shows the server's log (with --no-capture).
    let show = std::env::var_os("CLAWDIS_TEST_SERVER_LOG").is_some();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if show {
                #[allow(
                    clippy::print_stderr,
                    reason = "asked for with CLAWDIS_TEST_SERVER_LOG"
                )]
                {
                    eprintln!("server: {line}");
                }
            }
        }
    });
    let token = std::fs::read_to_string(home.join("secrets/control-token")).unwrap();
    Server { child, port, token }
}

/// `start_server_with` and default settings.
pub fn start_server(home: &Path) -> Server {
    start_server_with(home, serde_json::json!({}))
}

/// One HTTP/1.1 request; returns status and body.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    try_request(port, method, path, headers, body)
        .unwrap_or_else(|e| panic!("{method} {path} on port {port}: {e}"))
}

/// One HTTP/1.1 request, failing after two minutes without an answer;
/// returns status and body.
pub fn try_request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(120)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    stream.write_all(format!("{head}\r\n{body}").as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let raw = String::from_utf8_lossy(&raw).to_string();
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {raw:?}")))?;
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .map(|(h, b)| (h.to_string(), b.to_string()))
        .unwrap_or_default();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(&body)
    } else {
        body
    };
    Ok((status, body))
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&tail[..n]);
        rest = &tail[n + 2..];
    }
    out
}

/// Parses a JSON body, failing the test with the text when it is not JSON.
pub fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// An authorised client for one control API.
pub struct Client {
    port: u16,
    auth: String,
}

impl Client {
    /// A client that sends the server's token.
    pub fn new(server: &Server) -> Client {
        Client {
            port: server.port,
            auth: format!("Bearer {}", server.token),
        }
    }

    /// A client for the API on `port` that sends `token` (a named one).
    pub fn with_token(port: u16, token: &str) -> Client {
        Client {
            port,
            auth: format!("Bearer {}", token.trim()),
        }
    }

    /// A client for the API on `port` of a backend (the app's, say) whose
    /// token is the file under `home` (`CLAWDIS_KEYCHAIN=off`).
    pub fn for_home(port: u16, home: &Path) -> Client {
        let token = std::fs::read_to_string(home.join("secrets/control-token")).unwrap();
        Client {
            port,
            auth: format!("Bearer {}", token.trim()),
        }
    }

    /// Sends a request; returns status and parsed JSON (Null for non-JSON).
    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let text = body.map(|b| b.to_string()).unwrap_or_default();
        let (status, body) = request(
            self.port,
            method,
            path,
            &[
                ("Authorization", &self.auth),
                ("Content-Type", "application/json"),
            ],
            &text,
        );
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// A call that must succeed; returns the JSON.
    pub fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, v) = self.call(method, path, body);
        assert_eq!(status, 200, "{method} {path}: {v}");
        v
    }
}

/// The ref of the first entry with this role and name in a snapshot's
/// `refs` map.
pub fn ref_named(refs: &Value, role: &str, name: &str) -> String {
    refs.as_object()
        .and_then(|refs| {
            refs.iter()
                .find(|(_, v)| v["role"] == role && v["name"] == name)
        })
        .map(|(k, _)| k.clone())
        .unwrap_or_else(|| panic!("no {role} {name:?} in {refs}"))
}

/// A static web server for `tests/fixtures/pages` on a loopback port; `/dl`
/// answers an attachment, `/slow?ms=N` answers after N ms. Lives as long as the test process.
pub fn fixture_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let root = workspace_root().join("tests/fixtures/pages");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            std::thread::spawn(move || serve_one(stream, &root));
        }
    });
    port
}

fn serve_one(mut stream: TcpStream, root: &Path) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let target = first.split_whitespace().nth(1).unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = path.to_string();
    if path == "/slow" {
        // A slow request: `?ms=N` before the answer.
        let ms = query
            .strip_prefix("ms=")
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(1000);
        std::thread::sleep(Duration::from_millis(ms));
    }
    let (status, kind, extra, body): (&str, &str, &str, Vec<u8>) = if path == "/slow" {
        ("200 OK", "text/plain", "", b"slow answer".to_vec())
    } else if path == "/dl" {
        (
            "200 OK",
            "application/octet-stream",
            "Content-Disposition: attachment; filename=\"data.bin\"\r\n",
            b"clawdis download\n".to_vec(),
        )
    } else {
        let name = path.trim_start_matches('/');
        // `/npm/<package>/…`: the packages scripts/test installed from npm.
        let file = match name.strip_prefix("npm/") {
            Some(rest) => npm_modules().join(rest),
            None => root.join(name),
        };
        match (!name.contains("..")).then(|| std::fs::read(&file)) {
            Some(Ok(bytes)) => ("200 OK", content_type(&file), "", bytes),
            _ => ("404 Not Found", "text/plain", "", b"not found".to_vec()),
        }
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

/// `node_modules` of the npm packages the tests use (scripts/test installs
/// them into `target/test-npm`).
pub fn npm_modules() -> std::path::PathBuf {
    workspace_root().join("target/test-npm/node_modules")
}

/// Fails the test when an npm package it needs was not installed.
pub fn require_npm(package: &str) {
    let dir = npm_modules().join(package);
    assert!(
        dir.join("package.json").is_file(),
        "npm package {package} is missing from {}: run scripts/test, which installs it",
        npm_modules().display()
    );
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "text/html; charset=utf-8",
    }
}

/// Opens the event stream at `path` (`GET`, server-sent events) and
/// returns it once the server answered with its headers.
pub fn subscribe(port: u16, token: &str, path: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let text = read_until(&mut stream, "\r\n\r\n", Duration::from_secs(5));
    assert!(
        text.starts_with("HTTP/1.1 200") && text.contains("text/event-stream"),
        "{text}"
    );
    stream
}

/// Reads from `stream` until `needle` arrives; what was read.
pub fn read_until(stream: &mut TcpStream, needle: &str, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.contains(needle) {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "no {needle:?} within {timeout:?}; got: {text}"
        );
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => panic!("stream closed; got: {text}"),
            Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => panic!("{e}"),
        }
    }
    text
}

/// A loopback proxy in front of the API on `port` that adds `token` to
/// every request, for clients that cannot send one (the MCP conformance
/// suite). Each request gets a connection of its own (`Connection:
/// close`), so that every request passes through here with its header; the
/// rest (bodies, event streams) is copied as it comes. Lives as long as
/// the test process; answers its own port.
pub fn token_proxy(port: u16, token: &str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let own = listener.local_addr().unwrap().port();
    let token = token.to_string();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let token = token.clone();
            std::thread::spawn(move || proxy_one(client, port, &token));
        }
    });
    own
}

fn proxy_one(mut client: TcpStream, port: u16, token: &str) {
    // The request's head, byte by byte up to its blank line.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match client.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines: Vec<&str> = text
        .trim_end()
        .split("\r\n")
        .filter(|l| {
            let name = l
                .split(':')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            name != "authorization" && name != "connection"
        })
        .collect();
    let auth = format!("Authorization: Bearer {token}");
    lines.push(&auth);
    lines.push("Connection: close");
    let head = format!("{}\r\n\r\n", lines.join("\r\n"));
    let Ok(mut server) = TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    if server.write_all(head.as_bytes()).is_err() {
        return;
    }
    let (Ok(mut client_in), Ok(mut server_out)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    // The request's body (if any) one way, the answer the other.
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_in, &mut server_out);
        let _ = server_out.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut server, &mut client);
    let _ = client.shutdown(std::net::Shutdown::Both);
}
