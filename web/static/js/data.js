// data.js - data shared by pages: cluster totals, jobs, the newest audit records, the ledger.
import { getJSON, getNDJSON, parseQty } from './api.js';
import { plural } from './dom.js';

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

// The states a job can be in, in the scheduler's order (GET /api/v1/jobstates: the one
// table behind every job's state). Asked once per page load; a failed answer is asked again.
let jobStates = null;
export function loadJobStates() {
  if (!jobStates) {
    jobStates = getJSON('/api/v1/jobstates')
      .then((body) => (body.items || []).map((s) => s.name))
      .catch((e) => { jobStates = null; throw e; });
  }
  return jobStates;
}

export async function loadJobs(stateFilter) {
  const body = await getJSON('/api/v1/jobs', { state: stateFilter });
  return body.items || [];
}

export async function loadNodes() {
  const body = await getJSON('/api/v1/nodes');
  return body.items || [];
}

// The newest N audit records (GET /api/v1/audit?tail=N), oldest first.
export function auditRecent(n) {
  return getNDJSON('/api/v1/audit', { tail: n });
}

// One ledger entry of GET /api/v1/preemptions with the victims' jobs (deduplicated) added.
export function normEntry(e) {
  const victims = e.victims || [];
  return { ...e, victims, victimJobs: [...new Set(victims.map((v) => v.job).filter(Boolean))],
    nominatedNodes: e.nominatedNodes || [], cost: e.cost || {} };
}

// The preemption ledger, oldest first; query: {job (preemptor), victim, since}.
export async function loadLedger(query) {
  const body = await getJSON('/api/v1/preemptions', query);
  return (body.items || []).map(normEntry);
}

// "8 pods, 1 gang broken (batch/etl-a)" from a ledger entry's cost.
export function costText(c) {
  const bits = [`${plural(c.pods ?? 0, 'pod')}`, `${plural(c.gangsBroken ?? 0, 'gang')} broken`];
  if ((c.brokenGangs || []).length) bits[1] += ` (${c.brokenGangs.join(', ')})`;
  return bits.join(', ');
}

// "bound after 12.3 s on the nominated nodes" / "not bound yet".
export function boundText(e) {
  if (!e.bound) return 'not bound yet';
  const lat = e.latencyMs !== null && e.latencyMs !== undefined ?
    ` after ${(e.latencyMs / 1000).toFixed(1)} s` : '';
  return `bound${lat}` + (e.boundOnNominatedNodes === false ? ' (not on the nominated nodes)' :
    e.boundOnNominatedNodes ? ' on the nominated nodes' : '');
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
  if (r.pods && r.kind !== 'discarded') bits.push(`${plural(r.pods.length, 'pod')}`);
  if (r.nodes && r.nodes.length) bits.push('on ' + [...new Set(r.nodes)].slice(0, 6).join(', ') +
    (new Set(r.nodes).size > 6 ? ', …' : ''));
  return bits.join(' · ');
}

