// Devices & tokens → Tokens: the named tokens (name, role, created,
// revoked), never a token itself, and Revoke. Follows the `devices` and
// `requests` events (an approver token is issued when a request is
// confirmed).
"use strict";

function tokenRow(t) {
  return el("tr", { class: `token${t.revokedAt ? " revoked" : ""}`, "data-token": t.name },
    el("td", {}, el("strong", {}, t.name)),
    el("td", {}, t.role),
    el("td", { class: "meta" }, t.revokedAt ? `revoked ${age(t.revokedAt)}` : `created ${age(t.createdAt)}`),
    el("td", {}, t.revokedAt ? null : el("button", { type: "button", class: "revoke-token",
      "aria-label": `Revoke token ${t.name}`, onclick: () => revokeToken(t.name) }, "Revoke")));
}

async function renderTokens() {
  try {
    const list = await call("tokens_list");
    document.getElementById("token-list").replaceChildren(...(list.length ? list.map(tokenRow)
      : [el("tr", {}, el("td", { class: "empty" }, "No named token."))]));
  } catch (e) {
    document.getElementById("status").textContent = errorText(e);
  }
}

async function revokeToken(name) {
  try {
    await call("tokens_revoke", { name });
    document.getElementById("status").textContent = `Revoked token ${name}.`;
  } catch (e) {
    document.getElementById("status").textContent = errorText(e);
  }
  await renderTokens();
}

on("requests", renderTokens);
renderTokens();
