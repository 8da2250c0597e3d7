// The Tabs window: the clawd browser's tabs, refreshed twice a second, with
// Focus and Close.
"use strict";

const status = document.getElementById("status");
let last = "";

async function act(cmd, targetId) {
  try {
    await call(cmd, { targetId });
  } catch (e) {
    status.textContent = errorText(e);
  }
  refresh();
}

async function refresh() {
  let tabs;
  try {
    tabs = await call("tabs_list");
  } catch (e) {
    status.textContent = errorText(e);
    return;
  }
  const key = JSON.stringify(tabs.map((t) => [t.targetId, t.title, t.url, t.isActive]));
  if (key === last) return;
  last = key;
  const rows = tabs.map((t) => el("tr", { "data-target": t.targetId },
    el("td", {}, el("div", {}, t.title || "(untitled)", " ", t.isActive ? el("span", { class: "badge" }, "active") : null)),
    el("td", { class: "url" }, t.url),
    el("td", {}, el("div", { class: "actions" },
      el("button", { onclick: () => act("tab_focus", t.targetId) }, "Focus"),
      el("button", { onclick: () => act("tab_close", t.targetId) }, "Close")))));
  document.getElementById("tabs").replaceChildren(...(rows.length ? rows
    : [el("tr", {}, el("td", { class: "empty" }, "No tabs: the browser is stopped or has none open."))]));
  status.textContent = "";
}

refresh();
setInterval(refresh, 500);
