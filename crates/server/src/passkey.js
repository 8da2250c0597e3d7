// The pairing, link and inbox pages' passkey ceremonies: WebAuthn in the
// browser, checked by the server (webauthn-rs). A button's `data-passkey`
// says which: `pair` registers this device; `approve` approves the gate a
// link's page shows, as it was shown (`data-digest`); `signin` opens the
// inbox (or, with `data-then="reload"`, a hand-off's live view), whose `inbox-approve` and `inbox-deny` decide what waits, and
// `request-confirm` and `request-refuse` answer what a process asks of the
// person (an approver token, a pairing).
"use strict";

const b64u = {
  encode(buffer) {
    let text = "";
    for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte);
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  },
  decode(text) {
    const plain = text.replace(/-/g, "+").replace(/_/g, "/");
    const padded = plain + "===".slice((plain.length + 3) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  },
};

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.error || `${response.status} ${response.statusText}`);
  return answer;
}

function say(text) {
  document.getElementById("said").textContent = text;
}

async function pair(button) {
  const here = location.pathname;
  const { publicKey } = await post(`${here}/options`, {});
  publicKey.challenge = b64u.decode(publicKey.challenge);
  publicKey.user.id = b64u.decode(publicKey.user.id);
  for (const c of publicKey.excludeCredentials || []) c.id = b64u.decode(c.id);
  const made = await askTheDevice(button, () => navigator.credentials.create({ publicKey }));
  const done = await post(here, {
    id: made.id,
    rawId: b64u.encode(made.rawId),
    type: made.type,
    extensions: {},
    response: {
      attestationObject: b64u.encode(made.response.attestationObject),
      clientDataJSON: b64u.encode(made.response.clientDataJSON),
    },
  });
  say(`Paired as "${done.name}". This device can approve gates that need a person.`);
}

/** Runs `ask` (a WebAuthn call) while the pressed `button` says the page
 * waits for the passkey; a failure is said in words a person acts on. */
async function askTheDevice(button, ask) {
  const label = button.textContent;
  button.textContent = "Waiting for your passkey…";
  try {
    return await ask();
  } catch (e) {
    throw new Error(passkeyFailed(e));
  } finally {
    button.textContent = label;
  }
}

/** What a WebAuthn failure means for the person. */
function passkeyFailed(e) {
  switch (e && e.name) {
    case "NotAllowedError":
      return "No passkey answered: it was cancelled, or no authenticator responded in time. Press the button to try again.";
    case "InvalidStateError":
      return "This device already holds a passkey for this Clawdis.";
    case "SecurityError":
      return "This address cannot hold a passkey: open the link as it was given (https://, or localhost on the machine that runs Clawdis).";
    case "NotSupportedError":
      return "This browser offers no passkey that Clawdis can use.";
    default:
      return `The passkey failed: ${e && e.message ? e.message : e}`;
  }
}

/** Asks the device to sign `publicKey`'s challenge (the pressed `button`
 * says it waits); the assertion as the server reads it. */
async function assertion(publicKey, button) {
  publicKey.challenge = b64u.decode(publicKey.challenge);
  for (const c of publicKey.allowCredentials || []) c.id = b64u.decode(c.id);
  const signed = await askTheDevice(button, () => navigator.credentials.get({ publicKey }));
  const r = signed.response;
  return {
    id: signed.id,
    rawId: b64u.encode(signed.rawId),
    type: signed.type,
    extensions: {},
    response: {
      authenticatorData: b64u.encode(r.authenticatorData),
      clientDataJSON: b64u.encode(r.clientDataJSON),
      signature: b64u.encode(r.signature),
      userHandle: r.userHandle ? b64u.encode(r.userHandle) : null,
    },
  };
}

