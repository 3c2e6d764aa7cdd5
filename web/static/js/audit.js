// audit.js - the audit log browser: filter by sequence range, time (RFC 3339 or relative:
// "1h" back from now), job and kind; newest first, with the actor of each change and the
// preemptor of each preemption; page through; export the selection as NDJSON (the same
// query, streamed by musterd); show whether the hash chain verifies over the selected
// range, the first record that breaks it highlighted.
import { getJSON, getNDJSON, qs } from './api.js';
import { auditSummary } from './data.js';
import { age, clear, fmtTime, h, jobLink, note, plural, table } from './dom.js';

// "90s", "15m", "1h", "2d" back from now as RFC 3339; anything else is passed on as it is
// (an RFC 3339 time; musterd says when it is not one).
export function sinceTime(v, now = Date.now()) {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(v.trim());
  if (!m) return v;
  const ms = Number(m[1]) * { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 }[m[2]];
  return new Date(now - ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

// Who made a change: the credential's name and role (records of applies, deletes and
// cycles run on request carry "by"; the scheduler's own decisions have none).
function actor(r) {
  if (!r.by) return h('span', { class: 'muted' }, r.kind === 'applied' || r.kind === 'deleted' ? '–' : 'scheduler');
  return h('span', { title: [r.by.address, r.by.source].filter(Boolean).join(', ') },
    r.by.name || '?', r.by.role ? h('span', { class: 'muted' }, ` (${r.by.role})`) : null);
}

const KINDS = ['', 'applied', 'deleted', 'cycle', 'placed', 'discarded', 'unschedulable',
  'preempted', 'nominated', 'evicted', 'bound', 'config'];
const FIELDS = ['from', 'to', 'since', 'until', 'job', 'kind', 'limit'];

export function mount(el, route, app) {
  const f = {};
  for (const k of FIELDS) f[k] = route.params[k] || '';
  if (!f.limit) f.limit = '200';
  const verify = h('div', { class: 'verify', 'aria-live': 'polite' });
  const actions = h('div', { class: 'actions' });
  const body = h('div', { class: 'tablewrap' });
  const input = (k, label, attrs) => [h('label', { for: 'audit-' + k }, label),
    h('input', { id: 'audit-' + k, name: k, value: f[k], ...attrs })];
  const form = h('form', { class: 'filters', role: 'search', onsubmit: (e) => {
    e.preventDefault();
    for (const k of FIELDS) f[k] = form.elements[k].value.trim();
    save();
    refresh();
  } },
  input('from', 'from seq', { size: 6, inputmode: 'numeric' }),
  input('to', 'to seq', { size: 6, inputmode: 'numeric' }),
  input('since', 'since', { size: 22, placeholder: '1h or RFC 3339' }),
  input('until', 'until', { size: 22, placeholder: '10m or RFC 3339' }),
  input('job', 'job', { size: 18, placeholder: 'ns/name' }),
  h('label', { for: 'audit-kind' }, 'kind'),
  h('select', { id: 'audit-kind', name: 'kind' }, KINDS.map((k) =>
    h('option', { value: k, selected: k === f.kind }, k || 'any'))),
  input('limit', 'limit', { size: 5, inputmode: 'numeric' }),
  h('button', { type: 'submit' }, 'Apply'),
  h('button', { type: 'button', onclick: () => {
    form.elements.since.value = new Date(Date.now() - 3600e3).toISOString().replace(/\.\d+Z/, 'Z');
    form.requestSubmit();
  } }, 'Last hour'),
  h('button', { type: 'button', onclick: () => {
    for (const k of FIELDS) form.elements[k].value = k === 'limit' ? '200' : '';
    form.requestSubmit();
  } }, 'Reset'));
  el.append(h('h1', null, 'Audit log'), form, verify, actions, body);

  function save() {
    app.setParams(Object.fromEntries(FIELDS.map((k) => [k, f[k]])));
  }
  // relative times become RFC 3339 at each fetch, so "1h" follows the clock as the page polls
  const query = () => Object.fromEntries(FIELDS.map((k) => [k, f[k]]).filter(([, v]) => v)
    .map(([k, v]) => [k, k === 'since' || k === 'until' ? sinceTime(v) : v]));

  async function refresh() {
    let recs;
    try {
      recs = await getNDJSON('/api/v1/audit', query());
    } catch (e) {
      if (e.status && e.status < 500) {
        clear(body, note('error', e.message));
        clear(actions);
        return;
      }
      throw e;
    }
    let v = null;
    try {
      v = await getJSON('/api/v1/audit/verify', { from: f.from, to: f.to });
    } catch (e) {
      if (e.status !== 401 && e.status !== 403) throw e;
      // verification is for admins (docs/security.md); the records still show
      clear(verify, h('span', { class: 'chain muted', id: 'audit-chain', 'data-ok': 'unknown' },
        'hash chain not verified here: ' + e.message));
    }
    if (v) drawVerify(v);
    const bad = v && !v.ok ? v.firstBad : 0;
    const exportQ = { ...query() };
    const name = 'muster-audit' + (f.job ? '-' + f.job.replace('/', '_') : '') +
      (f.kind ? '-' + f.kind : '') + '.ndjson';
    const last = recs.length ? recs[recs.length - 1].seq : 0;
    clear(actions,
      h('a', { class: 'button', id: 'audit-export', href: '/api/v1/audit' + qs(exportQ),
        download: name }, 'Export selection as NDJSON'),
      h('span', { class: 'muted' }, ` ${plural(recs.length, 'record')} shown`),
      f.limit && recs.length >= Number(f.limit) ? h('button', { type: 'button', onclick: () => {
        form.elements.from.value = String(last + 1);
        form.requestSubmit();
      } }, 'Next page →') : null);
    // newest first (musterd streams them oldest first, in sequence order)
    const rows = [...recs].reverse();
    clear(body, table([
      { label: 'seq', cls: 'num', get: (r) => r.seq },
      { label: 'time', get: (r) => h('span', { title: fmtTime(r.ts) }, age(r.ts) + ' ago') },
      { label: 'cycle', cls: 'num', get: (r) => r.cycle },
      { label: 'kind', get: (r) => h('span', { class: 'kind kind-' + r.kind }, r.kind) },
      { label: 'actor', get: (r) => actor(r) },
      { label: 'job', get: (r) => jobLink(r.job) },
      { label: 'detail', get: (r) => [r.kind === 'preempted' && r.preemptor ?
        h('span', { class: 'preemptor' }, 'by ', jobLink(r.preemptor), ' · ') : null, auditSummary(r)] },
      { label: 'hash', get: (r) => h('span', { class: 'mono hash', title: r.hash },
        (r.hash || '').slice(0, 12)) },
    ], rows, { cls: 'compact audit', empty: 'no records match',
      rowAttrs: (r) => ({ 'data-seq': r.seq, 'data-kind': r.kind,
        class: r.seq === bad ? 'broken' : null, title: r.seq === bad ? 'the hash chain breaks here' : null }) }));
  }

  function drawVerify(v) {
    clear(verify, h('span', { class: 'chain ' + (v.ok ? 'ok' : 'broken'), id: 'audit-chain',
      'data-ok': String(!!v.ok) },
      v.ok ? `✔ hash chain verifies over seq ${v.from}–${v.to} (${v.checked} records)` :
        `✘ hash chain broken at seq ${v.firstBad}: ${v.reason}`));
  }
  return { refresh };
}
