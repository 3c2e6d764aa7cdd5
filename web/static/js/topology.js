// topology.js - the topology tree page: layer -> domain -> node, occupancy coloured by the
// resource the user picks, jobs placed, the largest gang of a pod shape each domain can still
// take, collapsible and rendered lazily (only open domains are in the DOM, long node lists
// in pages of 100), and a job's pods highlighted.
import { fmtQty, getJSON, getOptional, parseQty } from './api.js';
import { loadJobs, loadNodes, podJobs } from './data.js';
import { clear, h, jobLink, note } from './dom.js';
import { buildTree, colour, freeFrac, highlight, layersOf, serverGangs } from './topomodel.js';

const PAGE = 100;
const SHOW_JOBS = 4;

export function mount(el, route, app) {
  const p = route.params;
  const st = { tree: null, jobs: [], color: p.color || '', job: p.job || '', node: p.node || '',
    shape: { cpu: p.pod_cpu || '', memory: p.pod_memory || '', gpu: p.pod_gpu || '' },
    open: new Set(['']), shown: new Map(), gangs: null, info: null, jobShape: null };
  const ctrl = h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); refresh(); } });
  const summary = h('div', { class: 'topo-summary', 'aria-live': 'polite' });
  const tree = h('div', { class: 'tree', role: 'tree', 'aria-label': 'topology' });
  el.append(h('h1', null, 'Topology'), ctrl, summary, tree);
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
    const res = st.tree ? st.tree.resources : [];
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
    st.jobShape = null;
    save();
    if (id) await loadJobShape();
    draw(true);
  }

  // The requests of the selected job's first member, used as the default pod shape.
  async function loadJobShape() {
    const j = st.jobs.find((x) => x.id === st.job);
    if (!j || !(j.members || []).length) return;
    try {
      const pod = await getJSON(`/api/v1/pods/${encodeURIComponent(j.namespace)}/` +
        encodeURIComponent(j.members[0].name));
      const req = {};
      for (const c of (pod.spec && pod.spec.containers) || [])
        for (const [r, q] of Object.entries((c.resources && c.resources.requests) || {}))
          req[r] = (req[r] || 0) + (parseQty(q) || 0);
      st.jobShape = req;
    } catch (e) { st.jobShape = null; }
  }

  function shape() {
    const s = {};
    const res = st.tree ? st.tree.resources : [];
    const gpu = res.find((r) => /gpu/i.test(r));
    if (st.shape.cpu) s.cpu = parseQty(st.shape.cpu);
    if (st.shape.memory) s.memory = parseQty(st.shape.memory);
    if (st.shape.gpu && gpu) s[gpu] = parseQty(st.shape.gpu);
    if (Object.keys(s).length) return s;
    if (st.jobShape) return Object.fromEntries(Object.entries(st.jobShape).filter(([r]) => r !== 'pods'));
    return gpu ? { [gpu]: 1 } : { cpu: 1 };
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
  }

  let nodes = [], cnt = null;
  function draw(reveal) {
    if (!st.tree && !nodes.length) return;
    const podJob = podJobs(st.jobs);
    const sh = shape();
    st.tree = buildTree(nodes, layersOf(cnt), podJob, sh);
    drawControls();
    const j = st.jobs.find((x) => x.id === st.job);
    const names = new Set();
    if (j) for (const m of j.members || []) {
      if (m.node) names.add(m.node);
      if (m.nominatedNode) names.add(m.nominatedNode);
    }
    if (st.node) names.add(st.node);
    const toOpen = highlight(st.tree, names);
    if (reveal) for (const id of toOpen) st.open.add(id);
    drawSummary(j, names, sh);
    const focused = document.activeElement && document.activeElement.dataset ?
      document.activeElement.dataset.toggle : undefined;
    clear(tree, h('ul', { role: 'group' }, renderDomain(st.tree.root, 0)));
    if (focused !== undefined) {
      const b = tree.querySelector(`button[data-toggle="${CSS.escape(focused)}"]`);
      if (b) b.focus();
    }
  }

  function drawSummary(j, names, sh) {
    const shapeText = Object.entries(sh).map(([r, v]) => `${r}=${fmtQty(v, r)}`).join(', ');
    clear(summary,
      st.info,
      h('p', { class: 'muted' }, `${st.tree.root.nodeCount} nodes. Largest gang = pods of ` +
        `{${shapeText}} the domain can still take` + (st.gangs ? ' (from musterd)' :
        ' (computed here from free capacity)') + '.'),
      j ? h('p', { class: 'hl-summary' }, 'Job ', jobLink(j.id), ` (${j.state}): ` +
        `${(j.members || []).filter((m) => m.node).length} pod(s) placed on ${names.size} ` +
        'highlighted node(s).') : null,
      st.node && !j ? h('p', { class: 'hl-summary' }, `Node ${st.node} highlighted.`) : null);
  }

  function gangOf(d) {
    if (st.gangs) {
      const v = st.gangs.get(d.layer + ':' + d.name) ?? st.gangs.get(d.name);
      if (v !== undefined) return v;
    }
    return d.slots;
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

  function jobsList(m) {
    const list = [...m.entries()].sort((a, b) => b[1] - a[1]);
    if (!list.length) return h('span', { class: 'muted' }, 'no jobs');
    return h('span', { class: 'jobs' }, list.slice(0, SHOW_JOBS).map(([id, k], i) =>
      [i ? ', ' : '', h('a', { href: '#/jobs/' + id, class: id === st.job ? 'job sel' : 'job' }, id),
        h('span', { class: 'muted' }, `×${k}`)]),
    list.length > SHOW_JOBS ? h('span', { class: 'muted' }, ` +${list.length - SHOW_JOBS} more`) : null);
  }

  function renderDomain(d, depth) {
    const open = st.open.has(d.id);
    const kids = [...d.children.values()].sort((a, b) => a.name.localeCompare(b.name, undefined,
      { numeric: true }));
    const leafy = !kids.length;
    const row = h('div', { class: 'row domain' + (d.hl ? ' hl' : '') },
      h('button', { type: 'button', class: 'toggle', 'data-toggle': d.id, 'aria-expanded': String(open),
        'aria-label': `${open ? 'collapse' : 'expand'} ${d.layer} ${d.name}` }, open ? '▾' : '▸'),
      h('span', { class: 'dname' }, h('span', { class: 'layer' }, d.layer), ' ', d.name),
      h('span', { class: 'count' }, `${d.nodeCount} nodes`),
      occupancy(d),
      h('span', { class: 'gang', title: 'largest gang this domain can still take' },
        `largest gang ${gangOf(d)}`),
      d.hl ? h('span', { class: 'hlcount' }, `${d.hl} highlighted`) : null,
      jobsList(d.jobs));
    const li = h('li', { role: 'treeitem', 'aria-expanded': String(open), 'aria-level': depth + 1,
      'data-domain': d.id || '/', class: d.hl ? 'hl' : null }, row);
    if (!open) return li;
    if (!leafy) {
      li.append(h('ul', { role: 'group' }, kids.map((k) => renderDomain(k, depth + 1))));
    } else {
      const limit = st.shown.get(d.id) || PAGE;
      const list = d.nodes.slice(0, limit);
      li.append(h('ul', { role: 'group', class: 'nodes' }, list.map((n) => renderNode(n, depth + 1)),
        d.nodes.length > limit ? h('li', null, h('button', { type: 'button', 'data-more': d.id },
          `show more (${d.nodes.length - limit} hidden)`)) : null));
    }
    return li;
  }

  function renderNode(n, depth) {
    return h('li', { role: 'treeitem', 'aria-level': depth + 1, 'data-node': n.name,
      class: 'node' + (n.hl ? ' hl' : '') },
      h('div', { class: 'row' },
        h('span', { class: 'dname mono' }, n.name, n.unschedulable ? ' (cordoned)' : ''),
        h('span', { class: 'count' }, `${n.pods.length} pods`),
        occupancy(n),
        h('span', { class: 'gang' }, `fits ${n.slots}`),
        jobsList(n.jobs)));
  }

  async function refresh() {
    const first = !st.tree;
    const [ns, topos, jobs] = await Promise.all([loadNodes(),
      getJSON('/api/v1/clusternetworktopologies'), loadJobs()]);
    nodes = ns;
    st.jobs = jobs.sort((a, b) => a.id.localeCompare(b.id));
    const items = topos.items || [];
    cnt = items.find((t) => t.metadata && t.metadata.name === 'default') || items[0] || null;
    st.info = cnt ? null : note('info', 'No ClusterNetworkTopology: all nodes are shown under one domain.');
    const sh = st.shape;
    const q = st.job && !sh.cpu && !sh.memory && !sh.gpu ? { like: st.job } :
      { pod_cpu: sh.cpu, pod_memory: sh.memory, pod_gpu: sh.gpu };
    let body = null;
    try {
      body = await getOptional('/api/v1/topology', q);
    } catch (e) { body = null; }
    const g = body ? serverGangs(body) : null;
    st.gangs = g && g.size ? g : null;
    if (st.job && !st.jobShape) await loadJobShape();
    draw(first);
  }
  return { refresh };
}
