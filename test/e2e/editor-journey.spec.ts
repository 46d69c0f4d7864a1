import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { cleanupServices } from '../fixtures/service-process.js';
import { DESKTOP, launchBrowser, openPage, PHONE } from './fixtures/browser.js';
import { startUiService, type UiService, uploadFile, waitForIndexing } from './fixtures/service.js';
import { expectClean, go, signIn } from './fixtures/ui.js';

/**
 * An editor's library work in the browser: files dropped and chosen, a progress bar per file while the bytes
 * go up, live status until each is indexed or failed (with the service's reason), filters, sort, pages, and
 * delete one or several.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

const SUITE = 'editor';
const EARLIER = 26;
let ui: UiService;
let browser: Browser;
let password: string;
const axeFindings: string[] = [];

beforeAll(async () => {
  ui = await startUiService();
  password = await ui.createUser('edna', 'editor');
  const editor = await ui.login('edna', password);
  // Enough documents for a second page of the list.
  for (let i = 0; i < EARLIER; i++) {
    await uploadFile(ui, editor, `archive-${String(i).padStart(2, '0')}.txt`, `Archive note ${i}: the ferry timetable for the ${i}th week of the season, with the harbour tides.`);
  }
  await waitForIndexing(ui, editor);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  cleanupServices();
});

describe('editor journey', () => {
  it('uploads by drag and drop and by the file picker, with progress, live status and reasons; filters, pages, deletes', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: DESKTOP });
    onTestFailed(() => guarded.shot('failed-desktop').then(() => undefined));
    const { page } = guarded;
    await signIn(page, ui.url, 'edna', password);
    await page.waitForURL('**/chat');
    expect(await page.getByRole('navigation', { name: 'Main' }).getByText('Admin', { exact: true }).count()).toBe(0);
    await go(page, 'Documents');
    await page.getByText(`1–25 of ${EARLIER}`).waitFor();

    // Two files dropped on the zone.
    await page.evaluate(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['# Tides\n\nSpring tides reach the harbour wall twice a month, at new and full moon.\n'], 'tides.md', { type: 'text/markdown' }));
      transfer.items.add(new File(['The lock keeper opens the gates an hour before high water on every working day.'], 'lock-keeper.txt', { type: 'text/plain' }));
      const zone = document.querySelector('.dropzone')!;
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    });
    // Two chosen with the picker: a PDF that is not one inside, and a large file of a type Hearth refuses once it has the bytes.
    // Every progress value the bars show, recorded as they change (the upload is throttled so that there are some).
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { __progress: number[] }).__progress = seen;
      new MutationObserver((records) => {
        for (const record of records) if (record.target instanceof HTMLProgressElement && record.target.hasAttribute('value')) seen.push(record.target.value);
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['value'] });
    });
    const cdp = await guarded.context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 10, downloadThroughput: -1, uploadThroughput: 512 * 1024 });
    await page.locator('#upload-files').setInputFiles([
      { name: 'broken.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\nthis is not a PDF body at all\n%%EOF\n') },
      { name: 'firmware.bin', mimeType: 'application/octet-stream', buffer: Buffer.from(Uint8Array.from({ length: 1536 * 1024 }, (_, i) => i % 256)) },
    ]);
    await page.getByRole('progressbar', { name: 'Upload of firmware.bin' }).waitFor();
    await guarded.shot('uploading-desktop', { fullPage: false });

    const item = (name: string) => page.locator('.upload-item', { hasText: name });
    await item('tides.md').getByText('Indexed').waitFor();
    await item('lock-keeper.txt').getByText('Indexed').waitFor();
    await item('broken.pdf').getByText('Indexing failed').waitFor();
    expect(await item('broken.pdf').locator('.upload-message').textContent()).toMatch(/\S/);
    await item('firmware.bin').getByText('Refused').waitFor({ timeout: 60_000 });
    expect(await item('firmware.bin').locator('.upload-message').textContent()).toContain('not supported');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    const progress = (await page.evaluate('window.__progress')) as number[];
    expect(progress.some((value) => value > 0 && value < 1), `progress values seen: ${progress.join(', ')}`).toBe(true);
    axeFindings.push(...(await guarded.axe('documents (editor, uploads)')));
    await guarded.shot('documents-editor-desktop');

    // The list: live totals, a filter, a sort, the second page.
    await page.getByText(`1–25 of ${EARLIER + 3}`).waitFor();
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('1–1 of 1').waitFor();
    const failedRow = page.locator('tbody tr', { hasText: 'broken.pdf' });
    expect(await failedRow.locator('.doc-error').textContent()).toMatch(/\S/);
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Sort').selectOption({ label: 'Name, Z to A' });
    await page.locator('tbody tr').first().filter({ hasText: 'tides.md' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText(`26–${EARLIER + 3} of ${EARLIER + 3}`).waitFor();
    await page.getByRole('button', { name: 'Previous' }).click();

    // Delete one, then two at once.
    await page.getByRole('button', { name: 'Delete broken.pdf' }).click();
    await page.getByRole('dialog', { name: 'Delete this document?' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('The document was deleted.').waitFor();
    await page.getByText(`1–25 of ${EARLIER + 2}`).waitFor();
    await page.getByRole('checkbox', { name: 'Select tides.md' }).check();
    await page.getByRole('checkbox', { name: 'Select lock-keeper.txt' }).check();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete 2 documents?' });
    axeFindings.push(...(await guarded.axe('delete confirmation')));
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('2 documents were deleted.').waitFor();
    await page.getByText(`1–25 of ${EARLIER}`).waitFor();
    expect(await page.locator('tbody tr', { hasText: 'tides.md' }).count()).toBe(0);
    await expectClean(guarded);
    await guarded.close();
  });

  it('shows the library and the upload panel on a 390 px phone', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: PHONE });
    onTestFailed(() => guarded.shot('failed-phone').then(() => undefined));
    const { page } = guarded;
    await signIn(page, ui.url, 'edna', password);
    await page.waitForURL('**/chat');
    await go(page, 'Documents');
    await page.locator('.dropzone').waitFor();
    await page.locator('#upload-files').setInputFiles([{ name: 'pier.txt', mimeType: 'text/plain', buffer: Buffer.from('The north pier is two hundred metres long and lit at night.') }]);
    await page.locator('.upload-item', { hasText: 'pier.txt' }).getByText('Indexed').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    axeFindings.push(...(await guarded.axe('documents (phone)')));
    await guarded.shot('documents-editor-phone');
    await expectClean(guarded);
    await guarded.close();
  });

  it('has no serious or critical axe-core violation on the pages it visited', () => {
    expect(axeFindings).toEqual([]);
  });
});
