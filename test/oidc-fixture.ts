import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from 'vitest';
import { generateLicenseKeyPair, issueLicense } from '../plugins/license/license-key.js';
import { loopbackNetwork } from './fixtures/loopback-network.js';
import { startApp, type TestApp } from './helpers.js';
import { redirectUriFor, startIdp, type TestIdp } from './oidc-idp.js';

/**
 * Shared by the OIDC specs: a real IdP, an ENTERPRISE Hearth per test (whose outbound requests can reach only
 * loopback), and the browser's steps on Hearth's side.
 */

export const DAY = 24 * 60 * 60 * 1000;
const signer = generateLicenseKeyPair();
const LICENSE_ENV = { LICENSE_PUBLIC_KEYS: signer.publicKeyBase64 };
export const STATE_COOKIE = 'hearth_oidc_state';
export const HANDOFF_COOKIE = 'hearth_oidc_handoff';

export let idp: TestIdp;
export let t: TestApp;
export let admin: string;
/** Every response body Hearth sent in a test, to prove no secret ever left it. */
let bodies: string[];

async function enterprise(): Promise<void> {
  admin = (await t.login()).access;
  const licenseKey = issueLicense(signer.privateKeyPem, {
    id: randomUUID(), licensee: 'Corp', tier: 'ENTERPRISE', limits: { documents: 1000, file_size_bytes: 1 << 30, storage_bytes: 1 << 40 },
    issued_at: new Date(Date.now() - DAY).toISOString(), expires_at: new Date(Date.now() + 365 * DAY).toISOString(),
  });
  const res = await t.request({ method: 'POST', url: '/api/license', token: admin, payload: { license_key: licenseKey } });
  expect(res.statusCode).toBe(200);
}

/** Registers the hooks: one IdP per file, a fresh ENTERPRISE app per test, and the secret greps after each. */
export function useOidcApp(): void {
  beforeAll(async () => {
    idp = await startIdp(['corp', 'envcorp'], {
      'sub-alice': { preferred_username: 'alice', email: 'alice@corp.test', groups: ['staff'] },
      'sub-root': { preferred_username: 'root.admin', email: 'root@corp.test', groups: ['staff', 'hearth-admins'] },
      'sub-bob': { email: 'bob@corp.test' },
    });
  });
  afterAll(() => idp.close());
  beforeEach(async () => {
    bodies = [];
    idp.reset();
    t = await startApp(LICENSE_ENV, undefined, undefined, [], loopbackNetwork());
    await enterprise();
  });
  afterEach(async () => {
    vi.useRealTimers();
    await t.close();
    // No response and no log line ever carries the client secret.
    for (const body of bodies) expect(body).not.toContain(idp.clientSecret);
    expect(t.logs()).not.toContain(idp.clientSecret);
  });
}

/** Replaces this test's app by one with more env (and container secret folders), still ENTERPRISE. */
export async function restartWith(env: Record<string, string>, secretDirs: string[] = []): Promise<void> {
  await t.close();
  t = await startApp({ ...LICENSE_ENV, ...env }, undefined, true, secretDirs, loopbackNetwork());
  await enterprise();
}

/** app.inject that remembers every body, for the secret greps. */
export async function call(options: Parameters<TestApp['request']>[0]): Promise<LightMyRequestResponse> {
  const res = await t.request(options);
  bodies.push(res.body);
  return res;
}

export const providerBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'corp', display_name: 'Corp SSO', client_id: idp.clientId, client_secret: idp.clientSecret,
  discovery_url: idp.discoveryUrl, redirect_uri: redirectUriFor('corp'), scopes: 'openid email profile groups',
  // The test IdP listens on loopback, which the SSRF guard refuses unless the provider allows private networks.
  admin_groups: ['hearth-admins'], allow_private_network: true, ...overrides,
});

export async function createProvider(overrides: Record<string, unknown> = {}): Promise<{ id: string; name: string; secret_set: boolean }> {
  const res = await call({ method: 'POST', url: '/api/admin/oidc/providers', token: admin, payload: providerBody(overrides) });
  expect(res.statusCode).toBe(201);
  return res.json();
}

export const cookieOf = (res: LightMyRequestResponse, name: string) => res.cookies.find((c) => c.name === name && c.value !== '');

export async function startLogin(provider = 'corp'): Promise<{ res: LightMyRequestResponse; authorizationUrl: URL; state: string }> {
  const res = await call({ method: 'GET', url: `/api/auth/oidc/${provider}/login` });
  expect(res.statusCode).toBe(302);
  return { res, authorizationUrl: new URL(res.headers.location as string), state: cookieOf(res, STATE_COOKIE)!.value };
}

export const callback = (back: URL, state: string | undefined) =>
  call({ method: 'GET', url: back.pathname + back.search, ...(state ? { cookies: { [STATE_COOKIE]: state } } : {}) });

export const redeem = (code: string | undefined) =>
  call({ method: 'POST', url: '/api/auth/oidc/session', ...(code ? { cookies: { [HANDOFF_COOKIE]: code } } : {}) });

/** The whole browser round trip: Hearth login → IdP login and consent → callback → handoff → tokens. */
export async function signIn(sub: string, provider = 'corp'): Promise<{ access_token: string; refresh_token: string }> {
  const { authorizationUrl, state } = await startLogin(provider);
  const done = await callback(await idp.authorize(authorizationUrl.href, sub), state);
  expect(done.statusCode, done.body).toBe(302);
  expect(done.headers.location).toBe('/');
  const session = await redeem(cookieOf(done, HANDOFF_COOKIE)!.value);
  expect(session.statusCode, session.body).toBe(200);
  return session.json();
}

export const me = async (token: string) => (await call({ method: 'GET', url: '/api/auth/me', token })).json();
