// The hand-off live view's benchmark (docs/benchmarks.md, "Hand-off live
// view"): a release `clawdis serve` hands a session's page (1280×720, a
// block moving on every animation frame) to a person, and a second,
// headless Chromium opens the live view as they would, over loopback.
//
// - frame rate: frames the view drew per second over SECONDS (default 10)
//   while the page changes;
// - input latency: ROUNDS times (default 30), a real click on the view
//   (CDP Input on the viewer's Chromium) turns a square of the page from
//   black to white or back; the time from the view's pointerdown to the
//   first frame the view drew with the square's new colour.
//
//   node scripts/bench_handoff.mjs <clawdis binary> <chromium>
//
// Prints one JSON object. The webhook receiver and the page's server are
// this script's (a webhook receiver has no local form).

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [clawdis, chromium] = process.argv.slice(2);
const SECONDS = Number(process.env.SECONDS_OF_FRAMES || 10);
const ROUNDS = Number(process.env.ROUNDS || 30);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const PAGE = `<!doctype html><title>Hand-off bench</title>
<body style="margin:0;background:#888">
<div id=sq style="position:absolute;left:0;top:0;width:200px;height:200px;background:#000"></div>
<div id=mv style="position:absolute;left:300px;top:300px;width:120px;height:120px;background:#FF4500"></div>
<script>
let on = false;
addEventListener("mousedown", () => { on = !on; sq.style.background = on ? "#fff" : "#000"; });
let t = 0;
(function move() { t += 1; mv.style.transform = "translateX(" + ((t * 7) % 800) + "px)"; requestAnimationFrame(move); })();
</script>`;

async function listen(handler) {
  const server = createServer(handler);
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

const pages = await listen((req, res) => {
  res.writeHead(200, { "content-type": "text/html" });
  res.end(PAGE);
});
let handoffUrl = null;
const receiver = await listen((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const event = JSON.parse(body);
    if (event.type === "handoff.requested") handoffUrl = event.data.handoffUrl;
    res.writeHead(200);
    res.end();
  });
});

async function freePort() {
  const s = await listen(() => {});
  const port = s.address().port;
  s.close();
  return port;
}

