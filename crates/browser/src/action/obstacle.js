// What covers the viewport point (x, y) of the top document, when it is a
// popup the watchdog may deal with: {kind: 'modal' | 'chat' | 'consent',
// …} with `root` the popup's outermost element and `control` what to
// press: a modal's close control ("Close", "No thanks", ×), or the
// control that declines a cookie banner (reject, decline, only the
// necessary purposes, or save with every optional purpose off; never one
// that accepts or subscribes; none of the labels in `tried`, pressed
// already without effect). Null for anything else: a page's own layout,
// an unknown overlay.
// Returns an array [info, root element, control element] so the caller
// can act on the elements with trusted input.
function (x, y, tried) {
  const deepest = (root) => {
    let e = root.elementFromPoint(x, y);
    while (e && e.shadowRoot) {
      const inner = e.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === e) break;
      e = inner;
    }
    return e;
  };
  const hit = deepest(document);
  if (!hit) return null;
  // The composed tree below n: open shadow roots, then light children.
  const each = (n, visit) => {
    if (n.shadowRoot) each(n.shadowRoot, visit);
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (visit(c) !== false && c.nodeType === 1) each(c, visit);
    }
  };
  const textOf = (n) => {
    const parts = [];
    each(n, (c) => {
      if (c.nodeType === 3) parts.push(c.data);
      return !(c.localName === 'script' || c.localName === 'style');
    });
    return parts.join(' ').replace(/\s+/g, ' ');
  };
  const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility === 'visible'; };
  const parentOf = (n) => n.parentElement || (n.getRootNode() && n.getRootNode().host) || null;
  const CONTROLS = 'button, a[href], [role=button], input[type=button], input[type=submit]';
  const WORDS = /(cookie|consent|gdpr|privacy|tracking|datenschutz|données personnelles)/i;
  // The control of a consent banner's `root` that declines, as
  // [{kind: 'consent', choice, label, name}, root, control]; null when none
  // says so plainly.
  function decline(root) {
    const ACCEPT = /\b(accept|agree|allow|consent|ok|okay|got it|understand|yes|enable|select all|akzeptieren|zustimmen|accepter|aceptar|accetta)\b/i;
    const NEVER = /\b(subscribe|sign ?up|newsletter|register|join|buy|pay|order|log ?in)\b/i;
    const REJECT = /\b(reject|decline|deny|refuse|disagree|opt[ -]?out|do not (accept|agree|allow|consent)|don'?t (accept|agree|allow)|ablehnen|refuser|tout refuser|rechazar|rifiuta)\b/i;
    const NECESSARY = /\b(necessary|essential|required|strictly|technically|notwendige?n?|erforderliche?n?|nécessaires?|necesarias?|necessari)\b/i;
    const ONLY = /\b(only|just|nur|uniquement|solo)\b/i;
    const ALL = /\b(all|alle|tout|todo|tutti)\b/i;
    const SAVE = /\b(save|confirm|apply|speichern|enregistrer|guardar)\b/i;
    const labelOf = (e) => (e.getAttribute('aria-label') || e.innerText || e.value || e.getAttribute('title') || '').replace(/\s+/g, ' ').trim();
    const controls = [], toggles = [];
    each(root, (c) => {
      if (c.nodeType !== 1) return true;
      if (c.matches(CONTROLS)) { if (shown(c)) controls.push(c); return false; }
      if (c.matches('input[type=checkbox], [role=switch], [role=checkbox]')) toggles.push(c);
      return true;
    });
    const choiceOf = (label) => {
      if (!label || label.length > 80 || NEVER.test(label)) return null;
      if (REJECT.test(label)) return 'reject';
      if (NECESSARY.test(label) && (ONLY.test(label) || !ALL.test(label))) return 'necessary';
      if (SAVE.test(label) && !ACCEPT.test(label) && !ALL.test(label)) return 'save';
      return null;
    };
    // Saving declines only when every optional purpose is off.
    const off = (t) => t.disabled || t.getAttribute('aria-disabled') === 'true' || (t.localName === 'input' ? !t.checked : t.getAttribute('aria-checked') !== 'true');
    const saves = toggles.length > 0 && toggles.every(off);
    let best = null;
    for (const c of controls) {
      if (tried.includes(labelOf(c))) continue;
      const choice = choiceOf(labelOf(c));
      if (!choice || (choice === 'save' && !saves)) continue;
      const rank = ['reject', 'necessary', 'save'].indexOf(choice);
      if (!best || rank < best.rank) best = { rank, choice, control: c };
    }
    if (!best) return null;
    const host = root.getRootNode() && root.getRootNode().host;
    const name = root.id || (host && host.localName) || (root.classList && root.classList[0]) || root.localName;
    return [{ kind: 'consent', choice: best.choice, label: labelOf(best.control), name }, root, best.control];
  }
  const attrs = (e) => [e.id, e.getAttribute('class'), e.getAttribute('title'), e.getAttribute('aria-label'), e.getAttribute('name'), e.localName === 'iframe' ? e.getAttribute('src') : ''].join(' ');
  const CHAT = /(^|[\s_-])(chat|livechat|intercom|drift|crisp|zendesk|zopim|tawk|olark|freshchat|tidio|hubspot-messages|messenger)([\s_-]|$)/i;
  const MODAL = /(^|[\s_-])(modal|popup|pop-up|newsletter|subscribe|signup|lightbox|interstitial|exit-intent)([\s_-]|$)/i;
  const CONSENT = /(cookie|consent|gdpr|cmp|privacy)/i;
  const fixed = (e) => { const p = getComputedStyle(e).position; return p === 'fixed' || p === 'sticky'; };
  let chat = null, modal = null, consent = false, top = null;
  for (let e = hit; e && e !== document.body && e !== document.documentElement; e = parentOf(e)) {
    const text = attrs(e);
    if (CONSENT.test(text)) consent = true;
    if (fixed(e)) top = e;
    if (!chat && CHAT.test(text) && (fixed(e) || e.localName === 'iframe')) chat = e;
    const dialog = e.getAttribute('role') === 'dialog' || e.getAttribute('role') === 'alertdialog' || e.getAttribute('aria-modal') === 'true' || (e.localName === 'dialog' && e.open);
    if (dialog || (MODAL.test(text) && fixed(e))) modal = e;
  }
  // A cookie banner: its outermost fixed layer (else its dialog); a layer
  // with no controls (a backdrop beside its banner) stands for the
  // container that holds both.
  let layer = top || modal;
  const controlsIn = (n) => { let any = false; each(n, (c) => { if (c.nodeType === 1 && c.matches(CONTROLS) && shown(c)) any = true; return !any; }); return any; };
  while (layer && !controlsIn(layer)) {
    const up = parentOf(layer);
    if (!up || up === document.body || up === document.documentElement) break;
    layer = up;
  }
  if (layer && (consent || WORDS.test(textOf(layer)))) {
    const found = decline(layer);
    if (found) return found;
    // A banner that names itself consent is left to the rules, or covered.
    if (consent) return null;
  }
  // A chat launcher inside a fixed container: hide the outermost fixed one.
  if (chat) {
    for (let e = chat; e && e !== document.body; e = parentOf(e)) if (fixed(e)) chat = e;
    return [{ kind: 'chat' }, chat, null];
  }
  if (!modal) return null;
  // The outermost fixed ancestor is the whole popup (its backdrop included).
  let root = modal;
  for (let e = modal; e && e !== document.body; e = parentOf(e)) if (fixed(e)) root = e;
  const CLOSE = /^(close|dismiss|no,? thanks|no thank you|not now|maybe later|skip|×|✕|✖|x)$/i;
  const label = (e) => (e.getAttribute('aria-label') || e.getAttribute('title') || e.textContent || '').replace(/\s+/g, ' ').trim();
  const candidates = [];
  const walk = (n) => {
    for (let c = n.firstElementChild; c; c = c.nextElementSibling) {
      if (c.matches('button, a, [role=button], input[type=button], input[type=submit]')) candidates.push(c);
      if (c.shadowRoot) walk(c.shadowRoot);
      walk(c);
    }
  };
  walk(root);
  const close = candidates.find((c) => CLOSE.test(label(c)) || /(^|[\s_-])close([\s_-]|$)/i.test(c.getAttribute('class') || ''));
  const dialog = modal.getAttribute('role') === 'dialog' || modal.getAttribute('role') === 'alertdialog' || modal.getAttribute('aria-modal') === 'true' || modal.localName === 'dialog';
  return [{ kind: 'modal', dialog }, root, close || null];
}
