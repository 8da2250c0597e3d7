#!/usr/bin/env python3
"""The MCP server's bench (docs/benchmarks.md, "MCP"): Clawdis (`clawdis mcp`,
joined to a release `clawdis serve`) and @playwright/mcp (npm, stdio, its
defaults, pointed at the same Chromium), driven by the same MCP client, the
official Python SDK, over stdio, on the same fixture pages
(tests/fixtures/pages), interleaved page by page, ROUNDS times.

Per page: the snapshot tool's answer (its characters: the text an agent
reads, plus Clawdis's structured content) and its round trip; on the pages
with a button to press, a click round trip by the ref the snapshot gave.
Then `tools/list` with 100 workflows exposed as tools, 200 times, over
stdio and over streamable HTTP (`/mcp` with the bearer token), beside
`GET /runs` on the same kind of connection (a plain JSON answer).

Usage: bench_mcp.py CLAWDIS_BIN HOME ROUNDS
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import httpx2 as httpx
from bench_actions import serve_pages
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
PW_DIR = Path(os.environ.get("PWMCP_REF_DIR", ROOT / "target/pwmcp-ref"))
PW_VERSION = "0.0.79"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

# (page, the accessible name of a button to click there, or None)
SUITE = [
    ("form.html", "Submit"),
    ("catalog.html", None),
    ("semantics.html", None),
    ("inputs.html", None),
    ("long.html", None),
    ("hard/dynamic.html", None),
    ("hard/overlay.html", None),
    ("hard/frames.html", None),
    ("hard/inputs.html", None),
]


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def size_of(result):
    """What an agent receives: the text, and the structured content."""
    size = len(text_of(result))
    if result.structured_content is not None:
        size += len(json.dumps(result.structured_content, separators=(",", ":")))
    return size


def ref_of(text, name):
    """The ref of the button named `name` in a snapshot's text."""
    for line in text.splitlines():
        if f'button "{name}"' in line and "[ref=" in line:
            return line.split("[ref=", 1)[1].split("]", 1)[0]
    raise LookupError(f"no button {name!r} in:\n{text[:2000]}")


async def timed(client, name, args):
    start = time.perf_counter()
    result = await client.call_tool(name, args)
    ms = (time.perf_counter() - start) * 1000
    if result.is_error:
        raise RuntimeError(f"{name} {args}: {text_of(result)[:500]}")
    return result, ms


def start_backend(binary, home, port):
    (home / "workflows").mkdir(parents=True, exist_ok=True)
    for n in range(100):
        (home / "workflows" / f"wf{n:03}.lobster").write_text(
            f"description: Workflow number {n}\nexpose_as_tool: true\nargs:\n"
            f"  target:\n    type: string\n    description: what to act on\n"
            f"  dry:\n    default: true\nsteps:\n  - id: s\n    run: echo '[{n}]'\n")
    (home / "settings.json").write_text(json.dumps({
        "headless": True, "cdpPort": port + 1, "controlUrl": f"http://127.0.0.1:{port}",
        "executablePath": CHROMIUM}))
    env = dict(os.environ, CLAWDIS_KEYCHAIN="off", CLAWDIS_LOG="warn,clawdis_server=info")
    proc = subprocess.Popen([binary, "--home", str(home), "serve"], env=env,
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if "control API listening" in line:
            break
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    return proc


def owner_token(binary, home):
    env = dict(os.environ, CLAWDIS_KEYCHAIN="off")
    return subprocess.run([binary, "--home", str(home), "token"], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


async def over_http(port, token, rounds):
    """tools/list over /mcp and GET /runs, each `rounds` times on one
    keep-alive connection."""
    list_ms, runs_ms = [], []
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=None) as http:
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                          mode="legacy") as client:
            await client.list_tools()
            for _ in range(rounds):
                start = time.perf_counter()
                await client.list_tools()
                list_ms.append((time.perf_counter() - start) * 1000)
        for _ in range(rounds):
            start = time.perf_counter()
            answer = await http.get(f"http://127.0.0.1:{port}/runs")
            runs_ms.append((time.perf_counter() - start) * 1000)
            answer.raise_for_status()
    return list_ms, runs_ms


