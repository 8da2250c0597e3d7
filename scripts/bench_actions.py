#!/usr/bin/env python3
"""The action engine's bench: the hard-page fixture suite (tests/fixtures/
pages/hard, built/, consent/: pages we wrote, some with real consent
libraries) and pages we did not write, as their npm packages ship them
(TodoMVC's demo apps, GOV.UK Frontend's component examples), run ROUNDS
times in a row, through `clawdis serve`'s session routes and, side by
side, through @playwright/mcp (npm, stdio, pointed at the same Chromium).
Success rates are reported for the two kinds of page apart.

Every step says whether it can succeed and carries an oracle: a JavaScript
expression read from the page after the step that is true only if the
step's effect really happened. A step *succeeded* if the driver reported
success and the oracle holds; a *silent success* is a reported success
whose effect did not happen. Where success is impossible (the element
really is covered, disabled, missing, ambiguous, or the page rejects the
value), clawdis must report the expected error code; @playwright/mcp has no
codes, so any reported failure counts for it. Times are client round trips
(HTTP on loopback for clawdis, the stdio pipe for @playwright/mcp), one
scenario of one driver at a time, the two interleaved.

@playwright/mcp runs as its users run it (defaults: 5 s action timeout,
500 ms settle, a snapshot in every answer). Its tools take the same targets
as a Playwright locator (`getByRole('button', { name: 'Send', exact: true })`,
`getByLabel(...)`, a CSS string), so no step needs a snapshot first. Where
it has no tool of its own: `check` is `browser_fill_form` with a checkbox,
`forward` is `page.goForward()` through `browser_run_code_unsafe`, `upload`
is a click on the label and then `browser_file_upload`, and a dialog an
action raises is answered by `browser_handle_dialog` with clawdis's default
policy (accept alerts, dismiss confirms), its time counted in the action's.

A target may be {"ref": [role, name]}: the ref the session's snapshot gives
that element, looked up before the step is timed. An "act" step goes
through OpenClaw's `/act` route with the session (type with submit, press).

Usage: bench_actions.py CLAWDIS_BIN HOME ROUNDS [--no-pw]
"""
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "tests/fixtures/pages"
NPM = ROOT / "target/test-npm/node_modules"
# The pages we did not write, as their npm packages ship them, installed by
# the bench itself (pinned).
PAGES_DIR = ROOT / "target/bench-pages"
PAGE_PACKAGES = ["todomvc@0.1.1", "govuk-frontend@6.6.0"]
PW_DIR = Path(os.environ.get("PWMCP_REF_DIR", ROOT / "target/pwmcp-ref"))
PW_VERSION = "0.0.79"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


# GOV.UK Frontend's component examples (the HTML its package ships for each
# component) in one page, with its own CSS and JavaScript.
GOVUK = PAGES_DIR / "node_modules/govuk-frontend/dist/govuk"
GOVUK_SHELL = """<!doctype html>
<html lang="en" class="govuk-template"><head><title>GOV.UK components</title>
<link rel="stylesheet" href="/npm/govuk-frontend/dist/govuk/govuk-frontend.min.css"></head>
<body class="govuk-template__body"><script>document.body.className += ' js-enabled govuk-frontend-supported'</script>
<main class="govuk-main-wrapper govuk-width-container">{examples}</main>
<script src="/npm/govuk-frontend/dist/govuk/all.bundle.js"></script>
<script>GOVUKFrontend.initAll()</script></body></html>"""


class Pages(SimpleHTTPRequestHandler):
    """tests/fixtures/pages, plus /slow?ms=N, /npm/<package>/... and
    /govuk?c=<component>,... (GOV.UK Frontend's default examples)."""

    def translate_path(self, path):
        path = path.split("?", 1)[0]
        if path.startswith("/npm/"):
            rest = path[len("/npm/"):]
            ours = NPM / rest
            return str(ours if ours.exists() else PAGES_DIR / "node_modules" / rest)
        return str(PAGES / path.lstrip("/"))

    def do_GET(self):
        if self.path.startswith("/govuk?c="):
            names = self.path.split("=", 1)[1].split(",")
            examples = "".join((GOVUK / "components" / n / "template-default.html").read_text() for n in names)
            body = GOVUK_SHELL.replace("{examples}", examples).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path.startswith("/slow"):
            ms = int(self.path.split("ms=", 1)[1]) if "ms=" in self.path else 1000
            time.sleep(ms / 1000)
            body = b"slow answer"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


