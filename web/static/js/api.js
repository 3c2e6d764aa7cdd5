// api.js - talking to musterd: JSON and NDJSON fetches, quantities.

export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The bearer token the user gave (the sign-in form app.js shows on a 401), kept for this
// tab only: sessionStorage, never a cookie, so no other site can make the browser send it.
const TOKEN_KEY = 'muster.token';

export function token() {
  try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; }
}

export function setToken(t) {
  try {
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch (e) { /* storage disabled: the token lasts until the page is left */ }
}

// While the UI polls (app.js), the scheduler's answers (jobs, a job, its why, the topology
// tree) are read with resourceVersion=0: whatever musterd made last, at once, never waiting
// for a cycle (docs/api.md "resourceVersion"). A page's first load and the Refresh button
// read the newest state.
let polling = false;
const FROM_CACHE = /^\/api\/v1\/(jobs($|\/)|topology$|nodemap$)/;

export function setPolling(on) {
  polling = on;
}

async function get(path, query) {
  if (polling && FROM_CACHE.test(path)) query = { ...query, resourceVersion: '0' };
  const url = path + qs(query);
  const headers = { Accept: 'application/json' };
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  let res;
  try {
    res = await fetch(url, { headers, cache: 'no-store' });
  } catch (e) {
    throw new HttpError(0, 'musterd unreachable');
  }
  if (!res.ok) {
    let msg = `${res.status} ${res.statusText}`;
    try {
      const body = await res.json();
      if (body && body.error) msg = body.error.message;
    } catch (e) { /* not JSON */ }
    throw new HttpError(res.status, msg);
  }
  return res;
}

// POSTs a manifest (YAML or JSON text) and returns the JSON answer. A 4xx/5xx throws an
// HttpError whose message is the server's and whose errors are its "errors" list (each
// problem of the manifest, with document, field, line and column).
export async function postManifest(path, query, text) {
  const headers = { Accept: 'application/json',
    'Content-Type': /^\s*[[{]/.test(text) ? 'application/json' : 'application/yaml' };
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  let res;
  try {
    res = await fetch(path + qs(query), { method: 'POST', headers, body: text, cache: 'no-store' });
  } catch (e) {
    throw new HttpError(0, 'musterd unreachable');
  }
  let body = null;
  try { body = await res.json(); } catch (e) { /* not JSON */ }
  if (!res.ok) {
    const err = new HttpError(res.status, (body && body.error && body.error.message) ||
      `${res.status} ${res.statusText}`);
    err.errors = (body && body.errors) || [];
    throw err;
  }
  return body;
}

export function qs(query) {
  if (!query) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== null && v !== '') p.set(k, v);
  const s = p.toString();
  return s ? '?' + s : '';
}

export async function getJSON(path, query) {
  return (await get(path, query)).json();
}

export async function getNDJSON(path, query) {
  const text = await (await get(path, query)).text();
  const out = [];
  for (const line of text.split('\n')) if (line.trim()) out.push(JSON.parse(line));
  return out;
}

export const jobPath = (id) => '/api/v1/jobs/' + id.split('/').map(encodeURIComponent).join('/');

const SUFFIX = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

// A Kubernetes quantity ("500m", "4Gi", "1e3") as a number; NaN when malformed.
export function parseQty(q) {
  if (typeof q === 'number') return q;
  if (typeof q !== 'string') return NaN;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(q.trim());
  if (!m || !(m[2] in SUFFIX)) return NaN;
  return parseFloat(m[1]) * SUFFIX[m[2]];
}

export function fmtQty(v, resource) {
  if (!isFinite(v)) return '–';
  if (resource === 'memory' || /storage/.test(resource || '')) {
    const units = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) v /= 1024, i++;
    return (Math.round(v * 10) / 10) + units[i];
  }
  if (Math.abs(v) >= 1e6) return (Math.round(v / 1e5) / 10) + 'M';
  return String(Math.round(v * 1000) / 1000);
}
