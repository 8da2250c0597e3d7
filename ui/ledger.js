// The Ledger window: the audit entries, newest first, and whether the
// whole hash chain holds (`ledger_list` recomputes it each time). Follows
// the `approvals`, `runs`, `devices` and `requests` events, which are
// what add entries.
"use strict";

async function render() {
  let ledger;
  try {
    ledger = await call("ledger_list");
  } catch (e) {
    document.getElementById("status").textContent = errorText(e);
    return;
  }
  const v = ledger.verify;
  const verdict = document.getElementById("verify");
  verdict.className = v.holds ? "holds" : "broken";
  verdict.textContent = v.holds
    ? `The ledger holds: ${v.entries} entr${v.entries === 1 ? "y" : "ies"}, head ${v.head.slice(0, 16)}…`
    : `The ledger is broken at entry ${v.seq}: ${v.why}`;
  document.getElementById("entries").replaceChildren(...ledger.entries.map((e) =>
    el("tr", { "data-seq": e.seq },
      el("td", {}, String(e.seq)),
      el("td", { class: "meta" }, age(e.at)),
      el("td", {}, e.kind),
      el("td", {}, e.subject),
      el("td", {}, e.by || ""),
      el("td", {}, e.via || ""),
      el("td", {}, e.presence || ""))));
}

for (const event of ["approvals", "runs", "devices", "requests"]) on(event, render);
render();
