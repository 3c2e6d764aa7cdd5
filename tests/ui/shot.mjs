// shot.mjs URL HASH OUT.png - one screenshot, for looking at pages by hand.
import { launch, newPage } from './browser.mjs';
const [url, hash, out] = process.argv.slice(2);
const b = await launch();
const p = await newPage(b.browser);
await p.goto(url + '/' + hash);
await p.waitForSelector('#status[data-state="ok"]', { timeout: 10000 }).catch(() => {});
await p.waitForTimeout(300);
await p.screenshot({ path: out, fullPage: process.env.FULL === '1' });
console.log('errors:', JSON.stringify(p.errors));
await b.close();
