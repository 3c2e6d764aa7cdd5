// overview.js - cluster capacity and use, jobs by state, recent decisions (the audit log's
// newest records), the last hour's preemptions.
import { fmtQty } from './api.js';
import { auditRecent, auditSummary, DECISION_KINDS, loadJobs, loadJobStates, loadLedger,
  loadNodes, totals } from './data.js';
import { bar, clear, fmtTime, h, jobLink, stateBadge, table } from './dom.js';
import { clusterCharts, loadSeries, windowPicker } from './trends.js';

// Recent decisions: the newest audit records (GET /api/v1/audit?tail=N), repeats folded.
const TAIL = 500;

export function mount(el, route, app) {
  let since = route.params.since || '1h';
  const trends = h('section', { 'aria-labelledby': 'ov-trends' });
  const cap = h('section', { 'aria-labelledby': 'ov-cap' });
  const states = h('section', { 'aria-labelledby': 'ov-states' });
  const decisions = h('section', { 'aria-labelledby': 'ov-dec' });
  const pre = h('section', { 'aria-labelledby': 'ov-pre' });
  el.append(h('h1', null, 'Overview'),
    h('div', { class: 'cols' }, h('div', null, cap, states), h('div', null, pre)), trends, decisions);

  async function refresh() {
    const hourAgo = new Date(Date.now() - 3600e3).toISOString();
    const [nodes, jobs, names, recs, ledger, ts] = await Promise.all([loadNodes(), loadJobs(),
      loadJobStates(), auditRecent(TAIL), loadLedger({ since: hourAgo }),
      loadSeries(since, ['cluster.', 'jobs.', 'placements', 'preemptions', 'wait.', 'cycle.'])]);
    drawTrends(ts);
    drawCapacity(cap, nodes);
    drawStates(states, jobs, names);
    drawDecisions(decisions, recs);
    drawPreemptions(pre, ledger);
  }
  function drawTrends(ts) {
    const focused = document.activeElement && document.activeElement.id === 'ov-window';
    clear(trends, h('h2', { id: 'ov-trends' }, 'Over time'),
      windowPicker('ov-window', since, (w) => { since = w; app.setParams({ since: w }); refresh(); }),
      clusterCharts(ts));
    if (focused) trends.querySelector('#ov-window').focus();
  }
  return { refresh };
}

function drawCapacity(sec, nodes) {
  const t = totals(nodes);
  const unsched = nodes.filter((n) => n.spec && n.spec.unschedulable).length;
  clear(sec, h('h2', { id: 'ov-cap' }, 'Capacity and use'),
    h('p', { class: 'muted' }, `${nodes.length} nodes`, unsched ? `, ${unsched} unschedulable` : ''),
    h('div', { class: 'meters' }, t.resources.map((r) => h('div', { class: 'meter' },
      h('span', { class: 'res' }, r),
      bar(t.used[r] || 0, t.cap[r], `${fmtQty(t.used[r] || 0, r)} / ${fmtQty(t.cap[r], r)} used` +
        (t.cap[r] ? ` (${Math.round((100 * (t.used[r] || 0)) / t.cap[r])}%)` : ''))))));
}

// One tile per state, in the order musterd lists them (GET /api/v1/jobstates).
function drawStates(sec, jobs, names) {
  const count = {};
  for (const j of jobs) count[j.state] = (count[j.state] || 0) + 1;
  clear(sec, h('h2', { id: 'ov-states' }, 'Jobs by state'),
    h('ul', { class: 'tiles' }, names.map((s) => h('li', null,
      h('a', { href: '#/jobs?state=' + s, class: 'tile', 'data-state': s },
        h('span', { class: 'n' }, String(count[s] || 0)), stateBadge(s))))));
}

function drawDecisions(sec, recs) {
  // Repeats (the same job, kind and reason cycle after cycle) fold into one row.
  const rows = [];
  for (const r of recs) {
    if (!DECISION_KINDS.includes(r.kind)) continue;
    const last = rows[rows.length - 1];
    if (last && last.kind === r.kind && last.job === r.job && last.reason === r.reason &&
        last.message === r.message) {
      last.repeat = (last.repeat || 1) + 1;
      last.firstCycle = last.firstCycle ?? last.cycle;
      Object.assign(last, { seq: r.seq, ts: r.ts, cycle: r.cycle });
    } else {
      rows.push({ ...r });
    }
  }
  rows.splice(0, Math.max(0, rows.length - 15));
  rows.reverse();
  clear(sec, h('h2', { id: 'ov-dec' }, 'Recent decisions'),
    table([
      { label: 'seq', get: (r) => h('a', { href: `#/audit?from=${r.seq}&to=${r.seq}` }, r.seq),
        cls: 'num' },
      { label: 'time', get: (r) => fmtTime(r.ts) },
      { label: 'cycle', get: (r) => (r.repeat ? `${r.firstCycle}–${r.cycle}` : r.cycle), cls: 'num' },
      { label: 'kind', get: (r) => h('span', { class: 'kind kind-' + r.kind }, r.kind) },
      { label: 'job', get: (r) => jobLink(r.job) },
      { label: 'detail', get: (r) => [auditSummary(r), r.repeat ?
        h('span', { class: 'muted' }, ` (×${r.repeat} cycles)`) : null] },
    ], rows, { empty: 'no decisions yet', cls: 'compact' }),
    h('p', null, h('a', { href: '#/audit' }, 'Browse the whole audit log →')));
}

function drawPreemptions(sec, entries) {
  clear(sec, h('h2', { id: 'ov-pre' }, 'Preemptions in the last hour'),
    table([
      { label: 'time', get: (e) => fmtTime(e.ts) },
      { label: 'preemptor', get: (e) => jobLink(e.preemptor) },
      { label: 'victims', get: (e) => [e.victimJobs.map((j, i) => [i ? ', ' : '', jobLink(j)]),
        ` (${e.victims.length} pods)`] },
      { label: 'bound', get: (e) => (e.bound ? 'yes' : 'not yet') },
    ], entries.slice(-10).reverse(), { empty: 'no preemptions in the last hour', cls: 'compact' }),
    h('p', null, h('a', { href: '#/preemptions' }, 'All preemptions →')));
}
