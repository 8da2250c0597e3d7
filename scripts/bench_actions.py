#!/usr/bin/env python3
"""The action engine's bench: the hard-page fixture suite (tests/fixtures/
pages/hard, consent/) run ROUNDS times in a row through `clawdis serve`'s
session routes. Counts, per action, whether it did what was possible
(success) and, where success is impossible (the element really is covered,
disabled, missing, or the page rejects the value), whether a typed failure
with the expected code came back, and any silent success. Prints one JSON
object; scripts/bench-actions runs it and writes the docs table.

Usage: bench-actions.py CLAWDIS_BIN HOME ROUNDS
"""
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "tests/fixtures/pages"
NPM = ROOT / "target/test-npm/node_modules"


class Pages(SimpleHTTPRequestHandler):
    """tests/fixtures/pages, plus /slow?ms=N and /npm/<package>/..."""

    def translate_path(self, path):
        path = path.split("?", 1)[0]
        if path.startswith("/npm/"):
            return str(NPM / path[len("/npm/"):])
        return str(PAGES / path.lstrip("/"))

    def do_GET(self):
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


def serve_pages():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def scenarios(pages, other):
    """(name, steps); a step is (action, body, expected): expected is "ok"
    for an action that can succeed, else the failure code it must report."""
    p = f"http://127.0.0.1:{pages}"
    return [
        ("overlays", [
            ("navigate", {"url": f"{p}/hard/overlay.html"}, "ok"),
            ("click", {"selector": "#save"}, "ok"),
            ("click", {"selector": {"type": "aria", "role": "button", "name": "Send"}}, "ok"),
            ("click", {"selector": {"type": "text", "text": "Move", "exact": True}}, "ok"),
            ("navigate", {"url": f"{p}/hard/overlay.html?blocked"}, "ok"),
            ("click", {"selector": "#blocked", "timeout": 1500}, "covered"),
            ("click", {"selector": "#nothing", "timeout": 500}, "not_found"),
            ("click", {"selector": "button"}, "ambiguous"),
        ]),
        ("inputs", [
            ("navigate", {"url": f"{p}/hard/inputs.html"}, "ok"),
            ("type", {"selector": {"type": "label", "text": "Phone"}, "text": "5551234567"}, "ok"),
            ("type", {"selector": "#city", "text": "Lyon"}, "ok"),
            ("type", {"selector": {"type": "aria", "role": "textbox", "name": "Editor"}, "text": "Hello"}, "ok"),
            ("type", {"selector": "#letters", "text": "abc1"}, "verify_failed"),
            ("select", {"selector": "#colour", "value": "Green"}, "ok"),
            ("check", {"selector": {"type": "label", "text": "I agree"}}, "ok"),
            ("check", {"selector": "#stuck"}, "verify_failed"),
            ("fill", {"fields": [{"selector": "#city", "value": "Paris"}, {"selector": "#terms", "value": False}]}, "ok"),
            ("select", {"selector": "#combo", "value": "Banana"}, "ok"),
            ("click", {"selector": "#inner"}, "ok"),
            ("type", {"selector": "#log", "text": "x"}, "not_editable"),
        ]),
        ("dynamic", [
            ("navigate", {"url": f"{p}/hard/dynamic.html"}, "ok"),
            ("click", {"selector": {"type": "aria", "role": "button", "name": "Buy"}}, "ok"),
            ("hover", {"selector": "#products"}, "ok"),
            ("click", {"selector": "#laptops"}, "ok"),
            ("type", {"selector": "#search", "text": "ap"}, "ok"),
            ("click", {"selector": {"type": "aria", "role": "option", "name": "apricot"}}, "ok"),
            ("click", {"selector": "#load"}, "ok"),
            ("wait", {"text": "Loaded"}, "ok"),
            ("click", {"selector": "#spa"}, "ok"),
            ("back", {}, "ok"),
            ("forward", {}, "ok"),
            ("click", {"selector": "#newtab"}, "ok"),
            ("click", {"selector": "#confirm"}, "ok"),
            ("click", {"selector": "#alert"}, "ok"),
            ("click", {"selector": "#under"}, "ok"),
        ]),
        ("popups", [
            ("navigate", {"url": f"{p}/hard/popups.html"}, "ok"),
            ("wait", {"selector": "#newsletter", "state": "visible"}, "ok"),
            ("click", {"selector": "#checkout"}, "ok"),
            ("click", {"selector": "#help"}, "ok"),
        ]),
        ("frames", [
            ("navigate", {"url": f"{p}/hard/frames.html?port={other}"}, "ok"),
            ("wait", {"js": "document.getElementById('other').contentDocument === null || true"}, "ok"),
            ("click", {"frame": f"{pages}/hard/framed.html", "selector": {"type": "text", "text": "Frame button"}}, "ok"),
            ("type", {"frame": f"{pages}/hard/framed.html", "selector": {"type": "label", "text": "Frame field"}, "text": "hello"}, "ok"),
        ]),
        ("upload-drag", [
            ("navigate", {"url": f"{p}/hard/upload.html"}, "ok"),
            ("upload", {"selector": {"type": "text", "text": "Choose documents"}, "paths": ["a.txt"]}, "ok"),
            ("drag", {"selector": "#card", "to": {"selector": "#bin"}}, "ok"),
            ("drag", {"selector": "#card", "to": {"selector": "#wall"}}, "verify_failed"),
        ]),
        ("consent", [
            ("navigate", {"url": f"{p}/consent/vanilla.html"}, "ok"),
            ("click", {"selector": "#buy", "timeout": "medium"}, "ok"),
            ("navigate", {"url": f"{p}/consent/klaro.html"}, "ok"),
            ("click", {"selector": "#buy", "timeout": "medium"}, "ok"),
            ("navigate", {"url": f"{p}/consent/tarteaucitron.html"}, "ok"),
            ("click", {"selector": "#buy", "timeout": "medium"}, "ok"),
        ]),
    ]