def install_pages():
    """The npm packages whose pages the bench drives, once."""
    if all((PAGES_DIR / "node_modules" / spec.rsplit("@", 1)[0] / "package.json").exists()
           for spec in PAGE_PACKAGES):
        return
    PAGES_DIR.mkdir(parents=True, exist_ok=True)
    (PAGES_DIR / "package.json").write_text('{ "name": "clawdis-bench-pages", "private": true }')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", *PAGE_PACKAGES],
                   cwd=PAGES_DIR, check=True, stdout=subprocess.DEVNULL)


def serve_pages():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def step(action, body, expect="ok", check=None, pw=None):
    """One action. expect: "ok", or the code it must fail with. check: the
    oracle, a JavaScript expression on the page (or "tab:<text>": a tab
    whose URL holds <text> was opened). pw: @playwright/mcp's calls, where
    they are not the mechanical translation of the body."""
    return {"action": action, "body": body, "expect": expect, "check": check, "pw": pw}


def by_id(i):
    return f"document.getElementById('{i}')"


def hit(i):
    return f"window.hits.includes('{i}')"


# Oracles read the page this long after the action, so a page that
# reverts a value a moment later is seen doing it.
SETTLE = "new Promise((r) => setTimeout(r, 100))"


def from_frame(key, value):
    """What a cross-site frame last posted to its page (the page cannot
    read its DOM), a moment after the action."""
    return (f"new Promise((r) => setTimeout(() => r((window.framePosted || {{}})[{key!r}] === {value!r}), 100))")


def todomvc(p, app):
    """One of TodoMVC's apps as the todomvc package ships it: add two
    todos, complete one, filter, delete one on hover, clear the rest."""
    url = f"{p}/npm/todomvc/examples/{app}/index.html"
    items = "document.querySelectorAll('#todo-list li')"
    return [
        # Some apps add "#/" to the URL as they start.
        step("navigate", {"url": url}, check=f"location.href.startsWith('{url}')"),
        step("act", {"kind": "type", "selector": "#new-todo", "text": "Buy milk", "submit": True},
             check=f"{items}.length === 1",
             pw=[("browser_type", {"target": "#new-todo", "text": "Buy milk", "submit": True})]),
        step("act", {"kind": "type", "selector": "#new-todo", "text": "Walk the dog", "submit": True},
             check=f"{items}.length === 2",
             pw=[("browser_type", {"target": "#new-todo", "text": "Walk the dog", "submit": True})]),
        step("check", {"selector": "#todo-list li .toggle", "nth": 0},
             check=f"{items}[0].classList.contains('completed')",
             pw=[("browser_fill_form", {"fields": [{"name": "done", "type": "checkbox",
                                                    "target": "locator('#todo-list li .toggle').first()",
                                                    "value": "true"}]})]),
        step("click", {"selector": {"type": "text", "text": "Active", "exact": True}},
             check="location.hash === '#/active'"),
        step("click", {"selector": {"type": "text", "text": "All", "exact": True}},
             check=f"[...{items}].filter((li) => li.offsetParent !== null).length === 2"),
        step("hover", {"selector": {"type": "text", "text": "Walk the dog", "exact": True}},
             check=f"{items}[1].matches(':hover')"),
        step("click", {"selector": "#todo-list li .destroy", "nth": 1},
             check=f"{items}.length === 1",
             pw=[("browser_click", {"target": "locator('#todo-list li .destroy').nth(1)"})]),
        step("click", {"selector": "#clear-completed"}, check=f"{items}.length === 0"),
    ]


