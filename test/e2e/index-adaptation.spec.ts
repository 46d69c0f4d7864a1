/**
 * The Search index page follows the embedder's adaptation to the collection (EMBED_ADAPT) without a reload: the
 * shipped model and a collection too small to adapt to ("Not yet"), then documents uploaded while the page is open;
 * the page ends showing the adapted model in force, 192 dimensions, and every chunk embedded again. The real built
 * service with the real shipped model; axe, and screenshots at both widths (test/e2e/artifacts/index).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adaptationDocuments } from '../fixtures/adaptation-documents.js';
import { cleanupServices } from '../fixtures/service-process.js';
import { DESKTOP, launchBrowser, openPage } from './fixtures/browser.js';
import { startUiService, type UiService, uploadFile, waitForIndexing } from './fixtures/service.js';
import { expectClean, go, signIn } from './fixtures/ui.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 240_000 });

let ui: UiService;
let browser: Browser;
let password: string;

beforeAll(async () => {
  ui = await startUiService({ HEARTH_DEFAULT_EMBEDDER: 'shipped', EMBED_ADAPT_MIN_CHUNKS: '100', MODEL_WATCH_SECONDS: '1' });
  password = await ui.createUser('edna', 'editor');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  cleanupServices();
});

describe('the search index page', () => {
  it('follows the adaptation of the embedder to the collection as documents arrive, without a reload', async () => {
    const editor = await ui.login('edna', password);
    const upload = async (documents: Record<string, string>) => {
      for (const [name, text] of Object.entries(documents)) await uploadFile(ui, editor, name, text);
      await waitForIndexing(ui, editor, 120_000);
    };
    await upload(adaptationDocuments(0, 3));

    const guarded = await openPage(browser, ui.url, { suite: 'index', viewport: DESKTOP });
    const { page } = guarded;
    await signIn(page, ui.url, 'edna', password);
    await page.waitForURL('**/chat');
    await go(page, 'Search index');
    const fact = (term: string) => page.locator('dt').filter({ hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]');
    const text = async (term: string) => ((await fact(term).textContent()) ?? '').replace(/\s+/g, ' ').trim();
    await expect.poll(() => text('Adapted to this collection'), { timeout: 15_000 }).toMatch(/^Not yet \d+ chunks: the embedder is adapted to the collection from 100 \(EMBED_ADAPT_MIN_CHUNKS\)$/);
    expect(await text('Embedding model')).toMatch(/^potion-base-4M-int8@\S+, 128 dimensions$/);
    await guarded.shotAtWidths('index-not-yet');

    // More documents while the page stays open: it reads the figures again by itself.
    await upload(adaptationDocuments(3, 40));
    await expect.poll(() => text('Adapted to this collection'), { timeout: 150_000, interval: 500 }).toMatch(/^In force potion-base-4M-int8-corpus-[0-9a-f]{8}, adapted to \d+ chunks/);
    await expect.poll(() => text('Embedding model'), { timeout: 60_000, interval: 500 }).toMatch(/^potion-base-4M-int8-corpus-[0-9a-f]{8}@\S+, 192 dimensions$/);
    await expect.poll(() => text('Chunks without a vector'), { timeout: 60_000, interval: 500 }).toBe('0');
    expect(Number((await text('Chunks')).replace(/\D/g, ''))).toBeGreaterThanOrEqual(100);
    expect(await guarded.axe('index')).toEqual([]);
    await expectClean(guarded);
    await guarded.shotAtWidths('index-in-force');
    await guarded.close();
  });
});
