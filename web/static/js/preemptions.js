// preemptions.js - the preemption ledger (GET /api/v1/preemptions) as a timeline and a table,
// filtered by preemptor job (?job=) or victim job or pod (?victim=) on the server; preemptor
// and victims link to their job pages, whose Preemptions section links back here.
import { boundText, costText, loadLedger } from './data.js';
import { clear, fmtTime, h, jobLink, table } from './dom.js';

export function mount(el, route, app) {
  const st = { job: route.params.job || '', victim: route.params.victim || '' };
  const timeline = h('section', { 'aria-labelledby': 'pre-tl' });
  const list = h('section', { 'aria-labelledby': 'pre-tab' });
  const input = (k, label, ph) => [h('label', { for: 'pre-' + k }, label),
    h('input', { id: 'pre-' + k, type: 'search', value: st[k], placeholder: ph,
      onchange: (e) => { st[k] = e.target.value.trim(); app.setParams(st); refresh(); } })];
  el.append(h('h1', null, 'Preemptions'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      input('job', 'Preemptor job', 'ns/name'), input('victim', 'Victim job or pod', 'ns/name')),
    timeline, list);

  async function refresh() {
    const entries = await loadLedger({ job: st.job, victim: st.victim });
    drawTimeline(timeline, entries);
    drawTable(list, entries);
  }
  return { refresh };
}

function drawTimeline(sec, entries) {
  clear(sec, h('h2', { id: 'pre-tl' }, 'Timeline'));
  if (!entries.length) return sec.append(h('p', { class: 'muted' }, 'no preemptions recorded'));
  // The axis spans the last hour, or further back when the ledger is older.
  const t1 = Date.now();
  const t0 = Math.min(t1 - 3600e3, Date.parse(entries[0].ts) || t1);
  const axis = h('div', { class: 'timeline', role: 'list', 'aria-label': 'preemptions over time' },
    entries.map((e) => {
      const x = (((Date.parse(e.ts) || t0) - t0) / (t1 - t0)) * 96 + 2;
      const label = `cycle ${e.cycle}, ${fmtTime(e.ts)}: ${e.preemptor} preempted ` +
        `${e.victims.length} pod(s); ${boundText(e)}`;
      return h('button', { type: 'button', role: 'listitem', class: 'tick' + (e.bound ? ' bound' : ''),
        style: { left: x.toFixed(2) + '%' }, title: label, 'aria-label': label, onclick: () => {
          const row = document.getElementById('pre-' + e.id);
          if (row) row.scrollIntoView({ block: 'center' }), row.classList.add('flash');
        } });
    }));
  sec.append(axis, h('div', { class: 'axis muted' }, h('span', null, fmtTime(new Date(t0).toISOString())),
    h('span', null, 'now')));
}

function victims(e) {
  if (!e.victims.length) return '–';
  // One line per victim job: its pods and nodes.
  return h('ul', { class: 'victims' }, e.victimJobs.map((j) => {
    const vs = e.victims.filter((v) => v.job === j);
    return h('li', null, jobLink(j), ` (priority ${vs[0].priority ?? '?'}): ${vs.length} pod(s) `,
      h('span', { class: 'muted mono' }, vs.map((v) => `${v.pod.split('/').pop()}@${v.node}`)
        .join(', ')));
  }));
}

// Resource-seconds in a readable unit: "cpu × 3.2 h, nvidia.com/gpu × 0.8 h".
function resourceTime(rs) {
  const fmt = (s) => (s >= 86400 ? `${(s / 86400).toFixed(1)} d` : s >= 3600 ?
    `${(s / 3600).toFixed(1)} h` : s >= 60 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(0)} s`);
  return Object.entries(rs || {}).filter(([r]) => r !== 'memory')
    .map(([r, v]) => `${r} × ${fmt(v)}`).join(', ');
}

function drawTable(sec, entries) {
  clear(sec, h('h2', { id: 'pre-tab' }, `Ledger (${entries.length})`), table([
    { label: 'entry', cls: 'num', get: (e) => e.id },
    { label: 'cycle', cls: 'num', get: (e) => e.cycle ?? '–' },
    { label: 'time', get: (e) => fmtTime(e.ts) },
    { label: 'preemptor', get: (e) => [jobLink(e.preemptor), ` (priority ${e.priority ?? '?'})`,
      e.triggerPod ? h('div', { class: 'muted' }, 'trigger ', e.triggerPod) : null] },
    { label: 'victims', get: victims },
    { label: 'nominated nodes', get: (e) => h('span', { title: e.nominatedNodes.join(', ') },
      `${e.nominatedNodes.length} node(s)`) },
    { label: 'cost', get: (e) => [costText(e.cost), e.pdbViolations ? h('div', { class: 'pdb',
      title: 'victims whose eviction violates a PodDisruptionBudget (no plan violated fewer)' },
      `${e.pdbViolations} PodDisruptionBudget violation(s): ${(e.pdbsViolated || []).join(', ')}`) :
      null, h('div', { class: 'muted',
      title: 'requests times run time of the victims' }, resourceTime(e.cost.resourceSeconds))] },
    { label: 'decision', cls: 'num', get: (e) => (e.decisionMs !== undefined ?
      `${Number(e.decisionMs).toFixed(2)} ms` : '–') },
    { label: 'bound', get: (e) => [boundText(e), e.boundAt ?
      h('div', { class: 'muted' }, fmtTime(e.boundAt)) : null] },
  ], [...entries].reverse(), { cls: 'compact ledger', empty: 'no preemptions recorded',
    rowAttrs: (e) => ({ id: 'pre-' + e.id, 'data-entry': e.id, 'data-preemptor': e.preemptor || '' }) }));
}