def scenarios(pages, other, uploads):
    """(name, origin, steps): origin is "ours" (pages we wrote) or "npm"
    (pages as their packages ship them)."""
    p = f"http://127.0.0.1:{pages}"

    def at(path):
        return step("navigate", {"url": p + path}, check=f"location.href === '{p}{path}'")

    in_same = f"{by_id('same')}.contentDocument"
    return [
        ("overlays", "ours", [
            at("/hard/overlay.html"),
            step("click", {"selector": "#save"}, check=hit("save")),
            step("click", {"selector": {"type": "aria", "role": "button", "name": "Send"}}, check=hit("send")),
            step("click", {"selector": {"type": "text", "text": "Move", "exact": True}}, check=hit("mover")),
            at("/hard/overlay.html?blocked"),
            step("click", {"selector": "#blocked", "timeout": 1500}, "covered", hit("blocked")),
            step("click", {"selector": "#nothing", "timeout": 500}, "not_found", "false"),
            step("click", {"selector": "button"}, "ambiguous", "window.hits.length > 0"),
        ]),
        ("inputs", "ours", [
            at("/hard/inputs.html"),
            step("type", {"selector": {"type": "label", "text": "Phone"}, "text": "5551234567"},
                 check=f"{by_id('phone')}.value === '(555) 123-4567'"),
            step("type", {"selector": "#city", "text": "Lyon"}, check=f"{by_id('city')}.value === 'Lyon'"),
            step("type", {"selector": {"type": "aria", "role": "textbox", "name": "Editor"}, "text": "Hello"},
                 check=f"{by_id('editor')}.textContent === 'Hello'"),
            step("type", {"selector": "#letters", "text": "abc1"}, "verify_failed",
                 f"{by_id('letters')}.value === 'abc1'"),
            step("select", {"selector": "#colour", "value": "Green"}, check=f"{by_id('colour')}.value === 'g'"),
            step("check", {"selector": {"type": "label", "text": "I agree"}}, check=f"{by_id('terms')}.checked"),
            step("check", {"selector": "#stuck"}, "verify_failed", f"{by_id('stuck')}.checked"),
            step("fill", {"fields": [{"selector": "#city", "value": "Paris"}, {"selector": "#terms", "value": False}]},
                 check=f"{by_id('city')}.value === 'Paris' && !{by_id('terms')}.checked"),
            step("select", {"selector": "#combo", "value": "Banana"}, check=f"{by_id('combo')}.textContent === 'Banana'"),
            step("click", {"selector": "#inner"}, check=f"{by_id('log')}.textContent === 'shadow clicked'"),
            step("type", {"selector": "#log", "text": "x"}, "not_editable", f"{by_id('log')}.textContent === 'x'"),
        ]),
        ("dynamic", "ours", [
            at("/hard/dynamic.html"),
            step("click", {"selector": {"type": "aria", "role": "button", "name": "Buy"}}, check=hit("buy")),
            step("hover", {"selector": "#products"}, check=f"{by_id('products')}.matches(':hover')"),
            step("click", {"selector": "#laptops"}, check=hit("laptops")),
            step("type", {"selector": "#search", "text": "ap"}, check=f"{by_id('search')}.value === 'ap'"),
            step("click", {"selector": {"type": "aria", "role": "option", "name": "apricot"}},
                 check=f"{by_id('search')}.value === 'apricot'"),
            step("click", {"selector": "#load"}, check=hit("load")),
            step("wait", {"text": "Loaded"}, check=f"{by_id('loaded')}.textContent === 'Loaded'"),
            step("click", {"selector": "#spa"}, check="location.pathname === '/hard/page2'"),
            step("back", {}, check="location.pathname === '/hard/dynamic.html'"),
            step("forward", {}, check="location.pathname === '/hard/page2'"),
            step("click", {"selector": "#newtab"}, check="tab:greeting.html"),
            step("click", {"selector": "#confirm"}, check=f"{by_id('answer')}.textContent === 'kept'"),
            step("click", {"selector": "#alert"}, check=f"{by_id('answer')}.textContent === 'alerted'"),
            step("click", {"selector": "#under"}, check=hit("under")),
        ]),
        ("popups", "ours", [
            at("/hard/popups.html"),
            step("wait", {"selector": "#newsletter", "state": "visible"}, check=f"!!{by_id('newsletter')}",
                 pw=[("browser_wait_for", {"text": "Subscribe!"})]),
            step("click", {"selector": "#checkout"}, check=hit("checkout")),
            step("click", {"selector": "#help"}, check=hit("help")),
        ]),
        ("frames", "ours", [
            at(f"/hard/frames.html?port={other}"),
            step("click", {"frame": f"{pages}/hard/framed.html", "selector": {"type": "text", "text": "Frame button"}},
                 check=f"{in_same}.getElementById('said').textContent === 'clicked in same'",
                 pw=[("browser_click", {"target": "locator('#same').contentFrame().getByText('Frame button')"})]),
            step("type", {"frame": f"{pages}/hard/framed.html", "selector": {"type": "label", "text": "Frame field"},
                          "text": "hello"},
                 check=f"{in_same}.getElementById('field').value === 'hello'",
                 pw=[("browser_type", {"target": "locator('#same').contentFrame().getByLabel('Frame field')",
                                       "text": "hello"})]),
            # A frame from another site (localhost): its own renderer process.
            at(f"/hard/cross-site.html?port={other}"),
            step("click", {"frame": "localhost", "selector": {"type": "aria", "role": "button", "name": "Frame button"}},
                 check=from_frame("said", "clicked in other"),
                 pw=[("browser_click", {"target": "locator('iframe').contentFrame()"
                                                   ".getByRole('button', { name: 'Frame button', exact: true })"})]),
            step("type", {"frame": "localhost", "selector": {"type": "label", "text": "Frame field"}, "text": "hello"},
                 check=from_frame("field", "hello"),
                 pw=[("browser_type", {"target": "locator('iframe').contentFrame().getByLabel('Frame field')",
                                       "text": "hello"})]),
        ]),
        ("upload-drag", "ours", [
            at("/hard/upload.html"),
            step("upload", {"selector": {"type": "text", "text": "Choose documents"}, "paths": ["a.txt"]},
                 check=f"{by_id('chosen')}.textContent === 'a.txt'",
                 pw=[("browser_click", {"target": "getByText('Choose documents')"}),
                     ("browser_file_upload", {"paths": [str(uploads / "a.txt")]})]),
            step("drag", {"selector": "#card", "to": {"selector": "#bin"}}, check="window.dropped === 'card'"),
            step("drag", {"selector": "#card", "to": {"selector": "#wall"}}, "verify_failed",
                 f"{by_id('wall')}.textContent !== 'Wall'"),
        ]),
        ("consent", "ours", [
            at("/consent/vanilla.html"),
            step("click", {"selector": "#buy", "timeout": "medium"}, check="window.bought === true"),
            at("/consent/klaro.html"),
            step("click", {"selector": "#buy", "timeout": "medium"}, check="window.bought === true"),
            at("/consent/tarteaucitron.html"),
            step("click", {"selector": "#buy", "timeout": "medium"}, check="window.bought === true"),
        ]),
        # Issue 33: pages as people build them.
        ("fields", "ours", [
            at("/built/fields.html"),
            step("fill", {"fields": [{"selector": "#email", "value": "ada@example.org"},
                                     {"selector": "#guests", "value": "4"},
                                     {"selector": "#arrival", "value": "2026-12-24"},
                                     {"selector": "#colour", "value": "#ff8800"}]},
                 check=f"{by_id('email')}.value === 'ada@example.org' && {by_id('guests')}.value === '4'"
                       f" && {by_id('arrival')}.value === '2026-12-24' && {by_id('colour')}.value === '#ff8800'",
                 pw=[("browser_fill_form", {"fields": [
                     {"name": "email", "type": "textbox", "target": "#email", "value": "ada@example.org"},
                     {"name": "guests", "type": "textbox", "target": "#guests", "value": "4"},
                     {"name": "arrival", "type": "textbox", "target": "#arrival", "value": "2026-12-24"},
                     {"name": "colour", "type": "textbox", "target": "#colour", "value": "#ff8800"}]})]),
            step("type", {"selector": "#backup", "text": "example.org", "clear": False},
                 check=f"{by_id('backup')}.value === 'ada@example.org'",
                 pw=[("browser_run_code_unsafe", {"code": "async (page) => { await page.locator('#backup')"
                                                          ".pressSequentially('example.org'); }"})]),
            step("type", {"selector": "#guests", "text": "many"}, "verify_failed",
                 f"{by_id('guests')}.value === 'many'"),
        ]),
        ("toggles", "ours", [
            at("/built/toggles.html"),
            step("check", {"selector": "#news"}, check=f"{by_id('news')}.checked"),
            step("check", {"selector": {"type": "aria", "role": "radio", "name": "Pro"}},
                 check=f"{by_id('pro')}.checked",
                 pw=[("browser_fill_form", {"fields": [{"name": "plan", "type": "radio",
                                                        "target": "getByRole('radio', { name: 'Pro' })",
                                                        "value": "true"}]})]),
            step("check", {"selector": "#dark"}, check=f"{by_id('dark')}.checked"),
        ]),
        ("frame-refs", "ours", [
            at(f"/hard/cross-site.html?port={other}"),
            step("wait", {"js": "document.body.dataset.loaded === 'yes'"},
                 check="document.body.dataset.loaded === 'yes'",
                 pw=[("browser_wait_for", {"time": 0.5})]),
            step("click", {"ref": ["button", "Frame button"]}, check=from_frame("said", "clicked in other"),
                 pw=[("browser_click", {"target": "locator('iframe').contentFrame()"
                                                   ".getByRole('button', { name: 'Frame button', exact: true })"})]),
            step("type", {"ref": ["textbox", "Frame field"], "text": "by ref"},
                 check=from_frame("field", "by ref"),
                 pw=[("browser_type", {"target": "locator('iframe').contentFrame().getByLabel('Frame field')",
                                       "text": "by ref"})]),
        ]),
        ("consent-fallback", "ours", [
            at("/consent/orejime.html"),
            step("click", {"selector": "#buy", "timeout": "medium"},
                 check="window.bought === true && orejime.manager.getConsent('ads') === false"),
            at("/consent/porsche.html"),
            step("click", {"selector": "#buy", "timeout": "medium"},
                 check="window.bought === true && document.cookie.includes('technically_required')"),
            at("/consent/beyonk.html"),
            step("click", {"selector": "#buy", "timeout": "medium"},
                 check="window.bought === true && window.agreed.analytics === false"),
        ]),
        # A session of its own: porsche.html's answer would hold for it.
        ("consent-agree-only", "ours", [
            at("/consent/porsche-agree-only.html"),
            step("click", {"selector": "#buy", "timeout": 3000}, "covered", "window.bought === true"),
        ]),
        # Pages we did not write: TodoMVC's demo apps, each on its framework.
        *[(f"todomvc-{app}", "npm", todomvc(p, app))
          for app in ("vanillajs", "backbone", "angularjs", "vue", "react", "knockoutjs", "mithril")],
        # GOV.UK Frontend, a design system: its components' own examples.
        ("govuk", "npm", [
            step("navigate", {"url": f"{p}/govuk?c={GOVUK_COMPONENTS}"},
                 check="document.body.classList.contains('govuk-frontend-supported')"),
            step("check", {"selector": {"type": "label", "text": "Irish"}}, check=f"{by_id('nationality-2')}.checked"),
            step("check", {"selector": {"type": "label", "text": "No", "exact": True}},
                 check=f"{by_id('example-default-2')}.checked",
                 pw=[("browser_fill_form", {"fields": [{"name": "changed", "type": "radio",
                                                        "target": "getByLabel('No', { exact: true })",
                                                        "value": "true"}]})]),
            step("fill", {"fields": [{"selector": {"type": "label", "text": "Day", "exact": True}, "value": "24"},
                                     {"selector": {"type": "label", "text": "Month", "exact": True}, "value": "12"},
                                     {"selector": {"type": "label", "text": "Year", "exact": True}, "value": "1990"}]},
                 check=f"[{by_id('dob-day')}.value, {by_id('dob-month')}.value, {by_id('dob-year')}.value]"
                       ".join('/') === '24/12/1990'"),
            step("click", {"selector": {"type": "aria", "role": "button", "name": "Show all sections"}},
                 check="document.querySelectorAll('.govuk-accordion__section--expanded').length"
                       " === document.querySelectorAll('.govuk-accordion__section').length"),
            step("click", {"selector": {"type": "aria", "role": "tab", "name": "Past week"}},
                 check=f"!{by_id('past-week')}.classList.contains('govuk-tabs__panel--hidden')"),
            step("type", {"selector": {"type": "label", "text": "Password", "exact": True}, "text": "correct horse"},
                 check=f"{by_id('password')}.value === 'correct horse'"),
            step("click", {"selector": {"type": "aria", "role": "button", "name": "Show password"}},
                 check=f"{by_id('password')}.type === 'text'"),
            step("type", {"selector": "#more-detail", "text": "Twelve words"},
                 check=f"{by_id('more-detail')}.value === 'Twelve words'"),
        ]),
    ]


