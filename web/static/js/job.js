// job.js - one job: members and their nodes, the why document, preemptions, audit trail.
import { getJSON, getNDJSON, HttpError, jobPath } from './api.js';
import { auditSummary, loadLedger } from './data.js';
import { age, clear, fmtTime, h, jobLink, kv, nodeLink, note, stateBadge, table } from './dom.js';
import { renderWhy } from './why.js';

export function mount(el, route) {
  const id = route.parts.slice(1, 3).join('/');
  const head = h('div');
  const members = h('section', { 'aria-labelledby': 'job-members' });
  const why = h('section', { 'aria-labelledby': 'why-h', class: 'why' });
  const pre = h('section', { 'aria-labelledby': 'job-pre' });
  const trail = h('section', { 'aria-labelledby': 'job-audit' });
  el.append(h('p', { class: 'crumbs' }, h('a', { href: '#/jobs' }, 'Jobs'), ' / ', id),
    h('h1', null, 'Job ', h('span', { class: 'mono' }, id)), head, why, members, pre, trail);

  async function refresh() {
    let job;
    try {
      job = await getJSON(jobPath(id));
    } catch (e) {
      if (e instanceof HttpError && e.status === 404) {
        clear(head, note('warn', `job '${id}' not found`));
        return;
      }
      throw e;
    }
    const [doc, recs, ledger] = await Promise.all([
      getJSON(jobPath(id) + '/why').catch((e) => ({ error: e.message })),
      getNDJSON('/api/v1/audit', { job: id }),
      loadLedger({ job: id }).then(async (asPreemptor) => {
        if (asPreemptor === null) return null;
        const asVictim = await loadLedger({ victim: id });
        return { asPreemptor, asVictim: asVictim || [] };
      }),
    ]);
    drawHead(head, job);
    drawMembers(members, job);
    clear(why, h('h2', { id: 'why-h' }, 'Why'), doc.error ? note('error', doc.error) :
      renderWhy(doc));
    drawPreemptions(pre, id, ledger, recs);
    drawTrail(trail, id, recs);
  }
  return { refresh };
}

function drawHead(el, j) {
  const group = j.gangGroup || [];
  clear(el, kv([
    ['state', stateBadge(j.state)],
    ['kind', j.kind],
    ['priority', j.priority],
    ['minMember', j.minMember],
    ['placed / pending', `${j.placed ?? 0} / ${j.pending ?? 0}`],
    group.length ? ['gang group', group.map((g, i) => [i ? ', ' : '', jobLink(g)])] : null,
    ['created', `${fmtTime(j.creationTimestamp)} (${age(j.creationTimestamp)} ago)`],
    ['topology', h('a', { href: `#/topology?job=${encodeURIComponent(j.id)}` },
      'show placement in the topology tree')],
  ]));
}

function drawMembers(el, j) {
  const mem = j.members || [];
  clear(el, h('h2', { id: 'job-members' }, `Members (${mem.length})`), table([
    { label: 'pod', get: (m) => h('span', { class: 'mono' }, m.name) },
    { label: 'phase', get: (m) => m.phase || '–' },
    { label: 'node', get: (m) => nodeLink(m.node, j.id) },
    { label: 'nominated node', get: (m) => nodeLink(m.nominatedNode, j.id) },
  ], mem, { cls: 'compact members', empty: 'no member pods' }));
}

function drawPreemptions(el, id, ledger, recs) {
  if (ledger === null) {
    const pre = recs.filter((r) => r.kind === 'preempted' || r.kind === 'evicted');
    clear(el, h('h2', { id: 'job-pre' }, 'Preemptions'),
      note('info', 'The preemption ledger (GET /api/v1/preemptions) is not available in this ' +
        'musterd.'), pre.length ? table(trailCols(), pre, { cls: 'compact' }) : null);
    return;
  }
  const row = (e, role) => h('li', null, `cycle ${e.cycle}, ${fmtTime(e.ts)}: `,
    role === 'preemptor' ? ['preempted ', e.victimJobs.length ?
      e.victimJobs.map((v, i) => [i ? ', ' : '', jobLink(v)]) : `${e.victims.length} pod(s)`] :
      ['preempted by ', jobLink(e.preemptor)],
    ' ', h('a', { href: `#/preemptions?job=${encodeURIComponent(id)}` }, '(ledger)'));
  // job= may match either side depending on musterd; the entry itself says which side.
  const seen = new Set();
  const items = [...ledger.asPreemptor, ...ledger.asVictim].filter((e) => {
    const k = `${e.cycle}|${e.ts}|${e.preemptor}|${e.triggerPod}`;
    return !seen.has(k) && seen.add(k);
  }).map((e) => row(e, e.preemptor === id ? 'preemptor' : 'victim'));
  clear(el, h('h2', { id: 'job-pre' }, 'Preemptions'),
    items.length ? h('ul', { class: 'prelist' }, items) :
      h('p', { class: 'muted' }, 'this job has neither preempted nor been preempted'));
}

function trailCols() {
  return [
    { label: 'seq', cls: 'num', get: (r) => r.seq },
    { label: 'time', get: (r) => fmtTime(r.ts) },
    { label: 'cycle', cls: 'num', get: (r) => r.cycle },
    { label: 'kind', get: (r) => h('span', { class: 'kind kind-' + r.kind }, r.kind) },
    { label: 'detail', get: (r) => auditSummary(r) },
  ];
}

function drawTrail(el, id, recs) {
  const shown = recs.slice(-100).reverse();
  clear(el, h('h2', { id: 'job-audit' }, `Audit trail (${recs.length} records)`),
    recs.length > shown.length ? h('p', { class: 'muted' }, `latest ${shown.length} shown; `,
      h('a', { href: `#/audit?job=${encodeURIComponent(id)}` }, 'browse all')) :
      h('p', null, h('a', { href: `#/audit?job=${encodeURIComponent(id)}` }, 'open in the audit browser')),
    table(trailCols(), shown, { cls: 'compact trail', empty: 'no audit records' }));
}
