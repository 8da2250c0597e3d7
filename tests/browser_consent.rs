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

/// Consent libraries autoconsent's rules leave up, unmodified from npm:
/// the fallback finds the control that declines inside the covering banner
/// (open shadow roots included), presses it with trusted input, and
/// reports it; a banner that offers nothing but agreeing stays `covered`.
#[test]
fn banners_the_rules_leave_up_are_declined_by_the_fallback() {
    for package in [
        "orejime",
        "@porscheofficial/cookie-consent-banner",
        "@beyonk/gdpr-cookie-consent-banner",
    ] {
        require_npm(package);
    }
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);

    // orejime's forced modal: its "Decline all apps" only turns the
    // purposes off (the rules press it and stop there); saving with every
    // purpose off answers it.
    let (id, handled) = buy_on(
        &c,
        &format!("http://127.0.0.1:{pages}/consent/orejime.html"),
    );
    let entry = declined(&handled, "orejime", "fallback");
    assert_eq!(entry["choice"], "save", "{entry}");
    assert_eq!(
        eval(
            &c,
            &id,
            "[orejime.manager.getConsent('analytics'), orejime.manager.getConsent('ads')]"
        ),
        json!([false, false])
    );
    c.ok("DELETE", &format!("/sessions/{id}"), None);

    // Porsche's web component, in its open shadow root: only the required
    // cookies.
    let (id, handled) = buy_on(
        &c,
        &format!("http://127.0.0.1:{pages}/consent/porsche.html"),
    );
    let entry = declined(&handled, "cookie-consent-banner", "fallback");
    assert_eq!(entry["choice"], "necessary", "{entry}");
    assert_eq!(
        entry["clicked"],
        "Continue with technically required cookies only"
    );
    assert_eq!(
        eval(&c, &id, "window.consent.acceptedCategories"),
        json!(["technically_required"])
    );
    c.ok("DELETE", &format!("/sessions/{id}"), None);

    // Beyonk's Svelte web component: "Reject all".
    let (id, handled) = buy_on(&c, &format!("http://127.0.0.1:{pages}/consent/beyonk.html"));
    let entry = declined(&handled, "cookie-consent-banner", "fallback");
    assert_eq!(
        (entry["choice"].as_str(), entry["clicked"].as_str()),
        (Some("reject"), Some("Reject all"))
    );
    assert_eq!(
        eval(&c, &id, "window.agreed"),
        json!({ "necessary": true, "tracking": false, "analytics": false, "marketing": false })
    );
    c.ok("DELETE", &format!("/sessions/{id}"), None);

    // The same component offering only "Agree and continue": nothing is
    // pressed, and the click is a typed `covered` naming the banner.
    let (status, s) = c.call(
        "POST",
        "/sessions",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/consent/porsche-agree-only.html") })),
    );
    assert_eq!(status, 201, "{s}");
    let id = s["sessionId"].as_str().unwrap().to_string();
    let (status, r) = c.call(
        "POST",
        &format!("/sessions/{id}/click"),
        Some(json!({ "selector": "#buy", "timeout": 3000 })),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["error"]["code"], "covered", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Agree and continue"),
        "{r}"
    );
    assert!(r.get("handled").is_none(), "{r}");
    assert_eq!(
        eval(&c, &id, "[window.bought === true, document.cookie]"),
        json!([false, ""])
    );
}