GOVUK_COMPONENTS = "checkboxes,radios,date-input,accordion,tabs,password-input,character-count"


def quoted(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def pw_target(selector):
    """A layered selector as a Playwright locator."""
    if isinstance(selector, str):
        return selector
    kind = selector["type"]
    if kind == "aria":
        return f"getByRole({quoted(selector['role'])}, {{ name: {quoted(selector['name'])}, exact: true }})"
    if kind == "text":
        exact = ", { exact: true }" if selector.get("exact") else ""
        return f"getByText({quoted(selector['text'])}{exact})"
    if kind == "label":
        return f"getByLabel({quoted(selector['text'])})"
    if kind == "testid":
        return f"getByTestId({quoted(selector['id'])})"
    if kind == "css":
        return selector["selector"]
    if kind == "xpath":
        return "xpath=" + selector["expression"]
    raise ValueError(selector)


def pw_calls(s):
    """@playwright/mcp's tool calls for one step."""
    if s["pw"]:
        return s["pw"]
    action, body = s["action"], s["body"]
    target = pw_target(body["selector"]) if "selector" in body else None
    if action == "navigate":
        return [("browser_navigate", {"url": body["url"]})]
    if action == "click":
        return [("browser_click", {"target": target})]
    if action == "hover":
        return [("browser_hover", {"target": target})]
    if action == "type":
        return [("browser_type", {"target": target, "text": body["text"]})]
    if action == "select":
        return [("browser_select_option", {"target": target, "values": [body["value"]]})]
    if action == "check":
        return [("browser_fill_form", {"fields": [
            {"name": "checkbox", "type": "checkbox", "target": target, "value": "true"}]})]
    if action == "fill":
        return [("browser_fill_form", {"fields": [
            {"name": "field", "target": pw_target(f["selector"]),
             "type": "checkbox" if isinstance(f["value"], bool) else "textbox",
             "value": str(f["value"]).lower() if isinstance(f["value"], bool) else f["value"]}
            for f in body["fields"]]})]
    if action == "drag":
        return [("browser_drag", {"startTarget": target, "endTarget": pw_target(body["to"]["selector"])})]
    if action == "wait" and "text" in body:
        return [("browser_wait_for", {"text": body["text"]})]
    if action == "back":
        return [("browser_navigate_back", {})]
    if action == "forward":
        return [("browser_run_code_unsafe", {"code": "async (page) => { await page.goForward(); }"})]
    raise ValueError(f"no @playwright/mcp translation for {action} {body}")


class Clawdis:
    """`clawdis serve`'s session routes."""

    name = "clawdis"

    def __init__(self, binary, home):
        (home / "settings.json").write_text(json.dumps({"headless": True, "cdpPort": 18893,
                                                        "executablePath": CHROMIUM}))
        self.port = 18894
        self.home = home
        env = dict(os.environ, CLAWDIS_KEYCHAIN="off", CLAWDIS_LOG="info")
        self.proc = subprocess.Popen([binary, "--home", str(home), "serve", "--port", str(self.port)],
                                     env=env, stderr=subprocess.PIPE, text=True)
        for line in self.proc.stderr:
            if "control API listening" in line:
                break
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        self.token = (home / "secrets/control-token").read_text().strip()
        self.conn = None
        self.sid = None

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                return resp.status, json.loads(resp.read() or b"{}")
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise

    def begin(self):
        status, s = self.call("POST", "/sessions", {})
        assert status == 201, s
        self.sid = s["sessionId"]

    def end(self):
        self.call("DELETE", f"/sessions/{self.sid}")

    def prepare(self, s):
        """The step with a {"ref": [role, name]} target replaced by the
        ref the session's snapshot gives that element."""
        wanted = s["body"].get("ref")
        if not isinstance(wanted, list):
            return s
        _, snap = self.call("GET", f"/snapshot?sessionId={self.sid}")
        role, name = wanted
        found = next((k for k, v in (snap.get("refs") or {}).items()
                      if v.get("role") == role and v.get("name") == name), None)
        return dict(s, body=dict(s["body"], ref=found or f"missing {role} {name}"))

    def act(self, s):
        """(reported ok, error code, answer)"""
        if s["action"] == "act":
            status, r = self.call("POST", "/act", dict(s["body"], sessionId=self.sid))
            return status == 200 and r.get("ok") is True, r.get("code"), r
        status, r = self.call("POST", f"/sessions/{self.sid}/{s['action']}", s["body"])
        ok = status == 200 and r.get("ok") is True
        return ok, (r.get("error") or {}).get("code"), r

    def holds(self, check, answer):
        if check.startswith("tab:"):
            return check[4:] in ((answer.get("data") or {}).get("newTab") or {}).get("url", "")
        script = f"(async () => {{ await {SETTLE}; return !!(await ({check})); }})()"
        _, r = self.call("POST", f"/sessions/{self.sid}/evaluate", {"script": script})
        return r.get("ok") is True and r["data"]["result"] is True

    def close(self):
        self.proc.terminate()
        self.proc.wait()


class PlaywrightMcp:
    """@playwright/mcp over stdio JSON-RPC, a fresh browser per scenario."""

    name = "@playwright/mcp"

    def __init__(self):
        if not (PW_DIR / "node_modules/@playwright/mcp").exists():
            PW_DIR.mkdir(parents=True, exist_ok=True)
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", f"@playwright/mcp@{PW_VERSION}"],
                           cwd=PW_DIR, check=True, stdout=subprocess.DEVNULL)
        self.out_dir = tempfile.mkdtemp()
        self.proc = subprocess.Popen(
            ["node", str(PW_DIR / "node_modules/@playwright/mcp/cli.js"), "--headless", "--isolated",
             "--no-sandbox", "--browser", "chromium", "--executable-path", CHROMIUM,
             "--output-dir", self.out_dir, "--allow-unrestricted-file-access"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.next_id = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "clawdis-bench", "version": "1"}})
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.proc.stdin.flush()

    def rpc(self, method, params):
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                          "params": params}) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("@playwright/mcp exited")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg["result"]

    def tool(self, name, args):
        """(ok, text)"""
        result = self.rpc("tools/call", {"name": name, "arguments": args})
        text = "".join(c.get("text", "") for c in result.get("content", []))
        return not result.get("isError"), text

    def begin(self):
        # A fresh browser and context (cookies, storage) per scenario, as a
        # clawdis session is; started outside the timed steps.
        self.tool("browser_close", {})
        self.tool("browser_navigate", {"url": "about:blank"})

    def end(self):
        pass

    def prepare(self, s):
        return s

    def act(self, s):
        ok, text = True, ""
        for name, args in pw_calls(s):
            ok, text = self.tool(name, args)
            if not ok:
                break
            ok, text = self.answer_dialog(text)
        return ok, None, {"text": text}

    def answer_dialog(self, text):
        """A dialog the action raised, answered as clawdis's default
        policy does: alerts and beforeunload accepted, the rest dismissed."""
        for kind in ("alert", "beforeunload", "confirm", "prompt"):
            if f'["{kind}" dialog' in text:
                return self.tool("browser_handle_dialog", {"accept": kind in ("alert", "beforeunload")})
        return True, text

    def holds(self, check, answer):
        if check.startswith("tab:"):
            _, text = self.tool("browser_tabs", {"action": "list"})
            return check[4:] in text
        ok, text = self.tool("browser_evaluate",
                             {"function": f"async () => {{ await {SETTLE}; return !!(await ({check})); }}"})
        return ok and "### Result\ntrue" in text

    def close(self):
        self.proc.terminate()
        self.proc.wait()


