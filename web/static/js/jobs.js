// jobs.js - the jobs table: gangs and GangGroups with state, reason, queue, minMember,
// placed / pending, priority, position in the queue, wait and age; filter by text, state,
// namespace and queue, sort by any column; all of it kept in the URL.
import { fmtQty, getJSON } from './api.js';
import { loadJobs, loadJobStates, resourceOrder } from './data.js';
import { age, bar, clear, fmtTime, h, jobLink, stateBadge, table } from './dom.js';

// The states of a job not placed yet: it waits, and has a place in its queue.
const WAITING = new Set(['Pending', 'Unschedulable', 'Starving', 'Pipelined', 'TimedOut']);

// Position of each waiting job in its queue, in the order a cycle takes a queue's jobs
// (docs/queues.md): priority (highest first), then creation (oldest first), then id. Placed
// jobs have none. Returns id -> [position, of how many].
export function positions(jobs) {
  const byQueue = new Map();
  for (const j of jobs) if (WAITING.has(j.state)) {
    const q = j.queue || 'default';
    if (!byQueue.has(q)) byQueue.set(q, []);
    byQueue.get(q).push(j);
  }
  const out = new Map();
  for (const list of byQueue.values()) {
    list.sort((a, b) => (b.priority ?? 0) - (a.priority ?? 0) ||
      (Date.parse(a.creationTimestamp) || 0) - (Date.parse(b.creationTimestamp) || 0) ||
      a.id.localeCompare(b.id));
    list.forEach((j, i) => out.set(j.id, [i + 1, list.length]));
  }
  return out;
}

// What the table knows of a job's start: a starving job's reservation says when it expects
// to start (docs/reservations.md; unknown when a job it waits for has no time limit), a
// Pipelined job starts once its preemption victims are gone; nothing else is predicted.
function startText(j) {
  if ('expectedStart' in j) return j.expectedStart ? fmtTime(j.expectedStart) : 'unknown';
  if (j.state === 'Pipelined') return 'when its victims exit';
  if (WAITING.has(j.state)) return '–';
  return 'started';
}

const COLS = [
  { key: 'id', label: 'job', get: (j) => jobLink(j.id), val: (j) => j.id },
  { key: 'kind', label: 'kind', get: (j) => kindText(j), val: (j) => kindText(j) },
  { key: 'state', label: 'state', get: (j) => stateBadge(j.state), val: (j) => j.state },
  { key: 'reason', label: 'reason', get: (j) => (j.reason ? h('span', { class: 'mono' }, j.reason) : ''),
    val: (j) => j.reason || '' },
  { key: 'queue', label: 'queue', get: (j) => (j.queue ? h('a', { href: '#/queues?queue=' +
    encodeURIComponent(j.queue) }, j.queue) : '–'), val: (j) => j.queue || '' },
  { key: 'position', label: 'position', cls: 'num', get: (j) => (j.pos ? `${j.pos[0]} of ${j.pos[1]}` : '–'),
    val: (j) => (j.pos ? j.pos[0] : Infinity) },
  { key: 'start', label: 'est. start', get: (j) => startText(j), val: (j) => startText(j) },
  { key: 'priority', label: 'priority', cls: 'num', get: (j) => j.priority ?? 0,
    val: (j) => j.priority ?? 0 },
  { key: 'minMember', label: 'minMember', cls: 'num', get: (j) => j.minMember ?? 1,
    val: (j) => j.minMember ?? 1 },
  { key: 'placed', label: 'placed', cls: 'num', get: (j) => j.placed ?? 0, val: (j) => j.placed ?? 0 },
  { key: 'pending', label: 'pending', cls: 'num', get: (j) => j.pending ?? 0,
    val: (j) => j.pending ?? 0 },
  { key: 'wait', label: 'wait', cls: 'num', get: (j) => (WAITING.has(j.state) ? age(j.creationTimestamp) : '–'),
    val: (j) => (WAITING.has(j.state) ? -(Date.parse(j.creationTimestamp) || 0) : Infinity) },
  { key: 'age', label: 'age', cls: 'num', get: (j) => age(j.creationTimestamp),
    val: (j) => -(Date.parse(j.creationTimestamp) || 0) },
];

