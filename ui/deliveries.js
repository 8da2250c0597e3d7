// The Deliveries window: webhook deliveries, newest first, each with its
// attempts (status code, error, duration) and Redeliver. Follows the
// `approvals` and `runs` events, which are what send them, and looks again
// every 5 s while one is still being tried.
"use strict";

const status = document.getElementById("status");
let open = null;

function row(d) {
  return el("tr", { class: `delivery ${d.status}`, "data-delivery": d.id },
    el("td", {}, el("button", { type: "button", class: "link", "aria-label": `Open delivery ${d.id}`,
      onclick: () => show(d.id) }, d.type)),
    el("td", { class: "meta url" }, d.url),
    el("td", { class: `state ${d.status}` }, d.status),
    el("td", { class: "meta" }, `${d.attempts} attempt${d.attempts === 1 ? "" : "s"}`),
    el("td", { class: "error" }, d.lastError || ""),
    el("td", { class: "meta" }, age(d.createdAt)));
}

async function render() {
  try {
    const list = await call("deliveries_list");
    document.getElementById("deliveries").replaceChildren(...(list.length ? list.map(row)
      : [el("tr", {}, el("td", { class: "empty" }, "No webhook deliveries yet."))]));
    if (open) await show(open);
  } catch (e) {
    status.textContent = errorText(e);
  }
}

async function show(id) {
  const d = await call("deliveries_get", { id });
  open = id;
  const section = document.getElementById("detail");
  section.hidden = false;
  section.replaceChildren(
    el("h2", {}, `${d.type} → ${d.url}`),
    el("div", { class: "meta" }, `delivery ${d.id} · ${d.status}`),
    el("ol", { class: "attempts", "aria-label": "Attempts" }, (d.history || []).map((a) =>
      el("li", { class: "attempt" }, `attempt ${a.attempt} · ${age(a.at)} · `
        + (a.statusCode ? `HTTP ${a.statusCode}` : "no answer")
        + (a.error ? ` · ${a.error}` : "") + (a.durationMs !== undefined ? ` · ${a.durationMs} ms` : "")))),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "redeliver", onclick: () => redeliver(d.id) }, "Redeliver")));
}

async function redeliver(id) {
  try {
    await call("deliveries_redeliver", { id });
    status.textContent = `Sending ${id} again.`;
  } catch (e) {
    status.textContent = errorText(e);
  }
  await render();
}

on("approvals", render);
on("runs", render);
render();
setInterval(() => {
  if (document.querySelector("tr.delivery.pending")) render();
}, 5000);
