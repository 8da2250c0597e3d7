//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`
//! 0.2.0-alpha.12, run on the Node.js 22 it needs, both installed by
//! scripts/test) against `/mcp` of a real `clawdis serve`, for the 2025-11-25
//! and the 2026-07-28 requirements. The suite sends no token, so a loopback
//! proxy adds it. The scenarios that call the suite's own fixtures (its
//! test tools, prompts and resources) are listed, each with its reason, in
//! tests/fixtures/mcp/conformance-expected-failures.yml; the suite fails a
//! run on any other failure and on a listed scenario that passes.

use std::process::Command;

use clawdis_e2e::control::{start_server, token_proxy};
use clawdis_e2e::workspace_root;

fn run_suite(requirements: &str) {
    let npm = workspace_root().join("target/test-npm/node_modules");
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        _ => "x64",
    };
    let node = npm.join(format!("node-linux-{arch}/bin/node"));
    let suite = npm.join("@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.is_file() && suite.is_file(),
        "the conformance suite or its Node.js is missing: run ./scripts/test, which installs them"
    );
    let dir = tempfile::tempdir().unwrap();
    let server = start_server(&dir.path().join("home"));
    let proxy = token_proxy(server.port, &server.token);
    // CLAWDIS_CONFORMANCE_RESULTS keeps the suite's results for a look.
    let results = std::env::var_os("CLAWDIS_CONFORMANCE_RESULTS")
        .map_or_else(|| dir.path().join("results"), std::path::PathBuf::from)
        .join(requirements);
    let baseline = workspace_root().join("tests/fixtures/mcp/conformance-expected-failures.yml");
    let out = Command::new(node)
        .arg(suite)
        .args(["server", "--url", &format!("http://127.0.0.1:{proxy}/mcp")])
        .args(["--requirements", requirements])
        .arg("--expected-failures")
        .arg(&baseline)
        .arg("-o")
        .arg(&results)
        .output()
        .unwrap();
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "conformance {requirements}:\n{report}\nfailed checks:\n{}",
        failed_checks(&results)
    );
}

/// The failed checks the suite recorded (`<scenario>/checks.json`), one
/// line each, for the report.
fn failed_checks(results: &std::path::Path) -> String {
    let mut lines = Vec::new();
    for scenario in std::fs::read_dir(results).into_iter().flatten().flatten() {
        let Ok(text) = std::fs::read_to_string(scenario.path().join("checks.json")) else {
            continue;
        };
        let checks: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        for check in checks.as_array().into_iter().flatten() {
            if check["status"] == "FAILURE" {
                lines.push(format!(
                    "{}: {}: {}",
                    scenario.file_name().to_string_lossy(),
                    check["id"],
                    check["errorMessage"]
                ));
            }
        }
    }
    lines.sort();
    lines.join("\n")
}

#[test]
fn conformance_2025_11_25() {
    run_suite("2025-11-25");
}

#[test]
fn conformance_2026_07_28() {
    run_suite("2026-07-28");
}
