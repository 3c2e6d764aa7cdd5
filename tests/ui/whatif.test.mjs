// whatif.test.mjs - the "Would it fit?" page (#/whatif) in headless chromium against the
// shared demo musterd: a pasted gang is answered with the nodes it would take, exactly the
// ones POST /api/v1/whatif names, linked to the topology; with those nodes cordoned it
// would be nominated to room freed for a lower-priority job, which the page names; a bad manifest shows
// the server's error, naming the field; nothing is written (the audit log does not grow).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launch, newPage } from './browser.mjs';

const URL = process.env.MUSTER_URL;
const SRC = process.env.MUSTER_SOURCE_DIR || path.resolve('../..');
const ART = path.resolve('artifacts');
const PROBE = fs.readFileSync(path.join(SRC, 'tests/data/cli/whatif/probe.yaml'), 'utf8');

let b;
const api = async (p, init) => {
  const res = await fetch(URL + p, init);
  assert.ok(res.ok, `${init && init.method || 'GET'} ${p}: ${res.status}`);
  return res.json();
};
const auditLast = async () => (await api('/api/v1/audit/verify')).to;

before(async () => {
  assert.ok(URL, 'MUSTER_URL is set (run tests/ui/run.sh)');
  for (const f of ['cluster.yaml', 'workloads.yaml'])
    await api('/api/v1/manifests', { method: 'POST', headers: { 'Content-Type': 'application/yaml' },
      body: fs.readFileSync(path.join(SRC, 'examples/demo', f)) });
  await api('/api/v1/cycles', { method: 'POST', headers: { 'Content-Type': 'application/json' } });
  fs.mkdirSync(ART, { recursive: true });
  b = await launch();
});
after(async () => { if (b) await b.close(); });

async function ask(page, manifest, cordon = '') {
  await page.fill('#wi-manifest', manifest);
  await page.fill('#wi-cordon', cordon);
  await page.click('form.whatif button[type=submit]');
  await page.waitForSelector('#wi-answer h2');
}

test('would it fit: where, whom it would preempt, bad input, nothing written', async () => {
  const seq = await auditLast();
  const page = await newPage(b.browser);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(URL + '/#/whatif');
  await page.waitForSelector('#wi-manifest');

  const want = await api('/api/v1/whatif', { method: 'POST',
    headers: { 'Content-Type': 'application/yaml' }, body: PROBE });
  const nodes = want.jobs[0].members.map((m) => m.node);
  await ask(page, PROBE);
  const row = page.locator('#wi-answer tbody tr', { hasText: 'training/probe' });
  assert.match(await row.textContent(), /Scheduled\s*yes/);
  assert.deepEqual(await row.locator('td:nth-child(4) a:not(.map)').allTextContents(), nodes);
  assert.equal(await row.locator('a.map').getAttribute('href'),
    '#/topology?highlight=' + encodeURIComponent([...new Set(nodes)].join(',')));

  await ask(page, PROBE, nodes.join(','));
  const text = await page.locator('#wi-answer').textContent();
  assert.match(text, /Pipelined\s*no/);
  assert.match(text, /Preemptions it would make/);
  assert.match(text, /preempts nothing; takes the room prod\/urgent-finetune's preemption frees \(\w+\//);
  // the room it takes is the one nominated to vision/resnet (priority 50 < 200)
  assert.match(text, /vision\/resnet\s*changed\s*Pipelined/);
  await page.screenshot({ path: path.join(ART, 'whatif.png'), fullPage: true });

  await ask(page, 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: lots}}}]}\n');
  assert.equal(await page.locator('#wi-answer h2').textContent(), 'Not tried');
  assert.match(await page.locator('#wi-answer').textContent(), /cpu/);
  await ask(page, PROBE, 'nosuch');
  assert.match(await page.locator('#wi-answer .note-error').textContent(), /node 'nosuch' not found/);

  assert.equal(await auditLast(), seq, 'the what-ifs wrote nothing');
  assert.deepEqual(errors.filter((e) => !/400 \(Bad Request\)/.test(e)), []);
  await page.close();
});
