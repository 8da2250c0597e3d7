// The body of `function (types)`, with `describe` (../describe.js) in
// scope. Installed on the element (`this`) just before trusted input is sent: a
// capture listener on its window checks the first trusted event of `types`
// and, when it would reach something other than the element (a layout
// shift between the hit test and the input), stops it and every later one
// before any page handler sees them. Returns nothing; `read` (below) removes
// the listener and reports {seen, reached, hit}.
const target = this.closest('button, [role=button], a, [role=link]') || this;
const self = this;
const win = this.ownerDocument.defaultView;
const state = { seen: false, reached: true, hit: null };
const listener = (e) => {
  if (!e.isTrusted) return;
  if (!state.seen) {
    state.seen = true;
    const path = e.composedPath();
    state.reached = path.includes(target) || path.includes(self);
    if (!state.reached) state.hit = describe(path[0]);
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
