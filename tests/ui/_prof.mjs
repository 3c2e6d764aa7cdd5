import { launch, newPage } from './browser.mjs';
const URL = process.argv[2];
const b = await launch();
for (let r = 0; r < 3; r++) {
  const page = await newPage(b.browser);
  await page.goto(URL + '/#/topology');
  await page.waitForFunction(() => document.querySelectorAll('#topo-map .cell').length > 4000 && document.querySelector('.tree li[data-domain]'), null, { timeout: 60000, polling: 'raf' });
  const t = await page.evaluate(() => ({ now: performance.now(), res: performance.getEntriesByType('resource').map((e) => [e.name.replace(/^.*\/\/[^/]+/, ''), Math.round(e.startTime), Math.round(e.responseEnd), e.transferSize, e.decodedBodySize]) , nav: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd }));
  console.log(JSON.stringify(t));
  await page.close();
}
await b.close();
