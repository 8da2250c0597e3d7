//! Launching the real Debian Chromium headless with the clawd profile.

use std::net::{Ipv4Addr, TcpListener};
use std::time::Duration;

use clawdis_browser::discovery::find_executable;
use clawdis_browser::launch::{LaunchOptions, running_as_root};
use clawdis_browser::{color, process, profile};

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn launches_themed_isolated_profile_and_stops() {
    // A machine without Chromium fails here: scripts/test installs it.
    let exe = find_executable(None, std::env::var("PATH").ok().as_deref(), None)
        .unwrap_or_else(|e| panic!("this test needs Chromium (scripts/test installs it): {e}"));
    let home = tempfile::tempdir().unwrap();
    let opts = LaunchOptions {
        user_data_dir: profile::user_data_dir(home.path(), "clawd"),
        cdp_port: free_port(),
        headless: true,
        no_sandbox: running_as_root(),
    };
    let argb = color::signed_argb(color::parse_hex("#FF4500").unwrap());
    process::prepare_profile(&exe, &opts, "clawd", argb).unwrap();
    let local: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(opts.user_data_dir.join("Local State")).unwrap(),
    )
    .unwrap();
    assert_eq!(local["profile"]["info_cache"]["Default"]["name"], "clawd");
    assert_eq!(
        local["profile"]["info_cache"]["Default"]["profile_color_seed"],
        -47872
    );

    let mut browser = process::start(&exe, &opts, Duration::from_secs(30)).unwrap();
    assert!(browser.is_running());
    assert!(
        browser
            .ws_url
            .contains(&format!("127.0.0.1:{}", opts.cdp_port)),
        "{}",
        browser.ws_url
    );
    let version = process::cdp_version(opts.cdp_port).unwrap();
    assert!(
        version["Browser"]
            .as_str()
            .unwrap_or_default()
            .contains("Chrome"),
        "{version}"
    );
    // The theme survived a real run of the browser.
    let prefs: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(opts.user_data_dir.join("Default/Preferences")).unwrap(),
    )
    .unwrap();
    assert_eq!(prefs["browser"]["theme"]["user_color2"], -47872);
    browser.stop(Duration::from_secs(5)).unwrap();
    assert!(
        process::cdp_version(opts.cdp_port).is_none(),
        "CDP port closed after stop"
    );
}
