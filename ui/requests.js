// What processes ask of the person (an approver token, a device pairing),
// in the Approvals and the Devices & tokens windows: each request with the
// asking process, Refuse first. Follows the `requests` event.
"use strict";

/** What a process asks of the person (an approver token, a device
 * pairing): who asked, through which process and its parents (made
 * legible by the backend: an agent picks its own arguments), with Refuse
 * first. Confirming gives whoever asked what approves gates meant for a
 * person. */
function requestCard(r) {
  return el("div", { class: "card request", "data-request": r.id },
    el("strong", {}, r.kind === "pairing"
      ? `A process asks to pair a device named "${r.name}"`
      : `A process asks for approver token "${r.name}"`),
    el("div", { class: "meta" }, `request ${r.id} · with ${r.askedBy} · ${age(r.askedAt)}`),
    el("div", { class: "warning" }, r.kind === "pairing"
      ? "A paired device can approve gates meant for a person. Confirm only if you started this pairing yourself."
      : "An approver token can approve gates meant for a person. Confirm only if you started this yourself."),
    legible(r.readable.process, "pre", { class: "process", "aria-label": "The asking process and its parents" }),
    el("div", { class: "actions" },
      el("button", { class: "refuse", "aria-label": `Refuse ${r.name}`, onclick: () => answerRequest(r.id, false) }, "Refuse"),
      el("button", { class: "primary confirm", "aria-label": `Confirm ${r.name}`, onclick: () => answerRequest(r.id, true) }, "Confirm")));
}

async function answerRequest(id, confirm) {
  requestStatus().textContent = "";
  try {
    await call("requests_answer", { id, confirm });
    requestStatus().textContent = confirm ? "Confirmed." : "Refused.";
  } catch (e) {
    requestStatus().textContent = errorText(e);
  }
  await renderRequests();
}

async function renderRequests(list) {
  if (!list) {
    try {
      list = await call("requests_list");
    } catch (e) {
      requestStatus().textContent = errorText(e);
      return;
    }
  }
  const section = document.getElementById("requests");
  section.hidden = list.length === 0;
  document.getElementById("request-list").replaceChildren(...list.map(requestCard));
}

/** Where a request's answer is said: the page's `#status`. */
function requestStatus() {
  return document.getElementById("status");
}

on("requests", (event) => renderRequests(event.payload));
renderRequests();
