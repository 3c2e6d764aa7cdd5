// topomodel.js - the topology tree built in the browser: layer -> domain -> node from the
// nodes' labels and the ClusterNetworkTopology's labelKeys, with per-domain capacity, use,
// jobs placed and the largest gang of a given pod shape each domain can still take.
import { parseQty } from './api.js';
import { resourceOrder } from './data.js';

// Layers from the root down (NodeTopologyLayer, the nodes themselves, excluded).
export function layersOf(cnt) {
  const spec = (cnt && cnt.spec && cnt.spec.networkTopologySpec) || [];
  const byParent = new Map(spec.map((l) => [(l.parentTopologyLayer || '').toLowerCase(), l]));
  const out = [];
  let cur = byParent.get('');
  while (cur && out.length < spec.length) {
    if (!/^nodetopologylayer$/i.test(cur.topologyLayer))
      out.push({ name: cur.topologyLayer, key: (cur.labelKey || [])[0] });
    cur = byParent.get(cur.topologyLayer.toLowerCase());
  }
  return out.filter((l) => l.key);
}

function domain(id, layer, name, parent) {
  return { id, layer, name, parent, children: new Map(), nodes: [], cap: {}, used: {},
    nodeCount: 0, jobs: new Map(), slots: 0, hl: 0 };
}

// Free slots of a node for one pod shape ({resource: amount}): how many such pods fit.
export function slotsOf(node, shape) {
  if (node.unschedulable) return 0;
  let n = Infinity;
  for (const [r, need] of Object.entries(shape)) {
    if (!(need > 0)) continue;
    n = Math.min(n, Math.floor(((node.cap[r] || 0) - (node.used[r] || 0)) / need + 1e-9));
  }
  if (isFinite(node.cap.pods)) n = Math.min(n, node.cap.pods - (node.used.pods || 0));
  return n === Infinity ? 0 : Math.max(0, n);
}

// nodes: GET /api/v1/nodes items; podJob: "ns/pod" -> job id; shape: pod requests.
export function buildTree(nodes, layers, podJob, shape) {
  const root = domain('', 'Cluster', 'cluster', null);
  const index = new Map([['', root]]);
  const nodeIndex = new Map();
  const res = new Set();
  for (const n of nodes) {
    const labels = (n.metadata && n.metadata.labels) || {};
    const u = n.usage || {};
    const nd = { name: n.metadata.name, cap: {}, used: {}, pods: n.pods || [], jobs: new Map(),
      unschedulable: !!(n.spec && n.spec.unschedulable), parent: null, hl: 0 };
    for (const [r, q] of Object.entries(u.allocatable || (n.status || {}).allocatable || {}))
      nd.cap[r] = parseQty(q) || 0, res.add(r);
    for (const [r, q] of Object.entries(u.requested || {})) nd.used[r] = parseQty(q) || 0;
    for (const p of nd.pods) {
      const j = podJob.get(p) || p;
      nd.jobs.set(j, (nd.jobs.get(j) || 0) + 1);
    }
    nd.slots = slotsOf(nd, shape);
    let d = root, id = '';
    for (const l of layers) {
      const v = labels[l.key] || '(unlabelled)';
      id += '/' + v;
      let c = index.get(id);
      if (!c) {
        c = domain(id, l.name, v, d);
        d.children.set(v, c);
        index.set(id, c);
      }
      d = c;
    }
    d.nodes.push(nd);
    nd.parent = d;
    nodeIndex.set(nd.name, nd);
    for (let a = d; a; a = a.parent) {
      a.nodeCount++;
      a.slots += nd.slots;
      for (const r of Object.keys(nd.cap)) a.cap[r] = (a.cap[r] || 0) + nd.cap[r];
      for (const r of Object.keys(nd.used)) a.used[r] = (a.used[r] || 0) + nd.used[r];
      for (const [j, k] of nd.jobs) a.jobs.set(j, (a.jobs.get(j) || 0) + k);
    }
  }
  for (const d of index.values()) d.nodes.sort((a, b) => a.name.localeCompare(b.name));
  return { root, index, nodeIndex, resources: resourceOrder(res) };
}

// Marks the nodes (and their domains) holding any of the given node names; returns the ids
// of the domains to open so every marked node is visible.
export function highlight(tree, nodeNames) {
  const open = new Set();
  for (const d of tree.index.values()) d.hl = 0;
  for (const n of tree.nodeIndex.values()) n.hl = 0;
  for (const name of nodeNames) {
    const n = tree.nodeIndex.get(name);
    if (!n || n.hl) continue;
    n.hl = 1;
    for (let d = n.parent; d; d = d.parent) d.hl++, open.add(d.id);
  }
  return open;
}

// Largest-gang numbers from GET /api/v1/topology when it exists: any object in the answer
// with a name and a largest-gang field, keyed by name (and layer/name).
export function serverGangs(body) {
  const out = new Map();
  const walk = (o, depth) => {
    if (!o || typeof o !== 'object' || depth > 12) return;
    if (Array.isArray(o)) return o.forEach((x) => walk(x, depth + 1));
    const g = o.largestGang ?? o.largest_gang ?? o.maxGang ?? o.largestGangFits;
    const name = o.name || o.domain;
    if (name && g !== undefined) {
      const v = typeof g === 'object' && g !== null ? g.pods ?? g.count ?? g.size : g;
      if (typeof v === 'number') {
        out.set(name, v);
        if (o.layer) out.set(o.layer + ':' + name, v);
      }
    }
    for (const v of Object.values(o)) if (v && typeof v === 'object') walk(v, depth + 1);
  };
  walk(body, 0);
  return out;
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
