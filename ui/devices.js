// Devices & tokens → Devices: the paired devices, Revoke, and Pair (a one-time link
// to open on the device, valid 10 minutes). Pairing here needs no other
// confirmation: the person is at the app.
"use strict";

const deviceList = document.getElementById("device-list");
const pairing = document.getElementById("pairing");

function deviceRow(d) {
  const state = d.revokedAt ? `revoked ${age(d.revokedAt)}` : `paired ${age(d.createdAt)}`
    + (d.lastUsedAt ? `, last used ${age(d.lastUsedAt)}` : "");
  return el("div", { class: "card device", "data-device": d.name },
    el("strong", {}, d.name), el("div", { class: "meta" }, `${state} · ${d.rpId}`),
    d.revokedAt ? null : el("div", { class: "actions" },
      el("button", { class: "revoke", "aria-label": `Revoke ${d.name}`, onclick: () => revoke(d.name) }, "Revoke")));
}

async function renderDevices(list) {
  if (!list) {
    try {
      list = await call("devices_list");
    } catch (e) {
      pairing.textContent = errorText(e);
      return;
    }
  }
  deviceList.replaceChildren(...(list.length ? list.map(deviceRow) : [el("div", { class: "empty" }, "No device is paired.")]));
}

async function revoke(name) {
  try {
    await call("devices_revoke", { name });
    pairing.textContent = `Revoked ${name}.`;
  } catch (e) {
    pairing.textContent = errorText(e);
  }
  await renderDevices();
}

document.getElementById("pair-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = event.target.elements.name.value.trim();
  try {
    const link = await call("devices_pair", { name });
    // The QR code is an SVG the app made from the link; parsed as SVG, never as HTML.
    const qr = link.qrSvg
      ? new DOMParser().parseFromString(link.qrSvg, "image/svg+xml").documentElement
      : null;
    if (qr) {
      qr.setAttribute("role", "img");
      qr.setAttribute("aria-label", "QR code of the pairing link");
      qr.classList.add("pairing-qr");
    }
    pairing.replaceChildren(
      el("div", {}, `Open this link on the device within 10 minutes (until ${link.expiresAt}), or scan the code; it works once:`),
      ...(qr ? [qr] : []),
      el("pre", { class: "pairing-url" }, link.url));
  } catch (e) {
    pairing.textContent = errorText(e);
  }
});

on("devices", (event) => renderDevices(event.payload));
renderDevices();
