// audit.js - the audit log browser: filter by sequence range, time, job and kind; page
// through; export the selection as NDJSON (the same query, streamed by musterd); show
// whether the hash chain verifies over the selected range.
import { getJSON, getNDJSON, qs } from './api.js';
import { auditSummary } from './data.js';
import { clear, fmtTime, h, jobLink, note, table } from './dom.js';

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
  input('since', 'since', { size: 22, placeholder: 'RFC 3339' }),
  input('until', 'until', { size: 22, placeholder: 'RFC 3339' }),
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
  const query = () => Object.fromEntries(FIELDS.map((k) => [k, f[k]]).filter(([, v]) => v));

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
    const exportQ = { ...query() };
    const name = 'muster-audit' + (f.job ? '-' + f.job.replace('/', '_') : '') +
      (f.kind ? '-' + f.kind : '') + '.ndjson';
    const last = recs.length ? recs[recs.length - 1].seq : 0;
    clear(actions,
      h('a', { class: 'button', id: 'audit-export', href: '/api/v1/audit' + qs(exportQ),
        download: name }, 'Export selection as NDJSON'),
      h('span', { class: 'muted' }, ` ${recs.length} record(s) shown`),
      f.limit && recs.length >= Number(f.limit) ? h('button', { type: 'button', onclick: () => {
        form.elements.from.value = String(last + 1);
        form.requestSubmit();
      } }, 'Next page →') : null);
    clear(body, table([
      { label: 'seq', cls: 'num', get: (r) => r.seq },
      { label: 'time', get: (r) => fmtTime(r.ts) },
      { label: 'cycle', cls: 'num', get: (r) => r.cycle },
      { label: 'kind', get: (r) => h('span', { class: 'kind kind-' + r.kind }, r.kind) },
      { label: 'job', get: (r) => jobLink(r.job) },
      { label: 'detail', get: (r) => auditSummary(r) },
      { label: 'hash', get: (r) => h('span', { class: 'mono hash', title: r.hash },
        (r.hash || '').slice(0, 12)) },
    ], recs, { cls: 'compact audit', empty: 'no records match',
      rowAttrs: (r) => ({ 'data-seq': r.seq, 'data-kind': r.kind }) }));
  }

  function drawVerify(v) {
    clear(verify, h('span', { class: 'chain ' + (v.ok ? 'ok' : 'broken'), id: 'audit-chain',
      'data-ok': String(!!v.ok) },
      v.ok ? `✔ hash chain verifies over seq ${v.from}–${v.to} (${v.checked} records)` :
        `✘ hash chain broken at seq ${v.firstBad}: ${v.reason}`));
  }
  return { refresh };
}
