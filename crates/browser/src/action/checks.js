// Playwright's actionability checks, run on the element (`this`) in its own
// frame: `states` lists the ones the action needs, in order, among
// visible, enabled, editable, stable. Resolves to null when every check
// passes, else {fail, message, final?} for the first that does not; `fail`
// is `connected` when the element has left the document, and `final` marks
// a failure waiting cannot cure.
async function (states) {
  const el = this;
  if (!el.isConnected) return { fail: 'connected', message: 'the element is no longer in the document' };
  const parentOf = (n) => n.assignedSlot || n.parentElement || (n.parentNode && n.parentNode.host) || null;
  // A label acts for its control; text inside a button for the button.
  const control = () => {
    if (el.localName === 'label' && el.control) return el.control;
    if (['input', 'textarea', 'select'].includes(el.localName) || el.isContentEditable) return el;
    return el.closest('button, [role=button], [role=checkbox], [role=radio], [role=switch], [role=option], [role=menuitem], [role=tab]') || el;
  };
  const visible = (e) => {
    const style = getComputedStyle(e);
    if (style.display === 'contents') {
      for (let c = e.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 1 && visible(c)) return true;
        if (c.nodeType === 3 && c.data.trim()) {
          const range = document.createRange();
          range.selectNodeContents(c);
          const r = range.getBoundingClientRect();
          if (r.width > 0 && r.height > 0) return true;
        }
      }
      return false;
    }
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && style.visibility === 'visible';
  };
  const disabled = (e) => {
    if (['button', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset'].includes(e.localName) && e.matches(':disabled')) return true;
    for (let n = e; n; n = parentOf(n)) if (n.getAttribute && n.getAttribute('aria-disabled') === 'true') return true;
    return false;
  };
  const READONLY_ROLES = ['checkbox', 'combobox', 'grid', 'gridcell', 'listbox', 'radiogroup', 'slider', 'spinbutton', 'textbox'];
  const frame = () => new Promise((done) => requestAnimationFrame(() => done(true)));
  const rect = () => {
    const r = el.getBoundingClientRect();
    return [r.top, r.left, r.width, r.height].join(',');
  };
  for (const state of states) {
    if (state === 'visible') {
      if (!visible(el)) return { fail: 'visible', message: 'the element is not visible' };
    } else if (state === 'enabled') {
      if (disabled(control())) return { fail: 'enabled', message: 'the element is disabled' };
    } else if (state === 'editable') {
      const c = control();
      if (disabled(c)) return { fail: 'enabled', message: 'the element is disabled' };
      const role = (c.getAttribute('role') || '').trim();
      const native = ['input', 'textarea', 'select'].includes(c.localName);
      if (!native && !c.isContentEditable && !READONLY_ROLES.includes(role)) {
        return { fail: 'editable', final: true, message: 'the element is not an <input>, <textarea>, <select> or [contenteditable] and has no role that takes a value' };
      }
      if ((native && c.readOnly) || c.getAttribute('aria-readonly') === 'true') {
        return { fail: 'editable', message: 'the element is read-only' };
      }
    } else if (state === 'stable') {
      // The same box on two consecutive animation frames; a tab that draws
      // no frames within a second cannot be judged and counts as moving.
      const timeout = new Promise((done) => setTimeout(() => done(false), 1000));
      await Promise.race([frame(), timeout]);
      const first = rect();
      const drew = await Promise.race([frame(), timeout]);
      if (!el.isConnected) return { fail: 'connected', message: 'the element is no longer in the document' };
      if (!drew) return { fail: 'stable', message: 'the page draws no animation frames' };
      if (rect() !== first) return { fail: 'stable', message: 'the element is not stable (it is moving)' };
    }
  }
  return null;
}
