// The pairing, link and inbox pages' passkey ceremonies: WebAuthn in the
// browser, checked by the server (webauthn-rs). A button's `data-passkey`
// says which: `pair` registers this device; `approve` approves the gate a
// link's page shows, as it was shown (`data-digest`); `signin` opens the
// inbox, whose `inbox-approve` and `inbox-deny` decide what waits.
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

async function pair() {
  const here = location.pathname;
  const { publicKey } = await post(`${here}/options`, {});
  publicKey.challenge = b64u.decode(publicKey.challenge);
  publicKey.user.id = b64u.decode(publicKey.user.id);
  for (const c of publicKey.excludeCredentials || []) c.id = b64u.decode(c.id);
  const made = await navigator.credentials.create({ publicKey });
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

/** Asks the device to sign `publicKey`'s challenge; the assertion as the
 * server reads it. */
async function assertion(publicKey) {
  publicKey.challenge = b64u.decode(publicKey.challenge);
  for (const c of publicKey.allowCredentials || []) c.id = b64u.decode(c.id);
  const signed = await navigator.credentials.get({ publicKey });
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
  const done = await post(`${here}/passkey`, { ceremony, credential: await assertion(publicKey) });
  say(`Approved with the passkey of "${done.device}". The run is now ${done.result.status}.`);
}

// The inbox: sign in with the passkey, then list what waits; each approval
// takes an assertion of its own, a denial the signed-in device only.
async function signin() {
  const { ceremony, publicKey } = await post("/inbox/signin/challenge", {});
  const done = await post("/inbox/signin", { ceremony, credential: await assertion(publicKey) });
  await showInbox();
  say(`Signed in as "${done.device}".`);
}

async function showInbox() {
  const response = await fetch("/inbox/approvals");
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || response.statusText);
  const list = document.getElementById("inbox");
  list.replaceChildren();
  if (!answer.approvals.length) list.textContent = "Nothing waits for you.";
  for (const a of answer.approvals) {
    const card = document.createElement("div");
    card.className = "card";
    card.dataset.id = a.id;
    const title = document.createElement("h2");
    title.textContent = a.prompt;
    const meta = document.createElement("p");
    meta.className = "wf";
    meta.textContent = `${a.workflow || "pipeline"} · ${a.itemCount} item${a.itemCount === 1 ? "" : "s"} · id ${a.id}`;
    const items = document.createElement("pre");
    items.textContent = a.items.map((i) => JSON.stringify(i)).join("\n");
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
    card.append(title, meta, a.items.length ? items : "", approve, " ", deny);
    list.append(card);
  }
}

async function inboxApprove(button) {
  const { id, digest } = button.dataset;
  const { ceremony, publicKey } = await post(`/inbox/${id}/challenge`, { decision: "approve", digest });
  const done = await post(`/inbox/${id}/passkey`, { ceremony, credential: await assertion(publicKey) });
  await showInbox();
  say(`Approved ${id} with the passkey of "${done.device}". The run is now ${done.result.status}.`);
}

async function inboxDeny(button) {
  const done = await post(`/inbox/${button.dataset.id}/deny`, {});
  await showInbox();
  say(`Denied ${button.dataset.id}. The run is now ${done.result.status}.`);
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-passkey]");
  if (!button) return;
  event.preventDefault();
  button.disabled = true;
  const run = { pair, approve, signin, "inbox-approve": inboxApprove, "inbox-deny": inboxDeny };
  const ceremony = run[button.dataset.passkey](button);
  ceremony.catch((e) => {
    say(e.message);
    button.disabled = false;
  });
});