async function approve(button) {
  const here = location.pathname;
  const { ceremony, publicKey } = await post(`${here}/challenge`, {
    decision: "approve",
    digest: button.dataset.digest,
  });
  const done = await post(`${here}/passkey`, { ceremony, credential: await assertion(publicKey, button) });
  say(`Approved with the passkey of "${done.device}". The run is now ${done.result.status}.`);
}

// The inbox: sign in with the passkey, then list what waits; each approval
// takes an assertion of its own, a denial the signed-in device only.
async function signin(button) {
  const { ceremony, publicKey } = await post("/inbox/signin/challenge", {});
  const done = await post("/inbox/signin", { ceremony, credential: await assertion(publicKey, button) });
  // A hand-off's live view, opened from afar, shows itself once signed in.
  if (button.dataset.then === "reload") return location.reload();
  await showInbox();
  follow();
  say(`Signed in as "${done.device}".`);
}

async function signedIn(path) {
  const response = await fetch(path);
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || response.statusText);
  return answer;
}

async function showInbox() {
  const [answer, asked] = await Promise.all([signedIn("/inbox/approvals"), signedIn("/inbox/requests")]);
  showRequests(asked.requests);
  const list = document.getElementById("inbox");
  list.replaceChildren();
  if (!answer.approvals.length) list.textContent = "Nothing waits for you.";
  for (const a of answer.approvals) {
    const card = document.createElement("div");
    card.className = "card";
    card.dataset.id = a.id;
    const shown = a.readable;
    const title = document.createElement("h2");
    title.textContent = shown.prompt.text;
    const meta = document.createElement("p");
    meta.className = "wf";
    meta.textContent = `${shown.workflow ? shown.workflow.text : "pipeline"} · ${a.itemCount} item${a.itemCount === 1 ? "" : "s"} · id ${a.id}`;
    const items = document.createElement("pre");
    items.textContent = shown.items.text;
    const approve = document.createElement("button");
    approve.type = "button";
    approve.dataset.passkey = "inbox-approve";
    approve.dataset.id = a.id;
    approve.dataset.digest = a.digest;
    approve.textContent = "Approve with this device's passkey";
    const deny = document.createElement("button");
    deny.type = "button";
    deny.className = "deny";
    deny.dataset.passkey = "inbox-deny";
    deny.dataset.id = a.id;
    deny.textContent = "Deny";
    const reason = document.createElement("input");
    reason.type = "text";
    reason.className = "reason";
    reason.setAttribute("aria-label", "Why you deny it");
    reason.placeholder = "Why you deny it (optional; the agent is told)";
    const sections = [["The page, as it was when asked", shown.browser], ["Approving runs", shown.unlocks], ["Started by", shown.startedBy], ["What ran before", shown.before]]
      .filter(([, text]) => text && text.text)
      .flatMap(([name, text]) => {
        const heading = document.createElement("h3");
        heading.textContent = name;
        const body = document.createElement("pre");
        body.textContent = text.text;
        return [heading, ...warnings(text), body];
      });
    const page = a.context && a.context.browser;
    if (page && /^data:image\/jpeg;base64,/.test(page.screenshot || "")) {
      const shot = document.createElement("img");
      shot.src = page.screenshot;
      shot.alt = "The page when it asked";
      shot.style.maxWidth = "100%";
      sections.push(shot);
    }
    card.append(
      ...warnings(shown.workflow), ...warnings(shown.prompt), title, meta,
      ...(a.items.length ? [...warnings(shown.items), items] : []),
      ...sections,
      deny, " ", reason, " ", approve);
    list.append(card);
  }
}

/** Lines that warn of what legible text hides (escaped characters,
 * look-alike words), to put above it. */
function warnings(shown) {
  return ((shown && shown.warnings) || []).map((w) => {
    const line = document.createElement("p");
    line.className = "warn";
    line.setAttribute("role", "alert");
    line.textContent = "⚠ " + w;
    return line;
  });
}

function button(kind, id, label, text) {
  const b = document.createElement("button");
  b.type = "button";
  b.dataset.passkey = kind;
  b.dataset.id = id;
  b.setAttribute("aria-label", label);
  b.textContent = text;
  return b;
}

