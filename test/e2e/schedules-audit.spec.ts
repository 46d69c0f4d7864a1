/**
 * Schedules and the audit log in a real browser against the real built service (ENTERPRISE licence): a schedule
 * created with its next runs previewed, a bad cron refused under its field, disabled and enabled again; the audit
 * browser filtered by event type and its chain verified. Every page passes axe-core and the clean-page guards.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupServices, tempDir } from '../fixtures/service-process.js';
import { LICENSE_ENV, licenseKey } from '../fixtures/license.js';
import { type GuardedPage, launchBrowser, openPage } from './fixtures/browser.js';
import { startUiService, type UiService } from './fixtures/service.js';
import { expectClean, go, signIn } from './fixtures/ui.js';

const PASSWORD = 'an admin passphrase for schedules 7';
const JOURNEY_MS = 180_000;

let ui: UiService;
let browser: Browser;
let admin: GuardedPage;

beforeAll(async () => {
  const docs = path.join(tempDir('hearth-e2e-sched-'), 'docs');
  mkdirSync(docs);
  ui = await startUiService({ ...LICENSE_ENV, DEFAULT_ADMIN_PASSWORD: PASSWORD, CONNECTOR_ALLOWED_PATHS: `/app/docs:${path.dirname(docs)}` });
  const token = await ui.login('admin', PASSWORD);
  await ui.call('POST', '/api/license', { token, body: { license_key: licenseKey('ENTERPRISE') } });
  await ui.call('POST', '/api/connectors', { token, body: { name: 'Team handbooks', path: docs }, expect: 201 });
  browser = await launchBrowser();
  admin = await openPage(browser, ui.url, { suite: 'schedules-audit' });
  await signIn(admin.page, ui.url, 'admin', PASSWORD);
  await admin.page.getByRole('button', { name: 'Sign out' }).waitFor();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  cleanupServices();
});

async function check(name: string): Promise<void> {
  expect(await admin.axe(name)).toEqual([]);
  await expectClean(admin);
  await admin.shotAtWidths(name);
}

describe('schedules and the audit log in the browser', () => {
  it('creates a schedule with its next runs previewed, refuses a bad cron under its field, and disables it', async () => {
    const { page } = admin;
    await go(page, 'Schedules');
    await page.getByRole('heading', { level: 1, name: 'Schedules' }).waitFor();
    await page.getByText('No schedules yet.').waitFor();
    const cron = page.getByLabel('Cron (UTC)', { exact: true });

    await cron.fill('30 4 * * 1');
    await page.locator('.next-runs li').first().waitFor();
    const runs = await page.locator('.next-runs li').allTextContents();
    expect(runs).toHaveLength(5);
    for (const run of runs) expect(run).toMatch(/ 04:30 UTC$/);
    expect(runs.map((run) => new Date(`${run.slice(0, 10)}T00:00:00Z`).getUTCDay())).toEqual([1, 1, 1, 1, 1]);

    await cron.fill('61 * * * *');
    await page.getByText('Invalid value for minute: 61').first().waitFor();
    await page.getByRole('button', { name: 'Create schedule' }).click();
    // The service's 400 names body.cron: the message sits under the Cron input, tied to it by aria-describedby.
    await expect.poll(async () => (await cron.getAttribute('aria-describedby')) ?? '').toMatch(/-error/);
    const errorId = ((await cron.getAttribute('aria-describedby')) ?? '').split(' ').find((id) => id.endsWith('-error'))!;
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toContain('body.cron is not a valid 5-field cron expression');
    expect(await page.getByRole('table').count()).toBe(0);

    await cron.fill('30 4 * * 1');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const row = page.getByRole('row', { name: /Team handbooks/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('30 4 * * 1');
    await check('schedules');

    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByText('Disabled').waitFor();
    await row.getByRole('button', { name: 'Enable' }).click();
    await row.getByRole('button', { name: 'Disable' }).waitFor();
    const [schedule] = (await ui.call<{ schedules: Array<{ enabled: boolean; cron: string }> }>('GET', '/api/schedules', { token: await ui.login('admin', PASSWORD) })).schedules;
    expect(schedule).toMatchObject({ enabled: true, cron: '30 4 * * 1' });
  }, JOURNEY_MS);

  it('browses the audit log with a filter and verifies the chain', async () => {
    const { page } = admin;
    // A failed sign-in to find with the filter.
    await ui.call('POST', '/api/auth/login', { body: { username: 'mallory', password: 'guessing-passwords' }, expect: 401 });
    await go(page, 'Audit log');
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    await page.getByRole('cell', { name: 'license.apply' }).waitFor();

    await page.getByLabel('Event type', { exact: true }).selectOption('auth.login');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('cell', { name: 'mallory' }).waitFor();
    await expect.poll(async () => page.getByRole('cell', { name: 'license.apply' }).count()).toBe(0);
    const events = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(new Set(events)).toEqual(new Set(['auth.login']));
    expect(await page.getByRole('row', { name: /mallory/ }).textContent()).toContain('failure');

    await page.getByRole('button', { name: 'Verify the chain' }).click();
    await page.getByText(/The chain is intact: \d+ entries checked\./).waitFor();
    await check('audit');
  }, JOURNEY_MS);
});
