// edge.test.mjs - the HTTP edge in headless chromium against a musterd of its own.
// No cross-site writes: a page served from another port POSTs a manifest to musterd with
// fetch(..., {mode: 'no-cors'}) (no type, text/plain, a form), and nothing is created.
// DNS rebinding: chromium resolves rebind.test to 127.0.0.1 and reads musterd under that
// name: 421, no data. Hostile strings: objects whose resource names, taint values and
// messages carry markup (<img src=x onerror=...>) are shown as text on every page, and no
// script runs (the CSP would also stop inline handlers, but the UI never parses server
// strings as HTML in the first place).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launch, newPage, startMusterd } from './browser.mjs';

const SRC = process.env.MUSTER_SOURCE_DIR || path.resolve('../..');
const ART = path.resolve('artifacts');
const MARK = '<img src=x onerror="window.pwned=(window.pwned||0)+1">';
const RES = `example.com/${MARK}`;

let b, md, tmp, URL, PORT, evil, EVIL;

const api = async (p, init) => {
  const res = await fetch(URL + p, init);
  return { status: res.status, body: await res.text() };
};
const apply = (doc) => api('/api/v1/manifests', { method: 'POST',
  headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(doc) });

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-ui-edge-'));
  md = await startMusterd(tmp, 'cycle_interval: 0\nmark_running: true\n');
  PORT = md.port;
  URL = `http://127.0.0.1:${PORT}`;
  // the attacker's page, on another port of the same machine
  evil = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>evil</title><p>hello</p>');
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  EVIL = `http://127.0.0.1:${evil.address().port}`;
  fs.mkdirSync(ART, { recursive: true });
  b = await launch(['--host-resolver-rules=MAP rebind.test 127.0.0.1']);
});
after(async () => {
  if (b) await b.close();
  if (evil) evil.close();
  if (md) md.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const pod = (name, extra = {}) => ({ apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'x',
    resources: { requests: { cpu: '1', ...extra } } }] } });

test('a page from another origin cannot create anything with no-cors writes', async () => {
  const page = await newPage(b.browser);
  await page.goto(EVIL + '/');
  const yaml = 'apiVersion: v1\nkind: Pod\nmetadata: {name: csrf-%d, namespace: default}\n' +
    'spec: {containers: [{name: c, image: x}]}\n';
  const sent = await page.evaluate(async ({ base, yaml }) => {
    const out = [];
    const tries = [
      { body: new Blob([yaml.replace('%d', '1')]) }, // a Blob without a type: no Content-Type
      { body: yaml.replace('%d', '2'), headers: { 'Content-Type': 'text/plain' } },
      { body: new URLSearchParams({ a: yaml.replace('%d', '3') }) },
      { body: JSON.stringify(JSON.parse('{"apiVersion":"v1","kind":"Pod","metadata":' +
        '{"name":"csrf-4","namespace":"default"},"spec":{"containers":[{"name":"c","image":"x"}]}}')),
        headers: { 'Content-Type': 'application/json' } },
    ];
    for (const t of tries) {
      try {
        const r = await fetch(base + '/api/v1/manifests', { method: 'POST', mode: 'no-cors', ...t });
        out.push(r.type); // opaque: the page learns nothing either way
      } catch (e) { out.push('error: ' + e.message); }
    }
    // and a cycle, which would schedule what was created
    await fetch(base + '/api/v1/cycles', { method: 'POST', mode: 'no-cors', body: new Blob(['{}']) })
      .catch(() => {});
    return out;
  }, { base: URL, yaml });
  assert.equal(sent.length, 4, 'every attempt was made');
  for (let i = 1; i <= 4; i++) {
    const r = await api(`/api/v1/pods/default/csrf-${i}`);
    assert.equal(r.status, 404, `csrf-${i} was not created: ${r.body}`);
  }
  const pods = JSON.parse((await api('/api/v1/pods')).body).items;
  assert.deepEqual(pods.map((p) => p.metadata.name), [], 'no pod at all');
  await page.close();
});

test('DNS rebinding: musterd under a foreign name answers 421 and no data', async () => {
  await apply({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'secret-node' },
    status: { allocatable: { cpu: '4' } } });
  const page = await newPage(b.browser);
  const res = await page.goto(`http://rebind.test:${PORT}/api/v1/nodes`);
  assert.equal(res.status(), 421);
  assert.doesNotMatch(await res.text(), /secret-node/);
  // the same page from a name musterd serves reads it
  const ok = await page.goto(`${URL}/api/v1/nodes`);
  assert.equal(ok.status(), 200);
  assert.match(await ok.text(), /secret-node/);
  await page.close();
});

test('UI responses carry the CSP and the UI runs under it without violations', async () => {
  const page = await newPage(b.browser);
  const violations = [];
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); });
  const res = await page.goto(URL + '/#/');
  const csp = res.headers()['content-security-policy'];
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  assert.equal(res.headers()['x-content-type-options'], 'nosniff');
  await page.waitForSelector('#status[data-state="ok"]', { timeout: 15000 });
  assert.deepEqual(violations, []);
  await page.close();
});

test('strings with markup from the server show as text and run nothing', async () => {
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'hostile' },
    spec: { taints: [{ key: 'k', value: MARK, effect: 'NoSchedule' }] },
    status: { allocatable: { cpu: '8', memory: '8Gi', [RES]: '2' } } };
  let r = await apply(node);
  assert.ok(r.status < 300, r.body);
  r = await apply(pod('wants-markup', { [RES]: '5' }));
  assert.ok(r.status < 300, r.body);
  r = await api('/api/v1/cycles', { method: 'POST', headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 200, r.body);
  const hashes = ['#/', '#/topology', '#/jobs', '#/jobs/default/wants-markup',
    '#/audit', `#/jobs/${encodeURIComponent(MARK)}`, `#/queues?queue=${encodeURIComponent(MARK)}`];
  for (const hash of hashes) {
    const page = await newPage(b.browser);
    await page.goto(URL + '/' + hash);
    await page.waitForSelector('#status[data-state="ok"]', { timeout: 15000 });
    await page.waitForTimeout(300);
    const got = await page.evaluate(() => ({
      pwned: window.pwned || 0,
      imgs: document.querySelectorAll('#view img').length,
      text: document.getElementById('view').textContent,
    }));
    assert.equal(got.pwned, 0, `${hash}: a handler from server data ran`);
    assert.equal(got.imgs, 0, `${hash}: server data became an element`);
    if (hash === '#/jobs/default/wants-markup' || hash === '#/')
      assert.ok(got.text.includes('example.com/<img src=x'), `${hash}: the markup shows as text`);
    await page.screenshot({ path: path.join(ART, 'edge-' + hash.replace(/[^a-z]/g, '_') + '.png') });
    await page.close();
  }
});