/// The entries the session's log has for what was handled between
/// actions (`watchdog`), once it has any (at most 20 s): read without an
/// action, so the next action still has them to report.
fn logged_between(c: &Client, id: &str) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let trace = c.ok("GET", &format!("/sessions/{id}/trace"), None);
        let actions = trace["actions"].as_array().unwrap();
        assert_eq!(actions[0]["action"], "navigate", "{trace}");
        assert!(actions[0]["result"].get("handled").is_none(), "{trace}");
        let logged: Vec<Value> = actions
            .iter()
            .filter(|a| a["action"] == "watchdog")
            .flat_map(|a| {
                a["result"]["handled"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        if !logged.is_empty() {
            return logged;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nothing was logged between actions: {trace}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Osano's cookieconsent (v3), a bottom bar that covers nothing the agent
/// clicks, shown a moment after the page loaded (as a consent script
/// loaded late is): autoconsent's rules decline it after `navigate`
/// answered and before the click. The click's own result reports it, and
/// the session's log has it as it happened (`watchdog`), before the click.
#[test]
fn a_banner_declined_between_actions_is_reported() {
    require_npm("cookieconsent");
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);

    let (status, s) = c.call(
        "POST",
        "/sessions",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/consent/osano.html") })),
    );
    assert_eq!(status, 201, "{s}");
    let id = s["sessionId"].as_str().unwrap().to_string();
    let logged = logged_between(&c, &id);
    let r = act(&c, &id, "click", json!({ "selector": "#buy" }));
    let handled = r["handled"].as_array().cloned().unwrap_or_default();
    // autoconsent names the bar by the rule that knows it.
    let entry = declined(&handled, "complianz", "rules");
    assert_eq!(entry["choice"], "reject", "{entry}");
    assert_eq!(entry["clicked"], "deny cookies", "{entry}");
    assert_eq!(
        logged,
        vec![entry],
        "the session's log has the decline before the click"
    );
    assert_eq!(eval(&c, &id, "window.bought === true"), true);
    // The bar fades out (Osano keeps it in the page, invisible).
    act(
        &c,
        &id,
        "wait",
        json!({ "js": "getComputedStyle(document.querySelector('.cc-window')).opacity === '0'" }),
    );
    assert_eq!(eval(&c, &id, "window.ccStatus"), "deny");
    let cookie = eval(&c, &id, "document.cookie");
    assert!(
        cookie
            .as_str()
            .unwrap()
            .contains("cookieconsent_status=deny"),
        "{cookie}"
    );
}

/// Canonical's cookie policy offers only "Manage your tracker settings"
/// and "Accept all": declining is the way to the purposes, each optional
/// one off, and "Save preferences" (autoconsent's rules know it).
#[test]
fn a_banner_is_declined_through_its_settings() {
    require_npm("@canonical/cookie-policy");
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);
    let (id, handled) = buy_on(
        &c,
        &format!("http://127.0.0.1:{pages}/consent/canonical.html"),
    );
    let entry = declined(&handled, "ubuntu.com", "rules");
    assert_eq!(
        (entry["choice"].as_str(), entry["clicked"].as_str()),
        (Some("save"), Some("Save preferences")),
        "{entry}"
    );
    assert!(
        entry["detail"]
            .as_str()
            .unwrap()
            .contains("\"Manage your tracker settings\", then "),
        "{entry}"
    );
    let cookie = eval(&c, &id, "document.cookie");
    assert!(
        cookie
            .as_str()
            .unwrap()
            .contains("_cookies_accepted=essential"),
        "{cookie}"
    );
    assert_eq!(eval(&c, &id, "window.chosen"), true);
}

/// More consent libraries from npm, unmodified: shaack's cookie-consent-js
/// (a modal over the whole page) and htmlbricks' hb-cookie-law-banner (a
/// bottom bar in a web component's shadow root).
#[test]
fn banners_of_a_modal_and_a_shadow_bar_are_declined() {
    for package in ["cookie-consent-js", "@htmlbricks/hb-cookie-law-banner"] {
        require_npm(package);
    }
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);

    let (id, handled) = buy_on(&c, &format!("http://127.0.0.1:{pages}/consent/shaack.html"));
    let entry = handled
        .iter()
        .find(|h| h["kind"] == "consent")
        .unwrap_or_else(|| panic!("the banner is reported: {handled:?}"));
    assert_eq!(entry["choice"], "necessary", "{entry}");
    assert_eq!(
        entry["clicked"], "Only accept technically necessary cookies",
        "{entry}"
    );
    let cookie = eval(&c, &id, "document.cookie");
    assert!(
        cookie
            .as_str()
            .unwrap()
            .contains("cookie-consent-tracking-allowed=false"),
        "{cookie}"
    );
    c.ok("DELETE", &format!("/sessions/{id}"), None);

    let (id, handled) = buy_on(
        &c,
        &format!("http://127.0.0.1:{pages}/consent/htmlbricks.html"),
    );
    let entry = declined(&handled, "cookiealert", "fallback");
    assert_eq!(
        (entry["choice"].as_str(), entry["clicked"].as_str()),
        (Some("reject"), Some("I Decline")),
        "{entry}"
    );
    assert_eq!(
        eval(
            &c,
            &id,
            "[localStorage.getItem('cookielaw'), window.answer]"
        ),
        json!(["no", { "accepted": false }])
    );
}

/// Just Eat Takeaway's pie-cookie-banner from npm, unmodified: an `<aside>`
/// in a web component's shadow root whose buttons are more web components,
/// each a `<button>` in its own shadow root showing its host's text
/// through a `<slot>` ("Accept all", "Necessary only", "Manage
/// preferences"). The library keeps nothing itself; it tells the page by
/// events, which the page keeps as a site would.
#[test]
fn a_banner_of_web_component_buttons_is_declined() {
    require_npm("@justeattakeaway/pie-cookie-banner");
    require_npm("@justeattakeaway/pie-css");
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);
    let (id, handled) = buy_on(&c, &format!("http://127.0.0.1:{pages}/consent/pie.html"));
    let entry = declined(&handled, "pie-cookie-banner", "fallback");
    assert_eq!(
        (entry["choice"].as_str(), entry["clicked"].as_str()),
        (Some("necessary"), Some("Necessary only")),
        "{entry}"
    );
    assert_eq!(
        eval(&c, &id, "window.consent"),
        json!([{ "event": "necessary-only", "detail": null }]),
        "only \"Necessary only\" was chosen"
    );
    assert_eq!(
        eval(
            &c,
            &id,
            "document.querySelector('pie-cookie-banner').shadowRoot.querySelector('aside').checkVisibility()"
        ),
        false,
        "the banner is gone"
    );
}