function kindText(j) {
  const g = j.gangGroup || [];
  if (g.length > 1) return `gang group (${g.length})`;
  return j.kind === 'gang' ? 'gang' : j.kind || 'pod';
}

export function mount(el, route, app) {
  const p = route.params;
  const st = { q: p.q || '', state: p.state || '', ns: p.namespace || '', queue: p.queue || '',
    sort: p.sort || 'priority',
    dir: p.dir === 'asc' ? 1 : p.dir === 'desc' ? -1 : (p.sort ? 1 : -1), jobs: [] };
  const body = h('div', { class: 'tablewrap' });
  const count = h('span', { class: 'muted', 'aria-live': 'polite' });
  const search = h('input', { type: 'search', id: 'jobs-q', value: st.q, placeholder: 'ns/name…',
    oninput: (e) => { st.q = e.target.value; save(); draw(); } });
  // the states come from musterd (loadJobStates) with the first refresh
  const stateSel = h('select', { id: 'jobs-state', onchange: (e) => {
    st.state = e.target.value; save(); draw();
  } }, stateOptions([]));
  const nsSel = h('select', { id: 'jobs-ns', onchange: (e) => { st.ns = e.target.value; save(); draw(); } });
  const queueSel = h('select', { id: 'jobs-queue', onchange: (e) => { st.queue = e.target.value; save(); draw(); } });
  // the namespaces and queues the jobs have, and the one in the URL even when none has it
  function fillSelect(sel, values, current, any) {
    const want = ['', ...new Set([...values, current].filter(Boolean))].sort();
    if ([...sel.options].map((o) => o.value).join('\n') === want.join('\n')) return;
    clear(sel, want.map((v) => h('option', { value: v, selected: v === current }, v || any)));
  }
  function stateOptions(names) {
    return ['', ...names].map((s) => h('option', { value: s, selected: s === st.state },
      s || 'any state'));
  }

  const usage = h('section', { 'aria-labelledby': 'jobs-usage' });
  el.append(h('h1', null, 'Jobs'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      h('label', { for: 'jobs-q' }, 'Filter'), search,
      h('label', { for: 'jobs-state' }, 'State'), stateSel,
      h('label', { for: 'jobs-ns' }, 'Namespace'), nsSel,
      h('label', { for: 'jobs-queue' }, 'Queue'), queueSel, count),
    body, usage);

  function save() {
    app.setParams({ q: st.q, state: st.state, namespace: st.ns, queue: st.queue, sort: st.sort,
      dir: st.dir > 0 ? 'asc' : 'desc' });
  }
  function onSort(key) {
    st.dir = st.sort === key ? -st.dir : 1;
    st.sort = key;
    save();
    draw();
  }
  function draw() {
    const q = st.q.trim().toLowerCase();
    const col = COLS.find((c) => c.key === st.sort) || COLS[0];
    const rows = st.jobs.filter((j) => (!st.state || j.state === st.state) &&
      (!st.ns || j.namespace === st.ns) && (!st.queue || j.queue === st.queue) &&
      (!q || j.id.toLowerCase().includes(q) || (j.gangGroup || []).some((g) => g.includes(q))))
      .sort((a, b) => {
        const x = col.val(a), y = col.val(b);
        return (x < y ? -1 : x > y ? 1 : 0) * st.dir || a.id.localeCompare(b.id);
      });
    count.textContent = `${rows.length} of ${st.jobs.length} jobs`;
    clear(body, table(COLS, rows, { onSort, sort: { key: st.sort, dir: st.dir }, cls: 'jobs',
      rowAttrs: (j) => ({ 'data-job': j.id, 'data-state': j.state }), empty: 'no jobs match' }));
  }
  async function refresh() {
    const [jobs, states, ts, queues] = await Promise.all([loadJobs(), loadJobStates(),
      getJSON('/api/v1/timeseries', { since: '15m', series: 'namespace.,cluster.allocatable.' }),
      getJSON('/api/v1/queues')]);
    drawUsage(usage, jobs, ts, queues.items || []);
    const pos = positions(jobs);
    st.jobs = jobs.map((j) => ({ ...j, pos: pos.get(j.id) }));
    fillSelect(nsSel, jobs.map((j) => j.namespace), st.ns, 'any namespace');
    fillSelect(queueSel, jobs.map((j) => j.queue).filter(Boolean), st.queue, 'any queue');
    if (stateSel.options.length !== states.length + 1) clear(stateSel, stateOptions(states));
    draw();
  }
  return { refresh };
}

