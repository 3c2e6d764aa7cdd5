// node.js - one node (#/nodes/NAME, where the cluster map's cells lead): health (Ready,
// cordoned, taints), its place in the topology, use per resource, the pods bound to it with
// their jobs, and the pods nominated to it (GET /api/v1/nodes/{name} and the jobs list).
import { fmtQty, getJSON, HttpError, parseQty } from './api.js';
import { loadJobs, podJobs, resourceOrder } from './data.js';
import { bar, clear, h, jobLink, kv, note, stateBadge, table } from './dom.js';

const TOPO_LABEL = /topology|zone|rack|block|spine/i;

export function mount(el, route) {
  const name = route.parts[1] || '';
  const body = h('div');
  el.append(h('p', { class: 'crumbs' }, h('a', { href: '#/topology' }, 'Topology'), ' / ', name),
    h('h1', null, 'Node ', h('span', { class: 'mono' }, name)), body);

  async function refresh() {
    let n;
    try {
      n = await getJSON('/api/v1/nodes/' + encodeURIComponent(name));
    } catch (e) {
      if (e instanceof HttpError && e.status === 404) {
        clear(body, note('warn', `node '${name}' not found`));
        return;
      }
      throw e;
    }
    const jobs = await loadJobs();
    draw(body, n, jobs);
  }
  return { refresh };
}

function health(n) {
  const ready = ((n.status || {}).conditions || []).find((c) => c.type === 'Ready');
  if (!ready) return h('span', { class: 'muted' }, 'no Ready condition reported (counted as Ready)');
  return ready.status === 'True' ? h('span', { class: 'okv' }, 'Ready') :
    h('span', { class: 'short' }, `NotReady (${ready.reason || ready.status})`);
}

function draw(el, n, jobs) {
  const spec = n.spec || {};
  const labels = (n.metadata || {}).labels || {};
  const u = n.usage || {};
  const alloc = u.allocatable || {}, req = u.requested || {};
  const name = n.metadata.name;
  const podJob = podJobs(jobs);
  const byJob = new Map(jobs.map((j) => [j.id, j]));
  const nominated = [];
  for (const j of jobs) for (const m of j.members || [])
    if (m.nominatedNode === name && !m.node) nominated.push({ job: j.id, pod: `${j.namespace}/${m.name}` });
  const taints = spec.taints || [];
  const res = resourceOrder(Object.keys(alloc));
  clear(el,
    kv([
      ['health', health(n)],
      ['schedulable', spec.unschedulable ? h('span', { class: 'short' }, 'no (cordoned)') : 'yes'],
      ['taints', taints.length ? h('ul', { class: 'taints' }, taints.map((t) =>
        h('li', { class: 'mono' }, `${t.key}${t.value ? '=' + t.value : ''}:${t.effect}`))) : 'none'],
      ['topology', Object.entries(labels).filter(([k]) => TOPO_LABEL.test(k)).map(([k, v]) =>
        h('div', { class: 'mono' }, `${k}=${v}`))],
      ['map', h('a', { href: '#/topology?node=' + encodeURIComponent(name) }, 'show on the cluster map')],
    ]),
    h('section', { 'aria-labelledby': 'node-use' }, h('h2', { id: 'node-use' }, 'Use'),
      h('div', { class: 'meters' }, res.map((r) => {
        const cap = parseQty(alloc[r]) || 0, used = parseQty(req[r] || '0') || 0;
        return h('div', { class: 'meter' }, h('span', { class: 'res' }, r),
          bar(used, cap, `${fmtQty(used, r)} / ${fmtQty(cap, r)} used, ${fmtQty(Math.max(0, cap - used), r)} free`));
      }))),
    h('section', { 'aria-labelledby': 'node-pods' }, h('h2', { id: 'node-pods' },
      `Pods bound (${(n.pods || []).length})`),
    table([
      { label: 'pod', get: (p) => h('span', { class: 'mono' }, p) },
      { label: 'job', get: (p) => jobLink(podJob.get(p)) },
      { label: 'job state', get: (p) => (byJob.get(podJob.get(p)) ? stateBadge(byJob.get(podJob.get(p)).state) : '–') },
    ], n.pods || [], { cls: 'compact node-pods', empty: 'no pods' })),
    h('section', { 'aria-labelledby': 'node-nom' }, h('h2', { id: 'node-nom' },
      `Pods nominated (${nominated.length})`),
    table([
      { label: 'pod', get: (x) => h('span', { class: 'mono' }, x.pod) },
      { label: 'job', get: (x) => jobLink(x.job) },
    ], nominated, { cls: 'compact node-nom', empty: 'no pod waits for this node' })));
}
