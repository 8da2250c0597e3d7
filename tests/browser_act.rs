//! Acting on pages through `/act` and the hooks, black-box: `clawdis serve`,
//! real headless Chromium, fixture pages on loopback (browser.md §5, 28 and
//! 35–45).

use clawdis_e2e::control::{Client, fixture_server, ref_named, start_server, start_server_with};
use serde_json::{Value, json};

/// The ref of the first snapshot node with this role and name.
fn ref_of(c: &Client, role: &str, name: &str) -> String {
    ref_named(&c.ok("GET", "/snapshot", None)["refs"], role, name)
}

fn eval(c: &Client, js: &str) -> Value {
    c.ok("POST", "/eval", Some(json!({ "js": js })))["result"].clone()
}

fn act(c: &Client, body: Value) -> Value {
    c.ok("POST", "/act", Some(body))
}

#[test]
fn acting_on_refs() {
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);
    let form = format!("http://127.0.0.1:{pages}/form.html");
    let id = c.ok("POST", "/tabs/open", Some(json!({ "url": form })))["targetId"]
        .as_str()
        .unwrap()
        .to_string();

    // type, then click: the page sees real input.
    let name = ref_of(&c, "textbox", "Name");
    let typed = act(
        &c,
        json!({ "kind": "type", "ref": name, "text": "Ada", "submit": false, "slowly": false, "timeoutMs": 60000 }),
    );
    assert_eq!(
        (typed["ok"].as_bool(), typed["targetId"].as_str()),
        (Some(true), Some(id.as_str()))
    );
    assert_eq!(eval(&c, "document.querySelector('#name').value"), "Ada");
    let clicked = act(
        &c,
        json!({ "kind": "click", "ref": ref_of(&c, "button", "Submit"), "doubleClick": false }),
    );
    assert_eq!(clicked["url"], form.as_str());
    assert_eq!(
        eval(&c, "document.querySelector('#out').textContent"),
        "Hello Ada"
    );
    // type replaces the text; submit presses Enter in the form.
    act(
        &c,
        json!({ "kind": "type", "ref": name, "text": "Grace", "submit": true }),
    );
    assert_eq!(
        eval(&c, "document.querySelector('#out').textContent"),
        "Submitted Grace"
    );

    // select fires change; fill sets text and checkboxes.
    act(
        &c,
        json!({ "kind": "select", "ref": ref_of(&c, "combobox", "Color"), "values": ["blue"] }),
    );
    assert_eq!(eval(&c, "document.querySelector('#color').value"), "blue");
    assert_eq!(
        eval(&c, "document.querySelector('#changed').textContent"),
        "changed to blue"
    );
    let (status, err) =
        c.call("POST", "/act", Some(json!({ "kind": "select", "ref": ref_of(&c, "combobox", "Color"), "values": ["green"] })));
    assert_eq!(
        (status, err["code"].as_str()),
        (400, Some("ACT_INVALID_REQUEST")),
        "{err}"
    );
    act(
        &c,
        json!({ "kind": "fill", "fields": [{ "ref": name, "type": "text", "value": "Bob" }, { "ref": ref_of(&c, "checkbox", "Agree"), "type": "checkbox", "value": true }] }),
    );
    assert_eq!(
        eval(
            &c,
            "[document.querySelector('#name').value, document.querySelector('#agree').checked]"
        ),
        json!(["Bob", true])
    );

    // press, hover, scrollIntoView, selectors where OpenClaw allows them.
    act(&c, json!({ "kind": "click", "selector": "#name" }));
    act(&c, json!({ "kind": "press", "key": "End" }));
    act(&c, json!({ "kind": "press", "key": "Shift+x" }));
    assert_eq!(eval(&c, "document.querySelector('#name').value"), "BobX");
    act(
        &c,
        json!({ "kind": "hover", "ref": ref_of(&c, "button", "Submit") }),
    );
    assert_eq!(
        eval(&c, "document.querySelector('#submit').matches(':hover')"),
        true
    );
    act(&c, json!({ "kind": "scrollIntoView", "selector": "a" }));

    // evaluate: functions, expressions, statement bodies, on an element.
    assert_eq!(
        act(
            &c,
            json!({ "kind": "evaluate", "fn": "() => document.title" })
        )["result"],
        "Form"
    );
    assert_eq!(
        act(
            &c,
            json!({ "kind": "evaluate", "fn": "document.title.length" })
        )["result"],
        4
    );
    assert_eq!(
        act(
            &c,
            json!({ "kind": "evaluate", "fn": "const a = 20; return a + 1;" })
        )["result"],
        21
    );
    assert_eq!(
        act(
            &c,
            json!({ "kind": "evaluate", "fn": "(el) => el.id", "ref": name })
        )["result"],
        "name"
    );
    let (status, err) = c.call(
        "POST",
        "/act",
        Some(json!({ "kind": "evaluate", "fn": "() => { throw new Error('nope') }" })),
    );
    assert!(
        status == 400 && err["error"].as_str().unwrap().contains("nope"),
        "{status} {err}"
    );

    // batch: results per action; nested targetIds must match.
    let batch = act(
        &c,
        json!({ "kind": "batch", "actions": [
        { "kind": "type", "ref": name, "text": "Lin" },
        { "kind": "click", "selector": "#submit" },
        { "kind": "evaluate", "fn": "() => document.querySelector('#out').textContent" },
    ] }),
    );
    assert_eq!(
        batch["results"],
        json!([{ "ok": true }, { "ok": true }, { "ok": true, "result": "Hello Lin" }])
    );
    let stopped = act(
        &c,
        json!({ "kind": "batch", "actions": [{ "kind": "click", "ref": "e999" }, { "kind": "press", "key": "a" }] }),
    );
    assert_eq!(
        stopped["results"].as_array().unwrap().len(),
        1,
        "stops at the first error: {stopped}"
    );
    assert_eq!(stopped["results"][0]["ok"], false);

    // Bad requests: codes before anything runs.
    let code = |body: Value| {
        let (status, v) = c.call("POST", "/act", Some(body));
        (status, v["code"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(code(json!({})), (400, "ACT_KIND_REQUIRED".into()));
    // Issue #20: an unknown kind answers as OpenClaw's server does, not as
    // an invalid request.
    for kind in ["fly", "Click", "clik"] {
        let (status, v) = c.call(
            "POST",
            "/act",
            Some(json!({ "kind": kind, "selector": "#submit" })),
        );
        assert_eq!(
            (status, v["code"].as_str(), v["error"].as_str()),
            (400, Some("ACT_KIND_REQUIRED"), Some("kind is required")),
            "{kind}"
        );
    }
    assert_eq!(
        code(json!({ "kind": "click" })),
        (400, "ACT_INVALID_REQUEST".into())
    );
    assert_eq!(
        code(json!({ "kind": "wait" })),
        (400, "ACT_INVALID_REQUEST".into())
    );
    assert_eq!(
        code(json!({ "kind": "press", "key": "a", "selector": "#x" })),
        (400, "ACT_SELECTOR_UNSUPPORTED".into())
    );
    let other = c.ok("POST", "/tabs/open", Some(json!({ "url": "about:blank" })))["targetId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            json!({ "kind": "batch", "targetId": id, "actions": [{ "kind": "press", "key": "a", "targetId": other }] })
        ),
        (403, "ACT_TARGET_ID_MISMATCH".into())
    );
    c.ok("POST", "/tabs/focus", Some(json!({ "targetId": id })));

    // resize changes the viewport.
    act(&c, json!({ "kind": "resize", "width": 640, "height": 480 }));
    assert_eq!(eval(&c, "[innerWidth, innerHeight]"), json!([640, 480]));

    // Stale refs after a navigation fail fast and change nothing.
    let submit = ref_of(&c, "button", "Submit");
    c.ok("POST", "/navigate", Some(json!({ "url": form })));
    let (status, err) = c.call(
        "POST",
        "/act",
        Some(json!({ "kind": "click", "ref": submit })),
    );
    assert!(
        (400..500).contains(&status) && err["error"].as_str().unwrap().contains("e-snapshot"),
        "{status} {err}"
    );
    assert_eq!(eval(&c, "document.querySelector('#out').textContent"), "");

    // wait: text that appears later, text that never does, a URL glob.
    c.ok(
        "POST",
        "/navigate",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/slow.html") })),
    );
    act(
        &c,
        json!({ "kind": "wait", "text": "Loaded", "timeoutMs": 5000 }),
    );
    assert_eq!(
        eval(&c, "document.querySelector('#status').textContent"),
        "Loaded"
    );
    let (status, err) = c.call(
        "POST",
        "/act",
        Some(json!({ "kind": "wait", "text": "Never", "timeoutMs": 500 })),
    );
    assert!(
        status >= 400 && err["error"].as_str().unwrap().contains("Never"),
        "{status} {err}"
    );
    act(
        &c,
        json!({ "kind": "wait", "url": "**/slow.html", "loadState": "load", "selector": "#status", "textGone": "Waiting" }),
    );

    // frame= scopes a snapshot to one iframe.
    c.ok(
        "POST",
        "/navigate",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/frame.html") })),
    );
    let framed = c.ok("GET", "/snapshot?frame=%23inner", None)["snapshot"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        framed.contains("button \"Inner button\"") && !framed.contains("Outer"),
        "{framed}"
    );
    // An iframe's button has a ref, and clicking it works.
    c.ok(
        "POST",
        "/navigate",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/frame.html") })),
    );
    act(
        &c,
        json!({ "kind": "click", "ref": ref_of(&c, "button", "Inner button") }),
    );
    assert_eq!(
        eval(
            &c,
            "document.querySelector('iframe').contentDocument.querySelector('#out').textContent"
        ),
        "inner clicked"
    );

    // Pickers get their value; text inputs keep what the page made of the typing.
    c.ok(
        "POST",
        "/navigate",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/inputs.html") })),
    );
    act(
        &c,
        json!({ "kind": "type", "selector": "#date", "text": "2026-11-22" }),
    );
    act(
        &c,
        json!({ "kind": "type", "selector": "#code", "text": "abc" }),
    );
    assert_eq!(
        eval(&c, "[date.value, code.value]"),
        json!(["2026-11-22", "ABC"])
    );

    // close closes the tab.
    assert_eq!(
        act(&c, json!({ "kind": "close", "targetId": other }))["targetId"],
        other.as_str()
    );
    assert!(
        !c.ok("GET", "/tabs", None)["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["targetId"] == other.as_str())
    );
}

#[test]
fn dialogs_uploads_and_downloads() {
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);
    c.ok(
        "POST",
        "/tabs/open",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/dialog.html") })),
    );
    let out = || eval(&c, "document.querySelector('#out').textContent");

    // An armed answer is used for the next dialog.
    assert_eq!(
        c.call("POST", "/hooks/dialog", Some(json!({}))),
        (400, json!({ "error": "accept is required" }))
    );
    c.ok(
        "POST",
        "/hooks/dialog",
        Some(json!({ "accept": true, "promptText": "yo" })),
    );
    let r = act(
        &c,
        json!({ "kind": "click", "ref": ref_of(&c, "button", "Prompt") }),
    );
    assert!(r.get("blockedByDialog").is_none(), "{r}");
    assert_eq!(out(), "yo");
    c.ok("POST", "/hooks/dialog", Some(json!({ "accept": false })));
    act(
        &c,
        json!({ "kind": "click", "ref": ref_of(&c, "button", "Confirm") }),
    );
    assert_eq!(out(), "cancelled");

    // An unarmed alert: the click returns blockedByDialog with the dialog.
    let r = act(
        &c,
        json!({ "kind": "click", "ref": ref_of(&c, "button", "Alert") }),
    );
    assert_eq!(r["blockedByDialog"], true, "{r}");
    let pending = &r["browserState"]["dialogs"]["pending"][0];
    assert_eq!(
        (pending["type"].as_str(), pending["message"].as_str()),
        (Some("alert"), Some("hi")),
        "{r}"
    );
    let listed = c.ok("GET", "/dialogs", None);
    assert_eq!(
        listed["browserState"]["dialogs"]["pending"][0]["dialogId"],
        pending["dialogId"]
    );
    // Another action while it is open reports it too instead of hanging.
    assert_eq!(
        act(&c, json!({ "kind": "press", "key": "a" }))["blockedByDialog"],
        true
    );
    // Reads that would run in the page answer 409 at once instead of hanging.
    for (method, path) in [
        ("GET", "/snapshot"),
        ("POST", "/eval"),
        ("POST", "/screenshot"),
        ("GET", "/text"),
    ] {
        let (status, err) = c.call(method, path, Some(json!({ "js": "1" })));
        assert_eq!(
            (status, err["code"].as_str()),
            (409, Some("DIALOG_OPEN")),
            "{method} {path}: {err}"
        );
    }
    let answered = c.ok(
        "POST",
        "/hooks/dialog",
        Some(json!({ "accept": true, "dialogId": pending["dialogId"] })),
    );
    assert_eq!(answered["handled"], true);
    assert_eq!(out(), "alerted");
    let recent = &c.ok("GET", "/dialogs", None)["browserState"]["dialogs"];
    assert_eq!(
        (
            recent["pending"].as_array().map(Vec::len),
            recent["recent"][0]["outcome"].as_str()
        ),
        (Some(0), Some("accepted"))
    );
    let same: Vec<&Value> = recent["recent"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["dialogId"] == pending["dialogId"])
        .collect();
    assert_eq!(same.len(), 1, "one record per dialog: {recent}");
    assert_eq!(same[0]["handledBy"], "hook");

    // A dialog opened while a page loads does not hold up the open call.
    let began = std::time::Instant::now();
    let tab = c.ok(
        "POST",
        "/tabs/open",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/greeting.html") })),
    );
    assert!(
        began.elapsed() < std::time::Duration::from_secs(15),
        "open waited for a load the dialog blocks"
    );
    let pending = c.ok("GET", "/dialogs", None);
    assert_eq!(
        pending["browserState"]["dialogs"]["pending"][0]["message"], "welcome",
        "{pending}"
    );
    c.ok("POST", "/hooks/dialog", Some(json!({ "accept": true })));
    assert_eq!(out(), "after");
    c.ok(
        "DELETE",
        &format!("/tabs/{}", tab["targetId"].as_str().unwrap()),
        None,
    );

    // Uploads come from <home>/uploads only.
    let uploads = home.path().join("uploads");
    std::fs::create_dir_all(&uploads).unwrap();
    std::fs::write(uploads.join("a.txt"), "a").unwrap();
    std::fs::write(uploads.join("b.txt"), "b").unwrap();
    c.ok(
        "POST",
        "/navigate",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/upload.html") })),
    );
    let input = ref_of(&c, "button", "File");
    c.ok(
        "POST",
        "/hooks/file-chooser",
        Some(json!({ "paths": [uploads.join("a.txt")], "inputRef": input })),
    );
    assert_eq!(out(), "a.txt");
    c.ok(
        "POST",
        "/hooks/file-chooser",
        Some(json!({ "paths": ["b.txt"], "ref": input })),
    );
    assert_eq!(
        out(),
        "b.txt",
        "a click that opens the chooser gets the armed files"
    );
    for bad in [
        json!({ "paths": ["/etc/passwd"], "inputRef": input }),
        json!({ "paths": ["../control-token"], "inputRef": input }),
        json!({ "paths": [] }),
        json!({ "paths": ["a.txt"], "ref": input, "inputRef": input }),
    ] {
        assert_eq!(
            c.call("POST", "/hooks/file-chooser", Some(bad.clone())).0,
            400,
            "{bad}"
        );
    }
    assert_eq!(out(), "b.txt");

    // Downloads land inside <home>/downloads.
    let link = ref_of(&c, "link", "Download");
    let d = c.ok(
        "POST",
        "/download",
        Some(json!({ "ref": link, "path": "x.bin" })),
    );
    assert_eq!(d["download"]["suggestedFilename"], "data.bin", "{d}");
    let saved = std::path::PathBuf::from(d["download"]["path"].as_str().unwrap());
    assert!(
        saved.starts_with(home.path().join("downloads").canonicalize().unwrap()),
        "{}",
        saved.display()
    );
    assert_eq!(
        std::fs::read_to_string(&saved).unwrap(),
        "clawdis download\n"
    );
    for bad in ["../x", "/tmp/x"] {
        assert_eq!(
            c.call(
                "POST",
                "/download",
                Some(json!({ "ref": link, "path": bad }))
            )
            .0,
            400,
            "{bad}"
        );
    }
}

#[test]
fn console_errors_and_requests_are_buffered() {
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);
    c.ok(
        "POST",
        "/tabs/open",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/console.html") })),
    );
    let texts = |v: &Value, key: &str| {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                format!(
                    "{}:{}",
                    m["type"].as_str().unwrap(),
                    m["text"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    let all = c.ok("GET", "/console", None);
    assert!(
        texts(&all, "messages").contains(&"log:hello 42".to_string()),
        "{all}"
    );
    assert!(
        texts(&all, "messages").contains(&"debug:quiet".to_string()),
        "{all}"
    );
    act(
        &c,
        json!({ "kind": "click", "ref": ref_of(&c, "button", "Warn") }),
    );
    let warnings = c.ok("GET", "/console?level=warning", None);
    let warned = texts(&warnings, "messages");
    assert!(
        warned.contains(&"warning:careful 3".to_string())
            && !warned.iter().any(|m| m.starts_with("log:")),
        "{warnings}"
    );
    let errors = c.ok("GET", "/errors?clear=true", None);
    assert!(
        errors["errors"][0]["text"]
            .as_str()
            .unwrap()
            .contains("kaboom"),
        "{errors}"
    );
    assert_eq!(c.ok("GET", "/errors", None)["errors"], json!([]), "cleared");

    // Network requests: the document, a 404 and a refused connection.
    let page = c.ok("GET", "/requests", None);
    let doc = page["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["url"].as_str().unwrap().ends_with("/console.html"))
        .cloned();
    assert_eq!(
        doc.map(|d| (d["method"].clone(), d["status"].clone(), d["ok"].clone())),
        Some((json!("GET"), json!(200), json!(true))),
        "{page}"
    );
    let probe = "() => Promise.all([fetch('/missing.txt'), fetch('http://127.0.0.1:9/x').catch(() => null)]).then(() => 'done')";
    assert_eq!(
        act(&c, json!({ "kind": "evaluate", "fn": probe }))["result"],
        "done"
    );
    // Network events reach the log on their own schedule, not with the page's promise: poll until settled.
    let settled = |path: &str, done: &dyn Fn(&Value) -> bool| {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let v = c.ok("GET", path, None);
            if done(&v["requests"][0]) || std::time::Instant::now() > end {
                return v;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    let missing = settled("/requests?filter=missing", &|r| r["status"].is_u64());
    assert_eq!(
        (
            missing["requests"][0]["status"].as_u64(),
            missing["requests"][0]["ok"].as_bool()
        ),
        (Some(404), Some(false)),
        "{missing}"
    );
    let refused = settled("/requests?filter=127.0.0.1:9/", &|r| {
        r["failureText"].is_string()
    });
    assert!(
        refused["requests"][0]["failureText"].is_string(),
        "{refused}"
    );
    c.ok("GET", "/requests?clear=true", None);
    assert_eq!(
        c.ok("GET", "/requests", None)["requests"],
        json!([]),
        "cleared"
    );

    // Response bodies by URL pattern.
    act(
        &c,
        json!({ "kind": "evaluate", "fn": "() => fetch('/form.html').then((r) => r.text()).then(() => 'fetched')" }),
    );
    let got = c.ok(
        "POST",
        "/response/body",
        Some(json!({ "url": "**/form.html", "maxChars": 50000 })),
    );
    assert_eq!(got["response"]["status"], 200, "{got}");
    assert!(
        got["response"]["body"]
            .as_str()
            .unwrap()
            .contains("<title>Form</title>")
    );
    let (status, err) = c.call(
        "POST",
        "/response/body",
        Some(json!({ "url": "never.txt", "timeoutMs": 300 })),
    );
    assert!(
        status >= 400 && err["error"].as_str().unwrap().contains("never.txt"),
        "{status} {err}"
    );
    assert_eq!(c.call("POST", "/response/body", Some(json!({}))).0, 400);
}

#[test]
fn cookies_storage_and_emulation() {
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);
    c.ok(
        "POST",
        "/tabs/open",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/form.html") })),
    );

    c.ok(
        "POST",
        "/cookies/set",
        Some(json!({ "cookie": { "name": "session", "value": "s1", "sameSite": "lax" } })),
    );
    assert_eq!(eval(&c, "document.cookie"), "session=s1");
    let jar = c.ok("GET", "/cookies", None);
    assert!(
        jar["cookies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["name"] == "session" && k["value"] == "s1"),
        "{jar}"
    );
    assert_eq!(
        c.call(
            "POST",
            "/cookies/set",
            Some(json!({ "cookie": { "value": "x" } }))
        )
        .0,
        400
    );
    // Issue #36: a well-formed cookie the browser's rules refuse (here a
    // `__Host-` cookie that is not secure) conflicts with them: 409, not 400.
    let (status, refused) = c.call(
        "POST",
        "/cookies/set",
        Some(json!({ "cookie": { "name": "__Host-a", "value": "b" } })),
    );
    assert_eq!(status, 409, "{refused}");
    c.ok("POST", "/cookies/clear", None);
    assert_eq!(eval(&c, "document.cookie"), "");

    c.ok(
        "POST",
        "/storage/local/set",
        Some(json!({ "key": "k", "value": "v" })),
    );
    assert_eq!(eval(&c, "localStorage.getItem('k')"), "v");
    assert_eq!(
        c.ok("GET", "/storage/local?key=k", None)["values"],
        json!({ "k": "v" })
    );
    c.ok(
        "POST",
        "/storage/session/set",
        Some(json!({ "key": "n", "value": 3 })),
    );
    assert_eq!(eval(&c, "sessionStorage.getItem('n')"), "3");
    c.ok("POST", "/storage/local/clear", None);
    assert_eq!(c.ok("GET", "/storage/local", None)["values"], json!({}));
    assert_eq!(c.call("GET", "/storage/cookies", None).0, 400);

    c.ok("POST", "/set/media", Some(json!({ "colorScheme": "dark" })));
    assert_eq!(
        eval(&c, "matchMedia('(prefers-color-scheme: dark)').matches"),
        true
    );
    c.ok(
        "POST",
        "/set/timezone",
        Some(json!({ "timezoneId": "Asia/Tokyo" })),
    );
    assert_eq!(
        eval(&c, "Intl.DateTimeFormat().resolvedOptions().timeZone"),
        "Asia/Tokyo"
    );
    assert_eq!(
        c.call(
            "POST",
            "/set/timezone",
            Some(json!({ "timezoneId": "Mars/Olympus" }))
        )
        .0,
        400
    );
    c.ok("POST", "/set/locale", Some(json!({ "locale": "de-DE" })));
    assert_eq!(
        eval(&c, "Intl.NumberFormat().resolvedOptions().locale"),
        "de-DE"
    );
    c.ok("POST", "/set/offline", Some(json!({ "offline": true })));
    let probe = json!({ "js": "fetch(location.href).then(() => 'online', () => 'offline')", "await": true });
    assert_eq!(
        c.ok("POST", "/eval", Some(probe.clone()))["result"],
        "offline"
    );
    c.ok("POST", "/set/offline", Some(json!({ "offline": false })));
    assert_eq!(c.ok("POST", "/eval", Some(probe))["result"], "online");
    assert_eq!(
        c.call(
            "POST",
            "/set/headers",
            Some(json!({ "headers": { "X-N": 1 } }))
        )
        .0,
        400
    );
    assert_eq!(c.call("POST", "/set/bogus", Some(json!({}))).0, 404);
    c.ok("POST", "/set/device", Some(json!({ "name": "iPhone 13" })));
    assert_eq!(
        eval(
            &c,
            "[screen.width, devicePixelRatio, navigator.userAgent.includes('iPhone'), navigator.maxTouchPoints > 0]"
        ),
        json!([390, 3, true, true])
    );
    c.ok("POST", "/set/device", Some(json!({ "clear": true })));
    assert_eq!(eval(&c, "navigator.userAgent.includes('iPhone')"), false);
    assert_eq!(
        c.call("POST", "/set/device", Some(json!({ "name": "Nokia 3310" })))
            .0,
        400
    );

    // Permissions and highlighting.
    let origin = format!("http://127.0.0.1:{pages}");
    c.ok(
        "POST",
        "/permissions/grant",
        Some(json!({ "permissions": ["geolocation"], "origin": origin })),
    );
    let state = json!({ "js": "navigator.permissions.query({ name: 'geolocation' }).then((p) => p.state)", "await": true });
    assert_eq!(c.ok("POST", "/eval", Some(state))["result"], "granted");
    assert_eq!(
        c.call(
            "POST",
            "/permissions/grant",
            Some(json!({ "permissions": ["telepathy"] }))
        )
        .0,
        400
    );
    c.ok(
        "POST",
        "/highlight",
        Some(json!({ "ref": ref_of(&c, "button", "Submit") })),
    );
    let outline = "(({ style: s }) => [s.outlineWidth, s.outlineStyle, s.outlineColor])(document.querySelector('#submit'))";
    assert_eq!(
        eval(&c, outline),
        json!(["3px", "solid", "rgb(255, 69, 0)"]),
        "lobster orange outline"
    );
    assert_eq!(c.call("POST", "/highlight", Some(json!({}))).0, 400);
}

#[test]
fn evaluate_can_be_switched_off() {
    let home = tempfile::tempdir().unwrap();
    let server = start_server_with(home.path(), json!({ "evaluateEnabled": false }));
    let c = Client::new(&server);
    for body in [
        json!({ "kind": "evaluate", "fn": "() => 1" }),
        json!({ "kind": "wait", "fn": "() => true" }),
    ] {
        let (status, err) = c.call("POST", "/act", Some(body));
        assert_eq!(
            (status, err["code"].as_str()),
            (403, Some("ACT_EVALUATE_DISABLED"))
        );
    }
    assert_eq!(
        c.ok("GET", "/", None)["running"],
        false,
        "refused before the browser was started"
    );
}

/// Issue #20: a click on a button under a cookie banner answered success
/// while the button never saw it. It now fails naming the banner, through
/// shadow roots and frames; once the banner is gone the same click lands.
#[test]
fn a_click_that_would_land_on_a_cover_fails_naming_it() {
    let pages = fixture_server();
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path());
    let c = Client::new(&server);
    c.ok(
        "POST",
        "/tabs/open",
        Some(json!({ "url": format!("http://127.0.0.1:{pages}/covered.html") })),
    );
    let click = |selector: &str| {
        c.call(
            "POST",
            "/act",
            Some(json!({ "kind": "click", "selector": selector, "timeoutMs": 400 })),
        )
    };

    let (status, err) = click("#buy");
    assert_eq!(status, 409, "{err}");
    let message = err["error"].as_str().unwrap();
    assert!(
        message.contains(r#"<div id="banner" class="cookie-banner">We use cookies"#)
            && message.contains("intercepts pointer events"),
        "{message}"
    );
    assert_eq!(eval(&c, "clicks"), json!([]), "nothing was clicked");

    // Inside a shadow root, and inside a frame.
    let shadowed = ref_of(&c, "button", "Shadowed");
    let (status, err) = c.call(
        "POST",
        "/act",
        Some(json!({ "kind": "click", "ref": shadowed, "timeoutMs": 400 })),
    );
    assert_eq!(status, 409, "{err}");
    assert!(
        err["error"]
            .as_str()
            .unwrap()
            .contains(r#"<div id="shadow-banner">"#),
        "{err}"
    );
    let inner = ref_of(&c, "button", "Inner");
    let (status, err) = c.call(
        "POST",
        "/act",
        Some(json!({ "kind": "click", "ref": inner, "timeoutMs": 400 })),
    );
    assert_eq!(status, 409, "{err}");
    assert!(
        err["error"]
            .as_str()
            .unwrap()
            .contains(r#"<div id="inner-banner">"#),
        "{err}"
    );
    assert_eq!(eval(&c, "clicks"), json!([]), "nothing was clicked");

    // What lets the pointer through does not count; the button's own
    // children do not either.
    let through = click("#through");
    assert_eq!(through.0, 200, "{}", through.1);
    // Accepting the banner removes it; the same click on Buy now lands.
    assert_eq!(click("#accept").0, 200);
    assert_eq!(click("#buy").0, 200);
    assert_eq!(eval(&c, "clicks"), json!(["through", "accept", "buy"]));
}
