// What covers the viewport point (x, y) of the top document, when it is a
// popup the watchdog may deal with: {kind: 'modal' | 'chat', root, close?}
// with `root` the popup's outermost element and `close` its close control
// (a modal's "Close", "No thanks", ×). Null for anything else: a cookie
// banner (declined elsewhere), a page's own layout, an unknown overlay.
// Returns an array [info, root element, close element] so the caller can
// act on the elements with trusted input.
function (x, y) {
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
  const parentOf = (n) => n.parentElement || (n.getRootNode() && n.getRootNode().host) || null;
  const attrs = (e) => [e.id, e.getAttribute('class'), e.getAttribute('title'), e.getAttribute('aria-label'), e.getAttribute('name'), e.localName === 'iframe' ? e.getAttribute('src') : ''].join(' ');
  const CHAT = /(^|[\s_-])(chat|livechat|intercom|drift|crisp|zendesk|zopim|tawk|olark|freshchat|tidio|hubspot-messages|messenger)([\s_-]|$)/i;
  const MODAL = /(^|[\s_-])(modal|popup|pop-up|newsletter|subscribe|signup|lightbox|interstitial|exit-intent)([\s_-]|$)/i;
  const CONSENT = /(cookie|consent|gdpr|cmp|privacy)/i;
  const fixed = (e) => { const p = getComputedStyle(e).position; return p === 'fixed' || p === 'sticky'; };
  let chat = null, modal = null;
  for (let e = hit; e && e !== document.body && e !== document.documentElement; e = parentOf(e)) {
    const text = attrs(e);
    if (CONSENT.test(text)) return null;
    if (!chat && CHAT.test(text) && (fixed(e) || e.localName === 'iframe')) chat = e;
    const dialog = e.getAttribute('role') === 'dialog' || e.getAttribute('role') === 'alertdialog' || e.getAttribute('aria-modal') === 'true' || (e.localName === 'dialog' && e.open);
    if (dialog || (MODAL.test(text) && fixed(e))) modal = e;
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
