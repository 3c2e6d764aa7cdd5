// why.js - the why document (GET /api/v1/jobs/{ns}/{name}/why) rendered for people: primary
// reason, every blocker, gang shortfall, node-filter histogram as a bar chart, best topology
// domains and domains tried, the preemption verdict and victims, the job's queue (share,
// rank, allocated against deserved, capability), jobs ahead and the reason history.
import { bar, classBadge, fmtTime, h, jobLink, kv, plural, table } from './dom.js';

const SKIP = new Set(['class', 'code', 'message']);

// doc: the why document; ledger: the job's ledger entries as preemptor (optional).
export function renderWhy(doc, ledger) {
  return h('div', { class: 'whydoc' },
    primary(doc),
    blockers(doc.blockers || []),
    gang(doc.gang || []),
    nodeFilter(doc.nodeFilter),
    topology(doc.topology && { ...doc.topology, job: doc.job }, !!doc.placement),
    preemption(doc.preemption && { ...doc.preemption, job: doc.job }, ledger),
    queue(doc.queue),
    ahead(doc.ahead || []),
    history(doc.history || []),
    h('p', { class: 'muted' }, `computed at cycle ${doc.cycle ?? '–'}, audit seq `,
      doc.auditSeq ? h('a', { href: `#/audit?from=${doc.auditSeq}` }, String(doc.auditSeq)) : '–'));
}

function primary(doc) {
  const p = doc.primary;
  if (!p) return h('p', { class: 'primary ok' }, `state ${doc.state || '?'}: nothing blocks this job`);
  return h('div', { class: 'primary', role: 'note', 'aria-label': 'primary reason' },
    classBadge(p.class), ' ', h('strong', { class: 'code' }, p.code), h('p', null, p.message));
}

function extras(b) {
  const parts = Object.entries(b).filter(([k]) => !SKIP.has(k)).map(([k, v]) =>
    h('span', { class: 'extra' }, `${k}: `, renderValue(k, v)));
  return parts.length ? h('div', { class: 'extras' }, parts) : null;
}

// A value of a blocker's detail as text, jobs as links; an object (a preemptor of a victim,
// say) as its members "key value; ..." in brackets, never as raw JSON.
function renderValue(k, v, depth = 0) {
  if (typeof v === 'string' && /(^|[^a-z])(job|podGroup|preemptor)$/i.test(k) && v.includes('/'))
    return jobLink(v);
  if (Array.isArray(v)) return v.map((x, i) => [i ? ', ' : '', renderValue(k, x, depth + 1)]);
  if (v && typeof v === 'object') {
    if (depth > 2) return '…';
    const parts = Object.entries(v).filter(([, x]) => x !== null && x !== undefined &&
      !(Array.isArray(x) && !x.length));
    return h('span', { class: 'extra-obj' }, '(',
      parts.map(([kk, x], i) => [i ? '; ' : '', `${kk} `, renderValue(kk, x, depth + 1)]), ')');
  }
  return String(v);
}

function blockers(list) {
  return h('section', { class: 'blockers' }, h('h3', null, `Blockers (${list.length})`),
    list.length ? h('ul', null, list.map((b) => h('li', { 'data-code': b.code },
      classBadge(b.class), ' ', h('strong', { class: 'code' }, b.code), ' ', b.message || '',
      extras(b)))) : h('p', { class: 'muted' }, 'none'));
}

function gang(list) {
  if (!list.length) return null;
  return h('section', { class: 'gang' }, h('h3', null, 'Gang'), table([
    { label: 'pod group', get: (g) => jobLink(g.podGroup) },
    { label: 'minMember', cls: 'num', get: (g) => g.minMember },
    { label: 'members', cls: 'num', get: (g) => g.members },
    { label: 'bound', cls: 'num', get: (g) => g.bound },
    { label: 'placeable', cls: 'num', get: (g) => g.placeable },
    { label: 'shortfall', get: (g) => {
      const have = (g.placeable ?? 0) + (g.bound ?? 0);
      const short = Math.max(0, (g.minMember ?? 0) - have);
      return h('span', { class: short ? 'short' : 'okv' },
        short ? `short by ${short} (minMember ${g.minMember}, placeable ${have})` : 'satisfied');
    } },
  ], list, { cls: 'compact' }));
}

