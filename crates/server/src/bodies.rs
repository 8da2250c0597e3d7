//! The request bodies of the browser and session routes, as JSON Schemas.
//!
//! They are the one statement of what these routes take: the API document
//! publishes them (see [`apply`]) and [`crate::validate`] refuses every
//! request that does not match them before a handler reads it. A schema
//! may be stricter than its handler, never looser: what it lets through,
//! the handler must take (the schemathesis test in `tests/openapi.rs`
//! checks that from outside).
//!
//! Routes whose body depends on a path parameter (`/set/{setting}`,
//! `/sessions/{id}/{action}`) are documented once per value, each with its
//! own body.

use clawdis_browser::action::ACTIONS;
use serde_json::{Map, Value, json};

use crate::api::NON_BLANK;

/// The longest `timeoutMs` the OpenClaw routes take (ten minutes).
const MAX_TIMEOUT_MS: u64 = 600_000;

/// The longest a click or a key may be held (ten seconds).
const MAX_DELAY_MS: u64 = 10_000;

/// A string with something besides white space in it.
fn text(description: &str) -> Value {
    json!({ "type": "string", "pattern": NON_BLANK, "description": description })
}

/// Any string (blank counts as not given).
fn string(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

fn boolean(description: &str) -> Value {
    json!({ "type": "boolean", "description": description })
}

fn count(description: &str) -> Value {
    json!({ "type": "integer", "minimum": 0, "description": description })
}

fn words(words: &[&str], description: &str) -> Value {
    json!({ "type": "string", "enum": words, "description": description })
}

/// A string in a syntax no schema states (a CSS selector, a script, a
/// key chord): `format` names it, `examples` show it, and the route
/// answers 400 when it does not parse.
fn syntax(format: &str, description: &str) -> Value {
    let examples: &[&str] = match format {
        "css-selector" => &["#submit", "form input[name=q]", "body"],
        "xpath" => &["//button", "//a[@href]"],
        "javascript" => &["() => true", "() => document.readyState === 'complete'"],
        "key-chord" => &["Enter", "a", "Control+A"],
        "origin" => &["https://example.com"],
        "iana-time-zone" => &["Europe/Paris", "UTC"],
        "bcp47" => &["en-US", "fr"],
        _ => &[],
    };
    json!({
        "type": "string",
        "pattern": NON_BLANK,
        "format": format,
        "description": description,
        "examples": examples,
    })
}

/// A URL to open: absolute, with its scheme (`https://...`, `about:blank`).
/// Not JSON Schema's `uri`, which refuses what browsers take: a host in
/// another script (`https://例え.jp/`), a space in a path.
fn url(description: &str) -> Value {
    json!({
        "type": "string",
        "pattern": "^[A-Za-z][A-Za-z0-9+.-]*:",
        "description": description,
        "examples": ["about:blank"],
    })
}

/// A snapshot's ref: `e12`, `ax12` or `12` (also as `ref=e12` or `@e12`).
fn snapshot_ref(description: &str) -> Value {
    json!({ "type": "string", "pattern": REF, "description": description, "examples": ["e1"] })
}

/// What [`clawdis_browser::refs::parse_ref`] takes (below `u32::MAX`).
const REF: &str = "^(ref=)?@?(ax|e)?0*[1-9][0-9]{0,8}$";

fn timeout_ms() -> Value {
    json!({
        "type": "integer",
        "minimum": 0,
        "maximum": MAX_TIMEOUT_MS,
        "description": "How long to wait, in milliseconds",
    })
}

/// Adds a rule to `o` (`keyword` over `schemas`, as `anyOf`, `oneOf` or
/// `not`) with the message a body that breaks it is answered.
fn rule(o: &mut Value, keyword: &str, schemas: Value, message: &str) {
    let rule = json!({ keyword: schemas, "x-message": message });
    match o["allOf"].as_array_mut() {
        Some(rules) => rules.push(rule),
        None => o["allOf"] = json!([rule]),
    }
}

/// Adds a rule to `o`: `required` are given, or `clear: true` undoes the
/// setting instead.
fn or_clear(o: &mut Value, required: &[&str], message: &str) {
    rule(
        o,
        "anyOf",
        json!([
            { "required": ["clear"], "properties": { "clear": { "const": true } } },
            { "required": required },
        ]),
        message,
    );
}

/// A schema saying the string field `key` is given and not blank (a
/// blank one counts as not given).
fn given(key: &str) -> Value {
    json!({ "required": [key], "properties": { key: { "pattern": NON_BLANK } } })
}

/// Adds a rule to `o`: what `first` says, and any of `others` given, do
/// not go together.
fn apart(o: &mut Value, mut first: Value, others: &[&str], message: &str) {
    first["anyOf"] = Value::Array(others.iter().map(|k| given(k)).collect());
    rule(o, "not", first, message);
}

/// An object of `properties`, `required` of them required.
fn object(properties: Value, required: &[&str]) -> Value {
    let mut o = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        o["required"] = json!(required);
    }
    o
}

