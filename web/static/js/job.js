// job.js - one job: members and their nodes, the why document, preemptions, audit trail.
import { getJSON, getNDJSON, HttpError, jobPath } from './api.js';
import { auditSummary, boundText, costText, loadLedger } from './data.js';
import { age, clear, fmtTime, h, jobLink, kv, nodeLink, note, plural, stateBadge, table } from './dom.js';
import { timeRows } from './reserve.js';
import { renderJobAt, timeSlider } from './timeslider.js';
import { renderWhy } from './why.js';

export function mount(el, route) {
  const id = route.parts.slice(1, 3).join('/');
  const head = h('div');
  const members = h('section', { 'aria-labelledby': 'job-members' });
  const why = h('section', { 'aria-labelledby': 'why-h', class: 'why' });
  const pre = h('section', { 'aria-labelledby': 'job-pre' });
  const trail = h('section', { 'aria-labelledby': 'job-audit' });
  const then = h('section', { 'aria-labelledby': 'job-then', class: 'then', hidden: true });
  const slider = timeSlider((doc) => {
    then.hidden = !doc;
    if (doc) renderJobAt(then, doc, id).catch((e) => clear(then, note('error', e.message)));
  });
  el.append(h('p', { class: 'crumbs' }, h('a', { href: '#/jobs' }, 'Jobs'), ' / ', id),
    h('h1', null, 'Job ', h('span', { class: 'mono' }, id)), slider, then, head, why, members, pre,
    trail);

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
      loadLedger({ job: id }),
      loadLedger({ victim: id }),
    ]).then(([d, r, asPreemptor, asVictim]) => [d, r, { asPreemptor, asVictim }]);
    drawHead(head, job);
    drawMembers(members, job);
    clear(why, h('h2', { id: 'why-h' }, 'Why'), doc.error ? note('error', doc.error) :
      renderWhy(doc, ledger.asPreemptor));
    drawPreemptions(pre, id, ledger);
    drawTrail(trail, id, recs);
  }
  return { refresh };
}

// Every preemption that took pods of the job (the ledger's victim record), each with its
// ledger entry; older records name only the last preemptor.
function preemptedBy(j) {
  const pb = j.preemptedBy;
  const all = pb.preemptors && pb.preemptors.length ? pb.preemptors :
    [{ preemptor: pb.preemptor, cycle: pb.cycle, ts: pb.ts, ledger: pb.id }];
  return h('span', { class: 'preempted-by' }, all.map((p, i) => [i ? '; ' : '',
    jobLink(p.preemptor), ` in cycle ${p.cycle}, ${fmtTime(p.ts)} `,
    h('a', { href: '#/preemptions?job=' + encodeURIComponent(p.preemptor) },
      `(ledger entry ${p.ledger})`)]));
}

function drawHead(el, j) {
  const group = j.gangGroup || [];
  clear(el, kv([
    ['state', stateBadge(j.state)],
    ['kind', j.kind],
    ['priority', j.priority],
    ['minMember', j.minMember],
    ['placed / pending', `${j.placed ?? 0} / ${j.pending ?? 0}`],
    j.preemptedBy ? ['preempted by', preemptedBy(j)] : null,
    j.preemptedBy?.roomTakenBy?.length ? ['room taken by', h('span', { class: 'room-taken' },
      j.preemptedBy.roomTakenBy.map((r, i) => [i ? '; ' : '', jobLink(r.preemptor),
        ` took the room of ${r.pods.length} of its pods (cycle ${r.cycle}, `,
        h('a', { href: '#/preemptions?job=' + encodeURIComponent(r.preemptor) },
          `ledger entry ${r.ledger}`), ')']))] : null,
    j.preemptedBy?.retainedUntil ? ['retained until', `${fmtTime(j.preemptedBy.retainedUntil)} ` +
      `(its pods are gone since ${fmtTime(j.preemptedBy.goneAt)})`] : null,
    group.length ? ['gang group', group.map((g, i) => [i ? ', ' : '', jobLink(g)])] : null,
    ['created', `${fmtTime(j.creationTimestamp)} (${age(j.creationTimestamp)} ago)`],
    ...timeRows(j),
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

// The ledger entries this job made (victims, cost, bound) and suffered (preemptor).
function drawPreemptions(el, id, ledger) {
  const made = ledger.asPreemptor, suffered = ledger.asVictim;
  const mine = (e) => e.victims.filter((v) => v.job === id);
  clear(el, h('h2', { id: 'job-pre' }, 'Preemptions'),
    !made.length && !suffered.length ? h('p', { class: 'muted' },
      'this job has neither preempted nor been preempted') : null,
    made.length ? h('ul', { class: 'prelist made' }, made.map((e) => h('li', { 'data-entry': e.id },
      `cycle ${e.cycle}, ${fmtTime(e.ts)}: preempted ${plural(e.victims.length, 'pod')} of `,
      e.victimJobs.map((v, i) => [i ? ', ' : '', jobLink(v)]),
      (e.roomFrom || []).length ? h('span', { class: 'room-from' }, ' and took the room of ',
        e.roomFrom.map((r, i) => [i ? '; ' : '', `${r.pods.length} pod(s) of `,
          r.victims.map((v, k) => [k ? ', ' : '', jobLink(v)]), ' that ', jobLink(r.preemptor),
          ` preempted (ledger entry ${r.ledger})`])) : null,
      ` · cost ${costText(e.cost)} · ${boundText(e)} `,
      h('a', { href: `#/preemptions?job=${encodeURIComponent(id)}` }, `(ledger entry ${e.id})`)))) : null,
    suffered.length ? h('ul', { class: 'prelist suffered' }, suffered.map((e) =>
      h('li', { 'data-entry': e.id }, `cycle ${e.cycle}, ${fmtTime(e.ts)}: preempted by `,
        jobLink(e.preemptor), ` (priority ${e.priority ?? '?'}): ${plural(mine(e).length, 'pod')} evicted ` +
        `(${mine(e).map((v) => v.pod).join(', ')}) `,
        h('a', { href: `#/preemptions?victim=${encodeURIComponent(id)}` }, `(ledger entry ${e.id})`)))) :
      null);
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