// The newest value of each series of a time series answer (name -> number).
function latest(ts) {
  const out = {};
  for (const [name, col] of Object.entries(ts.series || {}))
    for (let i = col.length - 1; i >= 0; i--) if (col[i] !== null) { out[name] = col[i]; break; }
  return out;
}

// Per namespace and per queue, as Slurm's sshare by account: jobs running and waiting (the
// jobs list), and the share of the cluster each holds of each resource: a namespace's from
// the newest time series sample (the requests of its bound pods), a queue's allocation from
// GET /api/v1/queues.
function drawUsage(sec, jobs, ts, queues) {
  const now = latest(ts);
  const res = resourceOrder(Object.keys(now).filter((n) => n.startsWith('cluster.allocatable.'))
    .map((n) => n.slice('cluster.allocatable.'.length)).filter((r) => r !== 'pods')).slice(0, 3);
  const cap = (r) => now['cluster.allocatable.' + r] || 0;
  const count = (pred) => ({ run: jobs.filter((j) => pred(j) && !WAITING.has(j.state) &&
    j.state !== 'Finished' && j.state !== 'Preempted').length,
  wait: jobs.filter((j) => pred(j) && WAITING.has(j.state)).length });
  const share = (used, r) => bar(used, cap(r), `${fmtQty(used, r)} / ${fmtQty(cap(r), r)}` +
    (cap(r) ? ` (${Math.round((100 * used) / cap(r))}%)` : ''));
  const nss = [...new Set([...jobs.map((j) => j.namespace), ...Object.keys(now)
    .filter((n) => n.startsWith('namespace.')).map((n) => n.split('.')[1])])].sort();
  const nsRows = nss.map((ns) => ({ ns, ...count((j) => j.namespace === ns) }));
  const qRows = queues.map((q) => ({ q, ...count((j) => (j.queue || 'default') === q.name) }));
  const qalloc = (q, r) => ((q.resources || {})[r] || {}).allocated ?? 0;
  // queue amounts are model units: cpu in thousandths
  const qamount = (q, r) => (r === 'cpu' ? qalloc(q, r) / 1000 : qalloc(q, r));
  const when = ts.times && ts.times.length ? fmtTime(new Date(ts.times[ts.times.length - 1]).toISOString()) : null;
  clear(sec, h('h2', { id: 'jobs-usage' }, 'Usage by namespace and queue'),
    h('p', { class: 'muted' }, 'Jobs running and waiting, and the share of the cluster each holds ' +
      '(as Slurm\'s sshare). Namespaces: the requests of their bound pods ' +
      (when ? `in the newest sample (${when}).` : '(no sample yet: musterd samples every timeseries_interval).')),
    h('div', { class: 'tablewrap' }, table([
      { label: 'namespace', get: (x) => h('a', { href: '#/jobs?namespace=' + encodeURIComponent(x.ns) }, x.ns) },
      { label: 'running', cls: 'num', get: (x) => x.run },
      { label: 'waiting', cls: 'num', get: (x) => x.wait },
      ...res.map((r) => ({ label: r, cls: 'barcell', get: (x) => share(now[`namespace.${x.ns}.used.${r}`] || 0, r) })),
    ], nsRows, { cls: 'compact usage-ns', rowAttrs: (x) => ({ 'data-ns': x.ns }) })),
    h('div', { class: 'tablewrap' }, table([
      { label: 'queue', get: (x) => h('a', { href: '#/queues?queue=' + encodeURIComponent(x.q.name) }, x.q.name) },
      { label: 'running', cls: 'num', get: (x) => x.run },
      { label: 'waiting', cls: 'num', get: (x) => x.wait },
      ...res.map((r) => ({ label: r, cls: 'barcell', get: (x) => share(qamount(x.q, r), r) })),
    ], qRows, { cls: 'compact usage-q', rowAttrs: (x) => ({ 'data-queue': x.q.name }) })));
}
