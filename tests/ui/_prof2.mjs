import { launch, newPage } from './browser.mjs';
const URL = process.argv[2];
const b = await launch();
const page = await newPage(b.browser);
await page.goto(URL + '/#/topology');
await page.waitForFunction(() => document.querySelectorAll('#topo-map .cell').length > 4000, null, { timeout: 60000, polling: 'raf' });
const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.start');
const t = await page.evaluate(() => {
  const out = [];
  for (const v of ['cpu', 'nvidia.com/gpu', 'cpu']) {
    const sel = document.querySelector('#topo-color');
    const t0 = performance.now();
    sel.value = v; sel.dispatchEvent(new Event('change'));
    const t1 = performance.now();
    void document.body.offsetHeight;
    out.push([Math.round(t1 - t0), Math.round(performance.now() - t1)]);
  }
  return out;
});
const { profile } = await cdp.send('Profiler.stop');
console.log(t);
// self time per function
const self = new Map();
const dt = profile.timeDeltas; const ids = profile.samples;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
for (let i = 0; i < ids.length; i++) { const n = byId.get(ids[i]); const k = n.callFrame.functionName + ' ' + n.callFrame.url.split('/').pop() + ':' + n.callFrame.lineNumber; self.set(k, (self.get(k) || 0) + (dt[i] || 0) / 1000); }
console.log([...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, v]) => `${v.toFixed(1)} ${k}`).join('\n'));
await b.close();
