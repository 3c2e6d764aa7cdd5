// preemptions.js - the preemption ledger (GET /api/v1/preemptions) as a timeline and a table,
// filtered by preemptor job (?job=) or victim job or pod (?victim=) on the server; preemptor
// and victims link to their job pages, whose Preemptions section links back here.
import { boundText, costText, loadLedger } from './data.js';
import { clear, fmtTime, h, jobLink, plural, table } from './dom.js';

export function mount(el, route, app) {
  const st = { job: route.params.job || '', victim: route.params.victim || '' };
  const p = route.params;
  // the zoomed range, kept in the route as from / to (RFC 3339)
  let view = p.from && p.to && Date.parse(p.to) > Date.parse(p.from) ?
    { from: Date.parse(p.from), to: Date.parse(p.to) } : null;
  let last = [];
  const params = () => ({ ...st, from: view ? new Date(view.from).toISOString() : '',
    to: view ? new Date(view.to).toISOString() : '' });
  function setView(from, to) {
    view = from === null || from === undefined ? null : { from, to };
    app.setParams(params());
    drawTimeline(timeline, last, view, setView);
  }
  const timeline = h('section', { 'aria-labelledby': 'pre-tl' });
  const list = h('section', { 'aria-labelledby': 'pre-tab' });
  const input = (k, label, ph) => [h('label', { for: 'pre-' + k }, label),
    h('input', { id: 'pre-' + k, type: 'search', value: st[k], placeholder: ph,
      onchange: (e) => { st[k] = e.target.value.trim(); app.setParams(params()); refresh(); } })];
  el.append(h('h1', null, 'Preemptions'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      input('job', 'Preemptor job', 'ns/name'), input('victim', 'Victim job or pod', 'ns/name')),
    timeline, list);

  async function refresh() {
    const entries = await loadLedger({ job: st.job, victim: st.victim });
    last = entries;
    if (!dragging) drawTimeline(timeline, entries, view, setView);
    drawTable(list, entries);
  }
  return { refresh };
}

// A drag across the timeline is under way (the poll leaves the timeline alone meanwhile).
let dragging = false;

// A time step giving about n labelled ticks over span ms.
function tickStep(span, n) {
  const steps = [60e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3,
    86400e3, 2 * 86400e3, 7 * 86400e3];
  return steps.find((s) => span / s <= n) || steps[steps.length - 1];
}

function tickLabel(ms, span) {
  const iso = new Date(ms).toISOString();
  return span > 2 * 86400e3 ? iso.slice(5, 10) : span > 12 * 3600e3 ? iso.slice(5, 10) + ' ' + iso.slice(11, 16) :
    iso.slice(11, 16);
}

