// Finds the elements one selector strategy names, under `this` (a document,
// or an element whose subtree is the scope), piercing open shadow roots.
// Called with one strategy object: {type: css|text|label|testid|xpath, ...}.
// Returns {count, elements: [the first `s.limit` matches (default 50) in
// tree order]}; a malformed
// selector throws, and the caller reports it as a bad request.
function (s) {
  const norm = (t) => String(t == null ? '' : t).replace(/\s+/g, ' ').trim();
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'TITLE', 'META', 'LINK']);
  // Every element of the composed tree, shadow content before light children.
  const all = [];
  const roots = [];
  const visit = (root) => {
    roots.push(root);
    for (let c = root.firstElementChild; c; c = c.nextElementSibling) walk(c);
  };
  const walk = (el) => {
    all.push(el);
    if (el.shadowRoot) visit(el.shadowRoot);
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) walk(c);
  };
  if (this.nodeType === 9) visit(this); else walk(this);

  const textMatcher = (wanted, exact) => {
    const w = norm(wanted);
    if (exact) return (t) => norm(t) === w;
    const lower = w.toLowerCase();
    return (t) => norm(t).toLowerCase().includes(lower);
  };
  // An element's text as a reader sees it: its shadow tree when it has one,
  // button-like inputs by their value.
  const texts = new Map();
  const textOf = (el) => {
    if (texts.has(el)) return texts.get(el);
    let t = '';
    if (el.localName === 'input' && ['button', 'submit', 'reset'].includes(el.type)) t = el.value;
    else if (!SKIP.has(el.tagName)) {
      const parts = [];
      const from = el.shadowRoot || el;
      for (let c = from.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) parts.push(c.data);
        else if (c.nodeType === 1) {
          if (c.localName === 'slot') {
            for (const a of c.assignedNodes({ flatten: true })) parts.push(a.nodeType === 1 ? textOf(a) : a.textContent);
          } else parts.push(textOf(c));
        }
      }
      // Block children read as separate words.
      t = parts.join(' ');
    }
    texts.set(el, t);
    return t;
  };
  const labelText = (el) => {
    const ids = (el.getAttribute('aria-labelledby') || '').trim();
    if (ids) {
      const root = el.getRootNode();
      const text = ids.split(/\s+/).map((id) => {
        const target = root.getElementById ? root.getElementById(id) : document.getElementById(id);
        return target ? textOf(target) : '';
      }).join(' ');
      if (norm(text)) return [text];
    }
    const out = [];
    const aria = el.getAttribute('aria-label');
    if (aria && norm(aria)) out.push(aria);
    if (el.labels) for (const l of el.labels) out.push(textOf(l));
    return out;
  };

  let found;
  switch (s.type) {
    case 'css': {
      // Fails here, before any element is tested, on a malformed selector.
      document.createDocumentFragment().querySelector(s.selector);
      found = all.filter((el) => el.matches(s.selector));
      break;
    }
    case 'testid':
      found = all.filter((el) => el.getAttribute('data-testid') === String(s.id));
      break;
    case 'text': {
      const match = textMatcher(s.text, s.exact);
      const hits = new Set(all.filter((el) => !SKIP.has(el.tagName) && el.localName !== 'html' && match(textOf(el))));
      // The smallest elements holding the text: none of their children match.
      const holds = (el) => {
        const kids = el.shadowRoot ? [...el.shadowRoot.children, ...el.children] : [...el.children];
        return kids.some((k) => hits.has(k));
      };
      found = [...hits].filter((el) => !holds(el));
      break;
    }
    case 'label': {
      const match = textMatcher(s.text, s.exact);
      found = all.filter((el) => el.localName !== 'label' && labelText(el).some(match));
      break;
    }
    case 'xpath': {
      const seen = new Set();
      found = [];
      for (const root of roots) {
        const doc = root.nodeType === 9 ? root : root.ownerDocument;
        const r = doc.evaluate(s.expression, root, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
        for (let i = 0; i < r.snapshotLength; i++) {
          const n = r.snapshotItem(i);
          if (n.nodeType === 1 && !seen.has(n)) { seen.add(n); found.push(n); }
        }
      }
      break;
    }
    default:
      throw new Error('unknown selector type ' + s.type);
  }
  return { count: found.length, elements: found.slice(0, s.limit || 50) };
}
