//! Cookie banners of real consent libraries (installed from npm by
//! scripts/test) are declined, not clicked through or hidden: each page's
//! oracle is the consent the library itself recorded.

use clawdis_e2e::control::{Client, fixture_server, require_npm, start_server};
use serde_json::{Value, json};

fn act(c: &Client, id: &str, action: &str, body: Value) -> Value {
    let (status, r) = c.call("POST", &format!("/sessions/{id}/{action}"), Some(body));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["ok"], true, "{action}: {r}");
    r
}

/// Opens `page` in a new session, clicks Buy (which a banner covers until
/// it is answered), and returns the session id and every `handled` entry.
fn buy_on(c: &Client, url: &str) -> (String, Vec<Value>) {
    let (status, s) = c.call("POST", "/sessions", Some(json!({ "url": url })));
    assert_eq!(status, 201, "{s}");
    let id = s["sessionId"].as_str().unwrap().to_string();
    let mut handled = Vec::new();
    let r = act(
        c,
        &id,
        "click",
        json!({ "selector": "#buy", "timeout": "medium" }),
    );
    handled.extend(r["handled"].as_array().cloned().unwrap_or_default());
    let r = act(
        c,
        &id,
        "evaluate",
        json!({ "script": "window.bought === true" }),
    );
    assert_eq!(r["data"]["result"], true, "the click reached Buy");
    handled.extend(r["handled"].as_array().cloned().unwrap_or_default());
    (id, handled)
}

fn eval(c: &Client, id: &str, script: &str) -> Value {
    act(c, id, "evaluate", json!({ "script": script }))["data"]["result"].clone()
}

fn declined(handled: &[Value], cmp: &str) {
    assert!(
        handled.iter().any(|h| h["kind"] == "consent"
            && h["detail"]
                .as_str()
                .unwrap_or_default()
                .to_lowercase()
                .contains(&cmp.to_lowercase())),
        "the banner is reported as declined: {handled:?}"
    );
}

#[test]
fn banners_of_three_consent_libraries_are_declined() {
    for package in ["vanilla-cookieconsent", "klaro", "tarteaucitronjs"] {
        require_npm(package);
    }
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);

    // vanilla-cookieconsent v3 blocks the page until answered: "Reject all".
    let (id, handled) = buy_on(
        &c,
        &format!("http://127.0.0.1:{pages}/consent/vanilla.html"),
    );
    declined(&handled, "cookieconsent");
    let prefs = eval(&c, &id, "CookieConsent.getUserPreferences()");
    assert_eq!(prefs["acceptType"], "necessary", "{prefs}");
    assert_eq!(prefs["acceptedCategories"], json!(["necessary"]), "{prefs}");
    c.ok("DELETE", &format!("/sessions/{id}"), None);

    // klaro: "Decline".
    let (id, handled) = buy_on(&c, &format!("http://127.0.0.1:{pages}/consent/klaro.html"));
    declined(&handled, "klaro");
    let consents = eval(&c, &id, "klaro.getManager().consents");
    assert_eq!(consents, json!({ "analytics": false, "ads": false }));
    assert_eq!(eval(&c, &id, "klaro.getManager().confirmed"), true);
    c.ok("DELETE", &format!("/sessions/{id}"), None);

    // tarteaucitron, in the middle of the page over a backdrop: "Deny all".
    let (id, handled) = buy_on(
        &c,
        &format!("http://127.0.0.1:{pages}/consent/tarteaucitron.html"),
    );
    declined(&handled, "tarteaucitron");
    let cookie = eval(&c, &id, "document.cookie");
    assert!(
        cookie.as_str().unwrap().contains("youtube=false"),
        "{cookie}"
    );
}
