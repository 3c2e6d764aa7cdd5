// topology.js - the topology tree page over GET /api/v1/topology: layer -> domain -> node,
// occupancy coloured by the resource the user picks, jobs placed, the largest gang of a pod
// shape each domain can still take (computed by musterd), a job's pods highlighted.
// Rendered lazily: only open domains are in the DOM, a leaf domain lists its nodes 100 at a
// time, and node details (GET /api/v1/nodes/{name}) are fetched only for listed nodes.
import { fmtQty, getJSON, parseQty } from './api.js';
import { loadJobs, podJobs } from './data.js';
import { loadReservations, reservedMark } from './reserve.js';
import { clear, h, jobLink } from './dom.js';
import { renderState, timeSlider } from './timeslider.js';
import { colour, freeFrac, highlight, indexTree } from './topomodel.js';

const PAGE = 100;
const SHOW_JOBS = 4;
const GPU = 'nvidia.com/gpu';

export function mount(el, route, app) {
  const p = route.params;
  const st = { tree: null, jobs: [], color: p.color || '', job: p.job || '', node: p.node || '',
    shape: { cpu: p.pod_cpu || '', memory: p.pod_memory || '', gpu: p.pod_gpu || '' },
    open: new Set(['']), shown: new Map(), nodes: new Map(), noGpu: false };
  const ctrl = h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); refresh(); } });
  const summary = h('div', { class: 'topo-summary', 'aria-live': 'polite' });
  const tree = h('div', { class: 'tree', role: 'tree', 'aria-label': 'topology' });
  // the past (timeslider.js): its rendering replaces the live tree while a record is picked
  const past = h('div', { class: 'past', hidden: true });
  const slider = timeSlider((doc) => {
    past.hidden = !doc;
    tree.hidden = summary.hidden = ctrl.hidden = !!doc;
    if (doc) renderState(past, doc, st.job);
  });
  el.append(h('h1', null, 'Topology'), slider, ctrl, summary, tree, past);
  tree.addEventListener('click', onClick);

  function save() {
    app.setParams({ job: st.job, node: st.node, color: st.color, pod_cpu: st.shape.cpu,
      pod_memory: st.shape.memory, pod_gpu: st.shape.gpu });
  }

  function drawControls() {
    if (ctrl.childElementCount) {
      const sel = ctrl.querySelector('#topo-job');
      const have = new Set([...sel.options].map((o) => o.value));
      if (st.jobs.every((j) => have.has(j.id))) return;
      clear(ctrl);
    }
    const res = st.tree.resources;
    if (!st.color) st.color = res.find((r) => /gpu/i.test(r)) || res[0] || 'cpu';
    const shapeInput = (k, label) => [h('label', { for: 'topo-' + k }, label),
      h('input', { id: 'topo-' + k, size: 6, value: st.shape[k], placeholder: 'auto',
        onchange: (e) => { st.shape[k] = e.target.value.trim(); save(); refresh(); } })];
    ctrl.append(
      h('label', { for: 'topo-color' }, 'Colour by free'),
      h('select', { id: 'topo-color', onchange: (e) => { st.color = e.target.value; save(); draw(); } },
        res.map((r) => h('option', { value: r, selected: r === st.color }, r))),
      h('label', { for: 'topo-job' }, 'Highlight job'),
      h('select', { id: 'topo-job', onchange: (e) => selectJob(e.target.value) },
        h('option', { value: '' }, '(none)'),
        st.jobs.map((j) => h('option', { value: j.id, selected: j.id === st.job },
          `${j.id} (${j.state})`))),
      h('fieldset', { class: 'shape' }, h('legend', null, 'Pod shape for "largest gang"'),
        shapeInput('gpu', 'GPU'), shapeInput('cpu', 'CPU'), shapeInput('memory', 'memory')),
      h('button', { type: 'button', onclick: () => { st.open = new Set(['']); draw(); } },
        'Collapse all'));
  }

  async function selectJob(id) {
    st.job = id;
    st.node = '';
    save();
    await refresh(true);
  }

  // The shape musterd computes "largest gang" for: the inputs, else the highlighted job's
  // pod (like=), else one GPU (one CPU on clusters without GPUs).
  // The tree lists SHOW_JOBS jobs per domain (and how many it has): every domain's whole
  // list is most of the tree's bytes (2.9 MB of 5,000 nodes and 50,000 pods).
  function query() {
    const s = st.shape, jobs = SHOW_JOBS;
    if (s.cpu || s.memory || s.gpu) return { pod_cpu: s.cpu, pod_memory: s.memory, pod_gpu: s.gpu, jobs };
    if (st.job) return { like: st.job, jobs };
    return st.noGpu ? { pod_cpu: '1', jobs } : { pod_gpu: '1', jobs };
  }

  function onClick(e) {
    const t = e.target.closest('button[data-toggle], button[data-more]');
    if (!t) return;
    const id = t.dataset.toggle ?? t.dataset.more;
    if (t.dataset.more !== undefined) st.shown.set(id, (st.shown.get(id) || PAGE) + PAGE * 5);
    else if (st.open.has(id)) st.open.delete(id);
    else st.open.add(id);
    draw();
    const again = tree.querySelector(`button[data-toggle="${CSS.escape(id)}"]`);
    if (again) again.focus();
    loadNodes(false).then((n) => { if (n) draw(); }).catch(() => {});
  }

  // Names of the nodes listed in open leaf domains (what the tree shows).
  function visibleNodes() {
    const out = [];
    const walk = (d) => {
      if (!st.open.has(d.id)) return;
      out.push(...d.nodes.slice(0, st.shown.get(d.id) || PAGE));
      d.children.forEach(walk);
    };
    if (st.tree) walk(st.tree.root);
    return out;
  }

  // Fetches the listed nodes (all of them on a poll, else only those not cached yet);
  // returns how many were fetched.
  async function loadNodes(all) {
    const want = visibleNodes().filter((n) => all || !st.nodes.has(n));
    const got = await Promise.all(want.map((n) =>
      getJSON('/api/v1/nodes/' + encodeURIComponent(n)).catch(() => null)));
    want.forEach((n, i) => { if (got[i]) st.nodes.set(n, got[i]); else st.nodes.delete(n); });
    return want.length;
  }

  function hlNames() {
    const j = st.jobs.find((x) => x.id === st.job);
    const names = [];
    if (j) for (const m of j.members || []) {
      if (m.node) names.push(m.node);
      if (m.nominatedNode) names.push(m.nominatedNode);
    }
    if (st.node) names.push(st.node);
    return { j, names: new Set(names) };
  }

  function draw() {
    if (!st.tree) return;
    drawControls();
    const { j, names } = hlNames();
    highlight(st.tree, names);
    drawSummary(j, names);
    const focused = document.activeElement && document.activeElement.dataset ?
      document.activeElement.dataset.toggle : undefined;
    const nominated = new Map();
    for (const x of st.jobs) for (const m of x.members || [])
      if (m.nominatedNode) nominated.set(m.nominatedNode, (nominated.get(m.nominatedNode) || 0) + 1);
    // the domains holding a pod of the selected job: listed first there, also when the
    // tree's first SHOW_JOBS ids do not include it
    const jobDomains = new Set();
    if (j) for (const m of j.members || [])
      for (let d = m.node && st.tree.nodeDomain.get(m.node); d; d = d.parent) jobDomains.add(d.id);
    const ctx = { names, podJob: podJobs(st.jobs), nominated, jobDomains, reserved: st.reserved };
    clear(tree, h('ul', { role: 'group' }, renderDomain(st.tree.root, 0, ctx)));
    if (focused !== undefined) {
      const b = tree.querySelector(`button[data-toggle="${CSS.escape(focused)}"]`);
      if (b) b.focus();
    }
  }

  function drawSummary(j, names) {
    const t = st.tree;
    const shapeText = Object.entries(t.shape || {}).filter(([r]) => r !== 'pods')
      .map(([r, v]) => `${r}=${v}`).join(', ');
    const q = query();
    clear(summary,
      t.topology === null ? h('p', { class: 'note note-info' },
        'No ClusterNetworkTopology "default": all nodes are shown under the cluster.') : null,
      h('p', { class: 'muted' }, `${t.root.nodeCount} nodes. Largest gang = pods of ` +
        `{${shapeText}}` + (q.like ? ` (the pod shape of ${q.like})` : '') +
        ' the domain can still take now (computed by musterd).'),
      j ? h('p', { class: 'hl-summary' }, 'Job ', jobLink(j.id), ` (${j.state}): ` +
        `${(j.members || []).filter((m) => m.node).length} pod(s) placed, ` +
        `${(j.members || []).filter((m) => m.nominatedNode).length} nominated; ${names.size} ` +
        'highlighted node(s).') : null,
      st.node && !j ? h('p', { class: 'hl-summary' }, `Node ${st.node} highlighted.`) : null);
  }

  function occupancy(x) {
    const r = st.color;
    const frac = freeFrac(x, r);
    const cap = x.cap[r] || 0;
    const free = Math.max(0, cap - (x.used[r] || 0));
    return h('span', { class: 'occ', title: `${r}: ${fmtQty(free, r)} free of ${fmtQty(cap, r)}` },
      h('span', { class: 'swatch', style: { background: cap ? colour(frac) : '#bbb' } }),
      h('span', { class: 'occbar' }, h('span', { style: { width: ((1 - frac) * 100).toFixed(0) + '%' } })),
      h('span', { class: 'occtxt' }, `${fmtQty(free, r)}/${fmtQty(cap, r)} ${r} free`));
  }

  // list: [id, count] pairs; total: how many there are (the tree lists a few of them).
  function jobsList(list, total = list.length) {
    if (!list.length) return h('span', { class: 'muted' }, 'no jobs');
    const shown = list.slice(0, SHOW_JOBS);
    return h('span', { class: 'jobs' }, shown.map(([id, k], i) =>
      [i ? ', ' : '', h('a', { href: '#/jobs/' + id, class: id === st.job ? 'job sel' : 'job' }, id),
        k ? h('span', { class: 'muted' }, `×${k}`) : null]),
    total > shown.length ? h('span', { class: 'muted' }, ` +${total - shown.length} more`) : null);
  }

  function renderDomain(d, depth, ctx) {
    const open = st.open.has(d.id);
    const ids = ctx.jobDomains.has(d.id) && !d.jobs.includes(st.job) ? [st.job, ...d.jobs] : d.jobs;
    const jobs = [...ids].sort((a, b) => (b === st.job) - (a === st.job)).map((id) => [id, 0]);
    const row = h('div', { class: 'row domain' + (d.hl ? ' hl' : '') },
      h('button', { type: 'button', class: 'toggle', 'data-toggle': d.id, 'aria-expanded': String(open),
        'aria-label': `${open ? 'collapse' : 'expand'} ${d.layer} ${d.name}` }, open ? '▾' : '▸'),
      h('span', { class: 'dname' }, h('span', { class: 'layer' }, d.layer), ' ', d.name),
      h('span', { class: 'count' }, `${d.nodeCount} nodes`),
      occupancy(d),
      h('span', { class: 'gang', title: 'largest gang of the pod shape this domain can still take' },
        d.gang === undefined ? '' : `largest gang ${d.gang}`),
      d.hl ? h('span', { class: 'hlcount' }, `${d.hl} highlighted`) : null,
      jobsList(jobs, Math.max(d.jobCount, jobs.length)));
    const li = h('li', { role: 'treeitem', 'aria-expanded': String(open), 'aria-level': depth + 1,
      'data-domain': d.id || '/', class: d.hl ? 'hl' : null }, row);
    if (!open) return li;
    const kids = d.children.map((k) => renderDomain(k, depth + 1, ctx));
    const limit = st.shown.get(d.id) || PAGE;
    const nodes = d.nodes.slice(0, limit).map((n) => renderNode(n, depth + 1, ctx));
    li.append(h('ul', { role: 'group', class: d.nodes.length ? 'nodes' : null }, kids, nodes,
      d.nodes.length > limit ? h('li', null, h('button', { type: 'button', 'data-more': d.id },
        `show more (${d.nodes.length - limit} hidden)`)) : null));
    return li;
  }

  function renderNode(name, depth, ctx) {
    const n = st.nodes.get(name);
    const hl = ctx.names.has(name);
    const attrs = { role: 'treeitem', 'aria-level': depth + 1, 'data-node': name,
      class: 'node' + (hl ? ' hl' : '') };
    if (!n) return h('li', attrs, h('div', { class: 'row' }, h('span', { class: 'dname mono' }, name),
      h('span', { class: 'muted' }, 'loading…')));
    const u = n.usage || {};
    const x = { cap: {}, used: {} };
    for (const [r, q] of Object.entries(u.allocatable || {})) x.cap[r] = parseQty(q) || 0;
    for (const [r, q] of Object.entries(u.requested || {})) x.used[r] = parseQty(q) || 0;
    const count = new Map();
    for (const pod of n.pods || []) {
      const j = ctx.podJob.get(pod) || pod;
      count.set(j, (count.get(j) || 0) + 1);
    }
    return h('li', attrs, h('div', { class: 'row' },
      h('span', { class: 'dname mono' }, name, n.spec && n.spec.unschedulable ? ' (cordoned)' : ''),
      h('span', { class: 'count' }, `${(n.pods || []).length} pods`),
      occupancy(x),
      h('span', { class: 'gang' }, ctx.nominated.get(name) ?
        `${ctx.nominated.get(name)} nominated ` : '', reservedMark(ctx.reserved, name)),
      jobsList([...count.entries()].sort((a, b) => b[1] - a[1]))));
  }

  async function refresh(reveal) {
    const first = !st.tree;
    const [body, jobs, reserved] = await Promise.all([getJSON('/api/v1/topology', query()),
      loadJobs(), loadReservations()]);
    st.reserved = reserved;
    st.tree = indexTree(body);
    if (!st.noGpu && !st.tree.root.cap[GPU] && query().pod_gpu === '1') {
      st.noGpu = true; // no GPUs at all: the default shape is one CPU
      st.tree = indexTree(await getJSON('/api/v1/topology', query()));
    }
    st.jobs = jobs.sort((a, b) => a.id.localeCompare(b.id));
    if (first || reveal) for (const id of highlight(st.tree, hlNames().names)) st.open.add(id);
    await loadNodes(true);
    draw();
  }
  return { refresh };
}
