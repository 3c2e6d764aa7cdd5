// timeslider.test.mjs - the time slider (web/static/js/timeslider.js) and the ledger's "whose
// room it took", in headless chromium against a musterd of its own (the shared demo of
// ui.test.mjs and whatif.test.mjs keeps its timing) loaded with the demo (examples/demo),
// whose first cycle preempts: a record picked on the topology page renders the state
// document of that record node by node, the live tree comes back with Now, a bad time shows
// musterd's 400 message; the job page shows batch/etl-a Running before the preemption and
// Preempted after; vision/resnet's page names the entry whose victims' room it took and
// batch/etl-a's names vision/resnet. No console error is allowed but the one 400 asked for.
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
  return res.headers.get('content-type')?.includes('json') ? res.json() : res.text();
};

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-ui-time-'));
  md = await startMusterd(tmp, 'cycle_interval: 0\nmark_running: true\n');
  URL = md.url;
  for (const f of ['cluster.yaml', 'workloads.yaml'])
    await api('/api/v1/manifests', { method: 'POST', headers: { 'Content-Type': 'application/yaml' },
      body: fs.readFileSync(path.join(SRC, 'examples/demo', f)) });
  for (let i = 0; i < 3; i++) await api('/api/v1/cycles', { method: 'POST', headers: { 'Content-Type': 'application/json' } });
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
  page.on('console', (m) => {
    if (m.type() === 'error') page.unexpected.push(`${m.text()} (${(m.location() || {}).url})`);
  });
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

// The time slider (timeslider.js) on the topology and job pages: a record picked renders
// the state document of that record (GET /api/v1/state?seq=N), node by node, and a bad time
// is refused with musterd's message; the job page shows the job as it was then.
test('time slider shows the cluster and a job as they were', async () => {
  const pre = (await (await fetch(URL + '/api/v1/audit?kind=preempted')).text()).trim()
    .split('\n').map((l) => JSON.parse(l));
  assert.ok(pre.length > 0, 'the demo preempts');
  const before = pre[0].seq - 1, after = pre[pre.length - 1].seq;
  const page = await open('#/topology');
  await page.waitForSelector('.timeslider');
  for (const seq of [before, after]) {
    const doc = await api('/api/v1/state?seq=' + seq);
    await page.locator('#ts-range').fill(String(seq));
    await page.waitForSelector(`.timeslider[data-seq="${seq}"]`);
    await page.waitForSelector('.past .past-head');
    assert.match(await page.locator('.past .past-head').textContent(), new RegExp(`record ${seq} `));
    assert.equal(await page.locator('.tree').isHidden(), true, 'the live tree is hidden');
    for (const n of doc.nodes) {
      const shown = await page.locator(`.past-node[data-node="${n.name}"] > ul > li.past-pod:not(.nominated)`)
        .evaluateAll((lis) => lis.map((li) => li.dataset.pod));
      assert.deepEqual(shown, n.pods, `pods on ${n.name} at record ${seq}`);
    }
    const etl = doc.pods.filter((p) => p.job === 'batch/etl-a');
    const deleting = await page.locator('.past-pod.deleting[data-job="batch/etl-a"]').count();
    assert.equal(deleting, etl.filter((p) => p.deleting).length);
    assert.equal(deleting > 0, seq === after, 'etl-a terminates only after the preemption');
  }
  await page.locator('#ts-at').fill('noon');
  await page.locator('#ts-go').click();
  await page.waitForSelector('.ts-msg .note-error');
  assert.match(await page.locator('.ts-msg').textContent(), /not an RFC 3339 time/);
  // the browser logs the refused request (400) as a console error: the one expected
  page.unexpected = page.unexpected.filter((m) => !/400 .*\/api\/v1\/state\?at=noon/.test(m));
  await page.locator('#ts-now').click();
  await page.waitForSelector('.timeslider[data-mode="now"]');
  assert.equal(await page.locator('.tree').isHidden(), false, 'now: the live tree again');
  await finish(page, 'timeslider-topology');

  const jp = await open('#/jobs/batch/etl-a');
  await jp.waitForSelector('.timeslider');
  for (const [seq, state] of [[before, 'Running'], [after, 'Preempted']]) {
    await jp.locator('#ts-range').fill(String(seq));
    await jp.waitForSelector(`.then-state[data-state="${state}"]`);
    const want = (await api('/api/v1/state?seq=' + seq)).jobs.find((j) => j.id === 'batch/etl-a');
    assert.equal(want.state, state);
  }
  await finish(jp, 'timeslider-job');
});

// The ledger says whose room an entry that evicted nothing took, on both jobs' pages.
test('job pages say whose victims room a preemption took', async () => {
  const items = (await api('/api/v1/preemptions')).items;
  const took = items.find((e) => (e.roomFrom || []).length);
  assert.ok(took, 'the demo has an entry that takes room earlier victims free');
  const src = took.roomFrom[0];
  const p = await open('#/jobs/' + took.preemptor);
  const li = p.locator(`ul.made li[data-entry="${took.id}"] .room-from`);
  await li.waitFor();
  assert.equal(await li.locator(`a[href="#/jobs/${src.preemptor}"]`).count(), 1);
  for (const v of src.victims) assert.equal(await li.locator(`a[href="#/jobs/${v}"]`).count(), 1);
  await finish(p, 'room-from');
  const v = await open('#/jobs/' + src.victims[0]);
  const rt = v.locator('.room-taken');
  await rt.waitFor();
  assert.equal(await rt.locator(`a[href="#/jobs/${took.preemptor}"]`).count(), 1);
  await finish(v, 'room-taken');
});
