import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { LICENSE_ENV, licenseKey } from '../fixtures/license.js';
import { cleanupServices } from '../fixtures/service-process.js';
import { DESKTOP, launchBrowser, openPage } from './fixtures/browser.js';
import { startUiService, type UiService, uploadFile, waitForIndexing } from './fixtures/service.js';
import { expectClean, go, signIn } from './fixtures/ui.js';

/**
 * An editor on a PRO box writes a metadata rule: tries the pattern on sample text (matches and the captured value
 * highlighted, hostile sample text shown as text), saves it, and reads the source's analytics as charts.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

let ui: UiService;
let browser: Browser;
let password: string;

beforeAll(async () => {
  ui = await startUiService(LICENSE_ENV);
  await ui.call('POST', '/api/license', { token: await ui.login(), body: { license_key: licenseKey('PRO') } });
  password = await ui.createUser('meta', 'editor');
  const editor = await ui.login('meta', password);
  await uploadFile(ui, editor, 'finance-handbook.txt', 'Department: Finance. The handbook of the finance team, with the rules for travel and expenses of every member.');
  await waitForIndexing(ui, editor);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  cleanupServices();
});

describe('metadata rules and analytics in the browser', () => {
  it('tests a pattern with the matches highlighted, saves the rule, and shows the analytics charts', async () => {
    const guarded = await openPage(browser, ui.url, { suite: 'metadata', viewport: DESKTOP });
    onTestFailed(() => guarded.shot('failed').then(() => undefined));
    const { page } = guarded;
    await signIn(page, ui.url, 'meta', password);
    await page.waitForURL('**/chat');
    await go(page, 'Metadata rules');
    await page.getByText('No rules for this source.').waitFor();

    await page.getByLabel('Field name').fill('department');
    await page.getByLabel('Pattern', { exact: true }).fill('(?i)department:\\s*(?P<dept>\\w+)');
    await page.getByLabel('Sample text').fill('Intro <img src=x onerror="window.__xss=1">\nDepartment: Sales\ndepartment:  Ops');
    await page.getByRole('button', { name: 'Test the pattern' }).click();
    await page.getByText('2 match(es); the value stored would be “Sales”.').waitFor();
    const marks = page.locator('pre.sample mark.match');
    expect(await marks.allTextContents()).toEqual(['Department: Sales', 'department:  Ops']);
    expect(await page.locator('pre.sample mark.match strong.value').allTextContents()).toEqual(['Sales', 'Ops']);
    // The sample is text, not markup.
    expect(await page.locator('pre.sample img').count()).toBe(0);

    // A pattern the engine cannot run is refused next to the field.
    await page.getByLabel('Pattern', { exact: true }).fill('(a)\\1');
    await page.getByRole('button', { name: 'Add the rule' }).click();
    await page.getByText(/backreferences/).waitFor();
    await page.getByLabel('Pattern', { exact: true }).fill('(?i)department:\\s*(\\w+)');
    await page.getByLabel('Level').selectOption('document');
    await page.getByRole('button', { name: 'Add the rule' }).click();
    await page.getByRole('cell', { name: 'department', exact: true }).waitFor();

    await go(page, 'Analytics');
    await page.getByRole('heading', { name: 'Chunk sizes (characters)' }).waitFor();
    await page.getByRole('img', { name: /department coverage/ }).waitFor();
    expect(await page.locator('.histogram .bar').count()).toBeGreaterThan(0);
    await expectClean(guarded);
  });
});
