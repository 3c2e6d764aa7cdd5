// ui.test.mjs - the web UI in headless chromium against a musterd loaded with the demo
// cluster (examples/demo): every page loads without console errors and shows the right
// jobs and states, the state filter and tiles being the states GET /api/v1/jobstates lists
// (a stubbed extra state shows up too); the why page shows the gang shortfall of training/giant and the topology
// and preemption parts of prod/urgent-finetune; selecting a job highlights its (nominated)
// nodes in the topology tree, whose numbers are musterd's; the real preemption ledger links
// preemptors and victims both ways; the audit export downloads NDJSON whose hash chain
// verifies; the badge says when musterd is unreachable; a follower's header names the leader
// (its /healthz answer stubbed); polls read jobs with resourceVersion=0 and gzip, a first
// load and Refresh without; the queues page shows the demo's
// queues as a tree. No console error is allowed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launch, newPage } from './browser.mjs';
import { verifyChain } from './canon.mjs';

const URL = process.env.MUSTER_URL;
const SRC = process.env.MUSTER_SOURCE_DIR || path.resolve('../..');
const ART = path.resolve('artifacts');

let b;
const api = async (p, init) => {
  const res = await fetch(URL + p, init);
  assert.ok(res.ok, `${init && init.method || 'GET'} ${p}: ${res.status}`);
  return res.headers.get('content-type')?.includes('json') ? res.json() : res.text();
};

before(async () => {
  assert.ok(URL, 'MUSTER_URL is set (run tests/ui/run.sh)');
  for (const f of ['cluster.yaml', 'workloads.yaml'])
    await api('/api/v1/manifests', { method: 'POST', headers: { 'Content-Type': 'application/yaml' },
      body: fs.readFileSync(path.join(SRC, 'examples/demo', f)) });
  for (let i = 0; i < 3; i++) await api('/api/v1/cycles', { method: 'POST', headers: { 'Content-Type': 'application/json' } });
  fs.mkdirSync(ART, { recursive: true });
  b = await launch();
});
after(async () => { if (b) await b.close(); });

// Opens a page at a hash route and waits for the first successful poll; prepare(page), when
// given, runs before the page loads (to stub a route).
async function open(hash, prepare) {
  const page = await newPage(b.browser);
  page.unexpected = [];
  page.on('console', (m) => {
    if (m.type() === 'error') page.unexpected.push(`${m.text()} (${(m.location() || {}).url})`);
  });
  page.on('pageerror', (e) => page.unexpected.push(String(e)));
  if (prepare) await prepare(page);
  await page.goto(URL + '/' + hash);
  await page.waitForSelector('#status[data-state="ok"]', { timeout: 15000 });
  return page;
}

async function finish(page, name) {
  await page.screenshot({ path: path.join(ART, name + '.png'), fullPage: true });
  assert.deepEqual(page.unexpected, [], 'no console errors');
  await page.close();
}

test('overview shows capacity, jobs by state and recent decisions', async () => {
  const jobs = (await api('/api/v1/jobs')).items;
  const page = await open('#/');
  const count = (s) => jobs.filter((j) => j.state === s).length;
  for (const s of ['Running', 'Unschedulable']) {
    const n = await page.locator(`a.tile[data-state="${s}"] .n`).textContent();
    assert.equal(Number(n), count(s), `${s} tile`);
  }
  assert.match(await page.locator('.meters').textContent(), /nvidia\.com\/gpu/);
  assert.ok(await page.locator('section:has(#ov-dec) tbody tr').count() > 0, 'decisions listed');
  await finish(page, 'overview');
});

test('jobs table lists every job with its state and filters by state', async () => {
  const jobs = (await api('/api/v1/jobs')).items;
  const page = await open('#/jobs');
  const rows = await page.locator('table.jobs tbody tr[data-job]').evaluateAll((trs) =>
    trs.map((tr) => [tr.dataset.job, tr.dataset.state]));
  assert.deepEqual(new Map(rows), new Map(jobs.map((j) => [j.id, j.state])));
  await page.selectOption('#jobs-state', 'Unschedulable');
  const shown = await page.locator('table.jobs tbody tr[data-job]').evaluateAll((trs) =>
    trs.map((tr) => tr.dataset.job).sort());
  assert.deepEqual(shown, jobs.filter((j) => j.state === 'Unschedulable').map((j) => j.id).sort());
  assert.ok(shown.includes('training/giant'));
  assert.match(page.url(), /state=Unschedulable/, 'filter kept in the URL');
  await page.click('table.jobs a[href="#/jobs/training/giant"]');
  await page.waitForSelector('.whydoc');
  await finish(page, 'jobs');
});