/// `properties` plus the fields every OpenClaw route takes: `targetId`
/// and `profile`.
fn openclaw(mut properties: Value, required: &[&str]) -> Value {
    if let Some(p) = properties.as_object_mut() {
        p.entry("targetId")
            .or_insert_with(|| string("The tab (its id or a unique prefix); else the current one"));
        p.insert("profile".into(), string("The profile (only clawd exists)"));
    }
    object(properties, required)
}

/// A cookie to set, as Chromium takes one: `name` and `value`, and
/// `SameSite=None` only for a secure cookie.
fn cookie(properties: Value) -> Value {
    let mut o = object(properties, &["name", "value"]);
    rule(
        &mut o,
        "not",
        json!({
            "required": ["sameSite"],
            "properties": { "sameSite": { "enum": ["None", "none"] } },
            "not": { "required": ["secure"], "properties": { "secure": { "const": true } } },
        }),
        "a cookie with sameSite None must be secure",
    );
    o
}

/// `/act`'s kinds, each with its fields; `nested` for a batch's entries
/// (no `batch`, no `close`).
fn act_kinds(nested: bool) -> Vec<Value> {
    let reference = || {
        json!({
            "description": "An element's ref from /snapshot",
            "anyOf": [
                { "type": "string", "pattern": REF },
                { "type": "integer", "minimum": 1, "maximum": 999_999_999 },
            ],
        })
    };
    let selector = || syntax("css-selector", "A CSS selector (instead of a ref)");
    let flag = || json!({ "anyOf": [{ "type": "boolean" }, { "type": "string", "enum": ["true", "false"] }] });
    let button = || words(&["left", "right", "middle"], "The mouse button");
    let modifiers = || {
        json!({
            "type": "array",
            "items": { "type": "string", "enum": ["Alt", "Control", "Meta", "Shift", "ControlOrMeta"] },
            "description": "Keys held during the click",
        })
    };
    let coordinate = || json!({ "type": "number" });
    let delay = || json!({ "type": "integer", "minimum": 0, "maximum": MAX_DELAY_MS, "description": "Milliseconds between press and release" });
    let values = || {
        json!({
            "anyOf": [
                { "type": "string" },
                { "type": "array", "minItems": 1, "items": { "anyOf": [{ "type": "string" }, { "type": "number" }] } },
            ],
        })
    };
    // Either a ref or a selector (the ref wins when both are given).
    let aimed = |name: &str, mut props: Map<String, Value>, required: &[&str]| {
        props.insert("ref".into(), reference());
        props.insert("selector".into(), selector());
        let mut o = object(Value::Object(props), required);
        rule(
            &mut o,
            "anyOf",
            json!([{ "required": ["ref"] }, { "required": ["selector"] }]),
            &format!("{name} requires ref or selector"),
        );
        o
    };
    let kind = |name: &str, mut o: Value| {
        if let Some(p) = o["properties"].as_object_mut() {
            p.insert("kind".into(), json!({ "const": name }));
            p.insert("targetId".into(), string("The tab; else the current one"));
            p.insert("timeoutMs".into(), timeout_ms());
        }
        let mut required = o["required"].as_array().cloned().unwrap_or_default();
        required.insert(0, json!("kind"));
        o["required"] = Value::Array(required);
        o["title"] = json!(name);
        o
    };
    let props = |v: Value| v.as_object().cloned().unwrap_or_default();
    let mut kinds = vec![
        kind(
            "click",
            aimed(
                "click",
                props(json!({
                    "doubleClick": flag(),
                    "button": button(),
                    "modifiers": modifiers(),
                    "delayMs": delay(),
                })),
                &[],
            ),
        ),
        kind(
            "clickCoords",
            object(
                json!({ "x": coordinate(), "y": coordinate(), "doubleClick": flag(), "button": button() }),
                &["x", "y"],
            ),
        ),
        kind(
            "type",
            aimed(
                "type",
                props(json!({
                    "text": { "anyOf": [{ "type": "string" }, { "type": "number" }], "description": "What to type" },
                    "submit": flag(),
                    "slowly": flag(),
                })),
                &["text"],
            ),
        ),
        kind(
            "press",
            object(
                json!({
                    "key": syntax("key-chord", "A key or chord: Enter, a, Control+A"),
                    "delayMs": delay(),
                }),
                &["key"],
            ),
        ),
        kind("hover", aimed("hover", Map::new(), &[])),
        kind("scrollIntoView", aimed("scrollIntoView", Map::new(), &[])),
        kind("drag", {
            let mut o = object(
                json!({
                    "startRef": reference(),
                    "startSelector": selector(),
                    "endRef": reference(),
                    "endSelector": selector(),
                }),
                &[],
            );
            rule(
                &mut o,
                "anyOf",
                json!([{ "required": ["startRef"] }, { "required": ["startSelector"] }]),
                "drag requires startRef or startSelector",
            );
            rule(
                &mut o,
                "anyOf",
                json!([{ "required": ["endRef"] }, { "required": ["endSelector"] }]),
                "drag requires endRef or endSelector",
            );
            o
        }),
        kind("select", {
            let mut o = aimed(
                "select",
                props(json!({ "values": values(), "value": values() })),
                &[],
            );
            rule(
                &mut o,
                "anyOf",
                json!([{ "required": ["values"] }, { "required": ["value"] }]),
                "select requires values",
            );
            o
        }),
        kind(
            "fill",
            object(
                json!({
                    "fields": {
                        "type": "array",
                        "minItems": 1,
                        "items": object(
                            json!({
                                "ref": reference(),
                                "type": string("text (default), checkbox, radio, select, ..."),
                                "value": {},
                            }),
                            &["ref"],
                        ),
                    },
                }),
                &["fields"],
            ),
        ),
        kind(
            "resize",
            object(
                json!({
                    "width": { "type": "number", "minimum": 1, "maximum": 10_000 },
                    "height": { "type": "number", "minimum": 1, "maximum": 10_000 },
                }),
                &["width", "height"],
            ),
        ),
        kind("wait", {
            let mut o = object(
                json!({
                    "timeMs": timeout_ms(),
                    "text": { "type": "string", "minLength": 1 },
                    "textGone": { "type": "string", "minLength": 1 },
                    "selector": selector(),
                    "url": text("A URL, or a glob of one"),
                    "loadState": words(&["load", "domcontentloaded", "networkidle"], "A load state"),
                    "fn": syntax("javascript", "A function that returns true when done"),
                }),
                &[],
            );
            rule(
                &mut o,
                "anyOf",
                json!(
                    [
                        "timeMs",
                        "text",
                        "textGone",
                        "selector",
                        "url",
                        "loadState",
                        "fn"
                    ]
                    .map(|k| json!({ "required": [k] }))
                ),
                "wait requires one of timeMs, text, textGone, selector, url, loadState or fn",
            );
            o
        }),
        kind("evaluate", {
            let mut o = object(
                json!({
                    "fn": syntax("javascript", "A function to run in the page"),
                    "function": syntax("javascript", "fn, by its other name"),
                    "ref": reference(),
                }),
                &[],
            );
            rule(
                &mut o,
                "anyOf",
                json!([{ "required": ["fn"] }, { "required": ["function"] }]),
                "evaluate requires fn",
            );
            o
        }),
    ];
    if !nested {
        kinds.push(kind("close", object(json!({}), &[])));
        kinds.push(kind(
            "batch",
            object(
                json!({
                    "actions": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": clawdis_browser::act::MAX_BATCH,
                        "items": { "oneOf": act_kinds(true) },
                    },
                    "stopOnError": flag(),
                }),
                &["actions"],
            ),
        ));
    }
    kinds
}

