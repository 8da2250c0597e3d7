// The Approvals window: pending runs with Approve / Deny / Cancel (or a form
// for input gates), and the recent decisions. Follows the `approvals` event.
"use strict";

const status = document.getElementById("status");

/** What decides exactly this gate: its short id (a gate recorded before
 * every gate had one: its run's id, which was the gate's own). The run id
 * alone would decide whatever gate the run waits at by then. */
const gateOf = (a) => a.approvalId || a.id;

/** Decides gate `id` as it was shown (its `digest`): a gate that changed
 * since is refused, and the window shows it as it is now. */
async function decide(id, choice, response, digest) {
  status.textContent = "";
  try {
    const result = await call("approvals_decide", { id, choice, response, digest });
    status.textContent = `Resumed: ${result.ok ? result.status : "failed: " + result.error.message}`;
  } catch (e) {
    status.textContent = errorText(e);
  }
  await render();
}

/** A form built from the input gate's JSON schema (flat objects). */
function inputForm(a) {
  const schema = a.responseSchema || {};
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  const defaults = a.defaults || {};
  const fields = Object.entries(props).map(([name, spec]) => {
    const type = spec.type || "string";
    const id = `${gateOf(a)}-${name}`;
    const input = type === "boolean"
      ? el("input", { type: "checkbox", id, name, checked: defaults[name] === true })
      : el("input", { type: type === "number" || type === "integer" ? "number" : "text", id, name,
          value: defaults[name] ?? "", required: required.has(name) });
    return type === "boolean"
      ? el("label", { class: "check" }, input, spec.title || name)
      : [el("label", { for: id }, (spec.title || name) + (required.has(name) ? " *" : "")), input];
  });
  const form = el("form", {
    onsubmit: (ev) => {
      ev.preventDefault();
      const response = {};
      for (const [name, spec] of Object.entries(props)) {
        const field = form.elements[name];
        const type = spec.type || "string";
        if (type === "boolean") response[name] = field.checked;
        else if (field.value === "") continue;
        else if (type === "number" || type === "integer") response[name] = Number(field.value);
        else response[name] = field.value;
      }
      decide(gateOf(a), "respond", response, a.digest);
    },
  }, fields, el("div", { class: "actions" },
    el("button", { class: "primary", type: "submit" }, "Submit"),
    el("button", { type: "button", onclick: () => decide(gateOf(a), "cancel") }, "Cancel run")));
  return form;
}

function card(a) {
  const title = a.workflow ? `${a.workflow}` : "pipeline";
  const head = el("div", {},
    el("strong", {}, a.prompt || "(no prompt)"),
    el("div", { class: "meta" }, `${title} · ${a.itemCount} item${a.itemCount === 1 ? "" : "s"} · ${age(a.createdAt)}`
      + (a.approvalId ? ` · id ${a.approvalId}` : "")),
    // What runs after the gate is the definition it paused with; the file
    // on disk was changed since, and that change does not run.
    a.fileChanged ? el("div", { class: "warning file-changed" },
      "The workflow file was changed after this run paused. Approving runs the steps as they were when it paused, not the edited file.") : null);
  const preview = a.items.length ? el("pre", {}, JSON.stringify(a.items, null, 2) + (a.itemCount > a.items.length ? "\n…" : "")) : null;
  if (a.status !== "pending") {
    const who = [a.decision, a.decidedBy && `by ${a.decidedBy}`, a.decidedVia && `via ${a.decidedVia}`, a.decidedAt && age(a.decidedAt)]
      .filter(Boolean).join(" ");
    return el("div", { class: "card decided", "data-id": gateOf(a) }, head, el("div", { class: "meta" }, `${a.runStatus}: ${who}`));
  }
  const body = a.gate === "input"
    ? inputForm(a)
    : el("div", { class: "actions" },
        el("button", { class: "primary", onclick: () => decide(gateOf(a), "approve", undefined, a.digest) }, "Approve"),
        el("button", { onclick: () => decide(gateOf(a), "deny") }, "Deny"),
        el("button", { onclick: () => decide(gateOf(a), "cancel") }, "Cancel run"));
  return el("div", { class: "card pending", "data-id": gateOf(a) }, head, preview, body);
}

async function render() {
  let list;
  try {
    list = await call("approvals_list");
  } catch (e) {
    status.textContent = errorText(e);
    return;
  }
  const pending = list.filter((a) => a.status === "pending");
  const decided = list.filter((a) => a.status !== "pending");
  // A form someone is filling in survives re-renders (other runs changing,
  // the age ticker): keep the card of a still-pending input gate as it is.
  const open = new Map([...document.querySelectorAll(".card.pending")].map((c) => [c.dataset.id, c]));
  const keep = (a) => (a.gate === "input" && open.get(gateOf(a))) || card(a);
  document.getElementById("pending").replaceChildren(...(pending.length ? pending.map(keep) : [el("div", { class: "empty" }, "Nothing waits for you.")]));
  document.getElementById("decided").replaceChildren(...(decided.length ? decided.map(card) : [el("div", { class: "empty" }, "No decisions yet.")]));
}

/** One process, as the OS describes it: pid, executable, arguments, cwd. */
function processLine(p) {
  const args = (p.args || []).join(" ");
  return `pid ${p.pid} · ${p.exe || p.name}` + (args ? ` · ${args}` : "") + (p.cwd ? ` · in ${p.cwd}` : "");
}

/** What a process asks of the person (an approver token, a device
 * pairing): who asked, through which process and its parents, with Refuse
 * first. Confirming gives whoever asked what approves gates meant for a
 * person. */
function requestCard(r) {
  const p = r.process;
  const chain = p ? el("ol", { class: "process-chain", "aria-label": "Parent processes" },
    (p.parents || []).map((parent) => el("li", {}, processLine(parent)))) : null;
  return el("div", { class: "card request", "data-request": r.id },
    el("strong", {}, r.kind === "pairing"
      ? `A process asks to pair a device named "${r.name}"`
      : `A process asks for approver token "${r.name}"`),
    el("div", { class: "meta" }, `request ${r.id} · with ${r.askedBy} · ${age(r.askedAt)}`),
    el("div", { class: "warning" }, r.kind === "pairing"
      ? "A paired device can approve gates meant for a person. Confirm only if you started this pairing yourself."
      : "An approver token can approve gates meant for a person. Confirm only if you started this yourself."),
    el("div", { class: "process" }, p ? processLine(p) : "The asking process could not be identified."),
    chain,
    el("div", { class: "actions" },
      el("button", { class: "refuse", "aria-label": `Refuse ${r.name}`, onclick: () => answerRequest(r.id, false) }, "Refuse"),
      el("button", { class: "primary confirm", "aria-label": `Confirm ${r.name}`, onclick: () => answerRequest(r.id, true) }, "Confirm")));
}

async function answerRequest(id, confirm) {
  status.textContent = "";
  try {
    await call("requests_answer", { id, confirm });
    status.textContent = confirm ? "Confirmed." : "Refused.";
  } catch (e) {
    status.textContent = errorText(e);
  }
  await renderRequests();
}

async function renderRequests(list) {
  if (!list) {
    try {
      list = await call("requests_list");
    } catch (e) {
      status.textContent = errorText(e);
      return;
    }
  }
  const section = document.getElementById("requests");
  section.hidden = list.length === 0;
  document.getElementById("request-list").replaceChildren(...list.map(requestCard));
}

on("approvals", render);
on("requests", (event) => renderRequests(event.payload));
render();
renderRequests();
// Keep the ages ("3 min ago") current while the window stays open.
setInterval(render, 30000);
