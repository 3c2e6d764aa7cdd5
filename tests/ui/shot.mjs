// shot.mjs URL HASH OUT.png - one screenshot, for looking at pages by hand and for the
// pictures in docs/ui.md. Environment: FULL=1 the whole page, WIDTH / HEIGHT the viewport
// (1440 x 900), SCHEME=dark the dark colour scheme, HOVER=selector hovers it first (the map's
// tooltip), CLIP=selector shoots that element only.
import { launch, newPage } from './browser.mjs';
const [url, hash, out] = process.argv.slice(2);
const env = process.env;
const b = await launch();
const p = await newPage(b.browser);
await p.setViewportSize({ width: Number(env.WIDTH || 1440), height: Number(env.HEIGHT || 900) });
if (env.SCHEME) await p.emulateMedia({ colorScheme: env.SCHEME });
await p.goto(url + '/' + hash);
await p.waitForSelector('#status[data-state="ok"]', { timeout: 10000 }).catch(() => {});
await p.waitForTimeout(300);
if (env.HOVER) await p.hover(env.HOVER);
const target = env.CLIP ? p.locator(env.CLIP).first() : p;
await target.screenshot({ path: out, fullPage: env.CLIP ? undefined : env.FULL === '1' });
console.log('errors:', JSON.stringify(p.errors));
await b.close();
