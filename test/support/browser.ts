/**
 * Headless Chromium for the dashboard's browser tests: Debian's chromium
 * (hack/install-chromium.sh), driven by playwright-core, which downloads no
 * browser. Screenshots go to test-artifacts/<suite>/ for CI to keep.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from './paths.js';

/** Debian's Chromium. */
export const CHROMIUM = process.env.CAIRN_CHROMIUM ?? '/usr/bin/chromium';

/** Starts Chromium headless. */
export function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run hack/install-chromium.sh (npm test does)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--disable-gpu', '--disable-dev-shm-usage'] });
}

/** A browser context that accepts the test apiserver's own CA (its certificate is not in the system store). */
export function newContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1400, height: 900 } });
}

/** Where a suite's screenshots go. */
export function artifactDir(suite: string): string {
  const dir = path.join(ROOT, 'test-artifacts', suite);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Saves a full-page screenshot named `name`.png in the suite's artifacts. */
export async function screenshot(page: Page, suite: string, name: string): Promise<string> {
  const file = path.join(artifactDir(suite), `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
