//! OpenClaw's own browser client (npm `openclaw`, as scripts/test installs
//! it, its modules unchanged) drives `clawdis serve`: status, tabs,
//! snapshots, actions, the agent's `browser` tool, and 2026.9.6's newer
//! routes (`/cookies/set-many`, the system-profile routes, `/screencast`
//! and its WebSocket). scripts/openclaw-client-check.mjs makes the calls
//! and checks each answer.

use clawdis_e2e::control::{fixture_server, start_server};
use clawdis_e2e::workspace_root;

#[test]
fn openclaws_client_drives_every_route_it_knows() {
    let reference = workspace_root().join("target/openclaw-ref/node_modules");
    let arch = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "x64"
    };
    let node = reference.join(format!("node-linux-{arch}/bin/node"));
    let dist = reference.join("openclaw/dist");
    assert!(
        node.exists() && dist.exists(),
        "OpenClaw or its Node is missing from {}: run scripts/test, which installs them",
        reference.display()
    );
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let out = std::process::Command::new(&node)
        .arg(workspace_root().join("scripts/openclaw-client-check.mjs"))
        .arg(&dist)
        .arg(format!("http://127.0.0.1:{}", server.port))
        .arg(format!("http://127.0.0.1:{pages}/form.html"))
        .env("OPENCLAW_GATEWAY_TOKEN", &server.token)
        .env("HOME", home.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for step in [
        "ok   act click",
        "ok   cookies set-many",
        "ok   import profile (refused)",
        "ok   screencast stream",
        "ok   screencast ticket used twice",
        "ok   close tab (raw id) while watched",
        "ok   tool act click",
    ] {
        assert!(said.lines().any(|l| l == step), "{step} missing:\n{said}");
    }
}
