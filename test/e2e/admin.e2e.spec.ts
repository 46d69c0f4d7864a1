/**
 * The admin journey in a real browser against the real built service: first sign-in with the default password and
 * its change, users (create, a refusal next to its field, role change), a connector on a temp folder scanned with
 * live progress to its summary, a website, jobs, the index, health, a license applied from a real signed key, single
 * sign-on, token lifetimes, branding seen on the sign-in page, TOTP enrolment, a viewer kept out of the admin pages,
 * and signing everyone out. Every page is checked with axe-core (no serious or critical violation, light and dark)
 * and photographed at 390 px and desktop widths into test/e2e/artifacts/admin. Untrusted text (branding fields, an
 * OIDC display name) carries HTML and script payloads that must show as text and never run.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupServices, tempDir } from '../fixtures/service-process.js';
import { LICENSE_ENV, licenseKey } from '../fixtures/license.js';
import { type GuardedPage, launchBrowser, openPage, type PageOptions } from './fixtures/browser.js';
import { freeLoopbackPort, startUiService, type UiService } from './fixtures/service.js';
import { expectClean, signIn as signInAt } from './fixtures/ui.js';

const DEFAULT_PASSWORD = 'hearth-change-me';
const ADMIN_PASSWORD = 'a long admin passphrase 42';
const VIEWER = { username: 'vera', password: 'viewer passphrase 1234' };
const EDITOR = { username: 'eddie', password: 'editor passphrase 1234' };
/** Markup in untrusted fields: it must appear as these very characters and never run. */
const NAME_PAYLOAD = 'Acme <b>Docs</b>';
const MESSAGE_PAYLOAD = 'Welcome <script>window.__xss = true</script><img src=x onerror="window.__xss = true"> staff';
const PROVIDER_PAYLOAD = 'Corp <svg onload="window.__xss = true">';
const CLIENT_SECRET = 'client-secret-never-shown-9f2c';
const SVG_LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><script>alert(1)</script><rect width="120" height="60" fill="#0b5fff"/></svg>';
/** Every page this suite owns, for the axe and screenshot passes. */
const PAGES = ['/connectors', '/integrations', '/jobs', '/index', '/system', '/account', '/admin/users', '/admin/sign-in', '/admin/sso', '/admin/branding', '/admin/licence'];
const JOURNEY_MS = 180_000;
/** The chunks of this suite's pages (Vite names a lazy chunk after its module). */
const LAZY_PAGES = /\/(Connectors|Integrations|Jobs|Index|System|Account|Users|AuthSettings|Sso|Branding|License)Page-[^/]*\.js$/;

let ui: UiService;
let browser: Browser;
let docsRoot: string;
let admin: GuardedPage;
/** A loopback port nothing listens on: the website and the identity provider are unreachable, and say so. */
let closedPort: number;
/** Every script the admin's page requested, in order. */
const scripts: string[] = [];

