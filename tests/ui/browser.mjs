// browser.mjs - headless Debian chromium driven by playwright-core (no downloaded browsers).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.MUSTER_CHROMIUM || '/usr/bin/chromium';

// Launches chromium with a fresh profile (a new --user-data-dir, passed the way playwright
// wants it) and extra command-line args (e.g. --host-resolver-rules); returns {browser: the
// context, close()}.
export async function launch(extraArgs = []) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-ui-profile-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    acceptDownloads: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ...extraArgs],
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => {});
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

// A page that records console errors and uncaught exceptions into page.errors.
export async function newPage(browser) {
  const page = await browser.newPage();
  page.errors = [];
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.on('pageerror', (e) => page.errors.push(String(e)));
  return page;
}

// Starts a musterd of the test file's own on a random port, its data under dir (which the
// caller made and removes): config holds the file's own YAML lines, before the ones every
// test musterd has (sync none, log_level warn, the UI files of this tree). Waits for its
// port file (10 s). Returns {url, port, stop()}.
export async function startMusterd(dir, config = '') {
  const src = process.env.MUSTER_SOURCE_DIR || path.resolve('../..');
  const bin = process.env.MUSTER_BIN_DIR || path.join(src, 'build/bin');
  const cfg = path.join(dir, 'musterd.yaml'), portFile = path.join(dir, 'port');
  fs.writeFileSync(cfg, config +
    `sync: none\nlog_level: warn\nui_dir: ${path.join(src, 'web/static')}\n`);
  const md = spawn(path.join(bin, 'musterd'), ['--config', cfg, '--data-dir', path.join(dir, 'data'),
    '--listen', '127.0.0.1:0', '--port-file', portFile], { stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 100 && !(fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim()); i++)
    await new Promise((r) => setTimeout(r, 100));
  const port = fs.readFileSync(portFile, 'utf8').trim();
  return { url: `http://127.0.0.1:${port}`, port, stop: () => md.kill('SIGTERM') };
}
