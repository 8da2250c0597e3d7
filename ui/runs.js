// The Runs window: the history with filters and paging (`runs_list`), and
// one run as a timeline of its steps with its decisions, Export and
// Cancel. Follows the `runs` event.
"use strict";

const status = document.getElementById("status");
const filters = document.getElementById("filters");
let next = null;
let shown = null;

/** How long, from milliseconds. */
function took(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function row(r) {
  return el("tr", { class: "run", "data-run": r.runId },
    el("td", {}, el("button", { type: "button", class: "link", "aria-label": `Open run ${r.runId}`,
      onclick: () => openRun(r.runId) }, r.workflow || "pipeline")),
    el("td", { class: `state ${r.status}` }, r.status),
    el("td", { class: "meta" }, `by ${r.startedBy}`),
    el("td", { class: "meta" }, age(r.startedAt)),
    el("td", { class: "meta" }, r.runId.slice(0, 8)));
}

/** The first page (`more`: the next one) of the runs the filters want. */
async function list(more) {
  const args = { status: filters.status.value || null, workflow: filters.workflow.value.trim() || null,
    cursor: more ? next : null };
  try {
    const page = await call("runs_list", args);
    const rows = page.runs.map(row);
    const body = document.getElementById("runs");
    if (more) body.append(...rows);
    else body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty" }, "No runs."))]));
    next = page.next;
    document.getElementById("more").hidden = !next;
  } catch (e) {
    status.textContent = errorText(e);
  }
}

/** One step of the timeline: status, duration, attempts, output. */
function step(s) {
  const output = s.error || (s.output === null || s.output === undefined ? "" : JSON.stringify(s.output, null, 2));
  return el("li", { class: `step ${s.status}`, "data-step": s.id },
    el("strong", {}, s.id), " ",
    el("span", { class: `state ${s.status}` }, s.status),
    el("span", { class: "meta" }, [took(s.durationMs), s.attempts > 1 ? `${s.attempts} attempts` : ""].filter(Boolean).join(" · ")),
    output ? el("pre", { "aria-label": `Output of ${s.id}` }, output) : null);
}

/** One decision: what, who, through which channel. */
function decision(d) {
  return el("li", { class: "decision" },
    `${d.decision} by ${d.by || "someone"} via ${d.via}` + (d.presence ? ` (${d.presence})` : "")
      + (d.at ? ` · ${age(d.at)}` : "") + (d.comment ? ` · “${d.comment}”` : ""));
}

async function openRun(id) {
  let run;
  try {
    run = await call("runs_get", { id });
  } catch (e) {
    status.textContent = errorText(e);
    return;
  }
  shown = id;
  const live = ["running", "needs_approval", "needs_input"].includes(run.status);
  const section = document.getElementById("run");
  section.hidden = false;
  section.replaceChildren(
    el("h2", {}, `${run.workflow || "pipeline"} · ${run.status}`),
    el("div", { class: "meta" }, `run ${run.runId} · started by ${run.startedBy} · ${age(run.startedAt)}` + (run.cwd ? ` · in ${run.cwd}` : "")),
    el("ol", { class: "timeline", "aria-label": "Steps" }, run.steps.map(step)),
    ...(run.decisions.length ? [el("h3", {}, "Decisions"), el("ul", { class: "decisions" }, run.decisions.map(decision))] : []),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "export", onclick: () => exportRun(run.runId) }, "Export"),
      live ? el("button", { type: "button", class: "cancel", onclick: () => cancel(run.runId) }, "Cancel run") : null));
}

/** Saves the run's self-contained document as a file. */
async function exportRun(id) {
  try {
    const doc = await call("runs_export", { id });
    const link = el("a", { href: URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)], { type: "application/json" })),
      download: `run-${id}.json` });
    link.click();
    status.textContent = `Exported run ${id}.`;
  } catch (e) {
    status.textContent = errorText(e);
  }
}

async function cancel(id) {
  try {
    const run = await call("runs_cancel", { id });
    status.textContent = `Run ${id} is ${run.status}.`;
  } catch (e) {
    status.textContent = errorText(e);
  }
  await Promise.all([list(false), openRun(id)]);
}

filters.addEventListener("change", () => list(false));
filters.addEventListener("submit", (ev) => { ev.preventDefault(); list(false); });
document.getElementById("more").addEventListener("click", () => list(true));
on("runs", () => {
  list(false);
  if (shown) openRun(shown);
});
list(false);
