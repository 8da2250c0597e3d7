// `describe(node)`: an element as a short tag with its id, class and the
// start of its text, `<div id="banner">We use…</div>`, for error messages.
function describe(n) {
  const e = n && n.nodeType === 1 ? n : (n && (n.parentElement || n.host)) || n;
  if (!e || !e.localName) return 'another element';
  let tag = '<' + e.localName;
  if (e.id) tag += ' id="' + e.id + '"';
  const cls = e.getAttribute('class');
  if (cls) tag += ' class="' + cls + '"';
  const text = (e.textContent || '').trim().replace(/\s+/g, ' ');
  return tag + '>' + (text.length > 30 ? text.slice(0, 30) + '…' : text) + '</' + e.localName + '>';
}
