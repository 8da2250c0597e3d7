//! The control token lives in the OS keychain: a real Secret Service
//! (gnome-keyring) on a private D-Bus session, driven through `clawdis token`.

use std::path::Path;
use std::process::Command;

use clawdis_e2e::bin;

/// Runs `script` in a fresh D-Bus session with an unlocked gnome-keyring;
/// fails when those tools are missing (scripts/test installs them).
fn in_keyring_session(scratch: &Path, script: &str) -> String {
    clawdis_e2e::require_tools(
        &["dbus-run-session", "gnome-keyring-daemon"],
        "dbus and gnome-keyring",
    );
    for dir in ["data", "runtime"] {
        std::fs::create_dir_all(scratch.join(dir)).unwrap();
    }
    let setup =
        "echo -n ci-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1;";
    let out = Command::new("dbus-run-session")
        .args(["--", "sh", "-c", &format!("{setup} {script}")])
        .env("XDG_DATA_HOME", scratch.join("data"))
        .env("XDG_RUNTIME_DIR", scratch.join("runtime"))
        .env("HOME", scratch)
        .env_remove("CLAWDIS_KEYCHAIN")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_control_token_lives_in_the_keychain() {
    let scratch = tempfile::tempdir().unwrap();
    let home = scratch.path().join("clawdis");
    let clawdis = format!("{} --home {}", bin("clawdis").display(), home.display());
    let out = in_keyring_session(scratch.path(), &format!("{clawdis} token; {clawdis} token"));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0], lines[1], "one token across runs");
    assert_eq!(lines[0].len(), 64);
    assert!(
        !home.join("secrets/control-token").exists(),
        "no file when a keychain is reachable"
    );

    // A token kept in a file (no keychain before) moves into the keychain.
    let other = scratch.path().join("other");
    std::fs::create_dir_all(other.join("secrets")).unwrap();
    std::fs::write(other.join("secrets/control-token"), "from-a-file\n").unwrap();
    let clawdis = format!("{} --home {}", bin("clawdis").display(), other.display());
    let out = in_keyring_session(scratch.path(), &format!("{clawdis} token; {clawdis} token"));
    assert_eq!(out, "from-a-file\nfrom-a-file\n");
    assert!(
        !other.join("secrets/control-token").exists(),
        "the file is gone once the keychain holds it"
    );
}

/// Where no keychain answers, the backend says so once as it starts, in
/// words a person acts on, and a command says nothing (issue 44: every
/// command printed "keychain unreachable; using files under home", four
/// times at `serve`'s start).
#[test]
fn without_a_keychain_the_backend_says_so_once_and_commands_say_nothing() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let scratch = tempfile::tempdir().unwrap();
    let home = scratch.path().join("clawdis");
    let no_bus = format!("unix:path={}", scratch.path().join("no-bus").display());
    let clawdis = |args: &[&str]| {
        let mut command = Command::new(bin("clawdis"));
        command
            .arg("--home")
            .arg(&home)
            .args(args)
            .env_remove("CLAWDIS_KEYCHAIN")
            .env("DBUS_SESSION_BUS_ADDRESS", &no_bus)
            .env("CLAWDIS_LOG", "info");
        command
    };
    let port = clawdis_e2e::control::free_port().to_string();
    let mut serve = clawdis(&["serve", "--no-browser", "--port", &port])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = Vec::new();
    for line in BufReader::new(serve.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let listening = line.contains("control API listening");
        said.push(line);
        if listening {
            break;
        }
    }
    let _ = serve.kill();
    let _ = serve.wait();
    let told: Vec<&String> = said
        .iter()
        .filter(|l| l.to_lowercase().contains("keychain"))
        .collect();
    assert_eq!(told.len(), 1, "{said:#?}");
    let told = told[0];
    assert!(
        told.contains("0600 files under")
            && told.contains("Secret Service")
            && told.contains("CLAWDIS_KEYCHAIN=off"),
        "{told}"
    );

    let token = clawdis(&["token"]).output().unwrap();
    assert!(token.status.success(), "{token:?}");
    let stderr = String::from_utf8_lossy(&token.stderr);
    assert!(!stderr.to_lowercase().contains("keychain"), "{stderr}");
}
