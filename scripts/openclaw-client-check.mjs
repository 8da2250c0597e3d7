// Drives `clawdis serve` with OpenClaw's own browser client (the `openclaw`
// npm package's client modules, unchanged) and checks each answer.
//
//   node scripts/openclaw-client-check.mjs <openclaw dist dir> <control URL> <page URL>
//
// The token comes from OPENCLAW_GATEWAY_TOKEN, as OpenClaw's gateway does.
// tests/openclaw_client.rs starts a server and runs it (scripts/test
// installs the package); exit status 0 means every call worked.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";

const [dist, base, pageUrl] = process.argv.slice(2);

// The bundle's modules export minified names; map them back by reading the
// `export { real as x }` line of the module that defines `wanted`.
async function load(wanted) {
  for (const file of readdirSync(dist).filter((f) => f.endsWith(".mjs"))) {
    const text = readFileSync(join(dist, file), "utf8");
    if (!text.includes(`async function ${wanted}(`)) continue;
    const exports = text.match(/export \{([^}]*)\}/);
    if (!exports) continue;
    const mod = await import(join(dist, file));
    const names = {};
    for (const part of exports[1].split(",")) {
      const [real, alias] = part.trim().split(/\s+as\s+/);
      if (alias) names[real] = mod[alias];
    }
    return names;
  }
  throw new Error(`no module defines ${wanted}`);
}

const client = await load("browserSnapshot");
const actions = await load("browserAct");
const steps = [];
async function step(name, f) {
  try {
    const out = await f();
    steps.push(`ok   ${name}`);
    return out;
  } catch (e) {
    steps.push(`FAIL ${name}: ${e?.stack ?? e}`);
    throw e;
  }
}

