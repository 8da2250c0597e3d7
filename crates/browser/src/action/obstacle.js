// What covers the viewport point (x, y) of the top document, when it is a
// popup the watchdog may deal with: {kind: 'modal' | 'chat' | 'consent',
// …} with `root` the popup's outermost element and `control` what to
// press: a modal's close control ("Close", "No thanks", ×), or the
// next control to press in a cookie banner (see `decline`; never one that
// accepts or subscribes; none of the labels in `tried`, pressed already).
// Null for anything else: a page's own layout, an unknown overlay.
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
  // The next control to press in a consent banner's `root`, as
  // [{kind: 'consent', choice, label, name}, root, control]; null when
  // nothing there declines. `choice` is what pressing it does: `reject`,
  // `necessary` or `save` (with every optional purpose off) answer the
  // banner; `off` (a "disable all" among the purposes), `toggle` (one
  // optional purpose that is on) and `settings` (the way to the purposes,
  // where nothing else declines) are steps towards that. A control that
  // declines outright comes first; one among the purposes' switches only
  // turns them off.
  function decline(root) {
    const ACCEPT = /\b(accept|agree|allow|consent|ok|okay|got it|understand|yes|enable|select all|akzeptieren|zustimmen|accepter|aceptar|accetta)\b/i;
    const NEVER = /\b(subscribe|sign ?up|newsletter|register|join|buy|pay|order|log ?in)\b/i;
    const REJECT = /\b(reject|decline|deny|refuse|disagree|opt[ -]?out|do not (accept|agree|allow|consent)|don'?t (accept|agree|allow)|ablehnen|refuser|tout refuser|rechazar|rifiuta)\b/i;
    const NECESSARY = /\b(necessary|essential|required|strictly|technically|notwendige?n?|erforderliche?n?|nécessaires?|necesarias?|necessari)\b/i;
    const ONLY = /\b(only|just|nur|uniquement|solo)\b/i;
    const ALL = /\b(all|alle|tout|todo|tutti)\b/i;
    const SAVE = /\b(save|confirm|apply|speichern|enregistrer|guardar|salva)\b/i;
    // "Accept selection", "Allow my choices": saving, not accepting all.
    const SELECTION = /\b(selected|selection|choices?|auswahl|sélection|selección|selezione)\b/i;
    const OFF = /\b(disable|deselect|unselect|uncheck|turn off|switch off|deaktivieren|désactiver|desactivar|disattiva)\b/i;
    const SETTINGS = /\b(manage|customi[sz]e|settings|preferences|options|choose|einstellungen|anpassen|paramètres|personnaliser|configurar|preferenze|impostazioni)\b/i;
    // The text a control shows: a button in a web component's shadow root
    // shows its host's text through a <slot>, which innerText leaves out.
    const shownText = (n) => {
      const parts = [];
      const walk = (c) => {
        if (c.nodeType === 3) parts.push(c.data);
        if (c.nodeType !== 1 || c.localName === 'script' || c.localName === 'style') return;
        const assigned = c.localName === 'slot' ? c.assignedNodes({ flatten: true }) : [];
        for (const k of assigned.length ? assigned : (c.shadowRoot || c).childNodes) walk(k);
      };
      walk(n);
      return parts.join(' ');
    };
    const labelOf = (e) => (e.getAttribute('aria-label') || (e.innerText || '').trim() || shownText(e) || e.value || e.getAttribute('title') || '').replace(/\s+/g, ' ').trim();
    const controls = [], toggles = [];
    // Switches may sit inside a control (an accordion's heading button).
    each(root, (c) => {
      if (c.nodeType !== 1) return true;
      if (c.matches('input[type=checkbox], [role=switch], [role=checkbox]')) toggles.push(c);
      else if (c.matches(CONTROLS) && shown(c) && !controls.some((o) => o.contains(c))) controls.push(c);
      return true;
    });
    // What a toggle stands for, and what to press to flip it: its label
    // (which draws a styled switch over a hidden checkbox), else itself.
    const toggleLabel = (t) => (t.labels && t.labels[0]) || t.closest('label');
    const pressable = (t) => { const l = toggleLabel(t); return l && shown(l) ? l : shown(t) ? t : null; };
    const isOn = (t) => !(t.disabled || t.getAttribute('aria-disabled') === 'true') && (t.localName === 'input' ? t.checked : t.getAttribute('aria-checked') === 'true');
    const optionalOn = toggles.filter(isOn);
    const allOff = toggles.length > 0 && optionalOn.length === 0;
    // The purposes' switches: the closest element holding them all, when
    // the banner's buttons are not all in it too.
    const contains = (a, b) => { for (let e = b; e; e = parentOf(e)) if (e === a) return true; return false; };
    let group = null;
    if (toggles.length > 1) {
      group = toggles[0];
      while (group && !toggles.every((t) => contains(group, t))) group = parentOf(group);
      if (group && (group === root || controls.every((c) => contains(group, c)))) group = null;
    }
    const stepOf = (c) => {
      const label = labelOf(c);
      if (!label || label.length > 80 || NEVER.test(label) || tried.includes(label)) return null;
      const among = group !== null && contains(group, c);
      const rejects = REJECT.test(label);
      if (rejects || OFF.test(label)) {
        if (!among && (rejects || toggles.length === 0)) return 'reject';
        return optionalOn.length > 0 ? 'off' : null;
      }
      if (NECESSARY.test(label) && (ONLY.test(label) || !ALL.test(label))) return 'necessary';
      const selection = SELECTION.test(label);
      if ((SAVE.test(label) || selection) && !ALL.test(label) && (selection || !ACCEPT.test(label))) return allOff ? 'save' : null;
      if (ACCEPT.test(label) || ALL.test(label)) return null;
      // The way to the purposes: a button, never a link to another page.
      const inPage = c.localName !== 'a' || /^(#|javascript:)/i.test(c.getAttribute('href') || '');
      if (SETTINGS.test(label) && toggles.length === 0 && inPage) return 'settings';
      return null;
    };
    const RANK = ['reject', 'necessary', 'save', 'off', 'toggle', 'settings'];
    let best = null;
    for (const c of controls) {
      const choice = stepOf(c);
      if (!choice) continue;
      const rank = RANK.indexOf(choice);
      // Of two alike, the later: a banner's final buttons come last.
      if (!best || rank <= best.rank) best = { rank, choice, control: c, label: labelOf(c) };
    }
    // Each optional purpose still on is turned off one by one, when
    // nothing better declines.
    if (!best || best.rank > RANK.indexOf('toggle')) {
      for (const t of optionalOn) {
        const control = pressable(t);
        if (!control) continue;
        const l = toggleLabel(t);
        const label = (t.getAttribute('aria-label') || (l && labelOf(l)) || labelOf(t) || 'a switch').slice(0, 80);
        best = { rank: RANK.indexOf('toggle'), choice: 'toggle', control, label };
        break;
      }
    }
    if (!best) return null;
    // A button whose text its web component's host holds (a <slot>) is
    // pressed as the host: that is what the pointer meets there.
    const around = best.control.getRootNode();
    if (around && around.host && !(best.control.innerText || '').trim() && (around.host.innerText || '').trim()) best.control = around.host;
    const host = root.getRootNode() && root.getRootNode().host;
    const name = root.id || (host && host.localName) || (root.classList && root.classList[0]) || root.localName;
    return [{ kind: 'consent', choice: best.choice, label: best.label, name }, root, best.control];
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
