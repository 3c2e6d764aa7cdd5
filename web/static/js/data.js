// data.js - data shared by pages: cluster totals, pod -> job, the audit tail, the ledger.
import { getJSON, getNDJSON, getOptional, parseQty } from './api.js';

export const DECISION_KINDS = ['placed', 'discarded', 'unschedulable', 'preempted', 'nominated',
  'evicted', 'bound'];

// Resources in a fixed, readable order: GPUs first, then cpu, memory, the rest, pods last.
export function resourceOrder(names) {
  const rank = (r) => (/gpu/i.test(r) ? 0 : r === 'cpu' ? 1 : r === 'memory' ? 2 :
    r === 'pods' ? 9 : 5);
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

// Sum of allocatable / requested per resource over nodes (from GET /api/v1/nodes usage).
export function totals(nodes) {
  const cap = {}, used = {};
  for (const n of nodes) {
    const u = n.usage || {};
    const alloc = u.allocatable || (n.status && n.status.allocatable) || {};
    for (const [r, q] of Object.entries(alloc)) cap[r] = (cap[r] || 0) + (parseQty(q) || 0);
    for (const [r, q] of Object.entries(u.requested || {}))
      used[r] = (used[r] || 0) + (parseQty(q) || 0);
  }
  return { cap, used, resources: resourceOrder(Object.keys(cap)) };
}

// "ns/pod" -> job id, from the jobs list (members carry pod names in the job's namespace).
export function podJobs(jobs) {
  const m = new Map();
  for (const j of jobs)
    for (const mem of j.members || []) m.set(`${j.namespace}/${mem.name}`, j.id);
  return m;
}

export async function loadJobs(stateFilter) {
  const body = await getJSON('/api/v1/jobs', { state: stateFilter });
  return body.items || [];
}

export async function loadNodes() {
  const body = await getJSON('/api/v1/nodes');
  return body.items || [];
}

// The audit log's last hour, kept incrementally: the first call reads since=now-1h, later
// calls only records after the last seq seen. Records older than an hour are dropped.
const tail = { records: [], lastSeq: 0, started: false };

export async function auditTail() {
  const hourAgo = Date.now() - 3600e3;
  const q = tail.started ? { from: tail.lastSeq + 1 } : { since: new Date(hourAgo).toISOString() };
  const recs = await getNDJSON('/api/v1/audit', q);
  tail.started = true;
  for (const r of recs) if (r.seq > tail.lastSeq) tail.records.push(r), tail.lastSeq = r.seq;
  const keep = tail.records.findIndex((r) => Date.parse(r.ts) >= hourAgo);
  if (keep > 0) tail.records.splice(0, keep);
  if (tail.records.length > 20000) tail.records.splice(0, tail.records.length - 20000);
  return tail.records;
}

// Normalizes one ledger entry (GET /api/v1/preemptions) so pages can rely on the fields.
export function normEntry(e) {
  const victims = (e.victims || []).map((v) => (typeof v === 'string' ? { pod: v } : v));
  const preemptor = e.preemptor && typeof e.preemptor === 'object' ?
    e.preemptor.job || e.preemptor.id : e.preemptor || e.job;
  return {
    raw: e, cycle: e.cycle, ts: e.ts, preemptor, triggerPod: e.triggerPod || e.trigger_pod,
    victims, victimJobs: [...new Set(victims.map((v) => v.job).filter(Boolean))],
    nominatedNodes: e.nominatedNodes || [], cost: e.cost || {}, bound: e.bound,
    boundAt: e.boundAt,
  };
}

// The preemption ledger, or null when this musterd has no /api/v1/preemptions route.
export async function loadLedger(query) {
  const body = await getOptional('/api/v1/preemptions', query);
  if (body === null) return null;
  const items = Array.isArray(body) ? body : body.items || body.entries || [];
  return items.map(normEntry);
}

// Ledger-like entries rebuilt from audit "preempted" / "evicted" records (fallback).
export function ledgerFromAudit(records) {
  return records.filter((r) => r.kind === 'preempted').map((r) => normEntry({
    cycle: r.cycle, ts: r.ts, preemptor: r.job, triggerPod: r.triggerPod,
    victims: r.victims || (r.pods || []).map((p, i) => ({ pod: p, node: (r.nodes || [])[i] })),
    cost: r.cost, nominatedNodes: r.nominatedNodes,
  }));
}

// One line describing an audit record, for tables.
export function auditSummary(r) {
  const bits = [];
  if (r.reason) bits.push(r.reason);
  if (r.message) bits.push(r.message);
  if (r.object) bits.push(`${r.object.kind} ${r.object.name}${r.action ? ' ' + r.action : ''}`);
  if (r.kind === 'cycle')
    bits.push(`placed ${r.placed ?? 0}, jobs placed ${r.jobsPlaced ?? 0}, unschedulable ` +
      `${r.unschedulable ?? 0}, ${Number(r.durationMs || 0).toFixed(2)} ms`);
  if (r.pods && r.kind !== 'discarded') bits.push(`${r.pods.length} pod(s)`);
  if (r.nodes && r.nodes.length) bits.push('on ' + [...new Set(r.nodes)].slice(0, 6).join(', ') +
    (new Set(r.nodes).size > 6 ? ', …' : ''));
  return bits.join(' · ');
}