/// `POST /act`: one of the kinds, told apart by `kind`.
fn act() -> Value {
    json!({
        "oneOf": act_kinds(false),
        "discriminator": { "propertyName": "kind" },
        "x-error-codes": { "invalid": "ACT_INVALID_REQUEST", "discriminator": "ACT_KIND_REQUIRED" },
    })
}

/// What a session action's body names an element by.
fn aim() -> Map<String, Value> {
    let strategy = |kind: &str, field: &str, extra: Value| {
        let mut props = json!({ "type": { "const": kind }, field: text(field) });
        if let (Some(p), Value::Object(extra)) = (props.as_object_mut(), extra) {
            p.extend(extra);
        }
        object(props, &["type", field])
    };
    let exact = || json!({ "exact": { "type": "boolean" } });
    let mut css = strategy("css", "selector", json!({}));
    css["properties"]["selector"] = syntax("css-selector", "A CSS selector");
    let mut xpath = strategy("xpath", "expression", json!({}));
    xpath["properties"]["expression"] = syntax("xpath", "An XPath expression");
    let one = json!({
        "anyOf": [
            syntax("css-selector", "A CSS selector"),
            strategy("aria", "role", json!({ "name": { "type": "string" }, "exact": { "type": "boolean" } })),
            strategy("text", "text", exact()),
            strategy("label", "text", exact()),
            strategy("testid", "id", json!({})),
            css,
            xpath,
        ],
    });
    let Value::Object(map) = json!({
        "ref": snapshot_ref("An element's ref from the session's snapshot"),
        "selector": {
            "description": "A CSS selector, a {type, ...} strategy, or a list of them tried in order",
            "anyOf": [one.clone(), { "type": "array", "minItems": 1, "items": one }],
        },
        "nth": count("Which of several matches (from 0)"),
        "frame": { "type": "string", "minLength": 1, "description": "Scopes a selector to an iframe (its ref or part of its URL)" },
    }) else {
        unreachable!("an object literal")
    };
    map
}