def call(port, token, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=data, method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def crash_recovery(port, token, pages, trials):
    """kill -9 of Chromium to the session answering again, restored (its
    cookie back), in ms, per trial."""
    times = []
    for i in range(trials):
        status, s = call(port, token, "POST", "/sessions", {"url": f"http://127.0.0.1:{pages}/long.html"})
        assert status == 201, s
        sid = s["sessionId"]
        script = f"document.cookie = 'trial={i}; max-age=600'; 1"
        call(port, token, "POST", f"/sessions/{sid}/evaluate", {"script": script})
        call(port, token, "POST", f"/sessions/{sid}/scroll", {"amount": 10})
        _, status_now = call(port, token, "GET", "/")
        os.kill(status_now["pid"], 9)
        started = time.monotonic()
        status, r = call(port, token, "POST", f"/sessions/{sid}/evaluate", {"script": "document.cookie"})
        took = (time.monotonic() - started) * 1000
        assert r.get("ok") and f"trial={i}" in r["data"]["result"], r
        times.append(round(took))
        call(port, token, "DELETE", f"/sessions/{sid}")
    return times


def main():
    clawdis, home, rounds = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"headless": True, "cdpPort": 18893}))
    uploads = home / "browser/uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    (uploads / "a.txt").write_text("a")
    pages, other = serve_pages(), serve_pages()
    port = 18894
    env = dict(os.environ, CLAWDIS_KEYCHAIN="off", CLAWDIS_LOG="info")
    server = subprocess.Popen(
        [clawdis, "--home", str(home), "serve", "--port", str(port)],
        env=env, stderr=subprocess.PIPE, text=True,
    )
    for line in server.stderr:
        if "control API listening" in line:
            break
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
    token = (home / "secrets/control-token").read_text().strip()
    results = {"possible": 0, "succeeded": 0, "impossible": 0, "typed": 0, "silent": 0,
               "wrong": [], "ms": {}, "all_ms": []}
    try:
        for _ in range(rounds):
            for name, steps in scenarios(pages, other):
                status, s = call(port, token, "POST", "/sessions", {})
                assert status == 201, s
                sid = s["sessionId"]
                for action, body, expected in steps:
                    status, r = call(port, token, "POST", f"/sessions/{sid}/{action}", body)
                    ok = status == 200 and r.get("ok") is True
                    code = (r.get("error") or {}).get("code")
                    if status == 200:
                        results["ms"].setdefault(action, []).append(r["durationMs"])
                        results["all_ms"].append(r["durationMs"])
                    if expected == "ok":
                        results["possible"] += 1
                        results["succeeded"] += ok
                        if not ok:
                            results["wrong"].append([name, action, body, r])
                    else:
                        results["impossible"] += 1
                        results["typed"] += code == expected
                        results["silent"] += ok
                        if code != expected:
                            results["wrong"].append([name, action, body, r])
                call(port, token, "DELETE", f"/sessions/{sid}")
        recoveries = crash_recovery(port, token, pages, 5)
    finally:
        server.terminate()
        server.wait()
    out = {
        "rounds": rounds,
        "possible": results["possible"],
        "successRate": results["succeeded"] / max(results["possible"], 1),
        "impossible": results["impossible"],
        "typedRate": results["typed"] / max(results["impossible"], 1),
        "silentSuccesses": results["silent"],
        "medianMs": statistics.median(results["all_ms"]),
        "p95Ms": sorted(results["all_ms"])[int(len(results["all_ms"]) * 0.95) - 1],
        "medianMsByAction": {a: statistics.median(v) for a, v in sorted(results["ms"].items())},
        "crashRecoveryMs": {"median": statistics.median(recoveries), "max": max(recoveries), "trials": len(recoveries)},
        "misses": results["wrong"][:10],
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