def playwright_mcp():
    if not (PW_DIR / "node_modules/@playwright/mcp").exists():
        PW_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", f"@playwright/mcp@{PW_VERSION}"],
                       cwd=PW_DIR, check=True, stdout=subprocess.DEVNULL)
    out_dir = tempfile.mkdtemp()
    return StdioServerParameters(
        command="node",
        args=[str(PW_DIR / "node_modules/@playwright/mcp/cli.js"), "--headless", "--isolated",
              "--no-sandbox", "--browser", "chromium", "--executable-path", CHROMIUM,
              "--output-dir", out_dir])


def stats(values):
    values = sorted(values)
    return {"median": round(statistics.median(values), 2),
            "p95": round(values[min(len(values) - 1, int(len(values) * 0.95))], 2),
            "n": len(values)}


async def main():
    binary, home, rounds = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    home.mkdir(parents=True, exist_ok=True)
    backend = start_backend(binary, home, 18896)
    pages = serve_pages()
    url = lambda page: f"http://127.0.0.1:{pages}/{page}"
    ours_params = StdioServerParameters(command=binary, args=["--home", str(home), "mcp"])
    sizes = {page: {} for page, _ in SUITE}
    snap_ms = {"clawdis": [], "pw": []}
    page_ms = {page: {"clawdis": [], "pw": []} for page, _ in SUITE}
    click_ms = {"clawdis": [], "pw": []}
    list_ms = []
    try:
        async with Client(ours_params, mode="legacy") as ours, \
                Client(playwright_mcp(), mode="legacy") as pw:
            opened = await ours.call_tool("browser_open", {})
            assert not opened.is_error, text_of(opened)
            for _ in range(rounds):
                for page, button in SUITE:
                    for name, client in (("clawdis", ours), ("pw", pw)):
                        await timed(client, "browser_navigate", {"url": url(page)})
                        snap, ms = await timed(client, "browser_snapshot", {})
                        snap_ms[name].append(ms)
                        page_ms[page][name].append(ms)
                        sizes[page][name] = size_of(snap)
                        if button:
                            ref = ref_of(text_of(snap), button)
                            target = {"ref": ref} if name == "clawdis" else {"target": ref,
                                                                              "element": f"{button} button"}
                            _, ms = await timed(client, "browser_click", target)
                            click_ms[name].append(ms)
            tools = (await ours.list_tools()).tools
            exposed = [t for t in tools if t.name.startswith("workflow.")]
            assert len(exposed) == 100, f"{len(exposed)} workflows exposed"
            for _ in range(200):
                start = time.perf_counter()
                await ours.list_tools()
                list_ms.append((time.perf_counter() - start) * 1000)
        http_list_ms, runs_ms = await over_http(18896, owner_token(binary, home), 200)
    finally:
        backend.terminate()
        backend.wait()
    ratios = {page: round(s["clawdis"] / s["pw"], 3) for page, s in sizes.items()}
    total = {name: sum(s[name] for s in sizes.values()) for name in ("clawdis", "pw")}
    print(json.dumps({
        "rounds": rounds,
        "playwrightMcp": PW_VERSION,
        "snapshotChars": sizes,
        "snapshotRatio": ratios,
        "snapshotRatioAll": round(total["clawdis"] / total["pw"], 3),
        "snapshotMs": {name: stats(v) for name, v in snap_ms.items()},
        "snapshotMedianMsByPage": {page: {name: round(statistics.median(v), 2) for name, v in t.items()}
                                   for page, t in page_ms.items()},
        "clickMs": {name: stats(v) for name, v in click_ms.items()},
        "toolsListMs": {"stdio": stats(list_ms), "http": stats(http_list_ms)},
        "getRunsMs": stats(runs_ms),
        "toolsListed": len(tools),
    }, indent=1))


if __name__ == "__main__":
    anyio.run(main)