/// A session action's body: `props` and `required`, plus `timeout`;
/// `aimed` when it names an element (`ref` or `selector`, not both, and
/// `frame` only with a selector), `optional` when it may not.
fn action(props: Value, required: &[&str], aimed: Aim) -> Value {
    let mut properties = props.as_object().cloned().unwrap_or_default();
    properties.insert(
        "timeout".into(),
        json!({
            "description": "short (5 s), medium (15 s), long (45 s), or milliseconds (at most 300000)",
            "anyOf": [
                { "type": "string", "enum": ["short", "medium", "long"] },
                { "type": "integer", "minimum": 1, "maximum": 300_000 },
            ],
        }),
    );
    if !matches!(aimed, Aim::No) {
        properties.extend(aim());
    }
    let mut o = object(Value::Object(properties), required);
    let by_ref = json!({ "required": ["ref"], "not": { "anyOf": [{ "required": ["selector"] }, { "required": ["frame"] }] } });
    let by_selector = json!({ "required": ["selector"], "not": { "required": ["ref"] } });
    let neither = json!({ "not": { "anyOf": [{ "required": ["ref"] }, { "required": ["selector"] }, { "required": ["nth"] }, { "required": ["frame"] }] } });
    match aimed {
        Aim::No => {}
        Aim::Required => rule(&mut o, "oneOf", json!([by_ref, by_selector]), TARGET),
        Aim::Optional => rule(
            &mut o,
            "oneOf",
            json!([by_ref, by_selector, neither]),
            TARGET,
        ),
    }
    o["x-error-codes"] = json!({ "invalid": "ACTION_INVALID" });
    o
}

/// What a session action answers a body whose target is wrong.
const TARGET: &str =
    "a target is ref (from the snapshot) or selector, not both; nth and frame go with a selector";

/// Whether a session action names an element.
#[derive(Clone, Copy)]
enum Aim {
    No,
    Required,
    Optional,
}

/// `POST /sessions/{id}/{action}`'s body, by action.
fn session_action(name: &str) -> Value {
    let strings = || json!({ "type": "array", "items": { "type": "string" } });
    match name {
        "navigate" => action(json!({ "url": url("Where to go") }), &["url"], Aim::No),
        "click" => action(
            json!({
                "double": boolean("A double click"),
                "button": words(&["left", "right", "middle"], "The mouse button"),
                "modifiers": {
                    "type": "array",
                    "items": { "type": "string", "enum": ["Alt", "Control", "Meta", "Shift", "ControlOrMeta"] },
                },
            }),
            &[],
            Aim::Required,
        ),
        "type" => action(
            json!({
                "text": string("What to type"),
                "clear": boolean("Clear the field first (default true)"),
                "slowly": boolean("One key at a time"),
            }),
            &["text"],
            Aim::Required,
        ),
        "fill" => {
            let mut field = action(
                json!({ "value": { "anyOf": [{ "type": "string" }, { "type": "number" }, { "type": "boolean" }] } }),
                &["value"],
                Aim::Required,
            );
            if let Some(p) = field["properties"].as_object_mut() {
                p.remove("timeout");
            }
            if let Some(o) = field.as_object_mut() {
                o.remove("x-error-codes");
            }
            action(
                json!({ "fields": { "type": "array", "minItems": 1, "items": field } }),
                &["fields"],
                Aim::No,
            )
        }
        "select" => {
            let mut o = action(
                json!({
                    "value": string("The option (its value or label)"),
                    "values": { "type": "array", "minItems": 1, "items": { "type": "string" } },
                }),
                &[],
                Aim::Required,
            );
            rule(
                &mut o,
                "oneOf",
                json!([
                    { "required": ["value"], "not": { "required": ["values"] } },
                    { "required": ["values"], "not": { "required": ["value"] } },
                ]),
                "select needs value or a non-empty values",
            );
            o
        }
        "drag" => {
            let mut to = object(Value::Object(aim()), &[]);
            rule(
                &mut to,
                "oneOf",
                json!([
                    { "required": ["ref"], "not": { "anyOf": [{ "required": ["selector"] }, { "required": ["frame"] }] } },
                    { "required": ["selector"], "not": { "required": ["ref"] } },
                ]),
                TARGET,
            );
            action(json!({ "to": to }), &["to"], Aim::Required)
        }
        "upload" => action(
            json!({ "paths": { "type": "array", "minItems": 1, "items": text("A file") } }),
            &["paths"],
            Aim::Required,
        ),
        "scroll" => action(
            json!({
                "direction": words(&["up", "down", "left", "right"], "Which way (default down)"),
                "amount": { "type": "number", "exclusiveMinimum": 0, "description": "Pixels" },
            }),
            &[],
            Aim::Optional,
        ),
        "wait" => {
            let conditions = [
                "selector",
                "ref",
                "text",
                "textGone",
                "url",
                "js",
                "networkIdle",
            ];
            let mut o = action(
                json!({
                    "state": words(&["visible", "hidden", "attached", "detached"], "With selector or ref (default visible)"),
                    "text": string("Text that appears"),
                    "textGone": string("Text that goes"),
                    "url": string("A URL, or a glob of one"),
                    "js": syntax("javascript", "An expression that becomes true"),
                    "networkIdle": { "const": true },
                }),
                &[],
                Aim::Optional,
            );
            // Exactly one condition (an element counts once, by ref or selector).
            let one_of = json!(conditions
                    .iter()
                    .filter(|c| **c != "ref")
                    .map(|c| {
                        let others: Vec<Value> = conditions
                            .iter()
                            .filter(|o| o != &c && !(*c == "selector" && **o == "ref"))
                            .map(|o| json!({ "required": [o] }))
                            .collect();
                        let this = if *c == "selector" {
                            json!({ "anyOf": [{ "required": ["selector"] }, { "required": ["ref"] }] })
                        } else {
                            json!({ "required": [c] })
                        };
                        json!({ "allOf": [this, { "not": { "anyOf": others } }] })
                    })
                    .collect::<Vec<_>>());
            rule(
                &mut o,
                "oneOf",
                one_of,
                "wait takes one of selector (with state), text, textGone, url, js or networkIdle",
            );
            o
        }
        "extract_text" => action(json!({}), &[], Aim::Optional),
        "extract_all" => action(json!({ "attrs": strings() }), &[], Aim::Required),
        "screenshot" => action(
            json!({ "fullPage": boolean("The whole page, not the viewport") }),
            &[],
            Aim::No,
        ),
        "evaluate" => action(
            json!({ "script": syntax("javascript", "A script to run in the page") }),
            &["script"],
            Aim::No,
        ),
        "check" | "uncheck" | "hover" => action(json!({}), &[], Aim::Required),
        // reload, back, forward, content, pdf.
        _ => action(json!({}), &[], Aim::No),
    }
}

