// topomap.js - the cluster map: every node one cell, grouped in boxes by the topology's
// domains (any depth: the tree of GET /api/v1/topology), coloured by the free share of one
// resource, with marks for cordoned, tainted and NotReady nodes, nominations, reservations
// and a highlighted job's pods. Hovering a cell shows the node; a cell links to its page.
//
// renderMap(el, data, opts) draws from its arguments only, so any source of cluster state
// can feed it: the topology page gives it the live state (GET /api/v1/topology +
// GET /api/v1/nodemap, mapFacts()), the time slider a past one (nodeFacts() turns a Node
// list in Kubernetes shape into the same facts).
//   data.tree:  indexTree(GET /api/v1/topology) (topomodel.js): the grouping
//   data.facts: Map node name -> {cap: {res: n}, used: {res: n}, cordoned, notReady,
//               taints: [{key, value, effect}], pods, nominated} (amounts in cores / units)
//   data.reserved: Map node name -> the reservation holding it ({job, expectedStart}:
//               loadReservations() of reserve.js), or null
//   opts.color: the resource to colour by; opts.hl: Set of highlighted node names;
//   opts.nominatedHl: Set of the highlighted job's nominated nodes.
// attachMapEvents adds the hover tooltip and the click-through to the node page once.
// One cell per node and one box per domain: 5,000 nodes are ~5,200 elements, built once per
// draw (bench/ui_topology.sh times it).
import { fmtQty, parseQty } from './api.js';
import { clear, h } from './dom.js';
import { colour } from './topomodel.js';

// Kubernetes marks an unhealthy node with these taints (node lifecycle controller).
const NOT_READY_TAINTS = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);

// A node's facts with its marks worked out once (not on every draw): notReady also from
// the not-ready / unreachable taints; tainted = a taint that keeps pods off (NoSchedule,
// NoExecute) other than those.
function fact(f) {
  f.notReady = f.notReady || f.taints.some((t) => NOT_READY_TAINTS.has(t.key));
  f.blocking = f.taints.filter((t) => t.effect !== 'PreferNoSchedule' && !NOT_READY_TAINTS.has(t.key));
  return f;
}

// Facts from GET /api/v1/nodemap (numbers already).
export function mapFacts(body) {
  const m = new Map();
  for (const n of body.items || [])
    m.set(n.name, fact({ cap: n.allocatable || {}, used: n.used || {}, cordoned: !!n.unschedulable,
      notReady: !!n.notReady, taints: n.taints || [], pods: n.pods || 0,
      nominated: n.nominated || 0 }));
  return m;
}

// Facts from Node objects in Kubernetes shape (as GET /api/v1/nodes/{name} or a past state
// lists them): used from usage.requested when present; pods and nominated when given as
// counts (podCount, nominated) or pod lists (pods).
export function nodeFacts(nodes) {
  const m = new Map();
  const q = (o) => Object.fromEntries(Object.entries(o || {}).map(([r, v]) => [r, parseQty(v) || 0]));
  for (const n of nodes) {
    const u = n.usage || {};
    const st = n.status || {};
    const ready = (st.conditions || []).find((c) => c.type === 'Ready');
    m.set(n.metadata.name, fact({ cap: q(u.allocatable || st.allocatable), used: q(u.requested),
      cordoned: !!(n.spec && n.spec.unschedulable), notReady: !!ready && ready.status !== 'True',
      taints: (n.spec && n.spec.taints) || [],
      pods: Array.isArray(n.pods) ? n.pods.length : n.podCount || 0, nominated: n.nominated || 0 }));
  }
  return m;
}

export function freeOf(f, r) {
  const cap = f.cap[r] || 0;
  return { cap, free: Math.max(0, cap - (f.used[r] || 0)) };
}

// The resource to colour by when none is chosen: the first of GPUs, cpu, memory the cluster
// has (resources is resourceOrder()ed, topomodel.js).
export function defaultResource(resources) {
  return resources[0] || 'cpu';
}

// What hovering a cell says: free of the resource, pods, every mark.
export function cellText(name, f, r, reserved) {
  if (!f) return name;
  const { cap, free } = freeOf(f, r);
  const bits = [`${name}: ${fmtQty(free, r)} of ${fmtQty(cap, r)} ${r} free`, `${f.pods} pod${f.pods === 1 ? '' : 's'}`];
  if (f.notReady) bits.push('NotReady');
  if (f.cordoned) bits.push('cordoned');
  if (f.blocking.length) bits.push('tainted ' + f.blocking.map((t) => `${t.key}${t.value ? '=' + t.value : ''}:${t.effect}`).join(', '));
  if (f.nominated) bits.push(`${f.nominated} nominated`);
  if (reserved) bits.push(`reserved for ${reserved.job}` +
    (reserved.expectedStart ? ` (expected start ${reserved.expectedStart})` : ''));
  return bits.join(', ');
}

// colour() of the free share in 1% steps, made once each (5,000 cells share ~100 strings)
const COLOURS = Array.from({ length: 101 }, (_, i) => colour(i / 100));
const NO_RESOURCE = '#9aa3b2';

