// Shared by the windows: calls into the app and small DOM helpers.
"use strict";

/** Calls an app command; rejects with the backend's error, `{error, kind, code?}`. */
function call(cmd, args) {
  return window.__TAURI__.core.invoke(cmd, args || {});
}

/** The text to show for a rejected call. */
function errorText(e) {
  return e && typeof e.error === "string" ? e.error : String(e);
}

/** Subscribes to an app event. */
function on(event, handler) {
  return window.__TAURI__.event.listen(event, handler);
}

/** An element with attributes and children (strings become text). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== false && v !== null && v !== undefined) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) node.append(c);
  return node;
}

/** "3 min ago" from an RFC 3339 time. */
function age(iso) {
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return Math.floor(s) + " s ago";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  return Math.floor(s / 86400) + " d ago";
}

/** Text a person reads, as the backend made it legible (`{text, warnings}`:
 * hidden and direction-changing characters already escaped, look-alike
 * words named): the warnings above, then the text in `tag`. Long text
 * scrolls (a `pre`) and has Copy, which copies what is shown. */
function legible(shown, tag, attrs) {
  const warnings = (shown.warnings || []).map((w) => el("div", { class: "warning legible", role: "alert" }, "⚠ " + w));
  const body = el(tag, attrs || {}, shown.text);
  if (tag !== "pre") return [warnings, body];
  const copy = el("button", { type: "button", class: "copy", "aria-label": `Copy ${(attrs && attrs["aria-label"]) || "the text"}`,
    onclick: () => navigator.clipboard.writeText(shown.text).catch(() => {}) }, "Copy");
  return [warnings, el("div", { class: "scroll" }, body, copy)];
}

/** The windows take the `accentColor` setting (lobster orange unless set),
 * as the clawd browser's profile does. */
async function applyAccent() {
  try {
    const { settings } = await call("settings_get");
    if (/^#[0-9a-fA-F]{6}$/.test(settings.accentColor || "")) {
      document.documentElement.style.setProperty("--accent", settings.accentColor);
    }
  } catch (e) {
    // The stylesheet's lobster orange stays.
  }
}
applyAccent();
