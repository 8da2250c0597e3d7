// Called on a cookie banner's root once a control in it was pressed:
// resolves 'gone' when the banner went away, 'changed' once it changed
// and then stayed still (no mutation, input or running animation for a
// moment), or 'same' when nothing happened within `limit` ms.
function (limit) {
  const root = this;
  const shown = () => {
    if (!root.isConnected) return false;
    const r = root.getBoundingClientRect();
    const s = getComputedStyle(root);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' && s.opacity !== '0';
  };
  // The banner's own tree (its shadow roots too) and the elements it
  // hangs from, whose removal or hiding removes it.
  const parentOf = (n) => n.parentElement || (n.getRootNode() && n.getRootNode().host) || null;
  const trees = [root];
  const deep = (n) => {
    if (n.shadowRoot) { trees.push(n.shadowRoot); deep(n.shadowRoot); }
    for (let c = n.firstElementChild; c; c = c.nextElementSibling) deep(c);
  };
  deep(root);
  const above = [];
  for (let e = parentOf(root); e; e = parentOf(e)) above.push(e);
  const inBanner = (t) => { for (let e = t; e; e = parentOf(e)) if (e === root) return true; return above.includes(t); };
  const running = () => document.getAnimations().filter((a) => a.playState === 'running' && a.effect && a.effect.target
    && inBanner(a.effect.target) && a.effect.getComputedTiming().endTime !== Infinity);
  return new Promise((resolve) => {
    let changed = false, quiet = null, end = null;
    const events = ['change', 'input', 'click', 'transitionend', 'animationend'];
    const observer = new MutationObserver(() => poke());
    const finish = (what) => {
      observer.disconnect();
      for (const t of trees) for (const e of events) t.removeEventListener(e, poke, true);
      clearTimeout(quiet);
      clearTimeout(end);
      resolve(what);
    };
    const calm = () => {
      if (!shown()) return finish('gone');
      const moving = running();
      if (moving.length === 0) return finish('changed');
      Promise.allSettled(moving.map((a) => a.finished)).then(() => poke());
    };
    function poke() {
      if (!shown()) return finish('gone');
      changed = true;
      clearTimeout(quiet);
      quiet = setTimeout(calm, 250);
    }
    for (const t of trees) {
      observer.observe(t, { subtree: true, childList: true, attributes: true, characterData: true });
      for (const e of events) t.addEventListener(e, poke, true);
    }
    for (const e of above) observer.observe(e, { childList: true, attributes: true });
    end = setTimeout(() => finish(!shown() ? 'gone' : changed ? 'changed' : 'same'), limit);
    if (!shown()) finish('gone');
  });
}
