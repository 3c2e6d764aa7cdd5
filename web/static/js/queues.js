// queues.js - the queues page (GET /api/v1/queues): one row per queue, the hierarchy
// indented, its weight, share and rank, and per resource one bar of what it holds against
// what it deserves (a marker) and its capability (the bar's end, or open when unlimited);
// what it holds above its deserved share (borrowed) is shaded apart. Selecting a queue
// (#/queues?queue=name) shows every number, its jobs (GET /api/v1/queues/{name}) and the
// reclaims by and against it (ledger entries of kind reclaim).
import { fmtQty, getJSON, HttpError } from './api.js';
import { loadSeries, queueCharts, windowPicker } from './trends.js';
import { loadLedger, resourceOrder } from './data.js';
import { clear, fmtTime, h, jobLink, kv, note, plural, table } from './dom.js';

// An unlimited bar ends this far past the larger of allocated and deserved, so that it never
// looks full.
const OPEN_END = 1.25;

const queueHref = (name) => '#/queues?queue=' + encodeURIComponent(name);

// A number of the API (model units: cpu in thousandths) as a readable quantity.
export function qty(res, v) {
  if (v === null || v === undefined) return '–';
  return fmtQty(res === 'cpu' ? v / 1000 : v, res);
}

// The queues in tree order (parents before children, siblings by name) with their depth.
export function treeOrder(queues) {
  const byName = new Map(queues.map((q) => [q.name, q]));
  const kids = new Map();
  const roots = [];
  for (const q of queues) {
    if (q.parent && byName.has(q.parent)) {
      if (!kids.has(q.parent)) kids.set(q.parent, []);
      kids.get(q.parent).push(q);
    } else {
      roots.push(q);
    }
  }
  const out = [];
  const seen = new Set();
  const walk = (q, depth) => {
    if (seen.has(q.name)) return; // a cycle cannot be stored; never loop on one anyway
    seen.add(q.name);
    out.push({ q, depth });
    for (const c of (kids.get(q.name) || []).sort((a, b) => a.name.localeCompare(b.name)))
      walk(c, depth + 1);
  };
  for (const r of roots.sort((a, b) => a.name.localeCompare(b.name))) walk(r, 0);
  return out;
}

// The resources worth a bar: those any queue holds, deserves or limits; "pods" only when a
// queue limits it.
export function barResources(queues) {
  const names = new Set();
  for (const q of queues)
    for (const [r, n] of Object.entries(q.resources || {}))
      if ((r !== 'pods' && (n.allocated || n.deserved)) || (n.capability ?? null) !== null)
        names.add(r);
  return resourceOrder(names);
}

// Where a bar's parts sit, in percent of its length: the scale is the capability (or what
// is allocated, when above it), else OPEN_END x the larger of allocated and deserved.
export function barGeometry(n) {
  const a = n.allocated || 0, d = n.deserved || 0;
  const cap = n.capability ?? null;
  const scale = cap !== null ? Math.max(cap, a) : Math.max(a, d) * OPEN_END;
  const pct = (v) => (scale > 0 ? (100 * v) / scale : 0);
  return { own: pct(Math.min(a, d)), borrowed: pct(Math.max(0, a - d)), deserved: pct(d),
    limited: cap !== null };
}

function resourceBar(res, n) {
  if (!n) return h('span', { class: 'muted' }, '–');
  const g = barGeometry(n);
  const cap = n.capability ?? null;
  const label = `${qty(res, n.allocated)} / ${qty(res, n.deserved)}` +
    (n.borrowed ? ` (+${qty(res, n.borrowed)} borrowed)` : '') +
    (cap !== null ? ` · cap ${qty(res, cap)}` : ' · unlimited');
  const title = `${res}: allocated ${qty(res, n.allocated)}, deserved ${qty(res, n.deserved)}` +
    `, capability ${cap !== null ? qty(res, cap) : 'unlimited'}` +
    (n.borrowed ? `, borrowed ${qty(res, n.borrowed)}` : '') +
    (n.lent ? `, lent ${qty(res, n.lent)}` : '');
  return h('div', { class: 'qbar' + (g.limited ? ' limited' : ' unlimited'), role: 'img',
    'aria-label': title, title, 'data-resource': res, 'data-allocated': n.allocated ?? 0,
    'data-deserved': n.deserved ?? 0, 'data-capability': cap ?? 'unlimited' },
  h('div', { class: 'own', style: { width: g.own.toFixed(2) + '%' } }),
  g.borrowed > 0 ? h('div', { class: 'borrowed', style: { left: g.deserved.toFixed(2) + '%',
    width: g.borrowed.toFixed(2) + '%' } }) : null,
  h('div', { class: 'deserved', style: { left: g.deserved.toFixed(2) + '%' } }),
  h('span', { class: 'lbl' }, label));
}

