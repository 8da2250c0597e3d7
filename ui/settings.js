// The Settings window: edits <home>/settings.json through the app, which
// validates it (messages appear next to the field) and applies it live.
"use strict";

const form = document.getElementById("form");
const status = document.getElementById("status");
const checks = ["enabled", "headless", "attachOnly", "evaluateEnabled"];
const texts = ["controlUrl", "accentColor", "executablePath"];

function show(view) {
  const s = view.settings;
  for (const name of checks) form.elements[name].checked = !!s[name];
  for (const name of texts) form.elements[name].value = s[name] ?? "";
  form.elements.cdpPort.value = s.cdpPort;
  for (const slot of document.querySelectorAll(".issue")) {
    const issues = view.issues.filter((i) => i.field === slot.dataset.field);
    slot.replaceChildren(...issues.map((i) => el("div", { class: i.warning ? "warning" : "error" }, i.message)));
  }
  const errors = view.issues.filter((i) => !i.warning).length;
  status.textContent = view.saved ? "Saved." : errors ? "Not saved: fix the fields marked in red." : "";
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = form.elements;
  const payload = {
    enabled: f.enabled.checked,
    controlUrl: f.controlUrl.value,
    cdpPort: Number(f.cdpPort.value) || 0,
    accentColor: f.accentColor.value,
    headless: f.headless.checked,
    attachOnly: f.attachOnly.checked,
    executablePath: f.executablePath.value || null,
    evaluateEnabled: f.evaluateEnabled.checked,
  };
  try {
    const view = await call("settings_save", { form: payload });
    // Keep what the user typed when it was refused.
    if (!view.saved) view.settings = { ...view.settings, ...payload };
    show(view);
  } catch (e) {
    status.textContent = errorText(e);
  }
});

call("settings_get").then(show, (e) => (status.textContent = errorText(e)));