// A cell: a plain element, no link and no label of its own (5,000 of them), so a draw stays
// cheap; the map's click and hover handlers find the node by data-node, and every node has a
// real link in the tree below the map (the keyboard's and screen readers' way in).
function renderCell(name, f, opts, reserved) {
  let cls = 'cell';
  let bg = NO_RESOURCE;
  if (f) {
    const cap = f.cap[opts.color] || 0;
    if (cap) bg = COLOURS[Math.round((100 * Math.max(0, cap - (f.used[opts.color] || 0))) / cap)];
    if (f.cordoned) cls += ' cordoned';
    if (f.notReady) cls += ' notready';
    if (f.blocking.length) cls += ' tainted';
    if (f.nominated) cls += ' nom';
  }
  if (reserved) cls += ' reserved';
  if (opts.hl && opts.hl.has(name)) cls += ' hl';
  if (opts.nominatedHl && opts.nominatedHl.has(name)) cls += ' hlnom';
  const c = document.createElement('div');
  c.className = cls;
  c.dataset.node = name;
  c.style.background = bg;
  return c;
}

function domainTitle(d, r) {
  const cap = d.cap[r] || 0;
  const free = Math.max(0, cap - (d.used[r] || 0));
  return `${d.layer} ${d.name}: ${d.nodeCount} node${d.nodeCount === 1 ? '' : 's'}, ` +
    `${fmtQty(free, r)} of ${fmtQty(cap, r)} ${r} free`;
}

function renderBox(d, data, opts, depth) {
  const r = opts.color;
  const cap = d.cap[r] || 0;
  const free = Math.max(0, cap - (d.used[r] || 0));
  const label = h('div', { class: 'mlabel', title: domainTitle(d, r) },
    h('span', { class: 'mname' }, d.name), ' ',
    h('span', { class: 'mfree' }, `${fmtQty(free, r)}/${fmtQty(cap, r)} free`));
  const box = h('div', { class: 'mbox depth-' + Math.min(depth, 3) + (d.hl ? ' hasl' : ''),
    'data-domain': d.id || '/', role: 'group', 'aria-label': domainTitle(d, r) }, label);
  if (d.children.length)
    box.append(h('div', { class: 'mkids' }, d.children.map((c) => renderBox(c, data, opts, depth + 1))));
  if (d.nodes.length) {
    const cells = document.createElement('div');
    cells.className = 'cells';
    for (const n of d.nodes)
      cells.append(renderCell(n, data.facts.get(n), opts, data.reserved && data.reserved.get(n)));
    box.append(cells);
  }
  return box;
}

// Draws the map into el (replacing what it held). Returns el.
export function renderMap(el, data, opts) {
  const root = data.tree.root;
  // the cluster box is the map itself: its children are the top-level domains
  const top = root.children.length ? root.children.map((c) => renderBox(c, data, opts, 0)) :
    [renderBox(root, data, opts, 0)];
  if (root.children.length && root.nodes.length) { // nodes outside every domain
    const cap = {}, used = {};
    for (const n of root.nodes) {
      const f = data.facts.get(n);
      if (f) for (const [r, v] of Object.entries(f.cap)) {
        cap[r] = (cap[r] || 0) + v;
        used[r] = (used[r] || 0) + (f.used[r] || 0);
      }
    }
    top.push(renderBox({ ...root, id: '/outside', name: 'outside the topology', layer: 'no domain',
      nodeCount: root.nodes.length, cap, used, hl: 0, children: [] }, data, opts, 0));
  }
  // cells grow on small clusters (the demo's 36 nodes), stay small on big ones
  const big = data.tree.root.nodeCount <= 600;
  clear(el, h('div', { class: 'map' + (big ? ' big' : '') }, top));
  return el;
}

// The legend for renderMap: the colour scale and every mark.
export function mapLegend(r, reservationsKnown) {
  const stops = [0, 0.25, 0.5, 0.75, 1].map((f) => colour(f)).join(', ');
  return h('div', { class: 'mlegend', 'aria-label': 'map legend' },
    h('span', null, `free ${r}: none`),
    h('span', { class: 'ramp', style: { background: `linear-gradient(90deg, ${stops})` } }),
    h('span', null, 'all'),
    h('span', { class: 'cell demo cordoned' }), h('span', null, 'cordoned'),
    h('span', { class: 'cell demo tainted' }), h('span', null, 'tainted'),
    h('span', { class: 'cell demo notready' }), h('span', null, 'NotReady'),
    h('span', { class: 'cell demo nom' }), h('span', null, 'nominated pods'),
    reservationsKnown ? [h('span', { class: 'cell demo reserved' }), h('span', null, 'reserved')] : null,
    h('span', { class: 'cell demo hl' }), h('span', null, 'highlighted job'));
}

// Hovering a cell shows cellText in tip (one element, event delegation); clicking opens the
// node's page. data() returns what the map was last drawn from ({facts, reserved, color}).
export function attachMapEvents(mapEl, tip, data) {
  mapEl.addEventListener('mouseover', (e) => {
    const c = e.target.closest('.cell[data-node]');
    if (!c) { tip.hidden = true; return; }
    const d = data();
    const name = c.dataset.node;
    tip.textContent = cellText(name, d.facts.get(name), d.color, d.reserved && d.reserved.get(name));
    tip.hidden = false;
    const r = c.getBoundingClientRect();
    tip.style.left = Math.round(r.left + window.scrollX) + 'px';
    tip.style.top = Math.round(r.bottom + window.scrollY + 4) + 'px';
  });
  mapEl.addEventListener('mouseleave', () => { tip.hidden = true; });
  mapEl.addEventListener('click', (e) => {
    const c = e.target.closest('.cell[data-node]');
    if (c) location.hash = '#/nodes/' + encodeURIComponent(c.dataset.node);
  });
}
