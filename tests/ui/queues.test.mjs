// queues.test.mjs - the queues page in headless chromium against a musterd of its own (so
// the demo of ui.test.mjs stays as it is), loaded with two queues
// (tests/data/api/queues/manifest.yaml): alpha runs a gang above its deserved share, beta
// waits with one, spare has a child. The page lists the queues (the hierarchy indented), each
// bar's filled length against its deserved marker is allocated / deserved as the API says,
// the borrowed part is shaded apart for alpha only, and selecting a queue lists its jobs
// (linked to the job pages) and its reclaims (linked to the preemption pages).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launch, newPage, startMusterd } from './browser.mjs';

const SRC = process.env.MUSTER_SOURCE_DIR || path.resolve('../..');
const ART = path.resolve('artifacts');
const GPU = 'nvidia.com/gpu';

let b, md, tmp, URL;

const api = async (p, init) => {
  const res = await fetch(URL + p, init);
  assert.ok(res.ok, `${init && init.method || 'GET'} ${p}: ${res.status}`);
  return res.json();
};
const applyFile = (f) => api('/api/v1/manifests', { method: 'POST',
  headers: { 'Content-Type': 'application/yaml' }, body: fs.readFileSync(path.join(SRC, f)) });
const cycle = () => api('/api/v1/cycles', { method: 'POST', headers: { 'Content-Type': 'application/json' } });

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-ui-queues-'));
  md = await startMusterd(tmp, 'cycle_interval: 0\nmark_running: true\n');
  URL = md.url;
  await applyFile('tests/data/api/queues/manifest.yaml');
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
  await page.goto(URL + '/' + hash);
  await page.waitForSelector('#status[data-state="ok"]', { timeout: 15000 });
  return page;
}

async function finish(page, name) {
  await page.screenshot({ path: path.join(ART, name + '.png'), fullPage: true });
  assert.deepEqual(page.errors, [], 'no console errors');
  await page.close();
}

// The filled length (own + borrowed) and the deserved marker's position of a bar, in pixels
// from its left edge, and its width.
const barBox = (bar) => bar.evaluate((el) => {
  const x0 = el.getBoundingClientRect().left;
  const w = (s) => { const e = el.querySelector(s); return e ? e.getBoundingClientRect().width : 0; };
  const d = el.querySelector('.deserved').getBoundingClientRect();
  return { width: el.clientWidth, filled: w('.own') + w('.borrowed'), borrowed: w('.borrowed'),
    marker: d.left + d.width / 2 - x0 };
});

test('the queues page lists every queue, children indented under their parent', async () => {
  const queues = (await api('/api/v1/queues')).items;
  assert.deepEqual(queues.map((q) => q.name), ['alpha', 'beta', 'default', 'spare', 'spare-child']);
  const page = await open('#/queues');
  await page.waitForSelector('table.queues tbody tr[data-queue]');
  assert.equal(await page.getAttribute('nav a[data-page="queues"]', 'aria-current'), 'page');
  const rows = await page.locator('table.queues tbody tr[data-queue]').evaluateAll((trs) =>
    trs.map((tr) => [tr.dataset.queue, Number(tr.dataset.depth)]));
  assert.deepEqual(rows, [['alpha', 0], ['beta', 0], ['default', 0], ['spare', 0],
    ['spare-child', 1]]);
  const pad = async (q) => page.locator(`tr[data-queue="${q}"] .qname`).evaluate((e) =>
    parseFloat(getComputedStyle(e).paddingLeft));
  assert.ok(await pad('spare-child') > await pad('spare'), 'the child is indented');
  // weight, share and jobs as the API says
  for (const q of queues) {
    const cells = await page.locator(`tr[data-queue="${q.name}"] td`).allTextContents();
    assert.equal(cells[1], String(q.weight), `${q.name} weight`);
    assert.equal(cells[2], q.share.toFixed(2), `${q.name} share`);
    assert.equal(cells[4], String(q.jobs.pending), `${q.name} pending`);
    assert.equal(cells[5], String(q.jobs.running), `${q.name} running`);
  }
  await finish(page, 'queues');
});

test('a bar fills allocated / deserved of its marker; capability ends it', async () => {
  const queues = (await api('/api/v1/queues')).items;
  const page = await open('#/queues');
  await page.waitForSelector('table.queues .qbar');
  let checked = 0;
  for (const q of queues) {
    for (const [res, n] of Object.entries(q.resources)) {
      const bar = page.locator(`tr[data-queue="${q.name}"] .qbar[data-resource="${res}"]`);
      if (!n.deserved || !(await bar.count())) continue;
      const box = await barBox(bar);
      assert.ok(Math.abs(box.filled / box.marker - n.allocated / n.deserved) < 0.03,
        `${q.name} ${res}: filled ${box.filled}px, marker at ${box.marker}px, ` +
        `allocated ${n.allocated} / deserved ${n.deserved}`);
      if (n.capability !== null) // the bar ends at the capability
        assert.ok(Math.abs(box.marker / box.width - n.deserved / Math.max(n.capability,
          n.allocated)) < 0.02, `${q.name} ${res} marker against its capability`);
      checked++;
    }
  }
  assert.ok(checked >= 6, `${checked} bars checked`);
  const beta = page.locator(`tr[data-queue="beta"] .qbar[data-resource="${GPU}"]`);
  assert.match(await beta.getAttribute('class'), /limited/);
  assert.match(await beta.textContent(), /cap 24/);
  assert.match(await page.locator(`tr[data-queue="alpha"] .qbar[data-resource="${GPU}"]`)
    .textContent(), /unlimited/);
  await page.close();
});

