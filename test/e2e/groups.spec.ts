/**
 * Groups in a real browser against the real built service: on FREE the Groups page is shown locked and the library
 * has no access controls; on ENTERPRISE an admin makes a group (a taken name refused under its field), adds a
 * viewer to it, and restricts a document to it from the documents page (an empty choice, and a group deleted
 * meanwhile, refused in the dialog under the groups); a connector's groups are set the same way.
 * A viewer outside the group neither lists nor finds the document; the member does. Deleting the group while it
 * alone reads the document is refused in the confirm dialog with the service's message. The Groups page and its
 * dialogs pass axe-core in light and dark mode, at 1280 px and 390 px.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { LICENSE_ENV, licenseKey } from '../fixtures/license.js';
import { cleanupServices, tempDir } from '../fixtures/service-process.js';
import { type GuardedPage, launchBrowser, openPage, PHONE } from './fixtures/browser.js';
import { startUiService, type UiService, uploadFile, waitForIndexing } from './fixtures/service.js';
import { expectClean, go, signIn } from './fixtures/ui.js';

const PASSWORD = 'an admin passphrase for groups 31';
const MEMBER = { username: 'lena', password: 'lena passphrase for legal 1' };
const OUTSIDER = { username: 'otto', password: 'otto passphrase outside 22' };
const RESTRICTED = 'legal-memo.txt';
// Not "menu": go() finds the phone's Menu button by a name match that is not exact.
const OPEN = 'canteen-lunch.txt';
/** Words only the restricted document holds. */
const SECRET_QUERY = 'indemnity escrow arbitration';
const JOURNEY_MS = 180_000;

let ui: UiService;
let browser: Browser;
let admin: GuardedPage;
let adminToken: string;
let connectorId: string;

beforeAll(async () => {
  const docs = path.join(tempDir('hearth-e2e-groups-'), 'docs');
  mkdirSync(docs);
  ui = await startUiService({ ...LICENSE_ENV, DEFAULT_ADMIN_PASSWORD: PASSWORD, CONNECTOR_ALLOWED_PATHS: `/app/docs:${path.dirname(docs)}` });
  adminToken = await ui.login('admin', PASSWORD);
  for (const user of [MEMBER, OUTSIDER]) {
    await ui.call('POST', '/api/auth/users', { token: adminToken, body: { ...user, role: 'viewer' }, expect: 201 });
  }
  await uploadFile(ui, adminToken, RESTRICTED, 'Legal memo. The indemnity clause holds the escrow until arbitration ends; the settlement terms stay confidential.');
  await uploadFile(ui, adminToken, OPEN, 'Canteen menu. Soup on Monday, pasta on Tuesday, and fish on Friday for every member of staff.');
  await waitForIndexing(ui, adminToken);
  connectorId = (await ui.call<{ id: string }>('POST', '/api/connectors', { token: adminToken, body: { name: 'Contracts folder', path: docs }, expect: 201 })).id;
  browser = await launchBrowser();
  admin = await openPage(browser, ui.url, { suite: 'groups' });
  await signIn(admin.page, ui.url, 'admin', PASSWORD);
  await admin.page.getByRole('button', { name: 'Sign out' }).waitFor();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  cleanupServices();
});

async function check(guarded: GuardedPage, name: string): Promise<void> {
  expect(await guarded.axe(name)).toEqual([]);
  await expectClean(guarded);
  await guarded.shotAtWidths(name);
}

/** The message under an input, tied to it by aria-describedby. */
async function describedError(page: Page, describedBy: string | null): Promise<string> {
  const errorId = (describedBy ?? '').split(' ').find((id) => id.endsWith('-error'));
  return errorId ? ((await page.locator(`[id="${errorId}"]`).textContent()) ?? '') : '';
}

/** What the search page lists for the query: the file names of its passages. */
async function searchFor(page: Page, query: string): Promise<string[]> {
  await go(page, 'Search');
  await page.getByLabel('Search the documents').fill(query);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText(/^(No passages match\.|\d+ passages)$/).waitFor();
  return page.locator('.result .source-file').allTextContents();
}

