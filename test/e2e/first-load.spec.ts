import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanupServices, ROOT } from '../fixtures/service-process.js';
import { ARTIFACTS, DESKTOP, launchBrowser, openPage, PHONE } from './fixtures/browser.js';
import { startUiService, type UiService } from './fixtures/service.js';
import { signIn } from './fixtures/ui.js';

/**
 * The weight of a first visit: all JS and CSS the browser fetches to show the sign-in page, and the chat of a
 * signed-in user, must stay within 150 KB gzip (measured on the built files it fetched). The same first loads on
 * a throttled mobile profile (Lighthouse's: 150 ms RTT, 1.6 Mbit/s down, 750 kbit/s up, CPU 4x slower) are
 * timed and written to test/e2e/artifacts/first-load.json: reported, not asserted.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

const BUDGET_BYTES = 150 * 1024;
const BUILD = path.join(ROOT, 'dist', 'appliance');
let ui: UiService;
let browser: Browser;
let password: string;
const report: Record<string, unknown> = {};

beforeAll(async () => {
  ui = await startUiService();
  password = await ui.createUser('fiona', 'viewer');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  cleanupServices();
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(path.join(ARTIFACTS, 'first-load.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`first load: ${JSON.stringify(report)}`);
});

/** The JS and CSS files of the build that the page fetched while `load` ran, and their gzip weight. */
async function assetsFetched(page: Page, load: () => Promise<void>): Promise<{ files: string[]; gzipBytes: number; transferredBytes: number }> {
  const files = new Set<string>();
  let transferredBytes = 0;
  const listener = async (response: import('playwright-core').Response) => {
    const pathname = new URL(response.url()).pathname;
    if (!/^\/assets\/.+\.(m?js|css)$/.test(pathname)) return;
    files.add(pathname);
    transferredBytes += (await response.request().sizes().catch(() => ({ responseBodySize: 0 }))).responseBodySize;
  };
  page.on('response', listener);
  await load();
  page.off('response', listener);
  const gzipBytes = [...files].reduce((sum, file) => sum + gzipSync(readFileSync(path.join(BUILD, file)), { level: 9 }).length, 0);
  return { files: [...files].sort(), gzipBytes, transferredBytes };
}

describe('first load', () => {
  it('fetches at most 150 KB gzip of JS and CSS for the sign-in page and for a signed-in chat', async () => {
    const guarded = await openPage(browser, ui.url, { suite: 'first-load', viewport: DESKTOP });
    const { page } = guarded;
    const cdp = await guarded.context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });

    const signInLoad = await assetsFetched(page, async () => {
      await page.goto(`${ui.url}/sign-in`);
      await page.getByLabel('Username').waitFor();
    });
    await signIn(page, ui.url, 'fiona', password);
    await page.waitForURL('**/chat');
    const chatLoad = await assetsFetched(page, async () => {
      await page.reload();
      await page.getByLabel('Ask a question about the documents').waitFor();
    });
    report.signIn = signInLoad;
    report.chat = chatLoad;
    expect(signInLoad.files.some((file) => file.endsWith('.css'))).toBe(true);
    expect(chatLoad.files.some((file) => /ChatPage/.test(file))).toBe(true);
    // pdf.js is fetched only when a PDF is opened.
    expect([...signInLoad.files, ...chatLoad.files].filter((file) => /pdf/i.test(file))).toEqual([]);
    expect(signInLoad.gzipBytes).toBeLessThanOrEqual(BUDGET_BYTES);
    expect(chatLoad.gzipBytes).toBeLessThanOrEqual(BUDGET_BYTES);
    await guarded.close();
  });

  it('times the first load on a throttled mobile profile (reported, not asserted)', async () => {
    const guarded = await openPage(browser, ui.url, { suite: 'first-load', viewport: PHONE });
    const { page } = guarded;
    const cdp = await guarded.context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 150, downloadThroughput: (1.6 * 1024 * 1024) / 8, uploadThroughput: (750 * 1024) / 8 });
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });

    const timed = async (url: string, ready: () => Promise<void>) => {
      const started = Date.now();
      await page.goto(url, { waitUntil: 'commit' });
      await ready();
      const untilUsable = Date.now() - started;
      const paint = (await page.evaluate(
        `(() => { const fcp = performance.getEntriesByName('first-contentful-paint')[0]; const nav = performance.getEntriesByType('navigation')[0];
          return { firstContentfulPaintMs: fcp ? Math.round(fcp.startTime) : null, domContentLoadedMs: Math.round(nav.domContentLoadedEventEnd), loadMs: Math.round(nav.loadEventEnd) }; })()`,
      )) as Record<string, number | null>;
      return { untilUsableMs: untilUsable, ...paint };
    };
    const signInPage = await timed(`${ui.url}/sign-in`, () => page.getByLabel('Username').waitFor());
    await page.getByLabel('Username').fill('fiona');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL('**/chat');
    const chatPage = await timed(`${ui.url}/chat`, () => page.getByLabel('Ask a question about the documents').waitFor());
    report.throttledMobile = { profile: 'RTT 150 ms, 1.6 Mbit/s down, 750 kbit/s up, CPU 4x slower, cache off', signIn: signInPage, chat: chatPage };
    expect(signInPage.untilUsableMs).toBeGreaterThan(0);
    await guarded.close();
  });
});
