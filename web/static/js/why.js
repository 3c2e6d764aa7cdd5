// why.js - the why document (GET /api/v1/jobs/{ns}/{name}/why) rendered for people: primary
// reason, every blocker, gang shortfall, node-filter histogram as a bar chart, best topology
// domains, preemption verdict, jobs ahead and the reason history.
import { bar, classBadge, fmtTime, h, jobLink, kv, table } from './dom.js';

const SKIP = new Set(['class', 'code', 'message']);

export function renderWhy(doc) {
  return h('div', { class: 'whydoc' },
    primary(doc),
    blockers(doc.blockers || []),
    gang(doc.gang || []),
    nodeFilter(doc.nodeFilter),
    topology(doc.topology),
    preemption(doc.preemption),
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

function renderValue(k, v) {
  if (typeof v === 'string' && /(^|[^a-z])(job|podGroup|preemptor)$/i.test(k) && v.includes('/'))
    return jobLink(v);
  if (Array.isArray(v)) return v.map((x, i) => [i ? ', ' : '', typeof x === 'object' ?
    JSON.stringify(x) : String(x)]);
  if (v && typeof v === 'object') return JSON.stringify(v);
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

// The topology part's shape is open: a list of domains, or an object holding one
// ({best|domains|candidates: [...]}) plus scalar fields; each domain is shown as a row.
function topology(t) {
  if (t === null || t === undefined) return h('section', { class: 'topo' },
    h('h3', null, 'Topology'), h('p', { class: 'muted' }, 'no topology constraint was evaluated'));
  const list = Array.isArray(t) ? t : t.best || t.domains || t.candidates || t.tried || [];
  const scalars = Array.isArray(t) ? [] : Object.entries(t).filter(([, v]) =>
    !Array.isArray(v) && (typeof v !== 'object' || v === null));
  const keys = [...new Set(list.flatMap((d) => Object.keys(d || {})))];
  return h('section', { class: 'topo' }, h('h3', null, 'Topology: best domains'),
    scalars.length ? kv(scalars.map(([k, v]) => [k, String(v)])) : null,
    list.length ? table(keys.map((k) => ({ label: k, get: (d) => renderValue(k, d[k] ?? '–') })),
      list, { cls: 'compact' }) : null);
}

function preemption(p) {
  if (!p) return null;
  const verdict = p.attempted ? (p.ok || p.succeeded || p.victims ? 'preempting' : 'attempted')
    : 'not attempted';
  return h('section', { class: 'preempt' }, h('h3', null, 'Preemption verdict'),
    h('p', null, h('strong', null, verdict), p.reason ? ': ' + p.reason : ''),
    kv(Object.entries(p).filter(([k]) => k !== 'reason' && k !== 'attempted')
      .map(([k, v]) => [k, renderValue(k, v)])));
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