// The timeline: one mark per ledger entry at its time, as tall as the pods it preempted,
// red until the preemptor bound, green after; a time axis with labelled ticks (UTC) and a
// pods axis. view = {from, to} (ms); dragging across the marks zooms to that range, the
// buttons zoom out and back to everything (onView(from, to), null for everything).
function drawTimeline(sec, entries, view, onView) {
  clear(sec, h('h2', { id: 'pre-tl' }, 'Timeline'));
  if (!entries.length) return sec.append(h('p', { class: 'muted' }, 'no preemptions recorded'));
  const times = entries.map((e) => Date.parse(e.ts) || 0);
  const now = Date.now();
  // everything: the last hour, or back to the oldest entry, with a margin
  const all0 = Math.min(now - 3600e3, Math.min(...times)), all1 = now;
  const t0 = view ? view.from : all0 - (all1 - all0) * 0.02, t1 = view ? view.to : all1;
  const span = t1 - t0;
  const maxPods = Math.max(1, ...entries.map((e) => e.victims.length));
  const pct = (t) => (((t - t0) / span) * 100).toFixed(2) + '%';
  const shown = entries.filter((e, k) => times[k] >= t0 && times[k] <= t1);
  const step = tickStep(span, 7);
  const ticks = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
  const plot = h('div', { class: 'tl-plot', role: 'list', 'aria-label':
    `preemptions from ${fmtTime(new Date(t0).toISOString())} to ${fmtTime(new Date(t1).toISOString())}` },
  ticks.map((t) => h('span', { class: 'tl-grid', style: { left: pct(t) }, 'aria-hidden': 'true' })),
  shown.map((e) => {
    const label = `cycle ${e.cycle}, ${fmtTime(e.ts)}: ${e.preemptor} preempted ` +
      `${e.victims.length} pod${e.victims.length === 1 ? '' : 's'}; ${boundText(e)}`;
    return h('button', { type: 'button', role: 'listitem', class: 'tick' + (e.bound ? ' bound' : ''),
      'data-id': e.id, style: { left: pct(Date.parse(e.ts) || t0),
        height: Math.max(8, (e.victims.length / maxPods) * 100).toFixed(0) + '%' },
      title: label, 'aria-label': label, onclick: () => {
        const row = document.getElementById('pre-' + e.id);
        if (row) row.scrollIntoView({ block: 'center' }), row.classList.add('flash');
      } });
  }));
  // drag to zoom: the range between pointer down and up (a click is a click, not a zoom)
  const brush = h('div', { class: 'tl-brush', hidden: true });
  plot.append(brush);
  let start = null;
  const at = (ev) => {
    const r = plot.getBoundingClientRect();
    return Math.min(1, Math.max(0, (ev.clientX - r.left) / r.width));
  };
  plot.addEventListener('pointerdown', (ev) => {
    if (ev.target.closest('button')) return;
    start = at(ev);
    dragging = true; // a poll must not redraw the plot under the pointer
    plot.setPointerCapture(ev.pointerId);
  });
  plot.addEventListener('pointermove', (ev) => {
    if (start === null) return;
    const a = Math.min(start, at(ev)), b = Math.max(start, at(ev));
    Object.assign(brush.style, { left: a * 100 + '%', width: (b - a) * 100 + '%' });
    brush.hidden = false;
  });
  plot.addEventListener('pointerup', (ev) => {
    if (start === null) return;
    const a = Math.min(start, at(ev)), b = Math.max(start, at(ev));
    start = null;
    dragging = false;
    brush.hidden = true;
    if (b - a > 0.01) onView(t0 + a * span, t0 + b * span);
  });
  sec.append(
    h('div', { class: 'tl' },
      h('div', { class: 'tl-y', 'aria-hidden': 'true' }, h('span', null, String(maxPods)), h('span', null, '0')),
      plot,
      h('div', { class: 'tl-x', 'aria-hidden': 'true' }, ticks.map((t) =>
        h('span', { style: { left: pct(t) } }, tickLabel(t, span))))),
    h('p', { class: 'tl-legend muted' }, 'x: time (UTC); y: pods preempted by the entry (0 to ' +
      `${maxPods}). `, h('span', { class: 'sw tick' }), ' not bound yet ', h('span', { class: 'sw tick bound' }),
    ' preemptor bound. Drag across the timeline to zoom. ',
    `${shown.length} of ${entries.length} shown.`),
    h('div', { class: 'actions' },
      h('button', { type: 'button', id: 'tl-out', onclick: () => onView(t0 - span / 2, Math.min(now, t1 + span / 2)) }, 'Zoom out'),
      h('button', { type: 'button', id: 'tl-all', disabled: !view, onclick: () => onView(null) }, 'Show everything')));
}

function victims(e) {
  if (!e.victims.length) return '–';
  // One line per victim job: its pods and nodes.
  return h('ul', { class: 'victims' }, e.victimJobs.map((j) => {
    const vs = e.victims.filter((v) => v.job === j);
    return h('li', null, jobLink(j), ` (priority ${vs[0].priority ?? '?'}): ${plural(vs.length, 'pod')} `,
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
      `${plural(e.nominatedNodes.length, 'node')}`) },
    { label: 'cost', get: (e) => [costText(e.cost), e.pdbViolations ? h('div', { class: 'pdb',
      title: 'victims whose eviction violates a PodDisruptionBudget (no plan violated fewer)' },
      `${plural(e.pdbViolations, 'PodDisruptionBudget violation')}: ${(e.pdbsViolated || []).join(', ')}`) :
      null, h('div', { class: 'muted',
      title: 'requests times run time of the victims' }, resourceTime(e.cost.resourceSeconds))] },
    { label: 'decision', cls: 'num', get: (e) => (e.decisionMs !== undefined ?
      `${Number(e.decisionMs).toFixed(2)} ms` : '–') },
    { label: 'bound', get: (e) => [boundText(e), e.boundAt ?
      h('div', { class: 'muted' }, fmtTime(e.boundAt)) : null] },
  ], [...entries].reverse(), { cls: 'compact ledger', empty: 'no preemptions recorded',
    rowAttrs: (e) => ({ id: 'pre-' + e.id, 'data-entry': e.id, 'data-preemptor': e.preemptor || '' }) }));
}
