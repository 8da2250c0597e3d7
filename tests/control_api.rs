//! The control API of `clawdis serve`, black-box: a real server process on
//! loopback, real HTTP, a real headless Chromium behind `/start`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;

use base64::Engine;
use clawdis_e2e::control::{json, request, start_server};
use clawdis_e2e::{alive, bin};

/// A POST announcing a 2 MiB body; the server must refuse it from the
/// headers alone (sending the body would race the server's close).
fn oversized_request(port: u16, auth: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "POST /stop HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nAuthorization: {auth}\r\nContent-Length: {}\r\n\r\n",
        2 * 1024 * 1024
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut raw = String::new();
    stream
        .read_to_string(&mut raw)
        .expect("a response without the body being sent");
    let status = raw.split(' ').nth(1).unwrap().parse().unwrap();
    (
        status,
        raw.split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default(),
    )
}

#[test]
fn every_call_needs_the_token_and_a_loopback_host() {
    let home = tempfile::tempdir().unwrap();
    let s = start_server(home.path());
    let auth = format!("Bearer {}", s.token);

    assert_eq!(request(s.port, "GET", "/", &[], "").0, 401);
    assert_eq!(
        request(s.port, "GET", "/", &[("Authorization", "Bearer wrong")], "").0,
        401
    );
    assert_eq!(request(s.port, "POST", "/stop", &[], "").0, 401);
    // OpenClaw's other spellings of the same secret.
    let basic = format!("Basic {}", base64_encode(&format!("openclaw:{}", s.token)));
    for header in [
        ("x-openclaw-password", s.token.as_str()),
        ("Authorization", basic.as_str()),
    ] {
        assert_eq!(
            request(s.port, "GET", "/", &[header], "").0,
            200,
            "{}",
            header.0
        );
    }
    let wrong = format!("Basic {}", base64_encode("openclaw:nope"));
    assert_eq!(
        request(s.port, "GET", "/", &[("Authorization", &wrong)], "").0,
        401
    );
    let (status, body) = request(s.port, "GET", "/", &[("x-openclaw-password", "nope")], "");
    assert_eq!((status, body.as_str()), (401, "Unauthorized"));

    let (status, body) = request(
        s.port,
        "GET",
        "/",
        &[("Authorization", &auth), ("Host", "evil.example")],
        "",
    );
    assert_eq!(status, 403, "DNS-rebinding Host refused: {body}");
    assert!(json(&body)["error"].is_string());

    let (status, body) = request(
        s.port,
        "POST",
        "/stop",
        &[("Authorization", &auth), ("Origin", "https://evil.example")],
        "{}",
    );
    assert_eq!(status, 403, "cross-site write refused: {body}");

    let (status, body) = request(
        s.port,
        "POST",
        "/stop",
        &[("Authorization", &auth)],
        "{not json",
    );
    assert_eq!(status, 400);
    assert!(json(&body)["error"].as_str().unwrap().contains("JSON"));

    let (status, body) = oversized_request(s.port, &auth);
    assert_eq!(status, 413, "{body}");
    assert!(json(&body)["error"].is_string());

    let (status, body) = request(
        s.port,
        "GET",
        "/no/such/route",
        &[("Authorization", &auth)],
        "",
    );
    assert_eq!(status, 404, "unknown paths are 404: {body}");
    assert!(json(&body)["error"].is_string());
    for (method, path) in [
        ("POST", "/trace/stop"),
        ("POST", "/trace/start"),
        ("POST", "/set/credentials"),
        ("POST", "/profiles/create"),
    ] {
        let (status, body) = request(s.port, method, path, &[("Authorization", &auth)], "");
        assert_eq!(
            status, 501,
            "OpenClaw routes not implemented here are 501: {method} {path} {body}"
        );
        assert!(
            json(&body)["error"]
                .as_str()
                .unwrap()
                .contains("not implemented")
        );
    }
}

#[test]
fn token_is_private_and_printed_by_the_cli() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let s = start_server(home.path());
    let mode = std::fs::metadata(home.path().join("secrets/control-token"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "token file readable by others: {mode:o}");
    let out = Command::new(bin("clawdis"))
        .args(["--home", home.path().to_str().unwrap(), "token"])
        .env("CLAWDIS_KEYCHAIN", "off")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), s.token);
}