test('the state filter and the overview tiles are the states musterd lists', async () => {
  const names = (await api('/api/v1/jobstates')).items.map((st) => st.name);
  assert.ok(names.includes('Pending') && names.includes('Finished'), 'musterd lists states');
  const options = async (page, n) => {
    await page.waitForFunction((k) => document.querySelectorAll('#jobs-state option').length === k,
      n + 1);
    return page.locator('#jobs-state option').evaluateAll((os) => os.map((o) => o.value));
  };
  const tiles = async (page) => {
    await page.waitForSelector('a.tile');
    return page.locator('a.tile').evaluateAll((as) => as.map((a) => a.dataset.state));
  };
  let page = await open('#/jobs');
  assert.deepEqual(await options(page, names.length), ['', ...names]);
  await page.goto(URL + '/#/');
  assert.deepEqual(await tiles(page), names);
  await finish(page, 'jobstates');
  // a state musterd adds reaches both without a change to the UI: the list is the API's
  const more = [...names, 'Hibernating'];
  const stub = (p) => p.route('**/api/v1/jobstates', (r) => r.fulfill({ status: 200,
    contentType: 'application/json',
    body: JSON.stringify({ kind: 'JobStateList', items: more.map((name) => ({ name })) }) }));
  page = await open('#/jobs', stub);
  assert.deepEqual(await options(page, more.length), ['', ...more]);
  await page.goto(URL + '/#/');
  assert.deepEqual(await tiles(page), more);
  assert.equal(await page.locator('a.tile[data-state="Hibernating"] .n').textContent(), '0');
  await finish(page, 'jobstates-stubbed');
});

test('why page of training/giant says first that it exceeds the cluster', async () => {
  const doc = await api('/api/v1/jobs/training/giant/why');
  assert.equal(doc.primary.code, 'ExceedsClusterCapacity');
  const page = await open('#/jobs/training/giant');
  await page.waitForSelector('.whydoc');
  const primary = await page.locator('.primary').textContent();
  assert.match(primary, /ExceedsClusterCapacity/);
  assert.match(primary, /needs 320 nvidia\.com\/gpu, the cluster has 288/);
  assert.ok(await page.locator('.blockers li[data-code="ExceedsClusterCapacity"]').count() === 1);
  assert.equal(await page.locator('table.members tbody tr').count(), 40);
  assert.ok(await page.locator('table.trail tbody tr').count() > 0, 'audit trail shown');
  await finish(page, 'why');
});

test('selecting a job highlights exactly its nodes in the topology tree', async () => {
  const job = await api('/api/v1/jobs/training/llm-workers');
  const want = job.members.map((m) => m.node).filter(Boolean).sort();
  assert.ok(want.length > 0, 'the demo places training/llm-workers');
  const page = await open('#/topology');
  await page.waitForSelector('.tree li[data-domain]');
  assert.equal(await page.locator('.tree li.node.hl').count(), 0);
  await page.selectOption('#topo-job', 'training/llm-workers');
  await page.waitForSelector('.tree li.node.hl .occ'); // node details loaded
  const got = await page.locator('.tree li.node.hl').evaluateAll((lis) =>
    lis.map((li) => li.dataset.node).sort());
  assert.deepEqual(got, want);
  assert.match(page.url(), /job=training%2Fllm-workers/);
  // The per-domain numbers are musterd's: the largest gang of the job's pod shape.
  const topo = await api('/api/v1/topology?like=training/llm-workers');
  for (const d of topo.root.children) {
    const row = page.locator(`.tree li[data-domain="/${d.name}"] > .row .gang`);
    assert.equal(await row.textContent(), `largest gang ${d.largestGang}`, d.name);
  }
  // The job's spine is open, the other closed; a domain toggles from the keyboard.
  const spine = (n) => page.locator(`.tree button[data-toggle="/${n}"]`);
  assert.equal(await spine('spine-1').getAttribute('aria-expanded'), 'true');
  assert.equal(await spine('spine-0').getAttribute('aria-expanded'), 'false');
  await spine('spine-1').focus();
  await page.keyboard.press('Enter');
  assert.equal(await spine('spine-1').getAttribute('aria-expanded'), 'false');
  assert.equal(await page.locator('.tree li.node').count(), 0, 'collapsed nodes leave the DOM');
  await page.keyboard.press('Enter');
  assert.equal(await spine('spine-1').getAttribute('aria-expanded'), 'true');
  await finish(page, 'topology');
});

