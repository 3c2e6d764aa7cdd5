// topology.js - the topology page: the cluster map (topomap.js: every node a cell, grouped
// by domain) over the tree of GET /api/v1/topology (layer -> domain -> node) as the detailed
// view: use of the resource the user picks, jobs placed, the largest gang of a pod shape
// each domain can still take (computed by musterd), a job's pods highlighted in both.
// The tree is rendered lazily: only open domains are in the DOM, a leaf domain lists its
// nodes 100 at a time, and node details (GET /api/v1/nodes/{name}) are fetched only for
// listed nodes; the map's per-node numbers come in one GET /api/v1/nodemap.
import { fmtQty, getJSON, parseQty } from './api.js';
import { loadJobs, podJobs } from './data.js';
import { loadReservations, reservedMark } from './reserve.js';
import { clear, h, jobLink, plural } from './dom.js';
import { colour, firstUsefulOpen, freeFrac, highlight, indexTree, shapeText } from './topomodel.js';
import { attachMapEvents, defaultResource, mapFacts, mapLegend, renderMap } from './topomap.js';
import { renderState, timeSlider } from './timeslider.js';

const PAGE = 100;
const SHOW_JOBS = 4;
const GPU = 'nvidia.com/gpu';

export function mount(el, route, app) {
  const p = route.params;
  const st = { tree: null, jobs: [], color: p.color || '', job: p.job || '', node: p.node || '',
    // highlight=a,b: nodes to mark (the what-if page links the nodes a job would take)
    extra: new Set((p.highlight || '').split(',').filter(Boolean)),
    shape: { cpu: p.pod_cpu || '', memory: p.pod_memory || '', gpu: p.pod_gpu || '' },
    open: new Set(['']), shown: new Map(), nodes: new Map(), noGpu: false,
    facts: new Map(), reserved: null };
  const ctrl = h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); refresh(); } });
  const summary = h('div', { class: 'topo-summary', 'aria-live': 'polite' });
  const legend = h('div');
  const map = h('div', { class: 'mapwrap', id: 'topo-map' });
  const tip = h('div', { class: 'maptip', role: 'tooltip', hidden: true });
  const tree = h('div', { class: 'tree', role: 'tree', 'aria-label': 'topology' });
  // the past (timeslider.js): its rendering replaces the live map and tree while a record
  // is picked
  const past = h('div', { class: 'past', hidden: true });
  const mapSec = h('section', { 'aria-labelledby': 'topo-map-h' }, h('h2', { id: 'topo-map-h' }, 'Cluster map'),
    legend, map, h('p', { class: 'muted' }, 'One cell per node, boxed by topology domain. Hover ' +
      'a cell for its node, click it to open the node; the tree below lists every domain and node.'));
  const treeSec = h('section', { 'aria-labelledby': 'topo-tree-h' }, h('h2', { id: 'topo-tree-h' }, 'Domains and nodes'),
    h('div', { class: 'row thead', 'aria-hidden': 'true' }, h('span'), h('span', null, 'domain / node'),
      h('span', null, 'nodes / pods'), h('span', { id: 'topo-used-h' }, 'used'),
      h('span', null, 'largest gang'), h('span'), h('span', null, 'jobs')),
    tree);
  const slider = timeSlider((doc) => {
    past.hidden = !doc;
    mapSec.hidden = treeSec.hidden = summary.hidden = ctrl.hidden = !!doc;
    if (doc) renderState(past, doc, st.job);
  });
  el.append(h('h1', null, 'Topology'), slider, ctrl, summary, mapSec, treeSec, past, tip);
  tree.addEventListener('click', onClick);
  attachMapEvents(map, tip, () => ({ facts: st.facts, reserved: st.reserved, color: st.color }));

  function save() {
    app.setParams({ job: st.job, node: st.node, highlight: [...st.extra].join(','),
      color: st.color, pod_cpu: st.shape.cpu,
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
    if (!st.color || !res.includes(st.color)) st.color = defaultResource(res);
    const shapeInput = (k, label) => [h('label', { for: 'topo-' + k }, label),
      h('input', { id: 'topo-' + k, size: 6, value: st.shape[k], placeholder: 'auto',
        onchange: (e) => { st.shape[k] = e.target.value.trim(); save(); refresh(); } })];
    ctrl.append(
      h('label', { for: 'topo-color' }, 'Resource'),
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
        'Collapse the tree'));
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
    names.push(...st.extra);
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
    drawMap(j);
    el.querySelector('#topo-used-h').textContent = `${st.color} used`;
    clear(tree, h('ul', { role: 'group' }, renderDomain(st.tree.root, 0, ctx)));
    if (focused !== undefined) {
      const b = tree.querySelector(`button[data-toggle="${CSS.escape(focused)}"]`);
      if (b) b.focus();
    }
  }

  // The map: every node, the selected job's placed pods (hl) and nominated nodes (hlnom).
  function drawMap(j) {
    const hl = new Set(), nom = new Set();
    if (j) for (const m of j.members || []) {
      if (m.node) hl.add(m.node);
      if (m.nominatedNode) nom.add(m.nominatedNode);
    }
    if (st.node) hl.add(st.node);
    for (const n of st.extra) hl.add(n);
    clear(legend, mapLegend(st.color, true));
    renderMap(map, { tree: st.tree, facts: st.facts, reserved: st.reserved },
      { color: st.color, hl, nominatedHl: nom });
  }

  function drawSummary(j, names) {
    const t = st.tree;
    const q = query();
    const marks = { cordoned: 0, notReady: 0 };
    for (const f of st.facts.values()) {
      if (f.cordoned) marks.cordoned++;
      if (f.notReady) marks.notReady++;
    }
    clear(summary,
      t.topology === null ? h('p', { class: 'note note-info' },
        'No ClusterNetworkTopology "default": all nodes are shown under the cluster.') : null,
      h('p', { class: 'muted' }, `${t.root.nodeCount} node${t.root.nodeCount === 1 ? '' : 's'}` +
        (marks.cordoned ? `, ${marks.cordoned} cordoned` : '') +
        (marks.notReady ? `, ${marks.notReady} NotReady` : '') + '. Largest gang: how many pods of ' +
        shapeText(t.shape) + (q.like ? ` (the pod shape of ${q.like})` : '') +
        ' each domain can still take now (computed by musterd).'),
      j ? h('p', { class: 'hl-summary' }, 'Job ', jobLink(j.id), ` (${j.state}): ` +
        `${plural((j.members || []).filter((m) => m.node).length, 'pod')} placed, ` +
        `${(j.members || []).filter((m) => m.nominatedNode).length} nominated; ` +
        `${plural(names.size, 'highlighted node')}.`) : null,
      st.node && !j ? h('p', { class: 'hl-summary' }, `Node ${st.node} highlighted.`) : null,
      st.extra.size && !j ? h('p', { class: 'hl-summary' }, `${plural(st.extra.size, 'node')} highlighted: ` +
        [...st.extra].join(', ')) : null);
  }

  // The bar fills with what is used and the label says used (the swatch's colour is the
  // free share, as on the map).
  function occupancy(x) {
    const r = st.color;
    const frac = freeFrac(x, r);
    const cap = x.cap[r] || 0;
    const used = Math.min(cap, x.used[r] || 0);
    const free = Math.max(0, cap - used);
    return h('span', { class: 'occ', title: `${r}: ${fmtQty(used, r)} used, ${fmtQty(free, r)} free of ${fmtQty(cap, r)}` },
      h('span', { class: 'swatch', style: { background: cap ? colour(frac) : '#bbb' } }),
      h('span', { class: 'occbar' }, h('span', { style: { width: (cap ? (100 * used) / cap : 0).toFixed(0) + '%' } })),
      h('span', { class: 'occtxt' }, `${fmtQty(used, r)} / ${fmtQty(cap, r)} used`));
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
      h('span', { class: 'dname', style: { paddingLeft: depth * 18 + 'px' } },
        h('span', { class: 'layer' }, d.layer), ' ', d.name),
      h('span', { class: 'count' }, `${d.nodeCount} node${d.nodeCount === 1 ? '' : 's'}`),
      occupancy(d),
      h('span', { class: 'gang', title: 'largest gang of the pod shape this domain can still take' },
        d.gang === undefined ? '' : String(d.gang)),
      h('span', null, d.hl ? h('span', { class: 'hlcount' }, `${d.hl} highlighted`) : null),
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
    const nameCell = (extra) => h('span', { class: 'dname mono', style: { paddingLeft: depth * 18 + 'px' } },
      h('a', { href: '#/nodes/' + encodeURIComponent(name) }, name), extra);
    if (!n) return h('li', attrs, h('div', { class: 'row' }, h('span'), nameCell(''),
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
    const f = st.facts.get(name);
    const marks = [n.spec && n.spec.unschedulable ? 'cordoned' : '', f && f.notReady ? 'NotReady' : '']
      .filter(Boolean);
    const npods = (n.pods || []).length;
    return h('li', attrs, h('div', { class: 'row' }, h('span'),
      nameCell(marks.length ? h('span', { class: 'nmark' }, ` (${marks.join(', ')})`) : ''),
      h('span', { class: 'count' }, `${npods} pod${npods === 1 ? '' : 's'}`),
      occupancy(x),
      h('span', { class: 'gang' }, ctx.nominated.get(name) ?
        `${ctx.nominated.get(name)} nominated ` : '', reservedMark(ctx.reserved, name)),
      h('span'),
      jobsList([...count.entries()].sort((a, b) => b[1] - a[1]))));
  }

  async function refresh(reveal) {
    const first = !st.tree;
    const [body, jobs, nodemap, reserved] = await Promise.all([getJSON('/api/v1/topology', query()),
      loadJobs(), getJSON('/api/v1/nodemap'), loadReservations()]);
    st.facts = mapFacts(nodemap);
    st.reserved = reserved;
    st.tree = indexTree(body);
    if (!st.noGpu && !st.tree.root.cap[GPU] && query().pod_gpu === '1') {
      st.noGpu = true; // no GPUs at all: the default shape is one CPU
      st.tree = indexTree(await getJSON('/api/v1/topology', query()));
    }
    st.jobs = jobs.sort((a, b) => a.id.localeCompare(b.id));
    if (first) for (const id of firstUsefulOpen(st.tree)) st.open.add(id);
    if (first || reveal) for (const id of highlight(st.tree, hlNames().names)) st.open.add(id);
    await loadNodes(true);
    draw();
  }
  return { refresh, render: drawMap };
}