#[test]
fn start_launches_the_clawd_browser_and_stop_ends_it() {
    let home = tempfile::tempdir().unwrap();
    let s = start_server(home.path());
    let auth = format!("Bearer {}", s.token);

    let (status, body) = request(s.port, "GET", "/", &[("Authorization", &auth)], "");
    assert_eq!(status, 200, "{body}");
    let before = json(&body);
    assert_eq!(before["running"], false);
    assert_eq!(before["color"], "#FF4500");
    assert_eq!(
        before["ports"]["control"], s.port,
        "the port the API listens on is reported"
    );
    assert!(
        before["userDataDir"]
            .as_str()
            .unwrap()
            .starts_with(home.path().to_str().unwrap()),
        "isolated profile: {before}"
    );

    let (status, body) = request(s.port, "POST", "/start", &[("Authorization", &auth)], "");
    assert_eq!(status, 200, "{body}");
    let started = json(&body);
    assert_eq!(started["running"], true, "{started}");
    let pid = started["pid"].as_i64().unwrap() as i32;
    assert!(alive(pid), "browser process alive");

    let (status, body) = request(s.port, "POST", "/start", &[("Authorization", &auth)], "");
    assert_eq!(
        (status, json(&body)["pid"].as_i64()),
        (200, Some(pid as i64)),
        "second start reuses the browser"
    );

    let (status, body) = request(s.port, "POST", "/stop", &[("Authorization", &auth)], "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["stopped"], true);
    let (_, body) = request(s.port, "GET", "/", &[("Authorization", &auth)], "");
    assert_eq!(json(&body)["running"], false);
}

/// This machine's address on its default route, when it has one.
fn outward_address() -> Option<std::net::IpAddr> {
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    probe.connect("10.255.255.255:1").ok()?;
    Some(probe.local_addr().ok()?.ip()).filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
}

#[test]
fn cross_site_writes_never_launch_and_same_origin_ones_do() {
    let home = tempfile::tempdir().unwrap();
    let s = start_server(home.path());
    let auth = format!("Bearer {}", s.token);
    if let Some(ip) = outward_address() {
        assert!(
            std::net::TcpStream::connect((ip, s.port)).is_err(),
            "the API listens on loopback only"
        );
    }
    for header in [
        ("Origin", "http://evil.example"),
        ("Origin", "null"),
        ("Sec-Fetch-Site", "cross-site"),
        ("Referer", "http://evil.example/x"),
    ] {
        let (status, body) = request(
            s.port,
            "POST",
            "/start",
            &[("Authorization", &auth), header],
            "",
        );
        assert_eq!(status, 403, "{header:?}: {body}");
    }
    let (_, body) = request(s.port, "GET", "/", &[("Authorization", &auth)], "");
    assert_eq!(json(&body)["running"], false, "no browser was started");
    let origin = format!("http://127.0.0.1:{}", s.port);
    let (status, body) = request(
        s.port,
        "POST",
        "/start",
        &[("Authorization", &auth), ("Origin", &origin)],
        "",
    );
    assert_eq!(
        (status, json(&body)["ok"].as_bool()),
        (200, Some(true)),
        "{body}"
    );
}

#[test]
fn a_remote_control_url_means_connect_only() {
    let home = tempfile::tempdir().unwrap();
    let s = clawdis_e2e::control::start_server_full(
        home.path(),
        serde_json::json!({}),
        &["--control-url", "http://10.20.30.40:18791"],
        &[],
    );
    let auth = format!("Bearer {}", s.token);
    let (status, body) = request(s.port, "POST", "/start", &[("Authorization", &auth)], "");
    assert!(
        (400..500).contains(&status) && json(&body)["error"].is_string(),
        "{status} {body}"
    );
    let (_, body) = request(s.port, "GET", "/", &[("Authorization", &auth)], "");
    let status = json(&body);
    assert_eq!(
        (status["running"].as_bool(), status["attachOnly"].as_bool()),
        (Some(false), Some(true)),
        "{status}"
    );
    assert!(
        !home.path().join("browser/clawd/user-data").exists(),
        "nothing was launched"
    );
}

fn base64_encode(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}
