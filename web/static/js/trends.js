// trends.js - the time series (GET /api/v1/timeseries) as charts: the overview's cluster
// trends and a queue's allocation over time. The window is the page's `since` parameter
// (1h, 6h, 24h, 2d; musterd keeps timeseries_retention, 2 days by default).
import { getJSON } from './api.js';
import { lineChart } from './chart.js';
import { resourceOrder } from './data.js';
import { h } from './dom.js';

export const WINDOWS = ['1h', '6h', '24h', '2d'];

export function loadSeries(since, prefixes) {
  return getJSON('/api/v1/timeseries', { since, series: prefixes.join(',') });
}

// The resources the samples carry (from "<prefix><res>" names), GPUs first.
function resources(ts, prefix) {
  return resourceOrder(Object.keys(ts.series).filter((n) => n.startsWith(prefix))
    .map((n) => n.slice(prefix.length)).filter((r) => r !== 'pods'));
}

const col = (ts, name) => ts.series[name] || ts.times.map(() => null);

// A <select> of the windows, calling onchange(window).
export function windowPicker(id, value, onchange) {
  return h('span', { class: 'winpick' }, h('label', { for: id }, 'Window '),
    h('select', { id, onchange: (e) => onchange(e.target.value) },
      WINDOWS.map((w) => h('option', { value: w, selected: w === value }, `last ${w}`))));
}

// The overview's charts: use of each resource against capacity, jobs by state, placements
// and preemptions per sample, waits of the jobs not placed yet, cycle time.
export function clusterCharts(ts) {
  const res = resources(ts, 'cluster.allocatable.').slice(0, 3);
  const t = ts.times;
  const per = `per sample (${ts.interval} s)`;
  const states = ['Running', 'Scheduled', 'Pending', 'Unschedulable', 'Pipelined', 'Preempted']
    .filter((s) => col(ts, 'jobs.' + s).some((v) => v));
  return h('div', { class: 'charts' },
    res.map((r) => lineChart(t, [{ name: 'used', values: col(ts, 'cluster.used.' + r) },
      { name: 'allocatable', values: col(ts, 'cluster.allocatable.' + r), colour: '#9aa3b2' }],
    { title: `${r}: used of allocatable`, unit: r === 'cpu' ? 'cores' : r === 'memory' ? 'bytes' : r })),
    lineChart(t, states.map((s) => ({ name: s, values: col(ts, 'jobs.' + s) })),
      { title: 'Jobs by state', unit: 'jobs' }),
    lineChart(t, [{ name: 'pods placed', values: col(ts, 'placements') },
      { name: 'preemptions', values: col(ts, 'preemptions') }], { title: `Placements and preemptions ${per}`, unit: 'count' }),
    lineChart(t, [{ name: 'median wait', values: col(ts, 'wait.p50') },
      { name: 'longest wait', values: col(ts, 'wait.max') }], { title: 'Waits of the jobs not placed yet', unit: 'seconds' }),
    lineChart(t, [{ name: 'mean cycle', values: col(ts, 'cycle.us').map((v) => (v === null ? null : v / 1000)) }],
      { title: `Scheduling cycle time ${per}`, unit: 'ms' }));
}

// A queue's allocation per resource over time.
export function queueCharts(ts, queue) {
  const prefix = `queue.${queue}.allocated.`;
  const res = resources(ts, prefix);
  if (!res.length) return h('p', { class: 'muted' }, 'no samples of this queue yet');
  return h('div', { class: 'charts' }, res.map((r) => lineChart(ts.times,
    [{ name: 'allocated', values: col(ts, prefix + r) }],
    { title: `${queue}: ${r} allocated`, unit: r === 'cpu' ? 'cores' : r === 'memory' ? 'bytes' : r })));
}