/// Every documented body: `(method, path, schema)`. A path here that the
/// router serves as a template (`/set/offline` of `/set/{setting}`) is
/// documented on its own.
pub(crate) fn bodies() -> Vec<(&'static str, String, Value)> {
    let mut all: Vec<(&str, String, Value)> = vec![
        (
            "post",
            "/start".into(),
            openclaw(
                json!({ "headless": boolean("A one-shot headless launch") }),
                &[],
            ),
        ),
        ("post", "/stop".into(), openclaw(json!({}), &[])),
        ("post", "/reset-profile".into(), openclaw(json!({}), &[])),
        (
            "post",
            "/system-profile-import/dismiss".into(),
            openclaw(json!({}), &[]),
        ),
        (
            "post",
            "/profiles/import".into(),
            openclaw(
                json!({
                    "browser": string("OpenClaw's source browser (nothing is imported)"),
                    "systemProfile": string("OpenClaw's source profile"),
                    "into": string("OpenClaw's target profile"),
                    "domains": { "description": "OpenClaw's domain filter" },
                    "makeDefault": boolean("OpenClaw's default switch"),
                }),
                &[],
            ),
        ),
        (
            "post",
            "/screencast".into(),
            openclaw(
                json!({
                    "maxWidth": { "type": "number", "description": "Widest frame (320 to 2000, default 1280)" },
                    "maxHeight": { "type": "number", "description": "Tallest frame (320 to 2000, default 1280)" },
                    "quality": { "type": "number", "description": "JPEG quality (30 to 90, default 70)" },
                }),
                &[],
            ),
        ),
        (
            "post",
            "/tabs/open".into(),
            openclaw(
                json!({ "url": url("The page to open"), "newTab": boolean("In a new tab (default true)") }),
                &["url"],
            ),
        ),
        (
            "post",
            "/tabs/focus".into(),
            openclaw(
                json!({ "targetId": text("The tab (its id or a unique prefix)") }),
                &["targetId"],
            ),
        ),
        (
            "post",
            "/tabs/action".into(),
            openclaw(
                json!({
                    "action": words(&["list", "new", "close", "select"], "What to do (default list)"),
                    "index": count("The tab's index (default the active one)"),
                    "url": url("For new: the page (default about:blank)"),
                }),
                &[],
            ),
        ),
        (
            "post",
            "/navigate".into(),
            openclaw(
                json!({ "url": url("Where to go"), "timeoutMs": timeout_ms() }),
                &["url"],
            ),
        ),
        ("post", "/screenshot".into(), {
            let mut o = openclaw(
                json!({
                    "fullPage": boolean("The whole page"),
                    "ref": snapshot_ref("An element's ref"),
                    "element": syntax("css-selector", "An element's CSS selector"),
                    "type": words(&["png", "jpeg", "jpg"], "The image format (default png)"),
                }),
                &[],
            );
            apart(
                &mut o,
                json!({ "required": ["fullPage"], "properties": { "fullPage": { "const": true } } }),
                &["ref", "element"],
                "fullPage is not supported for element screenshots",
            );
            o
        }),
        ("post", "/pdf".into(), openclaw(json!({}), &[])),
        (
            "post",
            "/eval".into(),
            openclaw(
                json!({ "js": syntax("javascript", "An expression to evaluate"), "await": boolean("Await a promise it returns") }),
                &["js"],
            ),
        ),
        (
            "post",
            "/query".into(),
            openclaw(
                json!({ "selector": syntax("css-selector", "What to find"), "limit": count("At most this many") }),
                &["selector"],
            ),
        ),
        (
            "post",
            "/dom".into(),
            openclaw(
                json!({
                    "format": words(&["html", "text"], "html (default) or text"),
                    "selector": syntax("css-selector", "Only this element"),
                    "maxChars": count("Cut after this many characters"),
                }),
                &[],
            ),
        ),
        ("post", "/act".into(), act()),
        (
            "post",
            "/response/body".into(),
            openclaw(
                json!({
                    "url": text("A URL, or a glob of one, the response came from"),
                    "timeoutMs": timeout_ms(),
                    "maxChars": count("Cut after this many characters"),
                }),
                &["url"],
            ),
        ),
        (
            "post",
            "/hooks/dialog".into(),
            openclaw(
                json!({
                    "accept": boolean("Accept (true) or dismiss (false)"),
                    "promptText": string("A prompt's answer"),
                    "dialogId": string("The dialog (from /dialogs); else the next one"),
                    "timeoutMs": timeout_ms(),
                }),
                &["accept"],
            ),
        ),
        ("post", "/hooks/file-chooser".into(), {
            let mut o = openclaw(
                json!({
                    "paths": {
                        "description": "The files to choose",
                        "anyOf": [
                            text("A file"),
                            { "type": "array", "minItems": 1, "items": { "type": "string" }, "contains": text("A file") },
                        ],
                    },
                    "ref": snapshot_ref("The element whose click opens the chooser"),
                    "inputRef": snapshot_ref("The file input's ref"),
                    "element": syntax("css-selector", "The file input's CSS selector"),
                    "timeoutMs": timeout_ms(),
                }),
                &["paths"],
            );
            apart(
                &mut o,
                given("ref"),
                &["inputRef", "element"],
                "ref cannot be combined with inputRef/element",
            );
            o
        }),
        (
            "post",
            "/download".into(),
            openclaw(
                json!({
                    "ref": snapshot_ref("The element whose click downloads"),
                    "path": string("Where to save it"),
                    "timeoutMs": timeout_ms(),
                }),
                &["ref"],
            ),
        ),
        (
            "post",
            "/wait/download".into(),
            openclaw(
                json!({ "path": string("Where to save it"), "timeoutMs": timeout_ms() }),
                &[],
            ),
        ),
        (
            "post",
            "/highlight".into(),
            openclaw(
                json!({ "ref": snapshot_ref("The element's ref") }),
                &["ref"],
            ),
        ),
        (
            "post",
            "/permissions/grant".into(),
            openclaw(
                json!({
                    "permissions": {
                        "type": "array",
                        "minItems": 1,
                        "items": words(clawdis_browser::emulation::PERMISSIONS, "A permission"),
                    },
                    "origin": syntax("origin", "Only for this origin"),
                }),
                &["permissions"],
            ),
        ),
        (
            "post",
            "/cookies/set".into(),
            openclaw(
                json!({
                    "cookie": cookie(json!({
                            "name": {
                                "type": "string",
                                "maxLength": 1024,
                                "pattern": "^[^=;\\x00-\\x1f\\x7f]*[^=;\\x00-\\x20\\x7f][^=;\\x00-\\x1f\\x7f]*$",
                                "description": "Its name",
                            },
                            "value": { "type": "string", "maxLength": 2048, "pattern": "^[^;\\x00-\\x1f\\x7f]*$", "description": "Its value" },
                            "url": {
                                "type": "string",
                                "pattern": "^https?://[^\\s/?#:@]+(:[0-9]+)?([/?#]|$)",
                                "description": "The http(s) URL it is for",
                            },
                            "domain": { "type": "string", "pattern": "^\\.?([A-Za-z0-9-]+\\.)*[A-Za-z0-9-]*[A-Za-z][A-Za-z0-9-]*$", "description": "Its domain (a name, not an address)" },
                            "path": { "type": "string", "maxLength": 1024, "pattern": "^/[^;\\x00-\\x1f\\x7f]*$", "description": "Its path" },
                            "expires": { "type": "number", "description": "Seconds since the epoch" },
                            "httpOnly": { "type": "boolean" },
                            "secure": { "type": "boolean" },
                            "sameSite": words(
                                &["Strict", "Lax", "None", "strict", "lax", "none"],
                                "Its SameSite (None only with secure)",
                            ),
                        })),
                }),
                &["cookie"],
            ),
        ),
        (
            "post",
            "/cookies/set-many".into(),
            openclaw(
                json!({
                    "cookies": {
                        "type": "array",
                        "minItems": 1,
                        "description": "The cookies; one the browser refuses is skipped",
                        "items": object(
                            json!({
                                "name": string("Its name"),
                                "value": string("Its value"),
                                "url": string("The URL it is for"),
                                "domain": string("Its domain"),
                                "path": string("Its path"),
                                "expires": { "type": "number", "description": "Seconds since the epoch" },
                                "httpOnly": boolean("Hidden from scripts"),
                                "secure": boolean("Sent over HTTPS only"),
                                "sameSite": string("Strict, Lax or None"),
                            }),
                            &[],
                        ),
                    },
                }),
                &["cookies"],
            ),
        ),
        ("post", "/cookies/clear".into(), openclaw(json!({}), &[])),
        (
            "post",
            "/storage/{kind}/set".into(),
            openclaw(
                json!({
                    "key": text("The key"),
                    "value": { "description": "The value (a non-string is stored as its JSON)", "not": { "type": "null" } },
                }),
                &["key", "value"],
            ),
        ),
        (
            "post",
            "/storage/{kind}/clear".into(),
            openclaw(json!({}), &[]),
        ),
        (
            "post",
            "/set/offline".into(),
            openclaw(
                json!({ "offline": boolean("Offline (true) or online") }),
                &["offline"],
            ),
        ),
        (
            "post",
            "/set/headers".into(),
            openclaw(
                json!({
                    "headers": {
                        "type": "object",
                        "description": "Extra request headers",
                        // RFC 9110's field names and values.
                        "propertyNames": { "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" },
                        "additionalProperties": { "type": "string", "pattern": "^[\\t\\x20-\\x7e\\x80-\\xff]*$" },
                    },
                }),
                &["headers"],
            ),
        ),
        ("post", "/set/geolocation".into(), {
            let mut o = openclaw(
                json!({
                    "latitude": { "type": "number", "minimum": -90, "maximum": 90 },
                    "longitude": { "type": "number", "minimum": -180, "maximum": 180 },
                    "accuracy": { "type": "number", "minimum": 0 },
                    "origin": syntax("origin", "Grant geolocation to this origin too"),
                    "clear": boolean("Clear the override"),
                }),
                &[],
            );
            or_clear(
                &mut o,
                &["latitude", "longitude"],
                "latitude and longitude are required (or clear: true)",
            );
            o
        }),
        (
            "post",
            "/set/media".into(),
            openclaw(
                json!({ "colorScheme": words(&["dark", "light", "no-preference", "none"], "prefers-color-scheme") }),
                &["colorScheme"],
            ),
        ),
        (
            "post",
            "/set/timezone".into(),
            openclaw(
                json!({ "timezoneId": syntax("iana-time-zone", "An IANA time zone") }),
                &["timezoneId"],
            ),
        ),
        (
            "post",
            "/set/locale".into(),
            openclaw(
                json!({ "locale": syntax("bcp47", "A BCP 47 language tag") }),
                &["locale"],
            ),
        ),
        ("post", "/set/device".into(), {
            let names: Vec<&str> = clawdis_browser::devices::DEVICES
                .iter()
                .map(|d| d.name)
                .collect();
            let mut o = openclaw(
                json!({ "name": words(&names, "A device to emulate"), "clear": boolean("Clear the emulation") }),
                &[],
            );
            or_clear(&mut o, &["name"], "name is required (or clear: true)");
            o
        }),
        (
            "post",
            "/sessions".into(),
            object(
                json!({
                    "profile": { "type": "string", "pattern": PROFILE_NAME, "description": "A named persistent profile (<home>/browser/profiles/<name>/)" },
                    "url": url("A page to open"),
                    "dialogs": words(&["default", "accept", "dismiss", "ask"], "What happens to dialogs: default accepts alerts and beforeunload and dismisses confirm and prompt"),
                }),
                &[],
            ),
        ),
        (
            "post",
            "/sessions/profiles".into(),
            object(
                json!({ "name": { "type": "string", "pattern": PROFILE_NAME, "description": "The profile's name" } }),
                &["name"],
            ),
        ),
        (
            "post",
            "/sessions/{id}/handoff".into(),
            object(
                json!({
                    "reason": { "type": "string", "pattern": NON_BLANK, "maxLength": 240, "description": "Why the agent needs the person (at most 240 characters)" },
                    "timeout_ms": { "type": "integer", "minimum": crate::handoff::MIN_WAIT_MS, "maximum": crate::handoff::MAX_WAIT_MS, "description": "How long to wait (default 600000: ten minutes)" },
                }),
                &["reason"],
            ),
        ),
        (
            "post",
            "/sessions/{id}/approval".into(),
            object(
                json!({
                    "message": text("What the person is asked"),
                    "timeout": { "type": "integer", "minimum": 1, "maximum": crate::sessions::MAX_APPROVAL_WAIT, "description": "Seconds to wait (default 300)" },
                }),
                &["message"],
            ),
        ),
    ];
    all.extend(
        ACTIONS
            .iter()
            .map(|a| ("post", format!("/sessions/{{id}}/{a}"), session_action(a))),
    );
    all
}

