// reserve.test.mjs - reservations in headless chromium against a musterd of its own (so the
// demo of ui.test.mjs stays as it is): three 4-cpu nodes run r1 (limit 1 h), r2 (limit
// 30 min) and r3 (no limit); the gang g (2 x 4 cpu) starves after 1 s and reserves n1 and n2,
// the nodes that free soonest (docs/reservations.md). The topology page marks exactly the
// nodes GET /api/v1/reservations lists, naming the job; the job pages show a running job's
// time limit and expected end, and the reserved gang's expected start.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launch, newPage, startMusterd } from './browser.mjs';

const SRC = process.env.MUSTER_SOURCE_DIR || path.resolve('../..');
const ART = path.resolve('artifacts');

let b, md, tmp, URL;

const api = async (p, init) => {
  const res = await fetch(URL + p, init);
  assert.ok(res.ok, `${init && init.method || 'GET'} ${p}: ${res.status}`);
  return res.json();
};
const cycle = () => api('/api/v1/cycles', { method: 'POST', headers: { 'Content-Type': 'application/json' } });

const node = (n) => `apiVersion: v1\nkind: Node\nmetadata: {name: ${n}}\n` +
  'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}\n';
const running = (name, n, limit) => `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: default}\n` +
  `spec:\n  nodeName: ${n}\n${limit ? `  activeDeadlineSeconds: ${limit}\n` : ''}` +
  '  containers: [{name: c, image: x, resources: {requests: {cpu: "4"}}}]\nstatus: {phase: Running}\n';
const MANIFEST = [node('n1'), node('n2'), node('n3'), running('r1', 'n1', 3600),
  running('r2', 'n2', 1800), running('r3', 'n3', 0),
  'apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: g\n' +
  '  namespace: default\n  annotations: {muster.io/max-wait: 1s}\nspec: {minMember: 2}\n',
  ...[0, 1].map((i) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: g-${i}\n  namespace: default\n` +
    '  labels: {pod-group.scheduling.sigs.k8s.io: g}\n' +
    'spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "4"}}}]}\n')].join('---\n');

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-ui-reserve-'));
  md = await startMusterd(tmp, 'cycle_interval: 0\nmark_running: true\n');
  URL = md.url;
  await api('/api/v1/manifests', { method: 'POST', headers: { 'Content-Type': 'application/yaml' },
    body: MANIFEST });
  await cycle();
  await new Promise((r) => setTimeout(r, 1500)); // past the gang's max-wait
  await cycle();
  fs.mkdirSync(ART, { recursive: true });
  b = await launch();
});
after(async () => {
  if (b) await b.close();
  if (md) md.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

async function open(hash) {
  const page = await newPage(b.browser);
  page.unexpected = [];
  page.on('console', (m) => { if (m.type() === 'error') page.unexpected.push(m.text()); });
  page.on('pageerror', (e) => page.unexpected.push(String(e)));
  await page.goto(URL + '/' + hash);
  await page.waitForSelector('#status[data-state="ok"]', { timeout: 15000 });
  return page;
}

async function finish(page, name) {
  await page.screenshot({ path: path.join(ART, name + '.png'), fullPage: true });
  assert.deepEqual(page.unexpected, [], 'no console errors');
  await page.close();
}

test('the topology page marks exactly the reserved nodes, naming the job', async () => {
  const rs = await api('/api/v1/reservations');
  assert.equal(rs.items.length, 1);
  assert.equal(rs.items[0].job, 'default/g');
  assert.deepEqual(rs.items[0].nodes, ['n1', 'n2']);
  const page = await open('#/topology?node=n1');
  await page.waitForSelector('.tree li.node .occ');
  await page.waitForSelector('.tree li.node [data-reserved-for]');
  const marked = await page.locator('.tree li.node').evaluateAll((lis) => lis
    .filter((li) => li.querySelector('[data-reserved-for]'))
    .map((li) => `${li.dataset.node}:${li.querySelector('[data-reserved-for]').dataset.reservedFor}`));
  assert.deepEqual(marked.sort(), ['n1:default/g', 'n2:default/g']);
  await finish(page, 'topology-reserved');
});

test('the job pages show the limit, the expected end and the expected start', async () => {
  const r1 = await api('/api/v1/jobs/default/r1');
  assert.equal(r1.limitSeconds, 3600);
  let page = await open('#/jobs/default/r1');
  await page.waitForSelector('text=expected end');
  const text = await page.locator('main').textContent();
  assert.match(text, /time limit\s*3600 s/);
  assert.ok(r1.expectedEnd, 'the API has an expected end');
  await finish(page, 'job-limit');
  page = await open('#/jobs/default/g');
  await page.waitForSelector('text=expected start (reserved)');
  await finish(page, 'job-reserved');
});
