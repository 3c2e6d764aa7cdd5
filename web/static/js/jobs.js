// jobs.js - the jobs table: gangs and GangGroups with state, minMember, placed / pending,
// priority and age; filter by text and state, sort by any column; state kept in the URL.
import { loadJobs, loadJobStates } from './data.js';
import { age, clear, h, jobLink, stateBadge, table } from './dom.js';

const COLS = [
  { key: 'id', label: 'job', get: (j) => jobLink(j.id), val: (j) => j.id },
  { key: 'kind', label: 'kind', get: (j) => kindText(j), val: (j) => kindText(j) },
  { key: 'state', label: 'state', get: (j) => stateBadge(j.state), val: (j) => j.state },
  { key: 'priority', label: 'priority', cls: 'num', get: (j) => j.priority ?? 0,
    val: (j) => j.priority ?? 0 },
  { key: 'minMember', label: 'minMember', cls: 'num', get: (j) => j.minMember ?? 1,
    val: (j) => j.minMember ?? 1 },
  { key: 'placed', label: 'placed', cls: 'num', get: (j) => j.placed ?? 0, val: (j) => j.placed ?? 0 },
  { key: 'pending', label: 'pending', cls: 'num', get: (j) => j.pending ?? 0,
    val: (j) => j.pending ?? 0 },
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
  const st = { q: p.q || '', state: p.state || '', sort: p.sort || 'priority',
    dir: p.dir === 'asc' ? 1 : p.dir === 'desc' ? -1 : (p.sort ? 1 : -1), jobs: [] };
  const body = h('div', { class: 'tablewrap' });
  const count = h('span', { class: 'muted', 'aria-live': 'polite' });
  const search = h('input', { type: 'search', id: 'jobs-q', value: st.q, placeholder: 'ns/name…',
    oninput: (e) => { st.q = e.target.value; save(); draw(); } });
  // the states come from musterd (loadJobStates) with the first refresh
  const stateSel = h('select', { id: 'jobs-state', onchange: (e) => {
    st.state = e.target.value; save(); draw();
  } }, stateOptions([]));
  function stateOptions(names) {
    return ['', ...names].map((s) => h('option', { value: s, selected: s === st.state },
      s || 'any state'));
  }

  el.append(h('h1', null, 'Jobs'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      h('label', { for: 'jobs-q' }, 'Filter'), search,
      h('label', { for: 'jobs-state' }, 'State'), stateSel, count),
    body);

  function save() {
    app.setParams({ q: st.q, state: st.state, sort: st.sort, dir: st.dir > 0 ? 'asc' : 'desc' });
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
    const [jobs, states] = await Promise.all([loadJobs(), loadJobStates()]);
    st.jobs = jobs;
    if (stateSel.options.length !== states.length + 1) clear(stateSel, stateOptions(states));
    draw();
  }
  return { refresh };
}
