// The Triggers window: each workflow's schedules and file watches, with
// the next time, the last fire and its error, paused or not; Pause and
// Resume. Follows the `runs` event (a fire starts a run) and refreshes
// its times every 30 s.
"use strict";

const status = document.getElementById("status");

function row(t) {
  const when = t.paused ? "paused" : t.next ? `next ${new Date(t.next).toLocaleString()}` : "waits for a change";
  return el("tr", { class: `trigger${t.paused ? " paused" : ""}`, "data-trigger": t.id },
    el("td", {}, el("strong", {}, t.workflow), el("div", { class: "meta" }, `${t.kind} ${t.spec}`)),
    el("td", { class: "meta when" }, when),
    el("td", { class: "meta" }, t.lastFiredAt ? `last fired ${age(t.lastFiredAt)}` : "never fired"),
    el("td", { class: "error" }, t.error || ""),
    el("td", {}, el("button", { type: "button", class: t.paused ? "resume" : "pause",
      "aria-label": `${t.paused ? "Resume" : "Pause"} ${t.workflow} ${t.kind} ${t.spec}`,
      onclick: () => toggle(t) }, t.paused ? "Resume" : "Pause")));
}

async function render() {
  try {
    const list = await call("triggers_list");
    document.getElementById("triggers").replaceChildren(...(list.length ? list.map(row)
      : [el("tr", {}, el("td", { class: "empty" }, "No workflow has a trigger."))]));
  } catch (e) {
    status.textContent = errorText(e);
  }
}

async function toggle(t) {
  try {
    await call(t.paused ? "triggers_resume" : "triggers_pause", { id: t.id });
    status.textContent = `${t.paused ? "Resumed" : "Paused"} ${t.workflow} (${t.kind} ${t.spec}).`;
  } catch (e) {
    status.textContent = errorText(e);
  }
  await render();
}

on("runs", render);
render();
setInterval(render, 30000);
