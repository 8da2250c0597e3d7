// The body of `function (types)`, with `describe` (../describe.js) in
// scope. Installed on the element (`this`) just before trusted input is
// sent: a capture listener on its window checks every trusted event of
// `types` as it arrives, before any page handler sees it. An event reaches
// the element when its path holds the element, or, once the page replaced
// the element (a re-render between the press and the click), an element
// equivalent to it: the same role, the same name, in a row that reads the
// same. The first event of a type that would reach anything else is
// stopped, with
// every later one, so nothing but the element is ever clicked. Returns
// nothing; `read` (below) removes the listener and reports {seen, reached,
// pressed, replaced, hit}: `pressed` when an event before the stopped one
// reached the element (the page saw a press, never a click).
const target = this.closest('button, [role=button], a, [role=link]') || this;
const self = this;
const win = this.ownerDocument.defaultView;
const words = (text) => (text || '').replace(/\s+/g, ' ').trim();
const role = (el) => el.getAttribute('role') || el.localName;
const name = (el) =>
  words(el.getAttribute('aria-label') || el.innerText || el.textContent || el.value || el.getAttribute('title'));
// The text of the nearest ancestor that says more than the element itself:
// its row, item or card.
const row = (el) => {
  const own = words(el.textContent);
  for (let p = el.parentElement; p; p = p.parentElement) {
    const text = words(p.textContent);
    if (text !== own) return text;
  }
  return '';
};
const signature = (el) => role(el) + '\u0000' + name(el) + '\u0000' + row(el);
const meant = signature(target);
const equivalent = (path) =>
  path.some(
    (n) => n.nodeType === 1 && n !== target && role(n) === role(target) && signature(n) === meant,
  );
const state = { seen: false, reached: true, pressed: false, replaced: false, hit: null };
// The first event of each type is the user's; a later one of a type seen
// (the click a label forwards to its control) follows from it.
const checked = new Set();
const listener = (e) => {
  if (!e.isTrusted) return;
  if (state.reached && !checked.has(e.type)) {
    checked.add(e.type);
    const path = e.composedPath();
    let here = path.includes(target) || path.includes(self);
    if (!here && !target.isConnected && equivalent(path)) {
      here = true;
      state.replaced = true;
    }
    if (here) {
      state.pressed = true;
    } else {
      state.reached = false;
      state.hit = describe(path[0]);
    }
    state.seen = true;
  }
  if (!state.reached) {
    e.preventDefault();
    e.stopImmediatePropagation();
  }
};
for (const t of types) win.addEventListener(t, listener, { capture: true });
const key = Symbol.for('clawd.intercept');
win[key] = () => {
  for (const t of types) win.removeEventListener(t, listener, { capture: true });
  delete win[key];
  return state;
};
