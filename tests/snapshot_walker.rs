//! The `ai` snapshot's in-page walker, black-box: what a page's semantics
//! turn into (roles, names, states, what is hidden), that refs reach into
//! shadow roots and other-origin frames, and that nothing secret leaks.

use clawdis_e2e::control::{Client, fixture_server, ref_named, start_server};
use serde_json::{Value, json};

fn snapshot(c: &Client) -> (String, Value) {
    let snap = c.ok("GET", "/snapshot", None);
    (
        snap["snapshot"].as_str().unwrap().to_string(),
        snap["refs"].clone(),
    )
}

#[test]
fn page_semantics_become_roles_names_and_states() {
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);
    c.ok(
        "POST",
        "/tabs/open",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/semantics.html") })),
    );
    let (text, refs) = snapshot(&c);
    let has = |line: &str| text.lines().any(|l| l.trim_start().starts_with(line));
    for line in [
        "- region \"Account\"",
        "- textbox \"Password\" [ref=e",
        "- textbox \"Email address\" [ref=e",
        "- button \"Locked\" [disabled] [ref=e",
        "- button \"Bold\" [pressed] [ref=e",
        "- checkbox \"Remember me\" [checked] [ref=e",
        "- textbox \"Notes\" [ref=e",
        "- button \"Peeking\" [ref=e",
        "- listitem",
        "- text: One",
        "- button \"Shadow action\" [ref=e",
        "- button \"More\" [ref=e",
        "- combobox \"Size\" [ref=e",
        "- option \"M\" [selected] [ref=e",
        "- button \"Contents child\" [ref=e",
        "- image \"Star\" [ref=e",
        "- button \"Add to basket\" [ref=e",
        "- button \"PIN\" [ref=e",
        "- button \"Fallback role\" [ref=e",
    ] {
        assert!(has(line), "missing {line:?} in\n{text}");
    }
    assert!(
        text.contains("]: first draft"),
        "a textarea shows its value\n{text}"
    );
    assert!(
        !text.contains("text: Add") && !text.contains("text: to basket"),
        "text already in a name is not repeated\n{text}"
    );
    for absent in [
        "hunter2",
        "s3cr3t",
        "Gone",
        "Hidden from readers",
        "Invisible",
        "Folded link",
        "\u{2605}",
        "Drawn",
    ] {
        assert!(!text.contains(absent), "{absent:?} must not be in\n{text}");
    }
    assert!(
        text.contains("[ref=e") && text.contains("]: •••••••"),
        "a password is masked\n{text}"
    );

    // A ref into a shadow root acts; the same element keeps its ref.
    let shadow = ref_named(&refs, "button", "Shadow action");
    c.ok(
        "POST",
        "/act",
        Some(json!({ "kind": "click", "ref": shadow })),
    );
    assert_eq!(
        c.ok("POST", "/eval", Some(json!({ "js": "document.title" })))["result"],
        "Shadow clicked"
    );
    let (_, again) = snapshot(&c);
    assert_eq!(ref_named(&again, "button", "Shadow action"), shadow);

    // An element removed since the snapshot: a clear 4xx asking for a re-snapshot.
    let locked = ref_named(&again, "button", "Bold");
    c.ok(
        "POST",
        "/eval",
        Some(json!({ "js": "document.querySelector('[role=button]').remove()" })),
    );
    let (status, err) = c.call(
        "POST",
        "/act",
        Some(json!({ "kind": "click", "ref": locked })),
    );
    assert!(
        (400..500).contains(&status) && err["error"].as_str().unwrap().contains("e-snapshot"),
        "{status} {err}"
    );

    // A bad or unmatched selector scope.
    assert_eq!(c.call("GET", "/snapshot?selector=%5B%5B", None).0, 400);
    assert_eq!(c.call("GET", "/snapshot?selector=%23nope", None).0, 404);
    let scoped = c.ok("GET", "/snapshot?selector=select", None)["snapshot"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        scoped.starts_with("- combobox \"Size\"") && !scoped.contains("Account"),
        "{scoped}"
    );
}

#[test]
fn other_origin_frames_are_walked_in_their_own_world() {
    let host = fixture_server();
    let other = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);
    c.ok(
        "POST",
        "/tabs/open",
        Some(json!({ "url": format!("http://127.0.0.1:{host}/cross-frame.html?port={other}") })),
    );
    // The frame is added by a script: wait for it to load.
    c.ok("POST", "/act", Some(json!({ "kind": "wait", "fn": "() => document.body.dataset.loaded === 'yes'", "timeoutMs": 10000 })));
    let (text, refs) = snapshot(&c);
    assert!(text.contains("- heading \"Host\""), "{text}");
    let inner = ref_named(&refs, "button", "Inner button");
    c.ok(
        "POST",
        "/act",
        Some(json!({ "kind": "click", "ref": inner })),
    );
    let (after, _) = snapshot(&c);
    assert!(
        after.contains("text: inner clicked"),
        "the click reached the frame\n{after}"
    );
}