test('borrowed shading appears for the queue above its deserved share only', async () => {
  const queues = (await api('/api/v1/queues')).items;
  const alpha = queues.find((q) => q.name === 'alpha').resources[GPU];
  assert.ok(alpha.allocated > alpha.deserved && alpha.borrowed === alpha.allocated - alpha.deserved,
    'the cluster makes alpha borrow GPUs');
  const page = await open('#/queues');
  await page.waitForSelector('table.queues .qbar');
  const borrowing = await page.locator('table.queues tr[data-borrowing="true"]').evaluateAll(
    (trs) => trs.map((tr) => tr.dataset.queue));
  assert.deepEqual(borrowing, queues.filter((q) => Object.values(q.resources)
    .some((n) => n.borrowed > 0)).map((q) => q.name));
  assert.ok(borrowing.includes('alpha'));
  const bar = page.locator(`tr[data-queue="alpha"] .qbar[data-resource="${GPU}"]`);
  const box = await barBox(bar);
  assert.ok(Math.abs(box.borrowed / box.marker - alpha.borrowed / alpha.deserved) < 0.03,
    `borrowed ${box.borrowed}px against the marker at ${box.marker}px`);
  // shaded differently from what it holds within its share
  const look = (s) => bar.locator(s).evaluate((e) => {
    const c = getComputedStyle(e);
    return c.backgroundImage + ' ' + c.backgroundColor;
  });
  assert.notEqual(await look('.borrowed'), await look('.own'));
  assert.equal(await page.locator('tr[data-queue="beta"] .qbar .borrowed').count(), 0);
  assert.match(await bar.textContent(), new RegExp(`\\+${alpha.borrowed} borrowed`));
  await finish(page, 'queues-borrowed');
});

test('selecting a queue shows every number and its jobs, linked to their pages', async () => {
  const page = await open('#/queues');
  await page.click('tr[data-queue="alpha"] .qname a');
  await page.waitForSelector('ul.qjobs.running li[data-job]');
  assert.match(page.url(), /#\/queues\?queue=alpha$/, 'the selection is in the URL');
  const one = await api('/api/v1/queues/alpha');
  const running = await page.locator('ul.qjobs.running a.job').evaluateAll((as) =>
    as.map((a) => a.getAttribute('href')));
  assert.deepEqual(running, one.runningJobs.map((j) => '#/jobs/' + j));
  assert.match(await page.locator('section:has(#q-detail)').textContent(), /Pending jobs \(0\)/);
  const gpuRow = await page.locator('table.qres tbody tr', { hasText: GPU }).locator('td')
    .allTextContents();
  const n = one.resources[GPU];
  assert.deepEqual(gpuRow, [GPU, n.allocated, n.deserved, n.request, n.guarantee, 'unlimited',
    n.borrowed, n.lent].map(String));
  // another queue: its pending job; the link opens the job's page
  await page.click('tr[data-queue="beta"] .qname a');
  await page.waitForSelector('ul.qjobs.pending a[href="#/jobs/team-b/tune"]');
  assert.equal(await page.locator('tr.sel').getAttribute('data-queue'), 'beta');
  await page.click('ul.qjobs.pending a[href="#/jobs/team-b/tune"]');
  await page.waitForSelector('.whydoc');
  assert.match(page.url(), /#\/jobs\/team-b\/tune$/);
  // the why's queue part links back to the queue
  await page.waitForSelector('.whydoc .wqueue a[href="#/queues?queue=beta"]');
  await finish(page, 'queues-jobs');
  const gone = await open('#/queues?queue=nope');
  await gone.waitForSelector('section:has(#q-detail) .note-warn');
  assert.match(await gone.locator('section:has(#q-detail)').textContent(), /queue 'nope' not found/);
  await gone.close();
});

test('reclaims by and against a queue link to the preemption pages', async () => {
  // lender fills four more nodes; claimer's gang takes two of them back (a reclaim)
  await applyFile('tests/data/cli/queues/reclaim.yaml');
  let reclaims = [];
  for (let i = 0; i < 5 && !reclaims.length; i++) {
    await cycle();
    reclaims = (await api('/api/v1/preemptions')).items.filter((e) => e.kind === 'reclaim');
  }
  assert.ok(reclaims.length > 0, 'the reclaim cluster reclaims');
  for (const e of reclaims) {
    const page = await open('#/queues?queue=' + encodeURIComponent(e.queue.name));
    const by = page.locator(`ul.reclaims.by li[data-entry="${e.id}"]`);
    await by.waitFor();
    assert.equal(await by.locator(`a[href="#/jobs/${e.preemptor}"]`).count(), 1);
    const victimQueues = e.victimQueues.map((v) => v.name);
    for (const vq of victimQueues)
      assert.equal(await by.locator(`a[href="#/queues?queue=${vq}"]`).count(), 1);
    await by.locator('a', { hasText: `ledger entry ${e.id}` }).click();
    await page.waitForSelector(`table.ledger tbody tr[data-entry="${e.id}"]`);
    await finish(page, 'queues-reclaim-by');
    for (const vq of victimQueues) {
      const p2 = await open('#/queues?queue=' + encodeURIComponent(vq));
      await p2.locator(`ul.reclaims.against li[data-entry="${e.id}"]`).waitFor();
      await p2.close();
    }
  }
});
