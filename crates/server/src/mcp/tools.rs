//! The fixed tools: their names, descriptions and input schemas. The
//! workflows a user exposes are added to these (see `exposed.rs`).

use serde_json::{Value, json};

/// A fixed tool.
pub(crate) struct Spec {
    /// Its name (MCP's rule: 1–64 of `A-Z a-z 0-9 _ . / -`).
    pub name: &'static str,
    /// What it does, for the agent.
    pub description: &'static str,
    /// Its input schema.
    pub schema: Value,
    /// Whether it only reads.
    pub read_only: bool,
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// Adds `sessionId` (and `timeout` when `timed`) to a browser tool's
/// properties.
fn browser(mut properties: Value, required: &[&str], timed: bool) -> Value {
    if let Some(p) = properties.as_object_mut() {
        p.insert(
            "sessionId".into(),
            // Mirrored into `Mcp-Param-Session-Id` over HTTP (SEP-2243), so a
            // proxy can route or limit by session without reading bodies.
            json!({ "type": "string", "description": "The session to use (from browser_open or browser_list). Omitted: your own default session, opened on first use.", "x-mcp-header": "Session-Id" }),
        );
        if timed {
            p.insert(
                "timeout".into(),
                json!({ "description": "How long to wait: short (5 s), medium (15 s), long (45 s), or milliseconds.", "anyOf": [{ "type": "string", "enum": ["short", "medium", "long"] }, { "type": "integer", "minimum": 1 }] }),
            );
        }
    }
    object(properties, required)
}

/// A target as the action engine takes it: a CSS string, one
/// `{type: aria|text|label|testid|css|xpath, ...}`, or a list of those tried
/// in order.
fn selector() -> Value {
    json!({
        "description": "A CSS selector; or {type: \"aria\", role, name}, {type: \"text\", text}, {type: \"label\", text}, {type: \"testid\", id}, {type: \"xpath\", expression}; or a list of these, tried in order.",
        "anyOf": [{ "type": "string" }, { "type": "object" }, { "type": "array" }],
    })
}

/// The properties that name an element.
fn target() -> serde_json::Map<String, Value> {
    let Value::Object(map) = json!({
        "ref": { "type": "string", "description": "An element's ref from browser_snapshot (e1, e2, ...)." },
        "selector": selector(),
        "nth": { "type": "integer", "minimum": 0, "description": "Which match of a selector, when several match (0 is the first)." },
        "frame": { "type": "string", "description": "An iframe to look in: part of its URL, or its ref." },
    }) else {
        unreachable!("an object literal")
    };
    map
}

fn with_target(extra: Value) -> Value {
    let mut map = target();
    if let Value::Object(extra) = extra {
        map.extend(extra);
    }
    Value::Object(map)
}

/// Every fixed tool; `evaluate` says whether `browser_evaluate` is on.
pub(crate) fn all(evaluate: bool) -> Vec<Spec> {
    let mut specs = vec![
        Spec {
            name: "lobster_run",
            description: "Run a Lobster pipeline (`exec --json 'echo [1,2]' | approve --prompt 'ok?'`) or a named workflow with args. Answers Lobster's envelope with its runId: status ok with the output, or needs_approval / needs_input with a resume token and approvalId (it never waits for a person; resume with lobster_resume).",
            schema: object(
                json!({
                    "pipeline": { "type": "string", "description": "A pipeline, as `lobster run` takes it." },
                    "workflow": { "type": "string", "description": "A workflow's name (see the workflow.* tools) or its file's path." },
                    "args": { "type": "object", "description": "The workflow's args." },
                    "cwd": { "type": "string", "description": "The directory the run's commands run in." },
                    "timeout_ms": { "type": "integer", "minimum": 200, "description": "Stop the run (and its commands) after this long; default 20000." },
                    "max_stdout_bytes": { "type": "integer", "minimum": 1024, "description": "Largest answer, serialised; default 512000." },
                    "lobster_path": { "type": "string", "description": "Run this `lobster` executable (an absolute path) instead of the built-in engine." },
                }),
                &[],
            ),
            read_only: false,
        },
        Spec {
            name: "lobster_resume",
            description: "Answer a paused run: approve or deny its approval gate, or give its input gate a response. Gates that need a person cannot be decided by an agent; those answer an error and wait for the person.",
            schema: object(
                json!({
                    "token": { "type": "string", "description": "The resume token from the envelope (requiresApproval.resumeToken)." },
                    "approvalId": { "type": "string", "description": "The gate's approvalId (8 hex characters, in requiresApproval)." },
                    "runId": { "type": "string", "description": "The run's id (runId): decides the gate it waits at." },
                    "approve": { "type": "boolean", "description": "Approve (true) or deny (false) an approval gate." },
                    "response": { "description": "The answer to an input gate (checked against its schema)." },
                }),
                &[],
            ),
            read_only: false,
        },
        Spec {
            name: "runs_list",
            description: "List runs, newest first: {runs, next}. Filter by status (running, ok, needs_approval, needs_input, cancelled, failed) or workflow; page with cursor.",
            schema: object(
                json!({
                    "status": { "type": "string", "enum": ["running", "ok", "needs_approval", "needs_input", "cancelled", "failed"] },
                    "workflow": { "type": "string" },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 200 },
                    "cursor": { "type": "string", "description": "`next` from the previous page." },
                }),
                &[],
            ),
            read_only: true,
        },
        Spec {
            name: "run_status",
            description: "One run with its steps and the decisions on its gates.",
            schema: object(json!({ "runId": { "type": "string" } }), &["runId"]),
            read_only: true,
        },
        Spec {
            name: "approvals_list",
            description: "Paused runs waiting for a decision (oldest first), then recent decisions: {approvals}. Filter with status pending, decided or expired.",
            schema: object(
                json!({ "status": { "type": "string", "enum": ["pending", "decided", "expired"] } }),
                &[],
            ),
            read_only: true,
        },
        Spec {
            name: "browser_open",
            description: "Open a browser session of your own (an isolated context; `profile` keeps logins between sessions) and make it your default. Answers the session with its sessionId.",
            schema: object(
                json!({
                    "url": { "type": "string", "description": "Open this page." },
                    "profile": { "type": "string", "description": "A named profile whose cookies and storage the session uses and keeps." },
                    "dialogs": { "type": "string", "enum": ["default", "accept", "dismiss", "ask"], "description": "What happens to alert/confirm/prompt dialogs; by default they are dismissed and reported." },
                }),
                &[],
            ),
            read_only: false,
        },
        Spec {
            name: "browser_close",
            description: "Close a session (its context and pages).",
            schema: browser(json!({}), &[], false),
            read_only: false,
        },
        Spec {
            name: "browser_list",
            description: "The sessions: id, url, title, profile, state.",
            schema: object(json!({}), &[]),
            read_only: true,
        },
        Spec {
            name: "browser_restore",
            description: "Recreate a session from its last snapshot (URL, cookies, storage), after a crash or a restart.",
            schema: browser(json!({}), &[], false),
            read_only: false,
        },
        Spec {
            name: "browser_state",
            description: "A session's state: URL, title, whether it is busy, its health.",
            schema: browser(json!({}), &[], false),
            read_only: true,
        },
        Spec {
            name: "browser_navigate",
            description: "Go to a URL and wait for the page to load.",
            schema: browser(json!({ "url": { "type": "string" } }), &["url"], true),
            read_only: false,
        },
        Spec {
            name: "browser_snapshot",
            description: "The page as a compact accessibility tree with refs (e1, e2, ...) that the other tools take as `ref`.",
            schema: browser(
                json!({
                    "maxChars": { "type": "integer", "minimum": 100, "description": "Cut the snapshot at this many characters." },
                    "interactive": { "type": "boolean", "description": "Only elements one can act on." },
                    "selector": { "type": "string", "description": "Only the part of the page under this element." },
                }),
                &[],
                false,
            ),
            read_only: true,
        },
        Spec {
            name: "browser_click",
            description: "Click an element, once it is visible, stable, enabled and not covered; the answer says what changed.",
            schema: browser(
                with_target(json!({
                    "double": { "type": "boolean" },
                    "button": { "type": "string", "enum": ["left", "right", "middle"] },
                    "modifiers": { "type": "array", "items": { "type": "string", "enum": ["Alt", "Control", "Meta", "Shift"] } },
                })),
                &[],
                true,
            ),
            read_only: false,
        },
        Spec {
            name: "browser_type",
            description: "Type text into a field (cleared first unless clear is false); checked that the field holds it.",
            schema: browser(
                with_target(json!({
                    "text": { "type": "string" },
                    "clear": { "type": "boolean" },
                    "slowly": { "type": "boolean", "description": "One key at a time (for pages that react to each key)." },
                })),
                &["text"],
                true,
            ),
            read_only: false,
        },
        Spec {
            name: "browser_select",
            description: "Choose an option (by value or label) in a <select>.",
            schema: browser(
                with_target(json!({
                    "value": { "type": "string" },
                    "values": { "type": "array", "items": { "type": "string" } },
                })),
                &[],
                true,
            ),
            read_only: false,
        },
        Spec {
            name: "browser_fill_form",
            description: "Fill several fields at once: text fields, checkboxes (true/false), radios and selects.",
            schema: browser(
                json!({
                    "fields": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {
                                "ref": { "type": "string" },
                                "selector": selector(),
                                "nth": { "type": "integer", "minimum": 0 },
                                "value": { "type": ["string", "number", "boolean"] },
                            },
                            "required": ["value"],
                        },
                    },
                }),
                &["fields"],
                true,
            ),
            read_only: false,
        },
        Spec {
            name: "browser_hover",
            description: "Move the pointer over an element.",
            schema: browser(with_target(json!({})), &[], true),
            read_only: false,
        },
        Spec {
            name: "browser_press_key",
            description: "Press a key or a chord in the page (Enter, Escape, ArrowDown, Control+A, ...).",
            schema: browser(json!({ "key": { "type": "string" } }), &["key"], false),
            read_only: false,
        },
        Spec {
            name: "browser_scroll",
            description: "Scroll the page, or an element into view / within itself.",
            schema: browser(
                with_target(json!({
                    "direction": { "type": "string", "enum": ["up", "down", "left", "right"] },
                    "amount": { "type": "number", "exclusiveMinimum": 0, "description": "Pixels; a screenful when omitted." },
                })),
                &[],
                true,
            ),
            read_only: false,
        },
        Spec {
            name: "browser_wait",
            description: "Wait for one condition: an element's state (selector or ref with state visible/hidden/attached/detached), text to appear (text) or go (textGone), a URL, a JavaScript condition (js) or network idle.",
            schema: browser(
                with_target(json!({
                    "state": { "type": "string", "enum": ["visible", "hidden", "attached", "detached"] },
                    "text": { "type": "string" },
                    "textGone": { "type": "string" },
                    "url": { "type": "string" },
                    "js": { "type": "string" },
                    "networkIdle": { "type": "boolean" },
                })),
                &[],
                true,
            ),
            read_only: true,
        },
        Spec {
            name: "browser_extract_text",
            description: "The visible text of the page, or of one element.",
            schema: browser(with_target(json!({})), &[], true),
            read_only: true,
        },
        Spec {
            name: "browser_extract_all",
            description: "Every element a selector matches, with its text and the attributes asked for.",
            schema: browser(
                with_target(json!({ "attrs": { "type": "array", "items": { "type": "string" } } })),
                &[],
                true,
            ),
            read_only: true,
        },
        Spec {
            name: "browser_get_content",
            description: "The page's readable content: its title, URL and visible text.",
            schema: browser(json!({}), &[], true),
            read_only: true,
        },
        Spec {
            name: "browser_screenshot",
            description: "A PNG screenshot of the page, as an image.",
            schema: browser(json!({ "fullPage": { "type": "boolean" } }), &[], true),
            read_only: true,
        },
        Spec {
            name: "browser_upload_file",
            description: "Set the files of a file input. Paths are relative to <home>/browser/uploads/ (nothing outside it is read).",
            schema: browser(
                with_target(
                    json!({ "paths": { "type": "array", "minItems": 1, "items": { "type": "string" } } }),
                ),
                &["paths"],
                true,
            ),
            read_only: false,
        },
        Spec {
            name: "browser_handle_dialog",
            description: "Answer the JavaScript dialog that waits (sessions opened with dialogs: ask): accept or dismiss, with the text for a prompt.",
            schema: browser(
                json!({ "accept": { "type": "boolean" }, "promptText": { "type": "string" } }),
                &["accept"],
                false,
            ),
            read_only: false,
        },
        Spec {
            name: "browser_tabs",
            description: "The session's page: its URL, title and target id (a session has one page; open another session for another page).",
            schema: browser(json!({}), &[], false),
            read_only: true,
        },
        Spec {
            name: "browser_console",
            description: "The page's console messages, oldest first; level keeps those at or above it.",
            schema: browser(
                json!({ "level": { "type": "string", "enum": ["debug", "log", "info", "warning", "error"] } }),
                &[],
                false,
            ),
            read_only: true,
        },
        Spec {
            name: "browser_network",
            description: "The page's network requests: method, URL, status, type; filter keeps those whose URL contains it.",
            schema: browser(json!({ "filter": { "type": "string" } }), &[], false),
            read_only: true,
        },
        Spec {
            name: "browser_request_approval",
            description: "Ask a person to approve what you are about to do in a session (a notification, the approvals window, HTTP). Waits for the decision, with progress notifications, and answers {approved}; after timeout_ms (default 600000) {approved: false, reason: \"timeout\"}.",
            schema: browser(
                json!({
                    "message": { "type": "string", "description": "What the person is asked to approve." },
                    "timeout_ms": { "type": "integer", "minimum": 1000, "maximum": 3_600_000 },
                }),
                &["message"],
                false,
            ),
            read_only: false,
        },
        Spec {
            name: "browser_handoff",
            description: "Hand the session's page to a person where only a person can go on (a login's second factor, a CAPTCHA, a consent in a language you cannot read, a payment). They are told (a notification, the approvals window, a webhook with a live-view link), take over the page, and hand it back with Done or Decline. Meanwhile your actions on the page answer handed_off; reading it still works. Waits, with progress notifications, and answers {done: true, url, title} or {done: false, reason: \"declined\" | \"timeout\" | \"cancelled\"} (timeout_ms, default 600000).",
            schema: browser(
                json!({
                    "reason": { "type": "string", "maxLength": 240, "description": "What the person is needed for, in a few words." },
                    "timeout_ms": { "type": "integer", "minimum": 1000, "maximum": 3_600_000 },
                }),
                &["reason"],
                false,
            ),
            read_only: false,
        },
    ];
    if evaluate {
        specs.push(Spec {
            name: "browser_evaluate",
            description: "Run JavaScript in the page (an expression, or a function body with return) and answer its JSON result.",
            schema: browser(json!({ "script": { "type": "string" } }), &["script"], true),
            read_only: false,
        });
    }
    specs
}
