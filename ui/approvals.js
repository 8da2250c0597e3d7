// The Approvals window: pending runs with Approve / Deny / Cancel (or a form
// for input gates; a browser hand-off: Take over, Done, Decline), and the
// recent decisions. Follows the `approvals` event.
"use strict";

const status = document.getElementById("status");

/** What decides exactly this gate: its short id (a gate recorded before
 * every gate had one: its run's id, which was the gate's own). The run id
 * alone would decide whatever gate the run waits at by then. */
const gateOf = (a) => a.approvalId || a.id;

/** Decides gate `id` as it was shown (its `digest`): a gate that changed
 * since is refused, and the window shows it as it is now. */
async function decide(id, choice, response, digest, reason) {
  status.textContent = "";
  try {
    const result = await call("approvals_decide", { id, choice, response, digest, reason });
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
  const shown = a.readable;
  const title = shown.workflow ? shown.workflow.text : "pipeline";
  const head = el("div", {},
    legible(shown.prompt, "strong", { class: "prompt" }),
    el("div", { class: "meta" }, `${title} · ${a.itemCount} item${a.itemCount === 1 ? "" : "s"} · ${age(a.createdAt)}`
      + (a.approvalId ? ` · id ${a.approvalId}` : "")),
    shown.workflow ? shown.workflow.warnings.map((w) => el("div", { class: "warning legible", role: "alert" }, "⚠ " + w)) : null,
    // What runs after the gate is the definition it paused with; the file
    // on disk was changed since, and that change does not run.
    a.fileChanged ? el("div", { class: "warning file-changed" },
      "The workflow file was changed after this run paused. Approving runs the steps as they were when it paused, not the edited file.") : null);
  const preview = a.items.length ? legible(shown.items, "pre", { "aria-label": "Items" }) : null;
  const context = contextOf(a, shown);
  if (a.status !== "pending") {
    const who = [a.decision, a.decidedBy && `by ${a.decidedBy}`, a.decidedVia && `via ${a.decidedVia}`, a.decidedAt && age(a.decidedAt)]
      .filter(Boolean).join(" ");
    return el("div", { class: "card decided", "data-id": gateOf(a) }, head, el("div", { class: "meta" }, `${a.runStatus}: ${who}`));
  }
  const handoff = a.context && a.context.browser && a.context.browser.handoff;
  const body = a.gate === "input" ? inputForm(a) : handoff ? handoffActions(a) : approvalActions(a);
  return el("div", { class: "card pending", "data-id": gateOf(a), "data-digest": a.digest }, head, preview, context, body);
}

/** What the person decides on besides the prompt: what approving runs,
 * who started the run, where the policy stands, what ran before. */
function contextOf(a, shown) {
  const c = a.context || {};
  const p = c.policy || {};
  const policy = [
    p.approvers === "human" ? "needs a person" : "anyone may decide",
    p.presence === "verified" ? "a passkey or the system's check" : null,
    p.needed > 1 ? `${p.votes} of ${p.needed} approvals` : null,
    p.expiresAt ? `expires ${new Date(p.expiresAt).toLocaleString()} (then ${p.onExpiry || "cancel"})` : null,
  ].filter(Boolean).join(" · ");
  return el("div", { class: "context" },
    el("div", { class: "meta policy" }, policy),
    shown.unlocks.text ? [el("h3", {}, "Approving runs"), legible(shown.unlocks, "pre", { class: "unlocks", "aria-label": "What approving runs" })] : null,
    shown.browser ? [el("h3", {}, "The page, as it was when asked"), legible(shown.browser, "pre", { class: "browser", "aria-label": "The page and its last actions" }),
      /^data:image\/jpeg;base64,/.test(c.browser.screenshot || "")
        ? el("img", { class: "page-shot", src: c.browser.screenshot, alt: `The page ${c.browser.url} when it asked` }) : null] : null,
    shown.startedBy ? [el("h3", {}, "Started by"), legible(shown.startedBy, "pre", { class: "started-by", "aria-label": "Who started the run" })] : null,
    shown.before.text ? el("details", {},
      el("summary", {}, `What ran before (${(c.before || []).length} step${(c.before || []).length === 1 ? "" : "s"})`),
      legible(shown.before, "pre", { class: "before", "aria-label": "What ran before" })) : null);
}

/** Ready reasons for a denial; the agent is told the one picked, and the
 * person's own words. */
const REASONS = ["Not what I asked for", "Wrong target or recipient", "Too risky", "Not now"];

/** An approval gate's controls, failing closed: Deny comes first and takes
 * the focus, with a reason the agent is told; Approve is armed one second
 * after the card shows (or its content changes), and Enter never presses
 * it. */
function approvalActions(a) {
  const id = gateOf(a);
  const picked = el("select", { class: "reason", "aria-label": "Why you deny it" },
    el("option", { value: "" }, "No reason given"), REASONS.map((r) => el("option", { value: r }, r)));
  const words = el("input", { type: "text", class: "reason-text", "aria-label": "Your reason, in your words",
    placeholder: "Why (optional; the agent is told)" });
  const reason = () => [picked.value, words.value.trim()].filter(Boolean).join(": ") || undefined;
  const approve = el("button", { class: "primary approve", disabled: true, "aria-label": "Approve",
    onkeydown: (ev) => { if (ev.key === "Enter") ev.preventDefault(); },
    onclick: () => decide(id, "approve", undefined, a.digest) }, "Approve");
  setTimeout(() => { approve.disabled = false; }, 1000);
  return el("div", { class: "actions" },
    el("button", { class: "deny", "aria-label": "Deny", onclick: () => decide(id, "deny", undefined, undefined, reason()) }, "Deny"),
    picked, words,
    el("button", { class: "cancel", "aria-label": "Cancel run", onclick: () => decide(id, "cancel") }, "Cancel run"),
    approve);
}

/** A browser hand-off's controls: Take over brings the page to the person
 * (the browser's window, or the live view of a headless one); Done hands
 * it back to the agent, Decline refuses. */
function handoffActions(a) {
  const id = gateOf(a);
  const takeOver = async () => {
    status.textContent = "";
    try {
      await call("handoff_take_over", { id });
      status.textContent = "The page is yours: hand it back with Done when you are finished.";
    } catch (e) {
      status.textContent = errorText(e);
    }
  };
  return el("div", { class: "actions" },
    el("button", { class: "deny", "aria-label": "Decline", onclick: () => decide(id, "deny", undefined, undefined, "declined") }, "Decline"),
    el("button", { class: "takeover", "aria-label": "Take over", onclick: takeOver }, "Take over"),
    el("button", { class: "primary approve", "aria-label": "Done — continue the agent",
      onclick: () => decide(id, "approve", undefined, a.digest) }, "Done — continue the agent"));
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
  // So does a pending card whose content is unchanged (its digest): its
  // Approve stays armed, its reason as typed.
  const open = new Map([...document.querySelectorAll(".card.pending")].map((c) => [c.dataset.id, c]));
  const same = (a) => { const c = open.get(gateOf(a)); return c && c.dataset.digest === a.digest ? c : null; };
  const keep = (a) => (a.gate === "input" && open.get(gateOf(a))) || same(a) || card(a);
  // replaceChildren takes even a kept card out of the document for a
  // moment, and the focus with it (to the body): the field being typed in
  // would lose the rest of the answer, and the focus would go to Deny,
  // where a space or Enter typed next declines a gate. So what had the
  // focus gets it back, with its caret.
  const focused = document.activeElement !== document.body ? document.activeElement : null;
  const caret = selectionOf(focused);
  document.getElementById("pending").replaceChildren(...(pending.length ? pending.map(keep) : [el("div", { class: "empty" }, "Nothing waits for you.")]));
  document.getElementById("decided").replaceChildren(...(decided.length ? decided.map(card) : [el("div", { class: "empty" }, "No decisions yet.")]));
  if (focused && focused.isConnected) {
    focused.focus({ preventScroll: true });
    if (caret) focused.setSelectionRange(...caret);
  } else if (!focused && !(lastFocused && !lastFocused.isConnected)) {
    // The focus starts on Deny, never on Approve: only while nothing had
    // it. What had it and is gone (its card decided, here or elsewhere)
    // leaves it on the body, so a key meant for that card decides no
    // other gate, at this render or a later one.
    document.querySelector(".card.pending button.deny")?.focus();
  }
}

/** The caret and selection of a text field, to put back. */
function selectionOf(field) {
  try {
    return field && typeof field.selectionStart === "number"
      ? [field.selectionStart, field.selectionEnd, field.selectionDirection] : null;
  } catch (e) {
    return null; // a field without a caret (a number's, in some engines)
  }
}

/** What had the focus last (the person's or Deny's). */
let lastFocused = null;
document.addEventListener("focusin", (ev) => { lastFocused = ev.target; });

on("approvals", render);
render();
// Keep the ages ("3 min ago") current while the window stays open.
setInterval(render, 30000);