def run_scenario(driver, origin, steps, tally):
    driver.begin()
    for s in steps:
        s = driver.prepare(s)
        started = time.perf_counter()
        ok, code, answer = driver.act(s)
        ms = (time.perf_counter() - started) * 1000
        effect = driver.holds(s["check"], answer)
        tally["ms"].setdefault(s["action"], []).append(ms)
        tally["all_ms"].append(ms)
        if ok and not effect:
            tally["silent"] += 1
            what = f"{s['action']} {json.dumps(s['body'])}"
            tally["silent_steps"][what] = tally["silent_steps"].get(what, 0) + 1
        if s["expect"] == "ok":
            tally["possible"] += 1
            by = tally["origins"].setdefault(origin, {"possible": 0, "succeeded": 0})
            by["possible"] += 1
            if ok and effect:
                tally["succeeded"] += 1
                by["succeeded"] += 1
            else:
                tally["misses"].append([s["action"], s["body"], code, str(answer)[:300]])
        else:
            tally["impossible"] += 1
            # @playwright/mcp has no codes: any reported failure counts.
            typed = not ok and (code == s["expect"] or driver.name != "clawdis")
            tally["typed"] += typed
            if not typed:
                tally["misses"].append([s["action"], s["body"], code, str(answer)[:300]])
    driver.end()


