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
/// it is answered), and returns the session id and the click's `handled`
/// entries: what was handled on the way is in the action's own result.
fn buy_on(c: &Client, url: &str) -> (String, Vec<Value>) {
    let (status, s) = c.call("POST", "/sessions", Some(json!({ "url": url })));
    assert_eq!(status, 201, "{s}");
    let id = s["sessionId"].as_str().unwrap().to_string();
    let r = act(
        c,
        &id,
        "click",
        json!({ "selector": "#buy", "timeout": "medium" }),
    );
    let handled = r["handled"].as_array().cloned().unwrap_or_default();
    let bought = act(
        c,
        &id,
        "evaluate",
        json!({ "script": "window.bought === true" }),
    );
    assert_eq!(bought["data"]["result"], true, "the click reached Buy");
    (id, handled)
}

fn eval(c: &Client, id: &str, script: &str) -> Value {
    act(c, id, "evaluate", json!({ "script": script }))["data"]["result"].clone()
}

/// The entry that reports the banner of `cmp` declined by `by` (`rules`
/// or `fallback`): named, with what was pressed and the choice made.
fn declined(handled: &[Value], cmp: &str, by: &str) -> Value {
    let entry = handled
        .iter()
        .find(|h| {
            h["kind"] == "consent"
                && h["cmp"]
                    .as_str()
                    .unwrap_or_default()
                    .to_lowercase()
                    .contains(&cmp.to_lowercase())
        })
        .unwrap_or_else(|| panic!("the {cmp} banner is reported as declined: {handled:?}"))
        .clone();
    assert_eq!(entry["by"], by, "{entry}");
    assert!(
        ["reject", "necessary", "save"].contains(&entry["choice"].as_str().unwrap_or_default()),
        "{entry}"
    );
    entry
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
    declined(&handled, "cookieconsent", "rules");
    let prefs = eval(&c, &id, "CookieConsent.getUserPreferences()");
    assert_eq!(prefs["acceptType"], "necessary", "{prefs}");
    assert_eq!(prefs["acceptedCategories"], json!(["necessary"]), "{prefs}");
    c.ok("DELETE", &format!("/sessions/{id}"), None);

    // klaro: "Decline".
    let (id, handled) = buy_on(&c, &format!("http://127.0.0.1:{pages}/consent/klaro.html"));
    declined(&handled, "klaro", "rules");
    let consents = eval(&c, &id, "klaro.getManager().consents");
    assert_eq!(consents, json!({ "analytics": false, "ads": false }));
    assert_eq!(eval(&c, &id, "klaro.getManager().confirmed"), true);
    c.ok("DELETE", &format!("/sessions/{id}"), None);

    // tarteaucitron, in the middle of the page over a backdrop: "Deny all".
    let (id, handled) = buy_on(
        &c,
        &format!("http://127.0.0.1:{pages}/consent/tarteaucitron.html"),
    );
    declined(&handled, "tarteaucitron", "rules");
    let cookie = eval(&c, &id, "document.cookie");
    assert!(
        cookie.as_str().unwrap().contains("youtube=false"),
        "{cookie}"
    );
}
