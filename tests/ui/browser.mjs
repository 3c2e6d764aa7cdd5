// browser.mjs - headless Debian chromium driven by playwright-core (no downloaded browsers).
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