def crash_recovery(ours, pages, trials):
    """kill -9 of Chromium to the session answering again, restored (its
    cookie back), in ms, per trial."""
    times = []
    for i in range(trials):
        status, s = ours.call("POST", "/sessions", {"url": f"http://127.0.0.1:{pages}/long.html"})
        assert status == 201, s
        sid = s["sessionId"]
        script = f"document.cookie = 'trial={i}; max-age=600'; 1"
        ours.call("POST", f"/sessions/{sid}/evaluate", {"script": script})
        ours.call("POST", f"/sessions/{sid}/scroll", {"amount": 10})
        _, status_now = ours.call("GET", "/")
        os.kill(status_now["pid"], 9)
        started = time.monotonic()
        _, r = ours.call("POST", f"/sessions/{sid}/evaluate", {"script": "document.cookie"})
        took = (time.monotonic() - started) * 1000
        assert r.get("ok") and f"trial={i}" in r["data"]["result"], r
        times.append(round(took))
        ours.call("DELETE", f"/sessions/{sid}")
    return times


def summary(tally, rounds):
    all_ms = sorted(tally["all_ms"])
    return {
        "rounds": rounds,
        "possible": tally["possible"],
        "succeeded": tally["succeeded"],
        "successRate": tally["succeeded"] / max(tally["possible"], 1),
        # Pages we wrote apart from pages as their npm packages ship them.
        "byOrigin": {o: dict(t, successRate=t["succeeded"] / max(t["possible"], 1))
                     for o, t in sorted(tally["origins"].items())},
        "impossible": tally["impossible"],
        "typed": tally["typed"],
        "silentSuccesses": tally["silent"],
        "medianMs": round(statistics.median(all_ms), 1),
        "p95Ms": round(all_ms[int(len(all_ms) * 0.95) - 1], 1),
        "medianMsByAction": {a: round(statistics.median(v), 1) for a, v in sorted(tally["ms"].items())},
        "silentSteps": tally["silent_steps"],
        "misses": tally["misses"][:20],
    }