/// A named profile's name, as the sessions take it.
pub(crate) const PROFILE_NAME: &str = "^[A-Za-z0-9_-]{1,64}$";

/// Puts the bodies into the document: each operation's request body
/// becomes its schema, required exactly when `{}` does not satisfy it
/// (an empty body is read as `{}`); a path documented here that the
/// router serves as a template is split out of it.
pub(crate) fn apply(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    let mut split = Vec::new();
    for (method, path, schema) in bodies() {
        if !paths.contains_key(&path) {
            let Some((template, operation)) = template_of(paths, method, &path) else {
                continue;
            };
            paths
                .entry(path.clone())
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .map(|item| item.insert(method.to_string(), operation));
            split.push(template);
        }
        let Some(operation) = paths.get_mut(&path).and_then(|p| p.get_mut(method)) else {
            continue;
        };
        let required = jsonschema::validator_for(&schema).is_ok_and(|v| !v.is_valid(&json!({})));
        let mut schema = schema;
        if !required && schema["type"] == "object" {
            // No body, or JSON null, is read as `{}`.
            schema["type"] = json!(["object", "null"]);
        }
        operation["requestBody"] = json!({
            "content": { "application/json": { "schema": schema } },
            "required": required,
        });
    }
    for template in split {
        paths.remove(&template);
    }
    for (path, name, schema) in parameters() {
        let params = paths
            .get_mut(path)
            .and_then(Value::as_object_mut)
            .into_iter()
            .flat_map(|item| item.values_mut())
            .filter_map(|operation| operation.get_mut("parameters")?.as_array_mut())
            .flatten()
            .filter(|p| p["name"] == name);
        for param in params {
            param["schema"] = schema.clone();
        }
    }
}

