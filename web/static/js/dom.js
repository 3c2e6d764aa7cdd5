// dom.js - a tiny element builder and the formatting helpers every page shares.

// h('a', {href: '#/'}, 'text', child...) -> Element. Attributes starting with "on" are
// listeners; class/className both set the class; null/false children are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'class' || k === 'className') el.className = v;
      else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : v);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const jobHref = (id) => '#/jobs/' + id;
export const jobLink = (id) => (id ? h('a', { href: jobHref(id), class: 'job' }, id) : '–');
export const nodeLink = (name, job) =>
  name ? h('a', { href: `#/topology?node=${encodeURIComponent(name)}` +
    (job ? `&job=${encodeURIComponent(job)}` : '') }, name) : '–';

export function stateBadge(state) {
  return h('span', { class: 'state state-' + String(state || 'unknown').toLowerCase() },
    state || '?');
}

export function classBadge(cls) {
  return h('span', { class: 'cls cls-' + String(cls || '').toLowerCase() }, cls || '?');
}

export function age(ts, now = Date.now()) {
  const t = Date.parse(ts);
  if (!isFinite(t)) return '–';
  let s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm';
  if (s < 86400) return Math.floor(s / 3600) + 'h';
  return Math.floor(s / 86400) + 'd';
}

export function fmtTime(ts) {
  const t = Date.parse(ts);
  if (!isFinite(t)) return ts || '–';
  return new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, 'Z');
}

// A message box: kind is "info", "warn" or "error".
export function note(kind, ...text) {
  return h('p', { class: 'note note-' + kind, role: kind === 'error' ? 'alert' : null }, ...text);
}

// A table from rows; cols = [{label, get(row) -> node|string, cls?, sortKey?}].
export function table(cols, rows, opts = {}) {
  const thead = h('thead', null, h('tr', null, cols.map((c) => {
    if (!opts.onSort || !c.key) return h('th', { scope: 'col', class: c.cls }, c.label);
    const active = opts.sort && opts.sort.key === c.key;
    return h('th', {
      scope: 'col', class: c.cls,
      'aria-sort': active ? (opts.sort.dir > 0 ? 'ascending' : 'descending') : null,
    }, h('button', { type: 'button', class: 'sort', onclick: () => opts.onSort(c.key) },
      c.label, active ? (opts.sort.dir > 0 ? ' ▲' : ' ▼') : ''));
  })));
  const tbody = h('tbody', null, rows.map((r) =>
    h('tr', opts.rowAttrs ? opts.rowAttrs(r) : null,
      cols.map((c) => h('td', { class: c.cls }, c.get(r))))));
  if (!rows.length)
    tbody.append(h('tr', null, h('td', { colspan: cols.length, class: 'empty' },
      opts.empty || 'nothing to show')));
  return h('table', { class: 'grid' + (opts.cls ? ' ' + opts.cls : '') },
    opts.caption ? h('caption', null, opts.caption) : null, thead, tbody);
}

// A horizontal bar: value / max, with a label.
export function bar(value, max, label, cls) {
  const pct = max > 0 ? Math.min(100, (100 * value) / max) : 0;
  return h('div', { class: 'bar ' + (cls || ''), role: 'img', 'aria-label': label },
    h('div', { class: 'fill', style: { width: pct.toFixed(1) + '%' } }),
    h('span', { class: 'lbl' }, label));
}

export function kv(pairs) {
  return h('dl', { class: 'kv' }, pairs.filter(Boolean).map(([k, v]) =>
    [h('dt', null, k), h('dd', null, v === null || v === undefined ? '–' : v)]));
}

// "1 pod", "3 pods", "0 pods": n and the word, plural unless n is 1.
export function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