try {
  const status = await step("status", () => client.browserStatus(base));
  assert.equal(status.color, "#FF4500");
  await step("start", () => client.browserStart(base));
  const doctor = await step("doctor", () => client.browserDoctor(base));
  assert.ok(Array.isArray(doctor.checks));
  const tab = await step("open tab", () => client.browserOpenTab(base, pageUrl));
  assert.equal(tab.title, "Form");
  const tabs = await step("tabs", () => client.browserTabs(base));
  assert.ok(JSON.stringify(tabs).includes(tab.targetId));
  const snap = await step("snapshot (agent default: no format)", () =>
    client.browserSnapshot(base, { targetId: tab.targetId }));
  assert.equal(snap.format, "ai");
  const ref = Object.entries(snap.refs).find(([, v]) => v.role === "textbox")[0];
  const submit = Object.entries(snap.refs).find(([, v]) => v.name === "Submit")[0];
  await step("act type", () => actions.browserAct(base, { kind: "type", ref, text: "Ada", targetId: tab.targetId, submit: false, slowly: false, timeoutMs: 60000 }));
  const clicked = await step("act click", () => actions.browserAct(base, { kind: "click", ref: submit, targetId: tab.targetId, doubleClick: false }));
  assert.equal(clicked.targetId, tab.targetId);
  const result = await step("act evaluate", () => actions.browserAct(base, { kind: "evaluate", fn: "() => document.querySelector('#out').textContent", targetId: tab.targetId }));
  assert.equal(result.result, "Hello Ada");
  await step("snapshot efficient", () => client.browserSnapshot(base, { targetId: tab.targetId, mode: "efficient" }));
  const shot = await step("screenshot", () => actions.browserScreenshotAction(base, { targetId: tab.targetId, fullPage: false, type: "png" }));
  assert.ok(shot.path.startsWith("/"));
  await step("navigate", () => actions.browserNavigate(base, { url: pageUrl, targetId: tab.targetId }));
  await step("console", () => actions.browserConsoleMessages(base, { targetId: tab.targetId }));
  await step("arm dialog", () => actions.browserArmDialog(base, { accept: true, targetId: tab.targetId }));
  await step("focus", () => client.browserFocusTab(base, tab.targetId));
  // OpenClaw 2026.9.6's newer routes, through its own request helper.
  const call = (path, body) => client.requestBrowserJson(base, path, { method: "POST", body });
  const set = await step("cookies set-many", () => call("/cookies/set-many", {
    targetId: tab.targetId,
    cookies: [
      { name: "a", value: "1", url: pageUrl },
      { name: "b", value: "2", url: pageUrl, sameSite: "Lax" },
      { name: "", value: "refused" },
    ],
  }));
  assert.equal(set.added, 2, JSON.stringify(set));
  const jar = await step("cookies", () => client.requestBrowserJson(base, "/cookies", { query: { targetId: tab.targetId } }));
  assert.deepEqual(jar.cookies.map((c) => c.name).sort(), ["a", "b"]);
  await step("cookies set-many (empty)", () => call("/cookies/set-many", { cookies: [] }).then(
    () => assert.fail("an empty list was taken"),
    (e) => assert.match(String(e), /cookies/),
  ));
  const listed = await step("system profiles", () => client.browserSystemProfiles(base));
  assert.deepEqual(listed, []);
  const importStatus = await step("system profile import status", () => client.requestBrowserJson(base, "/system-profile-import/status"));
  assert.equal(importStatus.enabled, false);
  assert.deepEqual(importStatus.systemProfiles, []);
  await step("system profile import dismiss", () => call("/system-profile-import/dismiss", {}));
  await step("import profile (refused)", () => client.browserImportProfile(base, { browser: "chrome" }).then(
    () => assert.fail("an import was taken"),
    (e) => assert.match(String(e), /never copies your own browser's profile/),
  ));
  const cast = await step("screencast", () => call("/screencast", { targetId: tab.targetId, maxWidth: 640, quality: 50 }));
  assert.match(cast.token, /^[0-9a-f]{48}$/);
  assert.equal(cast.wsPath, `/browser/screencast?token=${cast.token}`);
  assert.equal(cast.targetId, tab.targetId);
  const wsUrl = base.replace(/^http/, "ws") + cast.wsPath;
  const watched = await step("screencast stream", () => new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl);
    ws.binaryType = "arraybuffer";
    const seen = { ready: null, frame: null };
    const timer = setTimeout(() => reject(new Error("no frame within 15 s")), 15000);
    ws.onerror = () => {};
    ws.onmessage = (m) => {
      if (typeof m.data === "string") {
        const said = JSON.parse(m.data);
        if (said.type === "ready") seen.ready = said;
        return;
      }
      if (seen.frame) return;
      const bytes = new Uint8Array(m.data);
      const length = new DataView(m.data).getUint32(0);
      seen.frame = {
        header: JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + length))),
        jpeg: bytes.subarray(4 + length),
      };
      // View-only: anything binary from the viewer ends it.
      ws.send(new Uint8Array([1, 2, 3]));
    };
    ws.onclose = (e) => {
      clearTimeout(timer);
      resolve({ ...seen, code: e.code, reason: e.reason });
    };
  }));
  assert.equal(watched.ready?.targetId, tab.targetId, JSON.stringify(watched.ready));
  assert.ok(watched.frame.header.url.startsWith("http"), JSON.stringify(watched.frame.header));
  assert.ok(watched.frame.header.cssWidth > 0);
  assert.deepEqual([...watched.frame.jpeg.subarray(0, 2)], [0xff, 0xd8]);
  assert.equal(watched.code, 1003);
  assert.equal(watched.reason, "view_only");
  const again = await step("screencast ticket used twice", () => new Promise((resolve) => {
    const ws = new WebSocket(wsUrl);
    ws.onopen = () => resolve("opened");
    ws.onerror = () => resolve("refused");
  }));
  assert.equal(again, "refused");
  // A tab closed while watched ends its stream with 4004 target_closed.
  const second = await step("screencast again", () => call("/screencast", { targetId: tab.targetId }));
  const closed = await step("close tab (raw id) while watched", () => new Promise((resolve, reject) => {
    const ws = new WebSocket(base.replace(/^http/, "ws") + second.wsPath);
    const timer = setTimeout(() => reject(new Error("the stream outlived its tab")), 15000);
    ws.onerror = () => {};
    ws.onmessage = (m) => {
      if (typeof m.data === "string" && JSON.parse(m.data).type === "ready") {
        client.browserCloseTabByRawTargetId(base, tab.targetId).catch(reject);
      }
    };
    ws.onclose = (e) => {
      clearTimeout(timer);
      resolve({ code: e.code, reason: e.reason });
    };
  }));
  assert.deepEqual(closed, { code: 4004, reason: "target_closed" });
  // The agent's `browser` tool itself, pointed at this server.
  const tool = actions.createBrowserTool({ sandboxBridgeUrl: base });
  const run = (args) => tool.execute("check", args);
  const text = (out) => JSON.stringify(out);
  const opened = await step("tool open", () => run({ action: "open", url: pageUrl }));
  assert.ok(text(opened).includes("Form"), text(opened));
  const seen = await step("tool snapshot", () => run({ action: "snapshot" }));
  const button = text(seen).match(/button \\"Submit\\" \[ref=(e\d+)\]/);
  assert.ok(button, text(seen));
  await step("tool act click", () => run({ action: "act", request: { kind: "click", ref: button[1] } }));
  const read = await step("tool act evaluate", () => run({ action: "act", request: { kind: "evaluate", fn: "() => document.querySelector('#out').textContent" } }));
  assert.ok(text(read).includes("Hello"), text(read));
  await step("tool tabs", () => run({ action: "tabs" }));
  await step("tool screenshot", () => run({ action: "screenshot" }));
  await step("stop", () => client.browserStop(base));
} finally {
  console.log(steps.join("\n"));
}
