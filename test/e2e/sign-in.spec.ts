import { generate } from 'otplib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { licenseKey, LICENSE_ENV } from '../fixtures/license.js';
import { decodeQuotedPrintable, linkIn, type MailSink, smtpEnv, startMailSink } from '../fixtures/mail-sink.js';
import { cleanupServices } from '../fixtures/service-process.js';
import { ADMIN } from '../helpers.js';
import { startIdp, type TestIdp } from '../oidc-idp.js';
import { DESKTOP, launchBrowser, openPage, PHONE } from './fixtures/browser.js';
import { startUiService, type UiService } from './fixtures/service.js';
import { expectClean, signIn } from './fixtures/ui.js';

/**
 * Signing in through the browser against the built service and real peers: the TOTP step (a code, wrong codes
 * until the MFA token locks, a recovery code), single sign-on through the oidc-provider IdP, a password reset
 * through the SMTP sink, and the default admin's first sign-in with its banner and password change.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

const SUITE = 'sign-in';
let ui: UiService;
let sink: MailSink;
let idp: TestIdp;
let browser: Browser;
let totpSecret: string;
let recoveryCodes: string[];
const passwords: Record<string, string> = {};
const axeFindings: string[] = [];

const totpCode = (offsetSeconds = 0) => generate({ secret: totpSecret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });

beforeAll(async () => {
  sink = await startMailSink();
  ui = await startUiService({ ...LICENSE_ENV, ...smtpEnv(sink) });
  idp = await startIdp(['corp'], { 'sub-olga': { preferred_username: 'olga', email: 'olga@corp.test', groups: ['staff'] } }, { origin: ui.url });
  const admin = await ui.login();
  await ui.call('POST', '/api/license', { token: admin, body: { license_key: licenseKey('ENTERPRISE') } });
  await ui.call('POST', '/api/admin/oidc/providers', {
    token: admin,
    expect: 201,
    body: {
      name: 'corp', display_name: 'Corp SSO', client_id: idp.clientId, client_secret: idp.clientSecret, discovery_url: idp.discoveryUrl, allow_private_network: true,
      redirect_uri: `${ui.url}/api/auth/oidc/corp/callback`, scopes: 'openid email profile', admin_groups: [],
    },
  });
  for (const name of ['tina', 'rita']) passwords[name] = await ui.createUser(name, 'viewer');
  // Tina enrols TOTP through the API (confirming with the code of this 30 s step).
  const tina = await ui.login('tina', passwords.tina);
  totpSecret = (await ui.call<{ secret: string }>('POST', '/api/auth/totp/enroll', { token: tina })).secret;
  recoveryCodes = (await ui.call<{ recovery_codes: string[] }>('POST', '/api/auth/totp/enroll/confirm', { token: tina, body: { totp_code: await totpCode() } })).recovery_codes;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await idp?.close();
  await sink?.close();
  cleanupServices();
});

describe('sign-in journeys', () => {
  it('asks an enrolled user for the second factor: wrong codes count down and lock, then a code, then a recovery code', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: DESKTOP });
    onTestFailed(() => guarded.shot('failed-totp').then(() => undefined));
    const { page } = guarded;
    const code = page.getByLabel('Authentication code');

    await signIn(page, ui.url, 'tina', passwords.tina);
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    axeFindings.push(...(await guarded.axe('TOTP step')));
    await guarded.shot('totp-step-desktop');
    for (let attempt = 1; attempt <= 4; attempt++) {
      await code.fill('000000');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('alert').filter({ hasText: `${5 - attempt} attempt` }).waitFor();
    }
    await code.fill('000000');
    await page.getByRole('button', { name: 'Continue' }).click();
    // The fifth wrong code locks the MFA token: back to the password step, told why.
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByText(/locked.*log in again/i).waitFor();

    await page.getByLabel('Username').fill('tina');
    await page.getByLabel('Password').fill(passwords.tina);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // The next step's code: the current one was spent confirming the enrolment (replays are refused).
    await code.fill(await totpCode(30));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL('**/chat');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You have signed out.').waitFor();

    await signIn(page, ui.url, 'tina', passwords.tina);
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await page.getByLabel('Recovery code').fill(recoveryCodes[0]);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL('**/chat');
    await expectClean(guarded);
    await guarded.close();
  });

  it('signs in through single sign-on: the provider button, the IdP, the callback and the handoff; the session survives a reload', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: PHONE, allowOrigins: [idp.issuer] });
    onTestFailed(() => guarded.shot('failed-sso').then(() => undefined));
    const { page } = guarded;
    await page.goto(`${ui.url}/sign-in`);
    await page.getByRole('button', { name: 'Sign in with Corp SSO' }).click();
    await page.waitForURL(`${idp.issuer}/**`);
    await page.locator('input[name="login"]').fill('sub-olga');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${ui.url}/chat`);
    const userName = page.locator('.user-name', { hasText: 'olga' });
    await userName.waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await userName.isVisible()).toBe(true);
    await guarded.shot('after-sso-phone', { fullPage: false });
    await expectClean(guarded);
    await guarded.close();
  });

  it('a failed single sign-on lands back on the sign-in page with a readable message, never the raw JSON or text from the URL', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: DESKTOP, allowOrigins: [idp.issuer] });
    onTestFailed(() => guarded.shot('failed-sso-error').then(() => undefined));
    const { page } = guarded;
    await page.goto(`${ui.url}/sign-in`);
    const authorize = page.waitForRequest((request) => request.url().startsWith(`${idp.issuer}/`));
    await page.getByRole('button', { name: 'Sign in with Corp SSO' }).click();
    const state = new URL((await authorize).url()).searchParams.get('state')!;
    // The IdP's answer when the user cancels, to this browser (its state cookie rides along).
    await page.goto(`${ui.url}/api/auth/oidc/corp/callback?error=access_denied&state=${encodeURIComponent(state)}`);
    await page.waitForURL(`${ui.url}/sign-in?sso_error=oidc_login_failed`);
    await page.locator('.alert-warning', { hasText: 'Single sign-on failed: the identity provider’s login could not be completed or verified.' }).waitFor();
    expect(await page.locator('body').textContent()).not.toContain('"error"');
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();

    await page.goto(`${ui.url}/sign-in?sso_error=${encodeURIComponent('Your account is locked, call +1 555 0100')}`);
    await page.getByText('Single sign-on failed. Try again, or sign in with your password.').waitFor();
    expect(await page.locator('body').textContent()).not.toContain('call +1 555 0100');
    await expectClean(guarded);
    await guarded.close();
  });

  it('resets a forgotten password through the mailed link, once', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: DESKTOP });
    onTestFailed(() => guarded.shot('failed-reset').then(() => undefined));
    const { page } = guarded;
    await page.goto(`${ui.url}/sign-in`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email').fill('rita@example.test');
    axeFindings.push(...(await guarded.axe('forgot password')));
    await page.getByRole('button', { name: 'Send the reset link' }).click();
    await page.getByText('If a local account uses this address').waitFor();
    await vi.waitFor(() => expect(sink.mails.length).toBeGreaterThan(0), { timeout: 20_000 });
    const { link } = linkIn(decodeQuotedPrintable(sink.mails.at(-1)!.raw));
    expect(new URL(link).origin).toBe(ui.url);

    await page.goto(link);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    expect(page.url(), 'the token leaves the address bar').toBe(`${ui.url}/reset-password`);
    axeFindings.push(...(await guarded.axe('reset password')));
    await guarded.shot('reset-password-desktop');
    await page.setViewportSize(PHONE);
    expect(await page.evaluate(() => document.documentElement.scrollWidth), 'no sideways scroll on a phone').toBeLessThanOrEqual(PHONE.width);
    await guarded.shot('reset-password-phone');
    await page.setViewportSize(DESKTOP);
    await page.getByLabel('New password', { exact: true }).fill('rita-chose-a-new-one');
    await page.getByLabel('Repeat the new password').fill('rita-chose-a-new-one');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('heading', { name: 'Password changed' }).waitFor();

    await page.getByRole('link', { name: 'Sign in with the new password' }).click();
    await page.getByLabel('Username').fill('rita');
    await page.getByLabel('Password').fill('rita-chose-a-new-one');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL('**/chat');
    await page.getByRole('button', { name: 'Sign out' }).click();

    // The link is single-use.
    await page.goto(link);
    await page.getByLabel('New password', { exact: true }).fill('rita-tries-it-again-x');
    await page.getByLabel('Repeat the new password').fill('rita-tries-it-again-x');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('link', { name: 'Request a new link' }).waitFor();
    await expectClean(guarded);
    await guarded.close();
  });

  it('shows the default admin a banner until the documented password is changed', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: DESKTOP });
    onTestFailed(() => guarded.shot('failed-default-admin').then(() => undefined));
    const { page } = guarded;
    await page.goto(ui.url);
    await page.waitForURL('**/sign-in');
    await guarded.shot('sign-in-desktop');
    await signIn(page, ui.url, ADMIN.username, 'not-the-password');
    await page.getByRole('alert').filter({ hasText: 'Invalid username or password' }).waitFor();

    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const banner = page.getByRole('region', { name: 'Change the default admin password' });
    await banner.waitFor();
    await page.reload();
    await banner.waitFor();
    axeFindings.push(...(await guarded.axe('default admin banner')));
    await guarded.shot('default-admin-banner-desktop');

    await banner.getByRole('button', { name: 'Change it now' }).click();
    await banner.getByLabel('Current password').fill(ADMIN.password);
    // The service's rule, shown at its field: the new password must differ from the current one.
    await banner.getByLabel('New password', { exact: true }).fill(ADMIN.password);
    await banner.getByLabel('Repeat the new password').fill(ADMIN.password);
    await banner.getByRole('button', { name: 'Change password' }).click();
    await banner.locator('.field-error', { hasText: 'must differ' }).waitFor();
    axeFindings.push(...(await guarded.axe('change password error')));

    await banner.getByLabel('New password', { exact: true }).fill('the-admin-chose-a-real-one');
    await banner.getByLabel('Repeat the new password').fill('the-admin-chose-a-real-one');
    await banner.getByRole('button', { name: 'Change password' }).click();
    await banner.waitFor({ state: 'detached' });
    // The new pair came with a new refresh cookie: a reload keeps the admin signed in, without the banner.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.getByRole('region', { name: 'Change the default admin password' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, ui.url, ADMIN.username, 'the-admin-chose-a-real-one');
    await page.waitForURL('**/chat');
    expect(await page.getByRole('region', { name: 'Change the default admin password' }).count()).toBe(0);
    await expectClean(guarded);
    await guarded.close();
  });

  it('has no serious or critical axe-core violation on the pages it visited', () => {
    expect(axeFindings).toEqual([]);
  });
});
