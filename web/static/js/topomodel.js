// topomodel.js - the topology tree of GET /api/v1/topology indexed for the page: every
// domain gets an id (its path of names), its parent, parsed capacity and use; nodes map to
// their domain so a job's pods can be highlighted. The tree itself (domains, totals, jobs,
// largest gang) is computed by musterd only.
import { parseQty } from './api.js';
import { resourceOrder } from './data.js';

function quantities(obj) {
  const out = {};
  for (const [r, q] of Object.entries(obj || {})) out[r] = parseQty(q) || 0;
  return out;
}

// body: the answer of GET /api/v1/topology. Returns {root, index: id -> domain,
// nodeDomain: node name -> domain, resources, shape}.
export function indexTree(body) {
  const index = new Map();
  const nodeDomain = new Map();
  const walk = (d, id, parent) => {
    const dom = { id, parent, name: d.name, layer: d.layer, nodeCount: d.nodeNum || 0,
      cap: quantities(d.capacity), used: quantities(d.used), jobs: d.jobs || [],
      jobCount: d.jobCount ?? (d.jobs || []).length,
      gang: d.largestGang, nodes: [...(d.nodes || [])].sort(byName), children: [], hl: 0 };
    index.set(id, dom);
    for (const n of dom.nodes) nodeDomain.set(n, dom);
    dom.children = (d.children || []).map((c) => walk(c, id + '/' + c.name, dom))
      .sort((a, b) => byName(a.name, b.name));
    return dom;
  };
  const root = walk(body.root || {}, '', null);
  root.name = 'cluster';
  const res = resourceOrder(Object.keys(root.cap).filter((r) => r !== 'pods'));
  return { root, index, nodeDomain, resources: res, shape: body.shape || null,
    topology: body.topology ?? null };
}

function byName(a, b) {
  return a.localeCompare(b, undefined, { numeric: true });
}

// Marks the domains holding any of the given node names (d.hl = how many); returns the ids
// of the domains to open so every marked node is visible.
export function highlight(tree, nodeNames) {
  const open = new Set();
  for (const d of tree.index.values()) d.hl = 0;
  for (const name of new Set(nodeNames)) {
    for (let d = tree.nodeDomain.get(name); d; d = d.parent) d.hl++, open.add(d.id);
  }
  return open;
}

// Free fraction of a resource in a domain or node, 0..1 (1 when it has none of it).
export function freeFrac(x, r) {
  const cap = x.cap[r] || 0;
  return cap > 0 ? Math.max(0, cap - (x.used[r] || 0)) / cap : 1;
}

// A colour from red (nothing free) through amber to green (all free).
export function colour(frac) {
  return `hsl(${Math.round(frac * 120)}, 65%, 42%)`;
}

// The domains to open on a first visit: the root, then each level in turn while the rows it
// would add stay few (at most `rows`), so the tree opens where domains start to differ
// (8 spines of 25 blocks: the spines; the demo's 2 spines of 3 blocks: down to the blocks).
// Leaf domains stay closed (opening one lists its nodes).
export function firstUsefulOpen(tree, rows = 40) {
  const open = [tree.root.id];
  let level = [tree.root];
  let shown = 1 + tree.root.children.length;
  for (;;) {
    const next = level.flatMap((d) => d.children).filter((d) => d.children.length);
    const add = next.reduce((k, d) => k + d.children.length, 0);
    if (!next.length || shown + add > rows) return open;
    for (const d of next) open.push(d.id);
    shown += add;
    level = next;
  }
}

// "1 nvidia.com/gpu" / "2 cpu, 4Gi memory": a pod shape of GET /api/v1/topology (quantity
// strings) for people; zero and "pods" left out.
export function shapeText(shape) {
  const bits = Object.entries(shape || {}).filter(([r, v]) => r !== 'pods' && parseQty(v) > 0)
    .map(([r, v]) => `${v} ${r}`);
  return bits.length ? bits.join(', ') : 'no requests';
}
