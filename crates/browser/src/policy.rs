//! Where the clawd browser may navigate: http(s) to any host (loopback
//! included, for local dev servers) and `about:blank`; never `file:`,
//! `javascript:`, `chrome:` and the like. Optional host allow/block lists
//! come from settings.

use crate::settings::Settings;
use crate::{BrowserError, Result};

/// Checks `url` against the policy; returns it normalised.
pub fn check_url(url: &str, settings: &Settings) -> Result<String> {
    let text = url.trim();
    if text.is_empty() {
        return Err(BrowserError::invalid("url is required"));
    }
    if text == "about:blank" {
        return Ok(text.to_string());
    }
    let parsed = url::Url::parse(text)
        .map_err(|e| BrowserError::invalid(format!("invalid URL {text}: {e}")))?;
    match parsed.scheme() {
        "http" | "https" => {}
        other => {
            return Err(BrowserError::invalid(format!(
                "navigation blocked: {other}: URLs are not allowed (only http, https and about:blank)"
            )));
        }
    }
    let host = parsed
        .host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if settings
        .blocked_hosts
        .iter()
        .any(|p| host_matches(p, &host))
    {
        return Err(BrowserError::invalid(format!(
            "navigation blocked: host {host} is on the block list"
        )));
    }
    if !settings.allowed_hosts.is_empty()
        && !settings
            .allowed_hosts
            .iter()
            .any(|p| host_matches(p, &host))
    {
        return Err(BrowserError::invalid(format!(
            "navigation blocked: host {host} is not on the allow list"
        )));
    }
    Ok(parsed.to_string())
}

/// `example.com` matches itself; `*.example.com` matches its subdomains and itself.
fn host_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.trim().to_ascii_lowercase();
    match pattern.strip_prefix("*.") {
        Some(base) => host == base || host.ends_with(&format!(".{base}")),
        None => host == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_and_host_lists() {
        let s = Settings::default();
        assert!(check_url("http://127.0.0.1:8000/x", &s).is_ok());
        assert!(check_url("https://example.com", &s).is_ok());
        assert!(check_url("about:blank", &s).is_ok());
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "chrome://settings",
            "data:text/html,hi",
            "",
            "not a url",
        ] {
            let err = check_url(bad, &s).unwrap_err();
            assert!(matches!(err, BrowserError::Invalid { .. }), "{bad}: {err}");
        }
        let s = Settings {
            blocked_hosts: vec!["*.ads.example".into()],
            ..Settings::default()
        };
        assert!(check_url("http://x.ads.example/", &s).is_err());
        assert!(check_url("http://ads.example/", &s).is_err());
        assert!(check_url("http://example.com/", &s).is_ok());
        let s = Settings {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into()],
            ..Settings::default()
        };
        assert!(check_url("http://localhost:3000/", &s).is_ok());
        assert!(check_url("https://example.com/", &s).is_err());
    }
}