const shot = (route: string) => route.slice(1).replace(/\//g, '-');

/** A fresh page (no cookies) whose screenshots go to test/e2e/artifacts/admin. */
const open = (options: Omit<PageOptions, 'suite'> = {}) => openPage(browser, ui.url, { suite: 'admin', ...options });

/** Signs in and waits until the signed-in frame is up. */
async function signIn(page: Page, username: string, password: string): Promise<void> {
  await signInAt(page, ui.url, username, password);
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Goes to a page through the nav (as a user would) or by URL, and waits for its heading. */
async function visit(page: Page, route: string, heading: string): Promise<void> {
  await page.goto(route);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.locator('.loading').first().waitFor({ state: 'detached' });
}

/** No serious or critical axe violation, and the page is clean (no payload ran, no CSP violation, no page error, nothing left the box); then the two screenshots. */
async function check(guarded: GuardedPage, name: string): Promise<void> {
  expect(await guarded.axe(name)).toEqual([]);
  await expectClean(guarded);
  await guarded.shotAtWidths(name);
}

async function textOf(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent()) ?? '';
}

/** The message under an input, tied to it by aria-describedby. */
async function fieldError(page: Page, label: string): Promise<string> {
  const input = page.getByLabel(label, { exact: true });
  const described = (await input.getAttribute('aria-describedby')) ?? '';
  const errorId = described.split(' ').find((id) => id.endsWith('-error'));
  return errorId ? ((await page.locator(`[id="${errorId}"]`).textContent()) ?? '') : '';
}

beforeAll(async () => {
  closedPort = await freeLoopbackPort();
  docsRoot = tempDir('hearth-e2e-docs-');
  mkdirSync(path.join(docsRoot, 'handbooks', 'hr'), { recursive: true });
  writeFileSync(path.join(docsRoot, 'handbooks', 'leave.md'), '# Leave\n\nEmployees get twenty-five days of paid leave a year.\n');
  writeFileSync(path.join(docsRoot, 'handbooks', 'expenses.txt'), 'Expenses are repaid within ten working days of a claim.\n');
  writeFileSync(path.join(docsRoot, 'handbooks', 'hr', 'onboarding.md'), '# Onboarding\n\nNew starters meet their buddy on the first day.\n');
  ui = await startUiService({ ...LICENSE_ENV, CONNECTOR_ALLOWED_PATHS: `/app/docs:${docsRoot}` });
  browser = await launchBrowser();
  admin = await open();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  cleanupServices();
});

describe('the admin journey in the browser', () => {
  it('first sign-in with the default password shows the banner, and changing it there removes it', async () => {
    const { page } = admin;
    // The first load fetches none of the admin pages: they are loaded on first visit.
    page.on('request', (request) => request.resourceType() === 'script' && scripts.push(new URL(request.url()).pathname));
    await page.goto('/');
    await page.waitForURL('**/sign-in');
    await page.getByLabel('Username', { exact: true }).waitFor();
    expect(scripts.length).toBeGreaterThan(0);
    expect(scripts.filter((script) => LAZY_PAGES.test(script))).toEqual([]);
    await signIn(page, 'admin', DEFAULT_PASSWORD);
    await page.getByRole('heading', { name: 'Change the default admin password' }).waitFor();
    await page.getByRole('button', { name: 'Change it now' }).click();
    await page.getByLabel('Current password', { exact: true }).fill(DEFAULT_PASSWORD);
    await page.getByLabel('New password', { exact: true }).fill(ADMIN_PASSWORD);
    await page.getByLabel('Repeat the new password', { exact: true }).fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('heading', { name: 'Change the default admin password' }).waitFor({ state: 'detached' });
    // The old password no longer opens the account; the new one does.
    const refused = await page.request.post('/api/auth/login', { data: { username: 'admin', password: DEFAULT_PASSWORD } });
    expect(refused.status()).toBe(401);
    const accepted = await page.request.post('/api/auth/login', { data: { username: 'admin', password: ADMIN_PASSWORD } });
    expect(accepted.status()).toBe(200);
  }, JOURNEY_MS);

  it('on the FREE plan, ENTERPRISE features show as locked with the tier they need', async () => {
    const { page } = admin;
    await visit(page, '/admin/sign-in', 'Sign-in and sessions');
    expect(await page.locator('fieldset').first().getAttribute('disabled')).not.toBeNull();
    expect(await page.getByLabel('Give admins their own lifetimes', { exact: true }).isDisabled()).toBe(true);
    expect(await textOf(page, 'fieldset legend')).toContain('ENTERPRISE');
    await check(admin, 'admin-sign-in-free');
    await visit(page, '/admin/sso', 'Single sign-on');
    expect(await textOf(page, '#main')).toContain('This feature needs the ENTERPRISE plan');
    expect(await page.getByRole('link', { name: /Single sign-on.*locked: needs ENTERPRISE/ }).count()).toBe(1);
    await visit(page, '/account', 'My account');
    expect(await textOf(page, '#main')).toContain('Setting it up needs the ENTERPRISE plan');
    expect(await page.getByRole('button', { name: 'Set up two-step sign-in' }).count()).toBe(0);
    await check(admin, 'account-free');
  }, JOURNEY_MS);

  it('creates users, shows a refusal under its field, and changes a role', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    for (const [user, role] of [[EDITOR, 'viewer'], [VIEWER, 'viewer']] as const) {
      await page.getByRole('button', { name: 'New user' }).click();
      await page.getByLabel('Username', { exact: true }).fill(user.username);
      await page.getByLabel('Password', { exact: true }).fill(user.password);
      await page.getByLabel('Role', { exact: true }).selectOption(role);
      await page.getByRole('button', { name: 'Create user' }).click();
      await page.getByText(`User ${user.username} was created.`).waitFor();
    }
    // The same username again: the service's 409 lands under the Username input, the dialog stays open.
    await page.getByRole('button', { name: 'New user' }).click();
    await page.getByLabel('Username', { exact: true }).fill(EDITOR.username.toUpperCase());
    await page.getByLabel('Password', { exact: true }).fill('another passphrase 99');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByText('A user with this username already exists').waitFor();
    expect(await fieldError(page, 'Username')).toBe('A user with this username already exists');
    expect(await admin.axe('admin-users-new-dialog')).toEqual([]);
    await admin.shotAtWidths('admin-users-new-dialog');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: `Manage ${EDITOR.username}` }).click();
    await page.getByLabel('Role', { exact: true }).selectOption('editor');
    await page.getByRole('button', { name: 'Change role' }).click();
    await page.getByRole('dialog').getByRole('status').getByText('Saved.').waitFor();
    expect(await admin.axe('admin-users-manage-dialog')).toEqual([]);
    await admin.shotAtWidths('admin-users-manage-dialog');
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    const row = page.getByRole('row').filter({ hasText: EDITOR.username });
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('editor');
    await check(admin, 'admin-users');
  }, JOURNEY_MS);

  it('creates a connector on a temp folder and scans it, with progress, to its summary', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Connectors' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connectors' }).waitFor();
    // Its own chunk, fetched now (an eager import would have put it in the first load's bundle instead).
    expect(scripts.filter((script) => /\/ConnectorsPage-[^/]*\.js$/.test(script))).toHaveLength(1);
    await page.getByRole('button', { name: 'New connector' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Handbooks');
    await page.getByLabel('Folder', { exact: true }).fill(path.join(docsRoot, 'handbooks'));
    await page.getByLabel('File types', { exact: true }).fill('md, .txt');
    await page.getByRole('button', { name: 'Create connector' }).click();
    await page.getByText('Connector Handbooks was created.').waitFor();

    await page.getByRole('button', { name: 'Scan now Handbooks' }).click();
    // The run as the service returned it (queued), followed through GET /api/jobs/{id} until it finishes.
    await page.getByRole('progressbar', { name: 'Scan of Handbooks: progress' }).waitFor();
    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Handbooks' }) });
    await card.getByText('Succeeded').waitFor({ timeout: 60_000 });
    expect(await card.textContent()).toContain('3 files, 3 new or changed, 0 unchanged, 0 removed');
    // The finished scan reloads the connector: its documents and scan time.
    await card.locator('dd', { hasText: /^3$/ }).waitFor();
    expect(await card.getByRole('button', { name: 'Scan now Handbooks' }).isEnabled()).toBe(true);
    await check(admin, 'connectors');
  }, JOURNEY_MS);

  it('adds a website with write-only credentials and follows its sync to the end', async () => {
    const { page } = admin;
    await visit(page, '/integrations', 'Integrations');
    await page.getByRole('button', { name: 'New website' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Intranet');
    await page.getByLabel('Start address', { exact: true }).fill(`http://127.0.0.1:${closedPort}/`);
    await page.getByLabel('Allow addresses on this network', { exact: true }).check();
    await page.getByLabel('Credentials', { exact: true }).selectOption('bearer');
    await page.getByLabel('Bearer token', { exact: true }).fill('intranet-token-never-shown');
    await page.getByRole('button', { name: 'Create website' }).click();
    await page.getByText('Website Intranet was created.').waitFor();
    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Intranet' }) });
    expect(await card.textContent()).toContain('Credentials set');
    expect(await page.content()).not.toContain('intranet-token-never-shown');
    await card.getByRole('button', { name: 'Sync now Intranet' }).click();
    await card.getByText(/^(Succeeded|Failed)$/).waitFor({ timeout: 60_000 });
    await check(admin, 'integrations');
    await card.getByRole('button', { name: 'Edit Intranet' }).click();
    expect(await page.getByLabel('Credentials', { exact: true }).inputValue()).toBe('keep');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  }, JOURNEY_MS);

  it('lists the jobs, shows the index (a refused rebuild says why) and the health, hardware and models', async () => {
    const { page } = admin;
    await visit(page, '/jobs', 'Jobs');
    expect(await page.getByRole('heading', { name: 'Connector scan' }).count()).toBeGreaterThan(0);
    await page.getByText('of Handbooks').waitFor();
    expect(await page.getByRole('heading', { name: 'Website sync' }).count()).toBeGreaterThan(0);
    await check(admin, 'jobs');

    await visit(page, '/index', 'Search index');
    // The embedder's adaptation to the collection, as the service words it: off without a model.
    const adaptation = page.locator('dt', { hasText: 'Adapted to this collection' }).locator('xpath=following-sibling::dd[1]');
    expect((await adaptation.textContent())?.replace(/\s+/g, ' ').trim()).toBe('Off no embedding model in force');
    await page.getByRole('button', { name: 'Rebuild the index' }).click();
    // No embedding model in this service: the 409 is shown as the service words it.
    await page.getByRole('alert').waitFor();
    expect(await textOf(page, '[role="alert"]')).not.toBe('');
    await check(admin, 'index');

    await visit(page, '/system', 'Health, hardware and models');
    await page.getByRole('rowheader', { name: 'Embedding model' }).waitFor();
    await page.getByText('Node.js', { exact: true }).waitFor();
    await check(admin, 'system');
  }, JOURNEY_MS);

  it('applies a licence: the plan, usage against its limits, and the nav unlocks ENTERPRISE pages', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Licence' }).click();
    await page.getByRole('heading', { level: 1, name: 'Licence' }).waitFor();
    await check(admin, 'admin-licence-free');
    await page.getByLabel('Licence key', { exact: true }).fill(licenseKey('ENTERPRISE', { documents: 1000, file_size_bytes: 50 * 1024 ** 2, storage_bytes: 10 * 1024 ** 3 }));
    await page.getByRole('button', { name: 'Apply the licence' }).click();
    await page.getByText('The licence was applied: this box is on the ENTERPRISE plan.').waitFor();
    expect(await textOf(page, '.meter-field')).toContain('3 of 1,000');
    expect(await page.getByRole('meter').count()).toBe(2);
    expect(await page.getByRole('link', { name: /locked/ }).count()).toBe(0);
    await check(admin, 'admin-licence');
  }, JOURNEY_MS);

  it('adds an identity provider whose secret is never shown, and tests it', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Single sign-on' }).click();
    await page.getByRole('button', { name: 'New provider' }).click();
    await page.getByLabel('Name', { exact: true }).fill('corp');
    await page.getByLabel('Button text', { exact: true }).fill(PROVIDER_PAYLOAD);
    await page.getByLabel('Discovery URL', { exact: true }).fill(`http://127.0.0.1:${closedPort}/.well-known/openid-configuration`);
    await page.getByLabel('The identity provider is on the local network').check();
    await page.getByLabel('Client ID', { exact: true }).fill('hearth');
    await page.getByLabel('Client secret', { exact: true }).fill(CLIENT_SECRET);
    expect(await page.getByLabel('Redirect URI', { exact: true }).inputValue()).toBe(`${ui.url}/api/auth/oidc/corp/callback`);
    await page.getByRole('button', { name: 'Create provider' }).click();
    const card = page.getByRole('listitem').filter({ hasText: 'corp' });
    await card.getByText('Secret set').waitFor();
    expect(await card.getByRole('heading').textContent()).toBe(PROVIDER_PAYLOAD);
    expect(await page.content()).not.toContain(CLIENT_SECRET);
    await card.getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel('New client secret', { exact: true }).inputValue()).toBe('');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await card.getByRole('button', { name: 'Test' }).click();
    await card.getByRole('alert').waitFor({ timeout: 20_000 });
    expect(await card.getByRole('alert').textContent()).toMatch(/\S/);
    expect(await admin.xssRan()).toBe(false);
    await check(admin, 'admin-sso');
  }, JOURNEY_MS);

  it('changes token lifetimes, admin overrides included now that the plan has them', async () => {
    const { page } = admin;
    await visit(page, '/admin/sign-in', 'Sign-in and sessions');
    await page.getByLabel('Access token lifetime (seconds)', { exact: true }).fill('600');
    await page.getByLabel('Give admins their own lifetimes', { exact: true }).check();
    await page.getByLabel('Admin access token lifetime (seconds)', { exact: true }).fill('300');
    await page.getByRole('button', { name: 'Save lifetimes' }).click();
    await page.getByText('Saved. New lifetimes apply to tokens issued from now on.').waitFor();
    // Read back from the service: the page shows what it stored.
    await page.reload();
    await page.getByLabel('Admin access token lifetime (seconds)', { exact: true }).waitFor();
    expect(await page.getByLabel('Access token lifetime (seconds)', { exact: true }).inputValue()).toBe('600');
    expect(await page.getByLabel('Admin access token lifetime (seconds)', { exact: true }).inputValue()).toBe('300');
    await check(admin, 'admin-sign-in');
  }, JOURNEY_MS);

  it('brands the UI (name, colours, message, logo) and the sign-in page shows it as text', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Branding' }).click();
    await page.getByRole('heading', { level: 1, name: 'Branding' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill(NAME_PAYLOAD);
    await page.getByLabel('Tagline', { exact: true }).fill('Answers from our handbooks');
    await page.getByLabel('Accent colour (header)', { exact: true }).fill('#0b3d91');
    await page.getByLabel('Sign-in message', { exact: true }).fill(MESSAGE_PAYLOAD);
    await page.getByRole('button', { name: 'Save branding' }).click();
    await page.getByText('Saved: the new branding is in use').waitFor();
    expect(await textOf(page, '.topbar .brand-name')).toBe(NAME_PAYLOAD);
    expect(await page.evaluate(() => document.documentElement.style.getPropertyValue('--accent'))).toBe('#0B3D91');
    await page.getByLabel('Logo image', { exact: true }).setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(SVG_LOGO) });
    await page.getByRole('button', { name: 'Upload logo' }).click();
    await page.getByText('The new logo is in use.').waitFor();
    await page.waitForFunction(() => (document.querySelector('.topbar img.brand-logo') as HTMLImageElement | null)?.naturalWidth);
    await check(admin, 'admin-branding');

    // Signed out: the sign-in page carries the same branding, every field as the characters typed.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await textOf(page, '.auth-brand .brand-name')).toBe(NAME_PAYLOAD);
    expect(await textOf(page, '.auth-brand .tagline')).toBe('Answers from our handbooks');
    expect(await textOf(page, '.login-message')).toBe(MESSAGE_PAYLOAD);
    expect(await page.locator('.login-message script, .login-message img, .auth-brand b').count()).toBe(0);
    await page.waitForFunction(() => (document.querySelector('.auth-brand img.brand-logo') as HTMLImageElement | null)?.naturalWidth);
    expect(await page.getByRole('button', { name: `Sign in with ${PROVIDER_PAYLOAD}` }).count()).toBe(1);
    expect(await admin.xssRan()).toBe(false);
    await check(admin, 'sign-in-branded');
  }, JOURNEY_MS);

  it('passes axe on every admin page in dark mode too', async () => {
    const dark = await open({ colorScheme: 'dark' });
    await signIn(dark.page, 'admin', ADMIN_PASSWORD);
    for (const route of PAGES) {
      await dark.page.goto(route);
      await dark.page.locator('#main h1').waitFor();
      await dark.page.locator('.loading').first().waitFor({ state: 'detached' });
      await check(dark, `${shot(route)}-dark`);
    }
    await dark.close();
  }, JOURNEY_MS);

  it('lets an editor scan and rebuild, but not manage connectors or users', async () => {
    const editor = await open();
    const { page } = editor;
    await signIn(page, EDITOR.username, EDITOR.password);
    await visit(page, '/connectors', 'Connectors');
    await page.getByRole('button', { name: 'Scan now Handbooks' }).waitFor();
    expect(await page.getByRole('button', { name: 'Scan all' }).count()).toBe(1);
    for (const name of ['New connector', 'Edit Handbooks', 'Delete Handbooks']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    await visit(page, '/index', 'Search index');
    expect(await page.getByRole('button', { name: 'Rebuild the index' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Users' }).count()).toBe(0);
    await check(editor, 'connectors-editor');
    await page.context().close();
  }, JOURNEY_MS);

  it('keeps a viewer out of admin pages and actions, and lets them enrol and remove TOTP', async () => {
    const viewer = await open();
    const { page } = viewer;
    await signIn(page, VIEWER.username, VIEWER.password);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('heading', { name: 'Admin' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Users' }).count()).toBe(0);
    await page.goto('/admin/users');
    await page.getByText('This page needs the admin role.').waitFor();
    expect(await page.getByRole('button', { name: 'New user' }).count()).toBe(0);

    // Read-only connectors: the scan's summary, no action.
    await visit(page, '/connectors', 'Connectors');
    await page.getByText('3 files, 3 new or changed').waitFor();
    for (const name of ['New connector', 'Scan all', 'Scan now Handbooks', 'Edit Handbooks', 'Delete Handbooks']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    await visit(page, '/jobs', 'Jobs');
    expect(await page.getByRole('button', { name: /^Cancel/ }).count()).toBe(0);
    await visit(page, '/index', 'Search index');
    expect(await page.getByRole('button', { name: 'Rebuild the index' }).count()).toBe(0);
    await check(viewer, 'connectors-viewer');

    // TOTP: the QR code is an image from a data: URL (the CSP allows it), then a code, then the recovery codes once.
    await visit(page, '/account', 'My account');
    await page.getByRole('button', { name: 'Set up two-step sign-in' }).click();
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml/);
    await page.waitForFunction(() => (document.querySelector('img.qr-code') as HTMLImageElement | null)?.naturalWidth);
    await check(viewer, 'account-totp-scan');
    const secret = (await textOf(page, 'code.secret')).trim();
    await page.getByLabel('Code from your authenticator', { exact: true }).fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('list', { name: 'Recovery codes' }).waitFor();
    expect(await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count()).toBe(10);
    await check(viewer, 'account-recovery-codes');
    // The codes can be kept as a file: the download holds the ten codes shown.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download as a file' }).click()]);
    const saved = readFileSync((await download.path())!, 'utf8').trim().split('\n');
    expect(saved).toEqual(await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').allTextContents());
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByRole('button', { name: 'Turn off two-step sign-in' }).waitFor();
    // The code just used is refused a second time, so the next time step's code turns it off.
    await page.getByLabel('Code from your authenticator', { exact: true }).fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await page.getByRole('button', { name: 'Turn off two-step sign-in' }).click();
    await page.getByText('Two-step sign-in is off.').waitFor();
    expect(await viewer.violations()).toEqual([]);
    await page.context().close();
  }, JOURNEY_MS);

  it('signs everyone out, the admin included', async () => {
    const { page } = admin;
    await signIn(page, 'admin', ADMIN_PASSWORD);
    await visit(page, '/admin/sign-in', 'Sign-in and sessions');
    await page.getByRole('button', { name: 'Sign everyone out' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Sign everyone out' }).click();
    await page.getByText('Everyone was signed out, you included. Sign in again.').waitFor();
    // The refresh cookie was revoked too: a reload stays signed out.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(admin.pageErrors).toEqual([]);
  }, JOURNEY_MS);
});
