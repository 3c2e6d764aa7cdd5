// chart.js - small line charts in SVG for the time series (GET /api/v1/timeseries): a time
// axis with labelled ticks, a value axis from 0 with its unit, one line per series (a gap
// where a sample lacks it), a legend, and the latest value of each series. Hand-written:
// a few charts of a few hundred points do not need a library.
const NS = 'http://www.w3.org/2000/svg';
const W = 520, H = 180, L = 48, R = 10, T = 20, B = 26;
export const PALETTE = ['#1f5fbf', '#d0645a', '#3f9a5b', '#c08a00', '#7b4fd6', '#2a9bb0', '#8a5a44'];

function el(tag, attrs, ...kids) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

// A "nice" step for about n ticks over span.
function step(span, n) {
  const raw = span / n;
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || p * 10;
}

function fmtNum(v) {
  if (Math.abs(v) >= 1e12) return (v / 2 ** 40).toFixed(0) + 'Ti';
  if (Math.abs(v) >= 1e9) return (v / 2 ** 30).toFixed(0) + 'Gi';
  if (Math.abs(v) >= 1e4) return (v / 1e3).toFixed(0) + 'k';
  return String(Math.round(v * 100) / 100);
}

function fmtClock(ms, span) {
  const d = new Date(ms);
  const hm = d.toISOString().slice(11, 16);
  return span > 36 * 3600e3 ? d.toISOString().slice(5, 10) + ' ' + hm : hm;
}

// times: [ms...]; lines: [{name, values: [number|null]}]; opts: {title, unit}. Returns a
// <figure> with the SVG (role img, labelled by the title) and a legend listing each line
// with its latest value.
export function lineChart(times, lines, opts = {}) {
  const fig = document.createElement('figure');
  fig.className = 'chart';
  const cap = document.createElement('figcaption');
  cap.textContent = opts.title || '';
  fig.append(cap);
  if (times.length < 2) {
    const p = document.createElement('p');
    p.className = 'muted';
    p.textContent = times.length ? 'one sample so far: the chart starts with the next' :
      'no samples yet (musterd samples every timeseries_interval, 60 s by default)';
    fig.append(p);
    return fig;
  }
  const t0 = times[0], t1 = times[times.length - 1];
  let max = 0;
  for (const l of lines) for (const v of l.values) if (v !== null && v > max) max = v;
  const ys = step(max || 1, 4);
  const top = Math.max(ys, Math.ceil((max || 1) / ys) * ys);
  const x = (t) => L + ((t - t0) / (t1 - t0 || 1)) * (W - L - R);
  const y = (v) => T + (1 - v / top) * (H - T - B);
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label':
    `${opts.title || 'chart'}: ${lines.map((l) => `${l.name} now ${fmtNum(last(l.values))}`).join(', ')}` });
  const grid = el('g', { class: 'grid' });
  for (let v = 0; v <= top + 1e-9; v += ys) {
    grid.append(el('line', { x1: L, x2: W - R, y1: y(v), y2: y(v) }));
    grid.append(el('text', { x: L - 4, y: y(v) + 4, 'text-anchor': 'end' }, fmtNum(v)));
  }
  const ts = step(t1 - t0, 5);
  const tstep = [60e3, 300e3, 600e3, 1800e3, 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3, 86400e3]
    .find((s) => s >= ts) || ts;
  for (let t = Math.ceil(t0 / tstep) * tstep; t <= t1; t += tstep) {
    grid.append(el('line', { x1: x(t), x2: x(t), y1: T, y2: H - B, class: 'v' }));
    grid.append(el('text', { x: x(t), y: H - B + 14, 'text-anchor': 'middle' }, fmtClock(t, t1 - t0)));
  }
  grid.append(el('text', { x: 4, y: 11, 'text-anchor': 'start', class: 'unit' }, opts.unit || ''));
  svg.append(grid, el('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }),
    el('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
  lines.forEach((l, i) => {
    let d = '', pen = 'M';
    l.values.forEach((v, k) => {
      if (v === null || v === undefined) { pen = 'M'; return; }
      d += `${pen}${x(times[k]).toFixed(1)},${y(v).toFixed(1)}`;
      pen = 'L';
    });
    svg.append(el('path', { d, class: 'line', stroke: l.colour || PALETTE[i % PALETTE.length],
      'data-series': l.name }));
  });
  fig.append(svg);
  const legend = document.createElement('ul');
  legend.className = 'clegend';
  lines.forEach((l, i) => {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = 'sw';
    sw.style.background = l.colour || PALETTE[i % PALETTE.length];
    li.append(sw, `${l.name}: ${fmtNum(last(l.values))}`);
    legend.append(li);
  });
  fig.append(legend);
  return fig;
}

function last(values) {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null && values[i] !== undefined) return values[i];
  return 0;
}
