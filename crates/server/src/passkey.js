// The pairing and link pages' passkey ceremonies: WebAuthn in the browser,
// checked by the server (webauthn-rs). A button with `data-passkey=pair`
// registers this device; one with `data-passkey=approve` approves the gate
// its page shows, as it was shown (`data-digest`).
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

async function approve(button) {
  const here = location.pathname;
  const { ceremony, publicKey } = await post(`${here}/challenge`, {
    decision: "approve",
    digest: button.dataset.digest,
  });
  publicKey.challenge = b64u.decode(publicKey.challenge);
  for (const c of publicKey.allowCredentials || []) c.id = b64u.decode(c.id);
  const signed = await navigator.credentials.get({ publicKey });
  const r = signed.response;
  const done = await post(`${here}/passkey`, {
    ceremony,
    credential: {
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
    },
  });
  say(`Approved with the passkey of "${done.device}". The run is now ${done.result.status}.`);
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-passkey]");
  if (!button) return;
  event.preventDefault();
  button.disabled = true;
  const ceremony = button.dataset.passkey === "pair" ? pair() : approve(button);
  ceremony.catch((e) => {
    say(e.message);
    button.disabled = false;
  });
});