def main():
    clawdis, home, rounds = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    with_pw = "--no-pw" not in sys.argv
    home.mkdir(parents=True, exist_ok=True)
    uploads = home / "browser/uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    (uploads / "a.txt").write_text("a")
    install_pages()
    pages, other = serve_pages(), serve_pages()
    drivers = [Clawdis(clawdis, home)]
    if with_pw:
        drivers.append(PlaywrightMcp())
    tallies = {d.name: {"possible": 0, "succeeded": 0, "impossible": 0, "typed": 0, "silent": 0,
                        "silent_steps": {}, "misses": [], "ms": {}, "all_ms": [], "origins": {}}
               for d in drivers}
    try:
        for _ in range(rounds):
            for _, origin, steps in scenarios(pages, other, uploads):
                for d in drivers:
                    run_scenario(d, origin, steps, tallies[d.name])
        recoveries = crash_recovery(drivers[0], pages, 5)
    finally:
        for d in drivers:
            d.close()
    out = {name: summary(t, rounds) for name, t in tallies.items()}
    out["clawdis"]["crashRecoveryMs"] = {"median": statistics.median(recoveries), "max": max(recoveries),
                                         "trials": len(recoveries)}
    if with_pw:
        out["@playwright/mcp"]["version"] = PW_VERSION
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
