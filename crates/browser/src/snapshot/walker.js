// The in-page half of the `ai` snapshot: walks the rendered DOM (open shadow
// roots and same-origin iframes included) and returns its semantic tree as
// JSON. Roles follow HTML-AAM, names a compact reading of accname 1.2.
// Runs in an isolated world: elements that get refs are numbered in a
// registry kept there (an element keeps its number for the document's
// life) and looked up by that number when an action names them.
(opts) => {
  const refRoles = new Set(opts.refRoles);
  const nodes = [];
  const registry = globalThis.__clawdRefs || (globalThis.__clawdRefs = { next: 0, ids: new WeakMap(), elements: new Map() });
  for (const [id, ref] of registry.elements) if (!ref.deref()) registry.elements.delete(id);
  const refOf = (el) => {
    let id = registry.ids.get(el);
    if (!id) {
      id = ++registry.next;
      registry.ids.set(el, id);
      registry.elements.set(id, new WeakRef(el));
    }
    return id;
  };
  // Frames whose document this world cannot reach: [node index, element ref].
  const foreign = [];
  const norm = (s) => String(s || '').replace(/\s+/g, ' ').trim();
  const INLINE = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'dfn', 'em', 'i', 'kbd', 'label', 'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var']);
  const SKIP = new Set(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'br', 'wbr', 'datalist']);
  const FROM_CONTENT = new Set(['button', 'link', 'heading', 'cell', 'gridcell', 'columnheader', 'rowheader', 'row', 'option', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'checkbox', 'radio', 'switch', 'tooltip']);
  const LABELABLE = new Set(['input', 'textarea', 'select', 'button', 'meter', 'output', 'progress']);
  const LANDMARK_SCOPE = 'article, aside, main, nav, section';

  const implicitRole = (el, tag) => {
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'textbox';
    switch (tag) {
      case 'a': case 'area': return el.hasAttribute('href') ? 'link' : 'generic';
      case 'button': case 'summary': return 'button';
      case 'input': {
        const type = el.type;
        if (type === 'hidden') return null;
        if (['button', 'submit', 'reset', 'image', 'file', 'color'].includes(type)) return 'button';
        if (type === 'checkbox' || type === 'radio') return type;
        if (type === 'range') return 'slider';
        if (type === 'number') return 'spinbutton';
        if (el.list) return 'combobox';
        return type === 'search' ? 'searchbox' : 'textbox';
      }
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'option': return 'option';
      case 'optgroup': case 'fieldset': case 'details': case 'hgroup': case 'address': return 'group';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'img': return el.getAttribute('alt') === '' && !el.hasAttribute('aria-label') && !el.hasAttribute('title') ? 'none' : 'image';
      case 'svg': return el.hasAttribute('aria-label') || el.querySelector(':scope > title') ? 'image' : 'none';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'aside': return 'complementary';
      case 'article': return 'article';
      case 'form': return 'form';
      case 'search': return 'search';
      case 'header': return el.closest(LANDMARK_SCOPE) ? 'generic' : 'banner';
      case 'footer': return el.closest(LANDMARK_SCOPE) ? 'generic' : 'contentinfo';
      case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : 'generic';
      case 'ul': case 'ol': case 'menu': case 'dl': return 'list';
      case 'li': return 'listitem';
      case 'dt': return 'term';
      case 'dd': return 'definition';
      case 'table': return 'table';
      case 'tr': return 'row';
      case 'td': return 'cell';
      case 'th': return el.scope === 'row' ? 'rowheader' : 'columnheader';
      case 'thead': case 'tbody': case 'tfoot': return 'rowgroup';
      case 'caption': case 'figcaption': return 'caption';
      case 'p': return 'paragraph';
      case 'blockquote': return 'blockquote';
      case 'figure': return 'figure';
      case 'hr': return 'separator';
      case 'dialog': return 'dialog';
      case 'label': return 'LabelText';
      case 'legend': return 'Legend';
      case 'output': return 'status';
      case 'progress': return 'progressbar';
      case 'meter': return 'meter';
      case 'iframe': case 'frame': return 'Iframe';
      case 'em': return 'emphasis';
      case 'strong': return 'strong';
      case 'code': return 'code';
      case 'math': return 'math';
      default: return 'generic';
    }
  };

  const ARIA_ROLES = new Set(('alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox '
    + 'complementary contentinfo definition deletion dialog directory document emphasis feed figure form generic grid gridcell group heading img '
    + 'insertion link list listbox listitem log main marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation none note '
    + 'option paragraph presentation progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider '
    + 'spinbutton status strong subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem').split(' '));

  const roleOf = (el, tag) => {
    // The first role token that is a real role wins; none means the element's own.
    const explicit = (el.getAttribute('role') || '').trim().toLowerCase().split(/\s+/).find((r) => ARIA_ROLES.has(r));
    if (!explicit) return implicitRole(el, tag);
    if (explicit === 'img') return 'image';
    // A presentational role is ignored on something focusable.
    if ((explicit === 'none' || explicit === 'presentation') && el.tabIndex >= 0) return implicitRole(el, tag);
    return explicit === 'presentation' ? 'none' : explicit;
  };

  // The text an element contributes to another element's name.
  const contribution = (el, skip) => {
    if (el === skip || el.getAttribute('aria-hidden') === 'true') return '';
    if (!el.checkVisibility() && getComputedStyle(el).display !== 'contents') return '';
    const label = el.getAttribute('aria-label');
    if (label && label.trim()) return label;
    const tag = el.localName;
    if (tag === 'input' || tag === 'textarea') {
      if (['button', 'submit', 'reset'].includes(el.type)) return el.value;
      return ['checkbox', 'radio', 'file', 'image', 'hidden', 'password'].includes(el.type) ? '' : el.value;
    }
    if (tag === 'select') return Array.from(el.selectedOptions, (o) => o.text).join(' ');
    if (tag === 'img' || tag === 'area') return el.getAttribute('alt') || '';
    if (SKIP.has(tag)) return tag === 'br' ? ' ' : '';
    return content(el, skip);
  };

  const childrenOf = (el) => {
    if (el.shadowRoot) return el.shadowRoot.childNodes;
    if (el.localName === 'slot') {
      const assigned = el.assignedNodes({ flatten: true });
      if (assigned.length) return assigned;
    }
    return el.childNodes;
  };

  const content = (el, skip) => {
    let out = '';
    for (const c of childrenOf(el)) {
      if (c.nodeType === 3) out += c.data;
      else if (c.nodeType === 1) {
        const text = contribution(c, skip);
        out += INLINE.has(c.localName) ? text : ' ' + text + ' ';
      }
    }
    return out;
  };

  const byIds = (el, attr) => {
    const ids = (el.getAttribute(attr) || '').trim();
    if (!ids) return '';
    const root = el.getRootNode();
    return norm(ids.split(/\s+/).map((id) => {
      const target = root.getElementById ? root.getElementById(id) : el.ownerDocument.getElementById(id);
      if (!target) return '';
      return norm(target.getAttribute('aria-label')) || norm(content(target, el));
    }).join(' '));
  };

  const nameOf = (el, tag, role) => {
    const labelled = byIds(el, 'aria-labelledby');
    if (labelled) return labelled;
    const label = norm(el.getAttribute('aria-label'));
    if (label) return label;
    if (tag === 'input' && ['button', 'submit', 'reset'].includes(el.type)) {
      return norm(el.value) || (el.type === 'submit' ? 'Submit' : el.type === 'reset' ? 'Reset' : '');
    }
    if (tag === 'input' && el.type === 'image') return norm(el.alt || el.value) || 'Submit';
    if (LABELABLE.has(tag) && el.labels && el.labels.length) {
      const text = norm(Array.from(el.labels, (l) => content(l, el)).join(' '));
      if (text) return text;
    }
    if (tag === 'img' || tag === 'area') return norm(el.getAttribute('alt') || el.getAttribute('title'));
    if (tag === 'svg') {
      const title = el.querySelector(':scope > title');
      return norm(title && title.textContent);
    }
    if (tag === 'fieldset') {
      const legend = el.querySelector(':scope > legend');
      if (legend) return norm(content(legend, null));
    }
    if (tag === 'table' && el.caption) return norm(content(el.caption, null));
    if (tag === 'figure') {
      const caption = el.querySelector(':scope > figcaption');
      if (caption) return norm(content(caption, null));
    }
    if (tag === 'option' || tag === 'optgroup') return norm(el.label);
    if (FROM_CONTENT.has(role) && tag !== 'select') {
      const text = norm(content(el, null));
      if (text) return text;
    }
    if (tag === 'input' && el.type === 'file') return norm(el.title) || 'Choose File';
    return norm(el.getAttribute('title') || el.getAttribute('placeholder'));
  };

  const valueOf = (el, tag, role) => {
    if (tag === 'select') return role === 'combobox' ? norm(el.selectedOptions[0] && el.selectedOptions[0].text) : '';
    if (tag === 'textarea') return el.value;
    if (tag === 'input' && ['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider'].includes(role)) {
      return el.type === 'password' ? '•'.repeat(el.value.length) : el.value;
    }
    return '';
  };

  const statesOf = (el, tag, role) => {
    const p = {};
    const attr = (name) => el.getAttribute(name);
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      p.checked = el.indeterminate ? 'mixed' : String(el.checked);
    } else if (attr('aria-checked') !== null) {
      p.checked = attr('aria-checked');
    }
    if (attr('aria-pressed') !== null) p.pressed = attr('aria-pressed');
    if (attr('aria-disabled') === 'true' || (LABELABLE.has(tag) || tag === 'option' || tag === 'fieldset') && el.matches(':disabled')) p.disabled = true;
    if (attr('aria-expanded') === 'true' || tag === 'summary' && el.parentElement && el.parentElement.open) p.expanded = true;
    if (attr('aria-selected') === 'true' || tag === 'option' && el.selected) p.selected = true;
    if (el === el.ownerDocument.activeElement && el !== el.ownerDocument.body) p.focused = true;
    if (attr('aria-required') === 'true' || el.required) p.required = true;
    const level = Number(attr('aria-level')) || (role === 'heading' && /^h[1-6]$/.test(tag) ? Number(tag[1]) : 0);
    if (level) p.level = level;
    if (role === 'link' && el.href) p.url = String(el.href);
    return p;
  };

  const push = (node, parent) => {
    const index = nodes.push(node) - 1;
    if (parent >= 0) (nodes[parent].c || (nodes[parent].c = [])).push(index);
    return index;
  };

  // Adds the node for an element that is shown.
  const emit = (el, tag, role, parent) => {
    const node = { r: role, n: nameOf(el, tag, role) };
    const value = valueOf(el, tag, role);
    if (value) node.v = value;
    const states = statesOf(el, tag, role);
    if (Object.keys(states).length) node.p = states;
    if (refRoles.has(role)) node.e = refOf(el);
    push(node, parent);
    return node;
  };

  // `visible`: text here is shown (CSS visibility); `quiet`: an ancestor's
  // name already holds the text here, so it is not repeated.
  const walkChildren = (list, parent, visible, quiet) => {
    for (const c of list) walk(c, parent, visible, quiet);
  };

  const walk = (n, parent, visible, quiet) => {
    if (n.nodeType === 3) {
      const text = norm(n.data);
      if (text && visible && !quiet) push({ r: 'StaticText', n: text }, parent);
      return;
    }
    if (n.nodeType !== 1) return;
    const el = n;
    const tag = el.localName;
    if (SKIP.has(tag) || el.getAttribute('aria-hidden') === 'true' || el.inert) return;
    const style = getComputedStyle(el);
    if (style.display === 'contents') {
      walkChildren(childrenOf(el), parent, visible, quiet);
      return;
    }
    if (!el.checkVisibility()) return;
    const role = roleOf(el, tag);
    if (role === null) return;
    if (style.visibility !== 'visible') {
      walkChildren(childrenOf(el), parent, false, quiet);
      return;
    }
    const node = emit(el, tag, role, parent);
    const index = nodes.length - 1;
    if (tag === 'select') {
      // Options have no box while the list is closed; they are listed anyway.
      for (const o of el.children) {
        if (o.hidden) continue;
        if (o.localName === 'option') emit(o, 'option', 'option', index);
        else if (o.localName === 'optgroup') {
          const group = push({ r: 'group', n: norm(o.label) }, index);
          for (const g of o.children) if (g.localName === 'option' && !g.hidden) emit(g, 'option', 'option', group);
        }
      }
      return;
    }
    if (tag === 'option') return;
    if (tag === 'iframe' || tag === 'frame') {
      let doc = null;
      try {
        doc = el.contentDocument;
      } catch (_) {
        doc = null;
      }
      if (doc && doc.documentElement) walk(doc.body || doc.documentElement, index, true, false);
      else {
        if (node.e === undefined) node.e = refOf(el);
        foreign.push([index, node.e]);
      }
      return;
    }
    if (role === 'image' || tag === 'svg' || tag === 'textarea' || tag === 'input') return;
    const named = node.n && FROM_CONTENT.has(role) && !el.hasAttribute('aria-label') && !el.hasAttribute('aria-labelledby');
    walkChildren(childrenOf(el), index, true, quiet || Boolean(named));
  };

  let start = document.body || document.documentElement;
  if (opts.selector) {
    start = document.querySelector(opts.selector);
    if (!start) return null;
  }
  const root = push({ r: 'RootWebArea', n: norm(document.title) }, -1);
  if (start) walk(start, root, true, false);
  return JSON.stringify({ nodes, foreign });
}