// A queue as a ledger entry names it: {name, shareBefore, shareAfter} (or a bare name).
const qname = (v) => (typeof v === 'string' ? v : v && v.name);
const shareMove = (v) => (v && typeof v.shareBefore === 'number' && typeof v.shareAfter === 'number' ?
  ` (share ${v.shareBefore.toFixed(2)} → ${v.shareAfter.toFixed(2)})` : '');

const borrowing = (q) => Object.values(q.resources || {}).some((n) => (n.borrowed || 0) > 0);

export function mount(el, route, app) {
  const st = { sel: route.params.queue || '', queues: [], since: route.params.since || '1h' };
  const list = h('section', { 'aria-labelledby': 'q-list' });
  const detail = h('section', { 'aria-labelledby': 'q-detail', hidden: !st.sel });
  el.append(h('h1', null, 'Queues'), h('p', { class: 'muted' },
    'Fair shares as the last scheduling cycle computed them; allocation as it is now.'),
  h('p', { class: 'qlegend muted', 'aria-label': 'legend of the bars' },
    h('span', { class: 'sw own' }), ' allocated within the deserved share ',
    h('span', { class: 'sw borrowed' }), ' borrowed (allocated above it) ',
    h('span', { class: 'sw deserved' }), ' deserved share ',
    h('span', { class: 'sw cap' }), ' capability (the bar\'s end) ',
    h('span', { class: 'sw open' }), ' unlimited'),
  list, detail);

  function select(name) {
    st.sel = name;
    app.setParams({ queue: name });
    drawList();
    refreshDetail().catch((e) => clear(detail, note('error', e.message)));
  }

  function drawList() {
    const res = barResources(st.queues);
    const cols = [
      { label: 'queue', get: ({ q, depth }) => h('span', { class: 'qname',
        style: { paddingLeft: `${depth * 18}px` } }, depth ? h('span', { class: 'muted',
        'aria-hidden': 'true' }, '└ ') : null, h('a', { href: queueHref(q.name),
        onclick: (e) => { e.preventDefault(); select(q.name); } }, q.name),
      q.builtin ? h('span', { class: 'muted' }, ' (built-in)') : null,
      q.reclaimable === false ? h('span', { class: 'muted', title: 'not reclaimable' }, ' ⊘') :
        null) },
      { label: 'weight', cls: 'num', get: ({ q }) => q.weight },
      { label: 'share', cls: 'num', get: ({ q }) => (q.share ?? 0).toFixed(2) },
      { label: 'rank', cls: 'num', get: ({ q }) => (q.rank ? q.rank : '–') },
      { label: 'pending', cls: 'num', get: ({ q }) => q.jobs?.pending ?? 0 },
      { label: 'running', cls: 'num', get: ({ q }) => q.jobs?.running ?? 0 },
      ...res.map((r) => ({ label: r, cls: 'barcell', get: ({ q }) =>
        resourceBar(r, (q.resources || {})[r]) })),
    ];
    clear(list, h('h2', { id: 'q-list' }, `Queues (${st.queues.length})`),
      h('div', { class: 'tablewrap' }, table(cols, treeOrder(st.queues), { cls: 'queues',
        empty: 'no queues', rowAttrs: ({ q, depth }) => ({ 'data-queue': q.name,
          'data-depth': depth, 'data-borrowing': borrowing(q) ? 'true' : 'false',
          class: q.name === st.sel ? 'sel' : null }) })));
  }

  async function refreshDetail() {
    if (!st.sel) {
      detail.hidden = true;
      return;
    }
    detail.hidden = false;
    let q;
    try {
      q = await getJSON('/api/v1/queues/' + encodeURIComponent(st.sel));
    } catch (e) {
      if (e instanceof HttpError && e.status === 404) {
        clear(detail, h('h2', { id: 'q-detail' }, 'Queue ', st.sel),
          note('warn', `queue '${st.sel}' not found`));
        return;
      }
      throw e;
    }
    const [all, ts] = await Promise.all([loadLedger(), loadSeries(st.since, [`queue.${st.sel}.`])]);
    drawDetail(detail, q, all.filter((e) => e.kind === 'reclaim'));
    const focused = document.activeElement && document.activeElement.id === 'q-window';
    detail.append(h('h3', null, 'Allocation over time'),
      windowPicker('q-window', st.since, (w) => { st.since = w; app.setParams({ queue: st.sel, since: w });
        refreshDetail().catch((e) => clear(detail, note('error', e.message))); }),
      queueCharts(ts, q.name));
    if (focused) detail.querySelector('#q-window').focus();
  }

  async function refresh() {
    st.queues = (await getJSON('/api/v1/queues')).items || [];
    drawList();
    await refreshDetail();
  }
  return { refresh };
}