/** What processes ask of the person, with the asking process and its
 * parents; Refuse comes first. */
function showRequests(requests) {
  const list = document.getElementById("requests");
  list.replaceChildren();
  for (const r of requests) {
    const card = document.createElement("div");
    card.className = "card request";
    card.dataset.request = r.id;
    const title = document.createElement("h2");
    title.textContent = r.kind === "pairing"
      ? `A process asks to pair a device named "${r.name}"`
      : `A process asks for approver token "${r.name}"`;
    const meta = document.createElement("p");
    meta.className = "wf";
    meta.textContent = `request ${r.id} · with ${r.askedBy} · asked ${r.askedAt}`;
    const warning = document.createElement("p");
    warning.textContent = r.kind === "pairing"
      ? "A paired device can approve gates meant for a person. Confirm only if you started this pairing yourself."
      : "An approver token can approve gates meant for a person. Confirm only if you started this yourself.";
    const process = document.createElement("pre");
    process.textContent = r.readable.process.text;
    card.append(title, meta, warning, ...warnings(r.readable.process), process,
      button("request-refuse", r.id, `Refuse ${r.name}`, "Refuse"), " ",
      button("request-confirm", r.id, `Confirm ${r.name}`, "Confirm with this device's passkey"));
    list.append(card);
  }
}

async function requestConfirm(button) {
  const id = button.dataset.id;
  const { ceremony, publicKey } = await post(`/inbox/requests/${id}/challenge`, {});
  const done = await post(`/inbox/requests/${id}/passkey`, { ceremony, credential: await assertion(publicKey, button) });
  await showInbox();
  say(`Confirmed request ${id} with the passkey of "${done.device}".`);
}

async function requestRefuse(button) {
  const done = await post(`/inbox/requests/${button.dataset.id}/refuse`, {});
  await showInbox();
  say(`Refused request ${done.id}.`);
}

async function inboxApprove(button) {
  const { id, digest } = button.dataset;
  const { ceremony, publicKey } = await post(`/inbox/${id}/challenge`, { decision: "approve", digest });
  const done = await post(`/inbox/${id}/passkey`, { ceremony, credential: await assertion(publicKey, button) });
  await showInbox();
  say(`Approved ${id} with the passkey of "${done.device}". The run is now ${done.result.status}.`);
}

async function inboxDeny(button) {
  const reason = button.closest(".card").querySelector("input.reason").value.trim();
  const done = await post(`/inbox/${button.dataset.id}/deny`, reason ? { reason } : {});
  await showInbox();
  say(`Denied ${button.dataset.id}. The run is now ${done.result.status}.`);
}

// A ceremony in progress keeps the inbox as it is; otherwise it follows
// what waits as it changes (the server's events), and every ten seconds.
let busy = 0;

document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-passkey]");
  if (!button) return;
  event.preventDefault();
  button.disabled = true;
  const run = {
    pair,
    approve,
    signin,
    "inbox-approve": inboxApprove,
    "inbox-deny": inboxDeny,
    "request-confirm": requestConfirm,
    "request-refuse": requestRefuse,
  };
  busy += 1;
  run[button.dataset.passkey](button)
    .catch((e) => {
      say(e.message);
      button.disabled = false;
    })
    .finally(() => {
      busy -= 1;
    });
});

if (document.getElementById("inbox")) {
  // A session still open (a reload) shows the inbox without a new sign-in.
  showInbox().then(follow, () => {});
}

let following = false;

function follow() {
  if (following) return;
  following = true;
  const refresh = () => {
    // Not while the person types a reason.
    const typing = document.activeElement && document.activeElement.matches("input");
    if (!busy && !typing) showInbox().catch(() => {});
  };
  new EventSource("/inbox/events").addEventListener("changed", refresh);
  setInterval(refresh, 10000);
}