async function signInAs(user: { username: string; password: string }): Promise<GuardedPage> {
  const guarded = await openPage(browser, ui.url, { suite: 'groups' });
  await signIn(guarded.page, ui.url, user.username, user.password);
  await guarded.page.getByRole('button', { name: 'Sign out' }).waitFor();
  return guarded;
}

describe('groups and access in the browser', () => {
  it('shows Groups locked and no access controls below ENTERPRISE', async () => {
    const { page } = admin;
    onTestFailed(() => admin.shot('failed-free').then(() => undefined));
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: /^Groups/ }).textContent()).toContain('ENTERPRISE');
    await page.goto('/admin/groups');
    await page.getByText('This feature needs the ENTERPRISE plan.').waitFor();
    await go(page, 'Documents');
    await page.getByRole('cell', { name: RESTRICTED, exact: true }).waitFor();
    expect(await page.getByRole('columnheader', { name: 'Groups' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Access to / }).count()).toBe(0);

    await ui.call('POST', '/api/license', { token: adminToken, body: { license_key: licenseKey('ENTERPRISE') } });
    await page.reload();
    await page.getByRole('columnheader', { name: 'Groups' }).waitFor();
    expect(await page.getByRole('row', { name: new RegExp(RESTRICTED) }).getByRole('cell', { name: 'everyone', exact: true }).count()).toBe(1);
  }, JOURNEY_MS);

  it('creates a group (a taken name refused under its field) and adds a member', async () => {
    const { page } = admin;
    onTestFailed(() => admin.shot('failed-groups').then(() => undefined));
    await go(page, 'Groups');
    await page.getByRole('heading', { level: 1, name: 'Groups' }).waitFor();
    const everyone = page.getByRole('row', { name: /everyone/ });
    await everyone.waitFor();
    expect(await everyone.textContent()).toContain('Built in');
    expect(await everyone.getByRole('button').count()).toBe(0);
    await check(admin, 'groups');

    await page.getByRole('button', { name: 'New group' }).click();
    const dialog = page.getByRole('dialog', { name: 'New group' });
    const name = dialog.getByLabel('Group name', { exact: true });
    await name.fill('Everyone');
    await dialog.getByRole('button', { name: 'Create group' }).click();
    // 409 group_exists names body.name: the message sits under the input.
    await expect.poll(async () => describedError(page, await name.getAttribute('aria-describedby'))).toBe('A group with this name already exists');
    await name.fill('Legal');
    await dialog.getByRole('button', { name: 'Create group' }).click();
    await page.getByText('Group Legal was created.', { exact: false }).waitFor();
    const legal = page.getByRole('row', { name: /Legal/ });
    expect(await legal.getByRole('cell').nth(2).textContent()).toBe('0');

    await legal.getByRole('button', { name: 'Members of Legal' }).click();
    const members = page.getByRole('dialog', { name: 'Members of Legal' });
    await members.getByText('No members yet.').waitFor();
    for (const user of [MEMBER, OUTSIDER]) {
      await members.getByLabel('User to add').selectOption({ label: `${user.username} (viewer)` });
      await members.getByRole('button', { name: 'Add to group' }).click();
      await members.getByText(`${user.username} was added.`).waitFor();
    }
    // One added by mistake is removed again.
    await members.getByRole('button', { name: `Remove ${OUTSIDER.username}` }).click();
    await members.getByText(`${OUTSIDER.username} was removed.`).waitFor();
    await expect.poll(async () => members.getByRole('list', { name: 'Members of Legal' }).getByRole('listitem').allTextContents()).toEqual([expect.stringContaining(MEMBER.username)]);
    expect(await admin.axe('groups-members')).toEqual([]);
    await admin.shot('groups-members', { fullPage: false });
    await members.getByRole('button', { name: 'Close' }).click();
    await expect.poll(async () => legal.getByRole('cell').nth(2).textContent()).toBe('1');
  }, JOURNEY_MS);

  it('restricts a document to the group from the documents page, and sets a connector\'s groups', async () => {
    const { page } = admin;
    onTestFailed(() => admin.shot('failed-access').then(() => undefined));
    await go(page, 'Documents');
    // A group deleted while the dialog is open: the service's 400 unknown_group sits under the groups.
    const interns = (await ui.call<{ id: string }>('POST', '/api/groups', { token: adminToken, body: { name: 'Interns' }, expect: 201 })).id;
    await page.getByRole('button', { name: `Access to ${OPEN}` }).click();
    const open = page.getByRole('dialog', { name: `Access to ${OPEN}` });
    await open.getByRole('checkbox', { name: 'Interns' }).check();
    await ui.call('DELETE', `/api/groups/${interns}`, { token: adminToken, expect: 204 });
    await open.getByRole('button', { name: 'Save access' }).click();
    const openGroups = open.getByRole('group', { name: 'Allowed groups' });
    await expect.poll(async () => describedError(page, await openGroups.getAttribute('aria-describedby'))).toBe('No such group: Interns');
    await open.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: `Access to ${RESTRICTED}` }).click();
    const dialog = page.getByRole('dialog', { name: `Access to ${RESTRICTED}` });
    const everyone = dialog.getByRole('checkbox', { name: 'everyone' });
    expect(await everyone.isChecked()).toBe(true);
    await everyone.uncheck();
    await dialog.getByRole('button', { name: 'Save access' }).click();
    const groupsField = dialog.getByRole('group', { name: 'Allowed groups' });
    await expect.poll(async () => describedError(page, await groupsField.getAttribute('aria-describedby'))).toBe('Choose at least one group.');

    await dialog.getByRole('checkbox', { name: 'Legal' }).check();
    expect(await describedError(page, await groupsField.getAttribute('aria-describedby'))).toBe('');
    // The admin is not in Legal: the dialog says the document will leave their list.
    await dialog.getByText(/You are in none of these groups/).waitFor();
    expect(await admin.axe('documents-access')).toEqual([]);
    await admin.shot('documents-access', { fullPage: false });
    await dialog.getByRole('button', { name: 'Save access' }).click();
    await page.getByText(`${RESTRICTED} may now be read by: Legal. You are in none of these groups, so it is no longer listed for you.`).waitFor();
    await expect.poll(async () => page.getByRole('cell', { name: RESTRICTED, exact: true }).count()).toBe(0);
    await page.getByRole('cell', { name: OPEN, exact: true }).waitFor();

    // A source's groups reach every document it brought in: the dialog says so.
    await go(page, 'Connectors');
    await page.getByRole('button', { name: 'Access to Contracts folder' }).click();
    const source = page.getByRole('dialog', { name: 'Access to Contracts folder' });
    await source.getByText(/applies to every document .*Contracts folder.* brought in/).waitFor();
    await source.getByRole('checkbox', { name: 'Legal' }).check();
    await source.getByRole('button', { name: 'Save access' }).click();
    await page.getByText('The documents of Contracts folder, now and later, may be read by: everyone, Legal.').waitFor();
    const access = await ui.call<{ groups: string[] }>('GET', `/api/connectors/${connectorId}/access`, { token: adminToken });
    expect(access.groups).toEqual(['everyone', 'Legal']);
    await expectClean(admin);
  }, JOURNEY_MS);

  it('hides the document from a user outside the group, in the list and in search', async () => {
    const outsider = await signInAs(OUTSIDER);
    onTestFailed(() => outsider.shot('failed-outsider').then(() => undefined));
    const { page } = outsider;
    await go(page, 'Documents');
    await page.getByRole('cell', { name: OPEN, exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: RESTRICTED, exact: true }).count()).toBe(0);
    expect(await page.getByRole('columnheader', { name: 'Groups' }).count()).toBe(1);
    expect(await searchFor(page, SECRET_QUERY)).not.toContain(RESTRICTED);
    await expectClean(outsider);
    await outsider.close();
  }, JOURNEY_MS);

  it('shows and finds the document for a member of the group', async () => {
    const member = await signInAs(MEMBER);
    onTestFailed(() => member.shot('failed-member').then(() => undefined));
    const { page } = member;
    await go(page, 'Documents');
    const row = page.getByRole('row', { name: new RegExp(RESTRICTED) });
    await row.waitFor();
    expect(await row.getByRole('cell', { name: 'Legal', exact: true }).count()).toBe(1);
    // A viewer sees the groups but cannot change them.
    expect(await page.getByRole('button', { name: /^Access to / }).count()).toBe(0);
    expect(await searchFor(page, SECRET_QUERY)).toContain(RESTRICTED);
    await expectClean(member);
    await member.close();
  }, JOURNEY_MS);

  it('shows the refusal to delete a group that alone reads a document, in the confirm dialog', async () => {
    const { page } = admin;
    onTestFailed(() => admin.shot('failed-delete').then(() => undefined));
    await go(page, 'Groups');
    await page.getByRole('button', { name: 'Delete Legal' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this group?' });
    await dialog.getByRole('button', { name: 'Delete group' }).click();
    await dialog.getByRole('alert').getByText('1 document(s) or source(s) are readable by this group alone: give them other groups first').waitFor();
    expect(await admin.axe('groups-delete-refused')).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('row', { name: /Legal/ }).waitFor();
    await expectClean(admin);
  }, JOURNEY_MS);

  it('warns, then hides a connector from an admin who restricts it to a group they are not in', async () => {
    // After the delete refusal above: the connector then becomes a second source readable by Legal alone.
    const { page } = admin;
    onTestFailed(() => admin.shot('failed-connector-hidden').then(() => undefined));
    await go(page, 'Connectors');
    await page.getByRole('button', { name: 'Access to Contracts folder' }).click();
    const dialog = page.getByRole('dialog', { name: 'Access to Contracts folder' });
    await dialog.getByRole('checkbox', { name: 'everyone' }).uncheck();
    await dialog.getByText('You are in none of these groups: once saved, you will no longer see this connector and its documents until you join one of them.').waitFor();
    expect(await admin.axe('connector-access-hiding')).toEqual([]);
    await admin.shotAtWidths('connector-access-hiding');
    await dialog.getByRole('button', { name: 'Save access' }).click();
    await page.getByText('The documents of Contracts folder, now and later, may be read by: Legal. You are in none of these groups, so Contracts folder is no longer listed for you.').waitFor();
    await expect.poll(async () => page.getByRole('button', { name: 'Access to Contracts folder' }).count()).toBe(0);
    // The empty list says why it may be empty, rather than that there is nothing.
    await page.getByText('No connectors you can see (one restricted to groups you are not in stays hidden). Add a folder with New connector.').waitFor();
    await admin.shotAtWidths('connector-hidden');
    await ui.call('GET', `/api/connectors/${connectorId}`, { token: adminToken, expect: 404 });
    await expectClean(admin);
  }, JOURNEY_MS);

  it('passes axe in dark mode on a 390 px phone', async () => {
    const dark = await openPage(browser, ui.url, { suite: 'groups', viewport: PHONE, colorScheme: 'dark' });
    const { page } = dark;
    await signIn(page, ui.url, 'admin', PASSWORD);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto('/admin/groups');
    await page.getByRole('row', { name: /Legal/ }).waitFor();
    expect(await dark.axe('groups (phone, dark)')).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await dark.shot('groups-phone-dark');
    await page.getByRole('button', { name: 'Members of Legal' }).click();
    await page.getByRole('dialog', { name: 'Members of Legal' }).getByText(MEMBER.username).waitFor();
    expect(await dark.axe('groups members (phone, dark)')).toEqual([]);
    await dark.shot('groups-members-phone-dark', { fullPage: false });
    await expectClean(dark);
    await dark.close();
  }, JOURNEY_MS);
});