function nodeFilter(nf) {
  if (!nf) return null;
  const total = nf.total || 0;
  const rows = [{ reason: 'fit', nodes: nf.fit || 0, cls: 'fit' },
    ...(nf.reasons || []).map((r) => ({ ...r, cls: 'rej' }))];
  return h('section', { class: 'nodefilter' }, h('h3', null, 'Node filter'),
    h('p', { class: 'summary' }, nf.summary || `${nf.fit || 0}/${total} nodes fit`),
    h('div', { class: 'histo', role: 'list', 'aria-label': 'node filter histogram' },
      rows.map((r) => h('div', { class: 'hrow', role: 'listitem' },
        h('span', { class: 'hlabel' }, r.reason,
          r.need !== undefined ? h('span', { class: 'muted' },
            ` (need ${r.need}, max free ${r.maxFree ?? '?'})`) : ''),
        bar(r.nodes, total, `${r.nodes} / ${total} nodes`, r.cls)))));
}

// The topology part: strategy and layer, the summary line, how many domains hold the job,
// the best domains (pods each holds and what limits it) and every domain tried.
function topology(t, placed) {
  if (!t) return h('section', { class: 'topo' }, h('h3', null, 'Topology'),
    h('p', { class: 'muted' }, placed ? 'no topology part in this decision: the job was ' +
      'placed without a gather (it has no gather strategy, or it took nodes chosen earlier, ' +
      'such as those it was nominated to)' :
      'no gather strategy (or no ClusterNetworkTopology) for this job'));
  const needed = t.needed ?? t.jobPods ?? 0;
  // The tree with this job's (placed or nominated) pods highlighted.
  const topoHref = () => `#/topology?job=${encodeURIComponent(t.job || '')}`;
  const layer = t.layer || '';
  return h('section', { class: 'topo' }, h('h3', null, 'Topology'),
    h('p', { class: 'tsummary' }, h('strong', null, `${t.strategy || '?'} ${layer}`),
      t.summary ? ': ' + t.summary.replace(`${t.strategy} ${layer}: `, '') : ''),
    h('p', { class: 'muted' }, `${t.jobPods ?? '?'} pending pod(s), ${needed} needed in one ` +
      `domain; ${t.domainsHolding ?? 0} ${layer} domain(s) hold the job, ${t.candidates ?? 0} ` +
      `candidate(s) counting narrower domains and nodes, ${t.domainsTried ?? 0} tried.`),
    (t.best || []).length ? [h('h4', null, 'Best domains'), table([
      { label: 'domain', get: (d) => h('a', { href: topoHref(d) }, `${d.layer} ${d.name}`) },
      { label: 'holds', get: (d) => bar(d.holds ?? 0, needed, `${d.holds ?? 0} of ${needed} pods`,
        (d.holds ?? 0) >= needed ? 'fit' : 'rej') },
      { label: 'limited by', get: (d) => d.limit ? h('span', { class: 'mono' }, d.limit) :
        h('span', { class: 'okv' }, 'holds the job') },
    ], t.best, { cls: 'compact best' })] : null,
    (t.tried || []).length ? [h('h4', null, `Domains tried (${t.tried.length})`), table([
      { label: 'domain', get: (d) => h('a', { href: topoHref(d) }, `${d.layer} ${d.name}`) },
      { label: 'offer slots', cls: 'num', get: (d) => d.offerSlots },
      { label: 'placed', cls: 'num', get: (d) => d.placed },
      { label: 'result', get: (d) => h('span', { class: d.result === 'placed' ? 'okv' : 'short' },
        d.result) },
    ], t.tried, { cls: 'compact tried' })] : null);
}


