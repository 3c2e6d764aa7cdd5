// timeslider.js - the time slider of the topology and job pages: pick an audit record (or a
// time, RFC 3339) and see the cluster as it was, from GET /api/v1/state?seq=N|at=T
// (docs/api.md "Time travel"). A page hooks it in with two calls:
//   el.append(timeSlider((doc) => ...));   doc: the ClusterState document, null for "now"
//   renderState(container, doc, jobId)    nodes by topology block, their pods, the jobs
import { getJSON, getNDJSON } from './api.js';
import { clear, fmtTime, h, jobLink, note, stateBadge, table } from './dom.js';

const BLOCK = /block/i;

export function timeSlider(onPick) {
  const range = h('input', { type: 'range', id: 'ts-range', min: 1, max: 1, value: 1,
    'aria-label': 'audit record to show the cluster at' });
  const label = h('output', { id: 'ts-label', for: 'ts-range', 'aria-live': 'polite' }, 'now');
  const at = h('input', { id: 'ts-at', size: 26, placeholder: '2026-11-27T14:02:00Z',
    'aria-label': 'time (RFC 3339)' });
  const msg = h('div', { class: 'ts-msg' });
  let last = 1, timer = null, asked = 0;
  const box = h('form', { class: 'timeslider', 'data-mode': 'now',
    onsubmit: (e) => { e.preventDefault(); pick({ at: at.value.trim() }); } },
  h('label', { for: 'ts-range' }, 'Time travel'), range, label,
  h('label', { for: 'ts-at' }, 'at'), at, h('button', { type: 'submit', id: 'ts-go' }, 'Go'),
  h('button', { type: 'button', id: 'ts-now', onclick: () => now() }, 'Now'), msg);

  range.addEventListener('input', () => {
    clearTimeout(timer);
    label.textContent = Number(range.value) >= last ? 'now' : `record ${range.value}`;
    timer = setTimeout(() => (Number(range.value) >= last ? now() : pick({ seq: range.value })), 250);
  });

  async function bounds() {
    const [first] = await getNDJSON('/api/v1/audit', { limit: 1 });
    const [tail] = await getNDJSON('/api/v1/audit', { tail: 1 });
    if (!tail) return;
    last = tail.seq;
    range.min = first ? first.seq : 1;
    range.max = last;
  }

  async function now() {
    await bounds().catch(() => {});
    range.value = last;
    label.textContent = 'now';
    box.dataset.mode = 'now';
    clear(msg);
    onPick(null);
  }

  async function pick(q) {
    const n = ++asked;
    clear(msg);
    let doc;
    try {
      doc = await getJSON('/api/v1/state', q);
    } catch (e) {
      if (n === asked) clear(msg, note('error', e.message));
      return;
    }
    if (n !== asked) return; // a later pick won
    range.value = doc.asOf.seq;
    label.textContent = `record ${doc.asOf.seq} · ${fmtTime(doc.asOf.ts)}`;
    box.dataset.mode = 'past';
    box.dataset.seq = doc.asOf.seq;
    onPick(doc);
  }

  bounds().then(() => { range.value = last; }).catch(() => {});
  return box;
}

// The block (a topology label naming a block, else the first topology label) of a node.
function blockOf(n) {
  const keys = Object.keys(n.labels || {});
  const k = keys.find((x) => BLOCK.test(x)) || keys.find((x) => /topology/.test(x));
  return k ? n.labels[k] : '(cluster)';
}

export function renderState(el, doc, jobId) {
  const pods = new Map(doc.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  const groups = new Map();
  for (const n of doc.nodes) {
    const b = blockOf(n);
    if (!groups.has(b)) groups.set(b, []);
    groups.get(b).push(n);
  }
  const podItem = (key) => {
    const p = pods.get(key) || { name: key, job: '', phase: '?' };
    return h('li', { class: 'past-pod' + (jobId && p.job === jobId ? ' hl' : '') +
      (p.deleting ? ' deleting' : ''), 'data-pod': key, 'data-job': p.job },
    `${p.name} (${p.job}, ${p.deleting ? 'Terminating' : p.phase})`);
  };
  const nominated = doc.pods.filter((p) => p.nominatedNodeName);
  clear(el,
    h('p', { class: 'past-head' }, `The cluster as of audit record ${doc.asOf.seq} ` +
      `(${fmtTime(doc.asOf.ts)}): ${doc.nodes.length} nodes, ${doc.pods.length} pods, ` +
      `${doc.jobs.length} jobs.`),
    [...groups.entries()].map(([b, nodes]) => h('section', { class: 'past-block', 'data-block': b },
      h('h3', null, b),
      h('ul', { class: 'past-nodes' }, nodes.map((n) => h('li', { class: 'past-node' +
        (n.unschedulable ? ' cordoned' : ''), 'data-node': n.name },
      h('span', { class: 'mono' }, n.name),
      h('ul', null, n.pods.map(podItem),
        nominated.filter((p) => p.nominatedNodeName === n.name).map((p) =>
          h('li', { class: 'past-pod nominated' + (jobId && p.job === jobId ? ' hl' : ''),
            'data-pod': `${p.namespace}/${p.name}` }, `${p.name} nominated (${p.job})`)))))))),
    h('h3', null, 'Jobs then'),
    table([
      { label: 'job', get: (j) => jobLink(j.id) },
      { label: 'state', get: (j) => stateBadge(j.state) },
      { label: 'queue', get: (j) => j.queue },
      { label: 'bound / min', get: (j) => `${j.bound} / ${j.minMember}` },
    ], doc.jobs, { cls: 'compact past-jobs', empty: 'no jobs' }));
}

// The job page's view of the past: the job's state and pods then, and its why then.
export async function renderJobAt(el, doc, id) {
  const j = doc.jobs.find((x) => x.id === id);
  const mine = doc.pods.filter((p) => p.job === id);
  let why = null;
  try {
    why = await getJSON(`/api/v1/jobs/${id}/why`, { seq: doc.asOf.seq });
  } catch (e) {
    why = { error: e.message };
  }
  clear(el,
    h('h2', { id: 'job-then' }, `As of audit record ${doc.asOf.seq} (${fmtTime(doc.asOf.ts)})`),
    j ? h('p', { class: 'then-state', 'data-state': j.state }, 'state ', stateBadge(j.state),
      ` · ${j.bound} of ${j.minMember} bound · queue ${j.queue}`) :
      note('info', `job '${id}' did not exist then`),
    why && why.primary ? h('p', { class: 'then-why' }, `why: ${why.primary.code}: ` +
      `${why.primary.message}`) : why && why.error ? h('p', { class: 'muted then-why' }, why.error) : null,
    table([
      { label: 'pod', get: (p) => h('span', { class: 'mono' }, p.name) },
      { label: 'phase', get: (p) => (p.deleting ? 'Terminating' : p.phase) },
      { label: 'node', get: (p) => p.node || '–' },
      { label: 'nominated node', get: (p) => p.nominatedNodeName || '–' },
    ], mine, { cls: 'compact then-pods', empty: 'no pods then' }));
}