const home = mkdtempSync(join(tmpdir(), "bench-handoff-"));
const port = await freePort();
writeFileSync(join(home, "settings.json"), JSON.stringify({
  headless: true,
  cdpPort: await freePort(),
  publicBaseUrl: `http://127.0.0.1:${port}/`,
  webhooks: [{ url: `http://127.0.0.1:${receiver.address().port}/hook`, events: ["handoff.requested"] }],
}));
const server = spawn(clawdis, ["--home", home, "serve", "--port", String(port)], {
  env: { ...process.env, CLAWDIS_KEYCHAIN: "off", CLAWDIS_LOG: "warn" },
  stdio: ["ignore", "ignore", "inherit"],
});
const base = `http://127.0.0.1:${port}`;
let token = null;
for (let i = 0; i < 200 && !token; i += 1) {
  await sleep(50);
  try {
    const t = readFileSync(join(home, "secrets/control-token"), "utf8").trim();
    if ((await fetch(`${base}/`, { headers: { authorization: `Bearer ${t}` } })).ok) token = t;
  } catch {}
}
if (!token) throw new Error("the server never answered");
async function api(method, path, body) {
  const r = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(answer)}`);
  return answer;
}

const viewer = { process: null, profile: mkdtempSync(join(tmpdir(), "bench-viewer-")) };
try {
  const session = await api("POST", "/sessions", { url: `http://127.0.0.1:${pages.address().port}/` });
  await api("POST", "/act", { kind: "resize", width: 1280, height: 720, sessionId: session.sessionId });
  const ended = api("POST", `/sessions/${session.sessionId}/handoff`, { reason: "bench" });
  for (let i = 0; i < 200 && !handoffUrl; i += 1) await sleep(50);
  if (!handoffUrl) throw new Error("no handoff.requested webhook");

  // The person's browser.
  viewer.process = spawn(chromium, [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0",
    "--window-size=1400,1000", `--user-data-dir=${viewer.profile}`, "about:blank",
  ], { stdio: "ignore" });
  const active = join(viewer.profile, "DevToolsActivePort");
  for (let i = 0; i < 200 && !existsSync(active); i += 1) await sleep(50);
  const [devtoolsPort, browserPath] = readFileSync(active, "utf8").trim().split("\n");
  const cdp = new WebSocket(`ws://127.0.0.1:${devtoolsPort}${browserPath}`);
  await new Promise((r) => (cdp.onopen = r));
  let next = 0;
  const waiting = new Map();
  cdp.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    }
  };
  const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    next += 1;
    waiting.set(next, (msg) => (msg.error ? reject(new Error(`${method}: ${msg.error.message}`)) : resolve(msg.result)));
    cdp.send(JSON.stringify({ id: next, method, params, sessionId }));
  });
  const { targetId } = await send("Target.createTarget", { url: handoffUrl });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const evaluate = async (expression) => {
    const r = await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }, sessionId);
    if (r.exceptionDetails) throw new Error(JSON.stringify(r.exceptionDetails));
    return r.result.value;
  };
  // The view loads and draws its first frames (the target starts on a
  // blank page: a look at it may find none yet).
  for (let i = 0; ; i += 1) {
    const drawn = await evaluate(`Number(document.getElementById("screen")?.dataset.frames || 0)`).catch(() => 0);
    if (drawn > 5) break;
    if (i > 500) throw new Error("the live view drew no frames");
    await sleep(20);
  }
  // Each frame drawn, with the colour of the square's middle on it.
  await evaluate(`(() => { const s = document.getElementById("screen");
    window.__bench = { draws: [], down: 0 };
    new MutationObserver(() => { const px = s.getContext("2d").getImageData(100, 100, 1, 1).data;
      __bench.draws.push([performance.now(), px[0]]); }).observe(s, { attributes: true, attributeFilter: ["data-frames"] });
    s.addEventListener("pointerdown", () => { __bench.down = performance.now(); }, true);
    return true; })()`);

  // Frame rate while the page changes.
  await sleep(1000);
  const before = await evaluate(`[performance.now(), Number(document.getElementById("screen").dataset.frames)]`);
  await sleep(SECONDS * 1000);
  const after = await evaluate(`[performance.now(), Number(document.getElementById("screen").dataset.frames)]`);
  const fps = ((after[1] - before[1]) * 1000) / (after[0] - before[0]);
  const frame = await evaluate(`(() => { const s = document.getElementById("screen"); return s.width + "x" + s.height; })()`);

  // Input to visible frame.
  const box = await evaluate(`(() => { const s = document.getElementById("screen"); const r = s.getBoundingClientRect();
    return [r.left + 100 * r.width / s.width, r.top + 100 * r.height / s.height]; })()`);
  const latencies = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const was = await evaluate(`__bench.draws[__bench.draws.length - 1][1] > 128`);
    for (const type of ["mousePressed", "mouseReleased"]) {
      await send("Input.dispatchMouseEvent", { type, x: box[0], y: box[1], button: "left", buttons: type === "mousePressed" ? 1 : 0, clickCount: 1 }, sessionId);
    }
    const ms = await evaluate(`new Promise((done, fail) => { const started = performance.now();
      const check = () => { const hit = __bench.draws.find(([t, red]) => t > __bench.down && (red > 128) !== ${was});
        if (hit) return done(hit[0] - __bench.down);
        if (performance.now() - started > 5000) return fail(new Error("no frame showed the click"));
        setTimeout(check, 2); }; check(); })`);
    latencies.push(ms);
    await sleep(150);
  }
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  await fetch(`${handoffUrl}/end`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ done: true }) });
  await ended;
  console.log(JSON.stringify({
    viewport: "1280x720",
    frame,
    seconds: SECONDS,
    fps: Number(fps.toFixed(1)),
    rounds: ROUNDS,
    latency_ms: { p50: Number(at(0.5).toFixed(1)), p95: Number(at(0.95).toFixed(1)), min: Number(latencies[0].toFixed(1)), max: Number(latencies[latencies.length - 1].toFixed(1)) },
  }));
  cdp.close();
} finally {
  viewer.process?.kill();
  server.kill("SIGTERM");
  pages.close();
  receiver.close();
}
