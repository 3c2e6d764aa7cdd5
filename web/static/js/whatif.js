// whatif.js - "Would it fit?" (#/whatif): a pasted manifest, nodes to cordon and objects to
// delete, sent to POST /api/v1/whatif; the answer is what the next cycle would do (each
// job placed where or why not, the preemptions it would make, the other jobs it would
// change), with its nodes shown on the topology page. Nothing is written (docs/whatif.md).
import { postManifest } from './api.js';
import { clear, h, jobLink, nodeLink, note, stateBadge, table } from './dom.js';

const EXAMPLE = `apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default}
spec:
  containers:
  - name: main
    image: x
    resources: {requests: {nvidia.com/gpu: "8"}}
`;

export function mount(el) {
  const text = h('textarea', { id: 'wi-manifest', rows: 14, spellcheck: false, class: 'mono',
    placeholder: EXAMPLE });
  const cordon = h('input', { id: 'wi-cordon', type: 'text', placeholder: 'n1,n2' });
  const del = h('input', { id: 'wi-delete', type: 'text', placeholder: 'node/n3,pod/ns/name' });
  const out = h('section', { id: 'wi-answer', 'aria-live': 'polite', 'aria-labelledby': 'wi-h2' });
  const go = h('button', { type: 'submit' }, 'Try it');
  const form = h('form', { class: 'whatif', onsubmit: (e) => { e.preventDefault(); ask(); } },
    h('label', { for: 'wi-manifest' }, 'Jobs or changes (YAML or JSON manifest)'), text,
    h('div', { class: 'filters' },
      h('label', { for: 'wi-cordon' }, 'Cordon nodes'), cordon,
      h('label', { for: 'wi-delete' }, 'Delete'), del, go));
  el.append(h('h1', null, 'Would it fit?'),
    h('p', { class: 'muted' }, 'The next scheduling cycle, run on a copy of the cluster with ' +
      'these changes: nothing is applied, nothing is recorded.'), form, out);

  async function ask() {
    go.disabled = true;
    clear(out, h('p', { class: 'muted' }, 'asking musterd…'));
    try {
      const ans = await postManifest('/api/v1/whatif',
        { cordon: cordon.value.trim(), delete: del.value.trim() }, text.value);
      draw(out, ans);
    } catch (e) {
      clear(out, h('h2', { id: 'wi-h2' }, 'Not tried'), note('error', e.message),
        (e.errors || []).length ? h('ul', { class: 'errors' },
          e.errors.map((x) => h('li', null, x.message))) : null);
    } finally {
      go.disabled = false;
    }
  }
  return { refresh: async () => {} };
}

function nodesOf(job, field) {
  return (job.members || []).map((m) => m[field]).filter(Boolean);
}

function draw(sec, ans) {
  const b = ans.basedOn || {};
  clear(sec, h('h2', { id: 'wi-h2' }, 'What the next cycle would do'),
    h('p', { class: 'muted' }, `From cycle ${b.cycle}, audit seq ${b.auditSeq}; nothing written.`));
  const jobs = ans.jobs || [];
  if (jobs.length) {
    sec.append(table([
      { label: 'Job', get: (j) => h('span', { class: 'job' }, j.id) }, // not submitted: no page
      { label: 'State', get: (j) => stateBadge(j.state) },
      { label: 'Would place', get: (j) => (j.wouldPlace ? 'yes' : 'no') },
      { label: 'Nodes', get: (j) => {
        const on = nodesOf(j, 'node'), nom = nodesOf(j, 'nominatedNode');
        const list = on.length ? on : nom;
        if (!list.length) return '–';
        return h('span', null, on.length ? '' : 'nominated ',
          list.map((n, i) => [i ? ', ' : '', nodeLink(n)]),
          ' ', h('a', { class: 'map', href: '#/topology?highlight=' +
            encodeURIComponent([...new Set(list)].join(',')) }, '(on the topology)'));
      } },
      { label: 'Why', get: (j) => (j.wouldPlace ? '' : (j.why && j.why.primary &&
        j.why.primary.message) || '') },
    ], jobs));
  }
  const pre = ans.preemptions || [];
  if (pre.length) {
    sec.append(h('h3', null, 'Preemptions it would make'), h('ul', { class: 'victims' },
      pre.map((e) => h('li', null, jobLink(e.preemptor), ' preempts ',
        e.victims.length ? [...new Set(e.victims.map((v) => v.job))].map((j, i) => {
          const n = e.victims.filter((v) => v.job === j).length;
          return [i ? ', ' : '', jobLink(j), ` (${n} pod${n === 1 ? '' : 's'})`];
        }) : 'nothing',
        (e.roomFrom || []).map((r, i) => [i ? ', ' : '; takes the room ', jobLink(r.preemptor),
          "'s preemption frees (", (r.victims || []).map((v, k) => [k ? ', ' : '', jobLink(v)]),
          ')'])))));
  }
  const o = ans.others || {};
  const rows = ['displaced', 'placed', 'changed'].flatMap((k) => (o[k] || []).map((x) =>
    ({ ...x, what: k })));
  if (rows.length) {
    sec.append(h('h3', null, 'Other jobs it would change'), table([
      { label: 'Job', get: (x) => jobLink(x.id) },
      { label: 'What', get: (x) => x.what },
      { label: 'Before', get: (x) => stateBadge(x.before) },
      { label: 'After', get: (x) => stateBadge(x.after) },
    ], rows));
  }
  if (!jobs.length && !rows.length && !pre.length) sec.append(note('info', 'No job would change.'));
}