/// The path and query parameters whose values the document states
/// exactly: `(path, name, schema)`.
fn parameters() -> Vec<(&'static str, &'static str, Value)> {
    let kind = json!({ "type": "string", "enum": ["local", "session"] });
    let profile = json!({ "type": "string", "pattern": PROFILE_NAME });
    vec![
        ("/storage/{kind}", "kind", kind.clone()),
        ("/storage/{kind}/set", "kind", kind.clone()),
        ("/storage/{kind}/clear", "kind", kind),
        ("/sessions/profiles/{name}", "name", profile.clone()),
        ("/sessions/profiles/{name}/export", "name", profile),
        (
            "/sessions/{id}/trace",
            "after",
            json!({ "type": "integer", "minimum": 0, "maximum": i64::MAX }),
        ),
        (
            "/sessions/{id}/trace",
            "limit",
            json!({ "type": "integer", "minimum": 1, "maximum": MAX_TRACE }),
        ),
    ]
}

/// The most actions `GET /sessions/{id}/trace` answers at once.
pub(crate) const MAX_TRACE: u32 = 1000;

/// The template path serving `path` and its operation for `method`,
/// specialised: the parameter `path` fixes is gone from its parameters
/// and its id names the value (`post_set_offline`).
fn template_of(paths: &Map<String, Value>, method: &str, path: &str) -> Option<(String, Value)> {
    let wanted: Vec<&str> = path.split('/').collect();
    paths.iter().find_map(|(template, item)| {
        let segments: Vec<&str> = template.split('/').collect();
        if segments.len() != wanted.len() {
            return None;
        }
        let mut fixed = None;
        for (t, w) in segments.iter().zip(&wanted) {
            if t == w {
                continue;
            }
            let name = t.strip_prefix('{')?.strip_suffix('}')?;
            if fixed.replace((name, *w)).is_some() {
                return None;
            }
        }
        let (name, value) = fixed?;
        let mut operation = item.get(method)?.clone();
        if let Some(params) = operation
            .get_mut("parameters")
            .and_then(Value::as_array_mut)
        {
            params.retain(|p| !(p["in"] == "path" && p["name"] == name));
        }
        let id = operation["operationId"].as_str().unwrap_or_default();
        operation["operationId"] = json!(id.replace(name, value));
        operation["summary"] = json!(format!("{} {path}", method.to_uppercase()));
        Some((template.clone(), operation))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_body_lands_on_its_operation_and_every_browser_post_has_one() {
        let document = crate::document();
        let paths = document["paths"].as_object().expect("paths");
        for (method, path, _) in bodies() {
            let body = &paths[&path][method]["requestBody"]["content"]["application/json"];
            assert!(body["schema"].is_object(), "{method} {path} has no body");
        }
        // The templates split by value are gone: each value is documented.
        assert!(!paths.contains_key("/set/{setting}"));
        assert!(!paths.contains_key("/sessions/{id}/{action}"));
        assert_eq!(
            paths["/sessions/{id}/click"]["post"]["operationId"],
            "post_sessions_id_click"
        );
        // No browser or session route that takes a body is left generic.
        for (path, item) in paths {
            let Some(post) = item.get("post") else {
                continue;
            };
            let tagged = post["tags"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t == "browser" || t == "sessions"));
            let unimplemented =
                post["responses"].get("501").is_some() && post["responses"].get("200").is_none();
            if tagged && !unimplemented && !path.ends_with("/restore") {
                assert!(
                    post.get("requestBody").is_some(),
                    "POST {path} documents no body"
                );
            }
        }
    }

    #[test]
    fn a_body_is_required_exactly_when_an_empty_one_is_refused() {
        let document = crate::document();
        let required =
            |path: &str| document["paths"][path]["post"]["requestBody"]["required"].clone();
        assert_eq!(required("/navigate"), true);
        assert_eq!(required("/act"), true);
        assert_eq!(required("/pdf"), false);
        assert_eq!(required("/sessions"), false);
        // No body is read as `{}`, so the document takes null as well.
        assert_eq!(
            document["paths"]["/pdf"]["post"]["requestBody"]["content"]["application/json"]["schema"]
                ["type"],
            json!(["object", "null"])
        );
    }
}
