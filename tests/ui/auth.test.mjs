// auth.test.mjs - the UI for a viewer, in headless chromium against a musterd of its own
// with a tokens file and auth_reads on: without a token the page asks for one (the reads
// answered 401), a wrong one is asked for again, and the viewer's token loads the overview
// and the jobs page; the token is sent as a bearer header and kept for the tab only.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launch, newPage, startMusterd } from './browser.mjs';

const SRC = process.env.MUSTER_SOURCE_DIR || path.resolve('../..');
const ART = path.resolve('artifacts');
const VIEWER = 'viewer-token-for-the-ui';

let b, md, tmp, URL;
const sha = (s) => crypto.createHash('sha256').update(s).digest('hex');

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-ui-auth-'));
  fs.writeFileSync(path.join(tmp, 'tokens.yaml'),
    `tokens:\n  - name: vera\n    role: viewer\n    sha256: ${sha(VIEWER)}\n`);
  md = await startMusterd(tmp, 'cycle_interval: 0\nauth_reads: true\n' +
    `tokens_file: ${path.join(tmp, 'tokens.yaml')}\n`);
  URL = md.url;
  fs.mkdirSync(ART, { recursive: true });
  b = await launch();
});
after(async () => {
  if (b) await b.close();
  if (md) md.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('a viewer signs in with a token and reads the overview and jobs', async () => {
  const page = await newPage(b.browser);
  const auth = [];
  page.on('request', (r) => { if (r.url().includes('/api/v1/')) auth.push(r.headers().authorization); });
  await page.goto(URL + '/#/');
  await page.waitForSelector('#signin input[type="password"]', { timeout: 15000 });
  assert.match(await page.textContent('#status'), /needs 'Authorization: Bearer/);

  await page.fill('#signin input', 'not-the-token');
  await page.click('#signin button');
  await page.waitForSelector('#signin', { timeout: 15000 });
  assert.match(await page.textContent('#status'), /does not match/);

  await page.fill('#signin input', VIEWER);
  await page.click('#signin button');
  await page.waitForSelector('#status[data-state="ok"]', { timeout: 15000 });
  assert.equal(await page.$('#signin'), null, 'the form goes once reads work');
  assert.ok(auth.includes('Bearer ' + VIEWER), 'the token is sent as a bearer header');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('muster.token')), VIEWER);

  await page.goto(URL + '/#/jobs');
  await page.waitForSelector('#status[data-state="ok"]', { timeout: 15000 });

  // the audit page shows the records; verification needs admin and says so
  await page.goto(URL + '/#/audit');
  await page.waitForSelector('#audit-chain[data-ok="unknown"]', { timeout: 15000 });
  assert.match(await page.textContent('#audit-chain'), /'vera' \(viewer\) may not GET \/api\/v1\/audit\/verify/);
  await page.waitForSelector('#status[data-state="ok"]', { timeout: 15000 });
  await page.screenshot({ path: path.join(ART, 'auth-viewer.png'), fullPage: true });
  // the 401s before signing in and the viewer's 403 on verification are the only console
  // errors (failed fetches)
  assert.ok(page.errors.every((e) => /40[13]/.test(e)), page.errors.join('\n'));
  await page.close();
});
