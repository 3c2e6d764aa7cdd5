// app.js - hash router, polling, the "last updated" badge, the follower and read-only badges.
//
// Routes (shareable): #/ overview, #/topology?job=ns/name&color=nvidia.com/gpu, #/nodes/NAME,
// #/jobs?state=, #/jobs/ns/name, #/queues?queue=name, #/preemptions, #/audit?job=&kind=&since=,
// #/whatif. A page module exports
// mount(el, route) -> {refresh()}; refresh re-fetches and redraws only data regions, so
// controls keep focus while the page polls.
import { clear, h, note } from './dom.js';
import { getJSON, setPolling, setToken, token } from './api.js';
import * as overview from './overview.js';
import * as topology from './topology.js';
import * as node from './node.js';
import * as jobs from './jobs.js';
import * as job from './job.js';
import * as preemptions from './preemptions.js';
import * as queues from './queues.js';
import * as audit from './audit.js';
import * as whatif from './whatif.js';

const POLL_MS = 5000;
const STALE_MS = 3 * POLL_MS;

const state = { page: null, route: null, lastOk: 0, error: null, busy: false, timer: 0 };

export function parseRoute(hash) {
  const raw = (hash || '').replace(/^#/, '') || '/';
  const [path, query] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const params = Object.fromEntries(new URLSearchParams(query || ''));
  return { parts, params };
}

// Replaces the query of the current hash without remounting the page (filters, selection).
export function setParams(params) {
  const { parts } = parseRoute(location.hash);
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '')
    q.set(k, v);
  const s = q.toString();
  history.replaceState(null, '', '#/' + parts.map(encodeURIComponent).join('/') +
    (s ? '?' + s : ''));
  state.route = parseRoute(location.hash);
}

function pick(route) {
  const [first, ...rest] = route.parts;
  switch (first) {
  case undefined: case 'overview': return ['overview', overview];
  case 'topology': return ['topology', topology];
  case 'nodes': return rest.length === 1 ? ['topology', node] : [null, null];
  case 'jobs': return rest.length >= 2 ? ['jobs', job] : ['jobs', jobs];
  case 'queues': return ['queues', queues];
  case 'preemptions': return ['preemptions', preemptions];
  case 'audit': return ['audit', audit];
  case 'whatif': return ['whatif', whatif];
  default: return [null, null];
  }
}

// Leader election (docs/kubernetes.md): /healthz says the role; a follower serves every page
// from its mirrored store but changes nothing, so the header says who leads.
async function role() {
  const el = document.getElementById('role');
  let doc = null;
  try { doc = await getJSON('/healthz'); } catch (e) { /* the badge reports errors */ }
  const follower = !!doc && doc.role === 'follower';
  el.hidden = !follower;
  el.textContent = follower ? `follower, leader is ${doc.leader || 'not known yet'}` : '';
  el.dataset.role = doc ? doc.role : '';
  // A broken audit chain leaves musterd read-only (docs/security.md): it still serves every
  // page, so the header says that nothing changes and why.
  const ro = document.getElementById('readonly');
  const why = doc && typeof doc.readOnly === 'string' ? doc.readOnly : '';
  ro.hidden = !why;
  ro.textContent = why ? 'read-only' : '';
  ro.title = why;
  ro.dataset.reason = why;
}

// poll: called by the timer (reads may be served from musterd's cache); otherwise (a new
// page, the Refresh button) the newest state. Refreshes never overlap (state.busy), so the
// polling flag of api.js belongs to this one.
async function refresh(poll) {
  if (!state.page || state.busy) return;
  state.busy = true;
  const page = state.page;
  setPolling(poll === true);
  try {
    await Promise.all([page.refresh(), role()]);
    if (page === state.page) {
      state.lastOk = Date.now();
      state.error = null;
      document.body.dataset.updated = String(state.lastOk); // for tests and benchmarks
    }
  } catch (e) {
    if (page === state.page) state.error = e;
    console.warn('refresh failed:', e.message);
  } finally {
    setPolling(false);
    state.busy = false;
    badge();
  }
}

// musterd answered 401 (auth_reads on): ask for a token once, beside the badge.
function signin() {
  const want = state.error && state.error.status === 401;
  let form = document.getElementById('signin');
  if (!want) {
    if (form) form.remove();
    return;
  }
  if (form) return;
  // a token musterd refused is dropped, so that polling does not keep sending it (each
  // wrong token counts against this address's budget of bad credentials)
  const refused = token();
  setToken('');
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off',
    placeholder: 'bearer token', 'aria-label': 'bearer token' });
  form = h('form', { id: 'signin', class: 'signin', onsubmit: (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    state.error = null;
    form.remove();
    refresh();
  } }, input, h('button', { type: 'submit' }, refused ? 'Use another token' : 'Sign in'));
  document.getElementById('status').after(form);
}

function badge() {
  const el = document.getElementById('status');
  if (!el) return;
  const age = state.lastOk ? Math.round((Date.now() - state.lastOk) / 1000) : null;
  let text, cls;
  if (state.error && state.error.status === 0) {
    text = 'musterd unreachable' + (age !== null ? ` · data from ${age} s ago` : '');
    cls = 'bad';
  } else if (state.error) {
    text = 'error: ' + state.error.message;
    cls = 'bad';
  } else if (age === null) {
    text = 'loading…';
    cls = '';
  } else {
    text = `updated ${age} s ago`;
    cls = Date.now() - state.lastOk > STALE_MS ? 'stale' : 'ok';
  }
  el.textContent = text;
  el.className = 'badge ' + cls;
  el.dataset.state = cls || 'loading';
  signin();
}

function route() {
  const view = document.getElementById('view');
  const r = parseRoute(location.hash);
  const [name, mod] = pick(r);
  state.route = r;
  for (const a of document.querySelectorAll('nav a[data-page]')) {
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  clear(view);
  if (!mod) {
    // no data to show, but the badge still reports musterd (a poll of /healthz), not
    // "loading…" for ever
    state.page = { refresh: async () => {} };
    view.append(h('h1', null, 'Not found'), note('warn', 'No page for ', location.hash, '. ',
      h('a', { href: '#/' }, 'Go to the overview'), '.'));
    document.title = 'muster · not found';
    refresh();
    return;
  }
  state.page = mod.mount(view, r, { setParams, route: () => state.route });
  document.title = 'muster · ' + (r.parts.length ? r.parts.join('/') : 'overview');
  refresh();
}

function start() {
  window.addEventListener('hashchange', route);
  document.getElementById('refresh').addEventListener('click', () => refresh());
  // The skip link must not change the hash (that is the router's): focus the content instead.
  document.querySelector('.skip').addEventListener('click', (e) => {
    e.preventDefault();
    document.getElementById('view').focus();
  });
  setInterval(() => refresh(true), POLL_MS);
  setInterval(badge, 1000);
  route();
}

start();