// The preemption part: attempted or not and why, the verdict's numbers, and for an
// attempt the victims (from the ledger entry it names, when the page has it).
function preemption(p, ledger) {
  if (!p) return null;
  // The entry the verdict names; while waiting, the job's latest entry.
  const entry = !ledger || !ledger.length ? null : p.ledger !== undefined ?
    ledger.find((e) => e.id === p.ledger) : p.code === 'PreemptionWaiting' ?
      ledger[ledger.length - 1] : null;
  const verdict = p.attempted ? 'preempting' : p.code === 'PreemptionWaiting' ? 'waiting' :
    'not attempted';
  const nn = p.nominatedNodes || [];
  return h('section', { class: 'preempt', 'data-verdict': verdict },
    h('h3', null, 'Preemption'),
    h('p', null, h('span', { class: 'verdict verdict-' + verdict.replace(' ', '-') }, verdict),
      p.code ? [' ', h('strong', { class: 'code' }, p.code)] : '', p.reason ? ': ' + p.reason : ''),
    kv([
      p.victims !== undefined ? ['victims', `${plural(p.victims, 'pod')}` +
        (p.gangsBroken !== undefined ? `, ${plural(p.gangsBroken, 'gang')} broken` : '')] : null,
      entry ? ['victim jobs', [entry.victimJobs.map((j, i) => [i ? ', ' : '', jobLink(j)]),
        ` (${entry.victims.length} pods, cycle ${entry.cycle}, ledger entry ${entry.id})`]] : null,
      nn.length ? ['nominated nodes', `${nn.length}: ${nn.slice(0, 8).join(', ')}` +
        (nn.length > 8 ? ', …' : '')] : null,
      p.terminating !== undefined ? ['waiting for', `${p.terminating} victim(s) to terminate`] : null,
      p.potentialVictims !== undefined ? ['potential victims', p.potentialVictims] : null,
      p.nodesFailedForResources !== undefined ?
        ['nodes failed for resources', p.nodesFailedForResources] : null,
      p.ledger !== undefined ? ['ledger', h('a', { href: '#/preemptions?job=' +
        encodeURIComponent(p.job || '') }, `entry ${p.ledger}`)] : null,
    ]));
}

// "cpu 4, nvidia.com/gpu 8" from a map of quantities; "none" when empty.
const quantities = (m) => (Object.keys(m || {}).length ?
  Object.entries(m).map(([r, q]) => `${r} ${q}`).join(', ') : 'none');

// The job's queue as the attempt saw it (docs/why.md, "queue"), linked to the queues page.
function queue(q) {
  if (!q) return null;
  return h('section', { class: 'wqueue', 'data-queue': q.name }, h('h3', null, 'Queue'), kv([
    ['queue', h('a', { href: '#/queues?queue=' + encodeURIComponent(q.name) }, q.name)],
    ['share', `${Number(q.share ?? 0).toFixed(3)}` +
      (q.dominantResource ? ` (dominant resource ${q.dominantResource})` : '')],
    ['rank', q.rank ? `${q.rank} in the cycle's queue order` : '–'],
    ['allocated', quantities(q.allocated)],
    ['deserved', quantities(q.deserved)],
    ['capability', Object.keys(q.capability || {}).length ? quantities(q.capability) : 'unlimited'],
    Object.keys(q.guarantee || {}).length ? ['guarantee', quantities(q.guarantee)] : null,
  ]));
}

function ahead(list) {
  if (!list.length) return null;
  return h('section', null, h('h3', null, `Jobs ahead (${list.length})`),
    h('ul', null, list.map((a) => h('li', null, typeof a === 'string' ? jobLink(a) :
      [jobLink(a.job || a.id), extras(a)]))));
}

function history(list) {
  return h('section', { class: 'history' }, h('h3', null, 'Reason history'), table([
    { label: 'cycle', cls: 'num', get: (x) => x.cycle },
    { label: 'time', get: (x) => fmtTime(x.ts) },
    { label: 'reason', get: (x) => h('span', { class: 'code' }, x.code) },
  ], [...list].reverse(), { cls: 'compact', empty: 'no history' }));
}
