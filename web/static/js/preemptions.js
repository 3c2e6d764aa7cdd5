// preemptions.js - the preemption ledger as a timeline and a table; preemptor and victims
// link to their job pages, whose Preemptions section links back here.
import { auditTail, ledgerFromAudit, loadLedger } from './data.js';
import { clear, fmtTime, h, jobLink, note, table } from './dom.js';

export function mount(el, route, app) {
  const st = { job: route.params.job || '' };
  const info = h('div');
  const timeline = h('section', { 'aria-labelledby': 'pre-tl' });
  const list = h('section', { 'aria-labelledby': 'pre-tab' });
  const input = h('input', { id: 'pre-job', type: 'search', value: st.job, placeholder: 'ns/name',
    onchange: (e) => { st.job = e.target.value.trim(); app.setParams({ job: st.job }); refresh(); } });
  el.append(h('h1', null, 'Preemptions'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      h('label', { for: 'pre-job' }, 'Job (preemptor or victim)'), input),
    info, timeline, list);

  async function refresh() {
    let entries = await loadLedger({});
    if (entries === null) {
      entries = ledgerFromAudit(await auditTail());
      clear(info, note('info', 'The preemption ledger (GET /api/v1/preemptions) is not ' +
        'available in this musterd; showing "preempted" audit records of the last hour.'));
    } else {
      clear(info);
    }
    if (st.job) entries = entries.filter((e) => e.preemptor === st.job ||
      e.victimJobs.includes(st.job));
    entries.sort((a, b) => (Date.parse(a.ts) || 0) - (Date.parse(b.ts) || 0) ||
      (a.cycle || 0) - (b.cycle || 0));
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
    entries.map((e, i) => {
      const x = (((Date.parse(e.ts) || t0) - t0) / (t1 - t0)) * 96 + 2;
      const label = `cycle ${e.cycle}, ${fmtTime(e.ts)}: ${e.preemptor} preempted ` +
        `${e.victims.length} pod(s)`;
      return h('button', { type: 'button', role: 'listitem', class: 'tick' + (e.bound ? ' bound' : ''),
        style: { left: x.toFixed(2) + '%' }, title: label, 'aria-label': label, onclick: () => {
          const row = document.getElementById('pre-' + i);
          if (row) row.scrollIntoView({ block: 'center' }), row.classList.add('flash');
        } });
    }));
  sec.append(axis, h('div', { class: 'axis muted' }, h('span', null, fmtTime(new Date(t0).toISOString())),
    h('span', null, 'now')));
}

function victims(e) {
  if (!e.victims.length) return '–';
  return h('ul', { class: 'victims' }, e.victims.map((v) => h('li', null,
    h('span', { class: 'mono' }, v.pod || '?'), v.job ? [' of ', jobLink(v.job)] : '',
    v.node ? ` on ${v.node}` : '', v.priority !== undefined ? ` (priority ${v.priority})` : '')));
}

function cost(c) {
  const bits = [];
  if (c.pods !== undefined) bits.push(`${c.pods} pods`);
  if (c.gangsBroken !== undefined) bits.push(`${c.gangsBroken} gangs broken`);
  if (c.resourceSeconds !== undefined) bits.push(`${Math.round(c.resourceSeconds)} resource·s`);
  return bits.join(', ') || '–';
}

function drawTable(sec, entries) {
  clear(sec, h('h2', { id: 'pre-tab' }, `Ledger (${entries.length})`), table([
    { label: 'cycle', cls: 'num', get: (e) => e.cycle ?? '–' },
    { label: 'time', get: (e) => fmtTime(e.ts) },
    { label: 'preemptor', get: (e) => [jobLink(e.preemptor),
      e.triggerPod ? h('div', { class: 'muted' }, 'trigger ', e.triggerPod) : null] },
    { label: 'victims', get: victims },
    { label: 'nominated nodes', get: (e) => (e.nominatedNodes || []).join(', ') || '–' },
    { label: 'cost', get: (e) => cost(e.cost) },
    { label: 'bound', get: (e) => (e.bound ? `yes${e.boundAt ? ' at ' + fmtTime(e.boundAt) : ''}` :
      e.bound === false ? 'not yet' : '–') },
  ], [...entries].reverse(), { cls: 'compact ledger', empty: 'no preemptions recorded',
    rowAttrs: (e) => ({ id: 'pre-' + entries.indexOf(e), 'data-preemptor': e.preemptor || '' }) }));
}