function drawDetail(el, q, reclaims) {
  const res = Object.keys(q.resources || {});
  const by = reclaims.filter((e) => qname(e.queue) === q.name);
  const against = reclaims.filter((e) => (e.victimQueues || []).some((v) => qname(v) === q.name));
  const qlink = (n) => h('a', { href: queueHref(n) }, n);
  clear(el, h('h2', { id: 'q-detail' }, 'Queue ', h('span', { class: 'mono' }, q.name)),
    kv([
      ['parent', q.parent ? qlink(q.parent) : 'root'],
      ['children', (q.children || []).length ? q.children.map((c, i) => [i ? ', ' : '', qlink(c)]) :
        'none'],
      ['weight', q.weight],
      ['reclaimable', q.reclaimable === false ? 'no: other queues cannot take back what it ' +
        'borrowed' : 'yes'],
      q.builtin ? ['built-in', 'the default queue (not stored)'] : null,
      ['share', `${(q.share ?? 0).toFixed(3)}` +
        (q.dominantResource ? ` (dominant resource ${q.dominantResource})` : '')],
      ['rank', q.rank ? `${q.rank} in the last cycle's queue order` :
        (q.pendingJobs || []).length ? 'not in the last cycle\'s order: its pending jobs were ' +
          'not tried then (they wait for a change that could place them, or arrived since)' :
          'not ordered by the last cycle (no pending job, or no cycle yet)'],
      ['reclaims', `${q.reclaims?.by ?? 0} by its jobs, ${q.reclaims?.from ?? 0} against them`],
    ]),
    table([{ label: 'resource', get: (r) => h('span', { class: 'mono' }, r) },
      ...['allocated', 'deserved', 'request', 'guarantee', 'capability', 'borrowed', 'lent']
        .map((k) => ({ label: k, cls: 'num', get: (r) => {
          const v = q.resources[r][k];
          return k === 'capability' && (v === null || v === undefined) ? 'unlimited' : qty(r, v);
        } }))], resourceOrder(res), { cls: 'compact qres', empty: 'no resources' }),
    h('div', { class: 'cols' },
      jobList('Pending jobs', 'pending', q.pendingJobs || []),
      jobList('Running jobs', 'running', q.runningJobs || [])),
    h('div', { class: 'cols' },
      reclaimList('Reclaims by its jobs', 'by', by),
      reclaimList('Reclaims against its jobs', 'against', against)));
}

function jobList(title, cls, ids) {
  return h('div', null, h('h3', null, `${title} (${ids.length})`),
    ids.length ? h('ul', { class: 'qjobs ' + cls }, ids.map((id) => h('li', { 'data-job': id },
      jobLink(id)))) : h('p', { class: 'muted' }, 'none'));
}

function reclaimList(title, cls, entries) {
  return h('div', null, h('h3', null, `${title} (${entries.length})`),
    entries.length ? h('ul', { class: 'prelist reclaims ' + cls }, entries.map((e) =>
      h('li', { 'data-entry': e.id }, `cycle ${e.cycle}, ${fmtTime(e.ts)}: `, jobLink(e.preemptor),
        ' of queue ', h('a', { href: queueHref(qname(e.queue)) }, qname(e.queue)), shareMove(e.queue),
        ` took ${plural(e.victims.length, 'pod')} of `,
        e.victimJobs.map((j, i) => [i ? ', ' : '', jobLink(j)]), ' from ',
        (e.victimQueues || []).map((v, i) => [i ? ', ' : '',
          h('a', { href: queueHref(qname(v)) }, qname(v)), shareMove(v)]), ' ',
        h('a', { href: '#/preemptions?job=' + encodeURIComponent(e.preemptor) },
          `(ledger entry ${e.id})`)))) : h('p', { class: 'muted' }, 'none'));
}