test('a MustGather job waiting on preemption: its nominated nodes are highlighted', async () => {
  const job = await api('/api/v1/jobs/prod/urgent-finetune');
  const want = job.members.map((m) => m.nominatedNode).filter(Boolean).sort();
  assert.equal(want.length, 12, 'the demo nominates prod/urgent-finetune');
  const page = await open('#/topology?job=prod%2Furgent-finetune');
  await page.waitForSelector('.tree li.node.hl .occ');
  const got = await page.locator('.tree li.node.hl').evaluateAll((lis) =>
    lis.map((li) => li.dataset.node).sort());
  assert.deepEqual(got, want);
  assert.match(await page.locator('.topo-summary').textContent(), /12 nominated/);
  await finish(page, 'topology-mustgather');
});

test('why page shows the topology and preemption parts of prod/urgent-finetune', async () => {
  const doc = await api('/api/v1/jobs/prod/urgent-finetune/why');
  assert.ok(doc.topology && doc.preemption, 'the demo job has both parts');
  const page = await open('#/jobs/prod/urgent-finetune');
  await page.waitForSelector('.whydoc .topo table.best');
  const topo = page.locator('.whydoc .topo');
  assert.match(await topo.locator('.tsummary').textContent(),
    new RegExp(`^${doc.topology.strategy} ${doc.topology.layer}`));
  assert.ok((await topo.textContent()).includes(doc.topology.summary.split(': ')[1]));
  const best = await topo.locator('table.best tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.cells].map((c) => c.textContent.trim())));
  assert.deepEqual(best, doc.topology.best.map((d) => [`${d.layer} ${d.name}`,
    `${d.holds} of ${doc.topology.needed} pods`, d.limit || 'holds the job']));
  const pre = page.locator('.whydoc .preempt');
  assert.ok((await pre.textContent()).includes(doc.preemption.reason));
  assert.equal(await pre.getAttribute('data-verdict'),
    doc.preemption.attempted ? 'preempting' : doc.preemption.code === 'PreemptionWaiting' ?
      'waiting' : 'not attempted');
  if (doc.preemption.code === 'PreemptionWaiting') // the victims of its latest entry
    assert.ok(await pre.locator('a[href="#/jobs/batch/etl-a"]').count() > 0);
  await finish(page, 'why-topology-preemption');
});

test('preemptions page and job pages link preemptors and victims both ways (real ledger)', async () => {
  const items = (await api('/api/v1/preemptions')).items;
  assert.ok(items.length > 0, 'the demo cluster preempts after a few cycles');
  const page = await open('#/preemptions');
  await page.waitForSelector('table.ledger tbody tr[data-entry]');
  assert.equal(await page.locator('table.ledger tbody tr[data-entry]').count(), items.length);
  assert.equal(await page.locator('.timeline .tick').count(), items.length);
  for (const e of items) {
    const row = page.locator(`table.ledger tbody tr[data-entry="${e.id}"]`);
    assert.equal(await row.getAttribute('data-preemptor'), e.preemptor);
    const victimJobs = [...new Set(e.victims.map((v) => v.job))].sort();
    const linked = await row.locator('ul.victims a.job').evaluateAll((as) =>
      as.map((a) => a.getAttribute('href')).sort());
    assert.deepEqual(linked, victimJobs.map((j) => '#/jobs/' + j));
    assert.match(await row.textContent(), new RegExp(`${e.cost.pods} pod\\(s\\), ${e.cost.gangsBroken} gang`));
    assert.match(await row.textContent(), e.bound ? /bound/ : /not bound yet/);
  }
  await finish(page, 'preemptions');
  // Preemptor -> victims: its page lists the entry with a link to every victim job.
  const e = items.find((x) => x.preemptor === 'prod/urgent-finetune') || items[0];
  const p1 = await open('#/jobs/' + e.preemptor);
  const made = p1.locator(`section:has(#job-pre) ul.made li[data-entry="${e.id}"]`);
  await made.waitFor();
  for (const j of new Set(e.victims.map((v) => v.job)))
    assert.equal(await made.locator(`a[href="#/jobs/${j}"]`).count(), 1, `links victim ${j}`);
  await finish(p1, 'preemptor');
  // Victim -> preemptor: every victim job's page links back to this entry's preemptor, and
  // its head shows preemptedBy (the latest entry that hit it).
  for (const j of new Set(e.victims.map((v) => v.job))) {
    const job = await api('/api/v1/jobs/' + j);
    const p2 = await open('#/jobs/' + j);
    const suffered = p2.locator(`section:has(#job-pre) ul.suffered li[data-entry="${e.id}"]`);
    await suffered.waitFor();
    assert.equal(await suffered.locator(`a[href="#/jobs/${e.preemptor}"]`).count(), 1);
    assert.ok(job.preemptedBy, `${j} has preemptedBy`);
    assert.equal(await p2.locator(`.preempted-by a[href="#/jobs/${job.preemptedBy.preemptor}"]`).count(), 1);
    // its PreemptedBy blocker names the preemptors as links, never as raw JSON
    const extras = p2.locator('section.blockers .extras');
    if (await extras.count()) {
      const text = await extras.first().innerText();
      assert.ok(!text.includes('{"'), `a blocker of ${j} shows raw JSON: ${text}`);
      assert.ok(await extras.first().locator(`a[href="#/jobs/${e.preemptor}"]`).count() > 0 ||
        !text.includes(e.preemptor), `the blocker of ${j} links its preemptor`);
    }
    await finish(p2, 'victim');
  }
});

test('audit export downloads NDJSON whose hash chain verifies', async () => {
  const page = await open('#/audit?limit=100000');
  await page.waitForSelector('#audit-chain[data-ok="true"]');
  const rows = await page.locator('table.audit tbody tr[data-seq]').count();
  assert.ok(rows > 50, 'records listed');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#audit-export')]);
  const file = path.join(ART, 'audit-export.ndjson');
  await download.saveAs(file);
  const text = fs.readFileSync(file, 'utf8');
  const first = JSON.parse(text.split('\n')[0]);
  assert.equal(first.seq, 1);
  const v = verifyChain(text);
  assert.ok(v.ok, v.reason);
  assert.ok(v.checked >= rows, `${v.checked} records verify`);
  // A tampered copy must fail: the check itself can fail.
  assert.equal(verifyChain(text.replace('"kind":"placed"', '"kind":"plaCed"')).ok, false);
  // Filtering by job and kind narrows the table and the export link.
  await page.fill('#audit-job', 'prod/urgent-finetune');
  await page.selectOption('#audit-kind', 'placed');
  await page.click('form.filters button[type="submit"]');
  await page.waitForFunction(() => [...document.querySelectorAll('table.audit tbody tr[data-kind]')]
    .every((tr) => tr.dataset.kind === 'placed'));
  assert.match(await page.locator('#audit-export').getAttribute('href'), /job=prod%2Furgent-finetune&kind=placed/);
  await finish(page, 'audit');
});

test('the badge says when musterd is unreachable and recovers', async () => {
  const page = await open('#/jobs');
  await page.route('**/api/v1/**', (r) => r.abort());
  page.unexpected.length = 0;
  await page.click('#refresh');
  await page.waitForSelector('#status[data-state="bad"]');
  assert.match(await page.locator('#status').textContent(), /musterd unreachable/);
  await page.unroute('**/api/v1/**');
  await page.click('#refresh');
  await page.waitForSelector('#status[data-state="ok"]');
  await page.close();
});

test('polls read the scheduler answers with resourceVersion=0, gzipped; a load or Refresh the newest', async () => {
  const page = await newPage(b.browser);
  const jobsReads = [];
  page.on('request', (r) => { if (new globalThis.URL(r.url()).pathname === '/api/v1/jobs') jobsReads.push(r.url()); });
  await page.goto(URL + '/#/jobs');
  await page.waitForSelector('#status[data-state="ok"]', { timeout: 15000 });
  assert.ok(jobsReads.length > 0, 'the page read the jobs');
  assert.ok(jobsReads.every((u) => !u.includes('resourceVersion')), `first load: ${jobsReads}`);
  const loaded = await page.evaluate(() => document.body.dataset.updated);
  const polled = await page.waitForResponse((r) => new globalThis.URL(r.url()).pathname === '/api/v1/jobs' &&
    new globalThis.URL(r.url()).searchParams.get('resourceVersion') === '0', { timeout: 15000 });
  assert.equal(polled.status(), 200);
  assert.equal(polled.headers()['content-encoding'], 'gzip');
  assert.match((await polled.json()).metadata.resourceVersion, /^[0-9]+$/);
  // the poll is over (a click during one is ignored): its refresh stamped the page
  await page.waitForFunction((t) => document.body.dataset.updated !== t, loaded);
  const clicked = page.waitForRequest((r) => new globalThis.URL(r.url()).pathname === '/api/v1/jobs');
  await page.click('#refresh');
  assert.ok(!(await clicked).url().includes('resourceVersion'), 'Refresh reads the newest state');
  await page.waitForSelector('#status[data-state="ok"]');
  await page.close();
});

test('a follower says so in the header, naming the leader', async () => {
  const page = await open('#/jobs');
  assert.equal(await page.locator('#role').isHidden(), true, 'standalone: no role badge');
  await page.route('**/healthz', (r) => r.fulfill({ status: 200, contentType: 'application/json',
    body: JSON.stringify({ status: 'ok', role: 'follower', leader: 'muster-0_42' }) }));
  await page.click('#refresh');
  await page.waitForSelector('#role[data-role="follower"]');
  assert.equal(await page.locator('#role').textContent(), 'follower, leader is muster-0_42');
  await page.close();
});

test('a read-only musterd says so in the header, with its reason as text', async () => {
  const page = await open('#/jobs');
  assert.equal(await page.locator('#readonly').isHidden(), true, 'writable: no read-only badge');
  const reason = 'read-only: audit chain broken at record 55: <img src=x onerror=alert(1)>';
  await page.route('**/healthz', (r) => r.fulfill({ status: 200, contentType: 'application/json',
    body: JSON.stringify({ status: 'ok', role: 'standalone', leader: null, readOnly: reason }) }));
  await page.click('#refresh');
  await page.waitForSelector('#readonly:not([hidden])');
  assert.equal(await page.locator('#readonly').textContent(), 'read-only');
  assert.equal(await page.getAttribute('#readonly', 'title'), reason);
  assert.equal(await page.locator('#readonly img').count(), 0, 'the reason stays text');
  await page.unroute('**/healthz');
  await page.click('#refresh');
  await page.waitForSelector('#readonly[hidden]', { state: 'attached' });
  await page.close();
});

test('keyboard: skip link focuses the content, nav is real links with a visible focus ring', async () => {
  const page = await open('#/jobs');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'skip');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'view');
  assert.match(page.url(), /#\/jobs$/, 'the route is unchanged');
  await page.focus('nav a[data-page="audit"]');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.equal(outline, 'solid');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#audit-chain');
  assert.equal(await page.getAttribute('nav a[data-page="audit"]', 'aria-current'), 'page');
  await finish(page, 'keyboard');
});

test('queues page shows the demo queues, the hierarchy and their jobs', async () => {
  const queues = (await api('/api/v1/queues')).items;
  assert.deepEqual(queues.map((q) => q.name).sort(), ['analytics', 'default', 'research',
    'research-interactive', 'research-sweeps']);
  const page = await open('#/queues');
  await page.waitForSelector('table.queues tbody tr[data-queue]');
  const rows = await page.locator('table.queues tbody tr[data-queue]').evaluateAll((trs) =>
    trs.map((tr) => [tr.dataset.queue, Number(tr.dataset.depth)]));
  assert.deepEqual(rows, [['analytics', 0], ['default', 0], ['research', 0],
    ['research-interactive', 1], ['research-sweeps', 1]]);
  await page.click('tr[data-queue="analytics"] .qname a');
  await page.waitForSelector('ul.qjobs.running a[href="#/jobs/analytics/featurize"]');
  await page.click('tr[data-queue="research-sweeps"] .qname a');
  await page.waitForSelector('ul.qjobs.pending a[href="#/jobs/lab/hparam-sweep"]');
  await finish(page, 'queues-demo');
});
