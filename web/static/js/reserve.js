// reserve.js - reservations of starving jobs (GET /api/v1/reservations,
// docs/reservations.md) as the pages show them: the topology page marks reserved nodes, the
// job page shows a job's time limit, expected end and expected start.
import { getJSON } from './api.js';
import { fmtTime, h, jobLink } from './dom.js';

// node name -> its reservation ({job, expectedStart, ...}); an empty map when the list
// cannot be read (the page still draws).
export async function loadReservations() {
  const byNode = new Map();
  const body = await getJSON('/api/v1/reservations').catch(() => ({ items: [] }));
  for (const r of body.items || []) for (const n of r.nodes || []) byNode.set(n, r);
  return byNode;
}

// The mark of a reserved node (null when it is not reserved).
export function reservedMark(byNode, name) {
  const r = byNode && byNode.get(name);
  if (!r) return null;
  const start = r.expectedStart ? fmtTime(r.expectedStart) : 'unknown';
  return h('span', { class: 'reserved', 'data-reserved-for': r.job,
    title: `reserved for ${r.job}, expected start ${start}` },
  'reserved: ', jobLink(r.job));
}

// The job page's rows: [label, value] pairs, none when the job has no limit and no reservation.
export function timeRows(j) {
  const rows = [];
  if (j.limitSeconds != null) rows.push(['time limit', `${j.limitSeconds} s`]);
  if (j.limitSeconds != null) rows.push(['expected end', j.expectedEnd ? fmtTime(j.expectedEnd) : '–']);
  if ('expectedStart' in j) rows.push(['expected start (reserved)',
    j.expectedStart ? fmtTime(j.expectedStart) : 'unknown (a job it waits for has no limit)']);
  return rows;
}
