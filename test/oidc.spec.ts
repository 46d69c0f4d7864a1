import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { snapshot } from './helpers.js';
import {
  HANDOFF_COOKIE, STATE_COOKIE, admin, call, callback, cookieOf, createProvider, idp, me, redeem, restartWith, signIn, startLogin, t, useOidcApp,
} from './oidc-fixture.js';
import { redirectUriFor } from './oidc-idp.js';

/** OIDC sign-in end to end against a real oidc-provider on loopback: the flow, its refusals, and the env fallback. */
useOidcApp();
const userRow = async (username: string) => t.app.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();

describe('OIDC login end to end', () => {
  it('signs a new user in: PKCE S256, state and nonce, provisioning, handoff cookie, no token in any URL', async () => {
    await createProvider();
    const { res, authorizationUrl } = await startLogin();
    const params = authorizationUrl.searchParams;
    expect(authorizationUrl.origin).toBe(idp.issuer);
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('state')).toBeTruthy();
    expect(params.get('nonce')).toBeTruthy();
    expect(params.get('scope')).toBe('openid email profile groups');
    expect(params.get('redirect_uri')).toBe(redirectUriFor('corp'));
    expect(cookieOf(res, STATE_COOKIE)).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/api/auth/oidc', maxAge: 600 });

    const back = await idp.authorize(authorizationUrl.href, 'sub-alice');
    const done = await callback(back, params.get('state')!);
    expect(done.statusCode).toBe(302);
    expect(done.headers.location).toBe('/');
    const handoff = cookieOf(done, HANDOFF_COOKIE)!;
    expect(handoff).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/auth/oidc/session', maxAge: 60 });

    const session = await redeem(handoff.value);
    expect(session.statusCode).toBe(200);
    expect(session.headers['cache-control']).toBe('no-store');
    expect(session.json()).toMatchObject({ token_type: 'bearer', access_token: expect.any(String), refresh_token: expect.any(String) });
    expect(await me(session.json().access_token)).toMatchObject({
      username: 'alice', email: 'alice@corp.test', role: 'viewer', groups: ['everyone', 'staff'], auth_source: 'oidc',
    });
    expect(await userRow('alice')).toMatchObject({ hashed_password: null, auth_source: 'oidc' });
    expect(await snapshot(t.app, 'oidc_identities')).toMatchObject([{ issuer: idp.issuer, subject: 'sub-alice', provider: 'corp' }]);

    // The handoff works once.
    expect((await redeem(handoff.value)).json().error.code).toBe('oidc_handoff_invalid');
    expect((await redeem(undefined)).statusCode).toBe(401);
    // Nothing that would let a log reader finish or replay the login is logged.
    for (const value of [handoff.value, params.get('state')!, params.get('nonce')!, back.searchParams.get('code')!, session.json().access_token]) {
      expect(t.logs()).not.toContain(value);
    }
  });

  it('makes members of the admin groups admin', async () => {
    await createProvider();
    const tokens = await signIn('sub-root');
    expect(await me(tokens.access_token)).toMatchObject({ username: 'root.admin', role: 'admin', groups: ['everyone', 'staff', 'hearth-admins'] });
    expect((await call({ method: 'GET', url: '/api/auth/users', token: tokens.access_token })).statusCode).toBe(200);
  });

  it('matches a returning user by (issuer, sub) and never overwrites role or groups', async () => {
    await createProvider();
    const first = await me((await signIn('sub-alice')).access_token);
    const promoted = await call({ method: 'PUT', url: `/api/auth/users/${first.id}`, token: admin, payload: { role: 'editor' } });
    expect(promoted.json().role).toBe('editor');
    idp.accounts.set('sub-alice', { preferred_username: 'alice-renamed', email: 'new@corp.test', groups: ['hearth-admins'] });

    const second = await me((await signIn('sub-alice')).access_token);
    expect(second).toMatchObject({ id: first.id, username: 'alice', role: 'editor', groups: ['everyone', 'staff'] });
    expect(await snapshot(t.app, 'users')).toHaveLength(2);
    idp.accounts.set('sub-alice', { preferred_username: 'alice', email: 'alice@corp.test', groups: ['staff'] });
  });

  it('makes the username unique and falls back to the email', async () => {
    await createProvider();
    await t.userWithRole('viewer', 'Alice');
    expect((await me((await signIn('sub-alice')).access_token)).username).toBe('alice-2');
    expect((await me((await signIn('sub-bob')).access_token)).username).toBe('bob@corp.test');
  });

  it('refuses a replayed callback: the state is single use', async () => {
    await createProvider();
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.authorize(authorizationUrl.href, 'sub-alice');
    expect((await callback(back, state)).statusCode).toBe(302);
    const replay = await callback(back, state);
    expect(replay.statusCode).toBe(400);
    expect(replay.json().error.code).toBe('oidc_state_invalid');
    expect(await snapshot(t.app, 'oidc_handoffs')).toHaveLength(1);
  });

  it('refuses a handoff older than 60 seconds', async () => {
    await createProvider();
    const { authorizationUrl, state } = await startLogin();
    const done = await callback(await idp.authorize(authorizationUrl.href, 'sub-alice'), state);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61 * 1000);
    const res = await redeem(cookieOf(done, HANDOFF_COOKIE)!.value);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('oidc_handoff_invalid');
  });

  it('refuses password login for an OIDC-only user, exactly like a wrong password', async () => {
    await createProvider();
    await signIn('sub-alice');
    const oidcUser = await call({ method: 'POST', url: '/api/auth/login', payload: { username: 'alice', password: 'any-password-at-all' } });
    const unknown = await call({ method: 'POST', url: '/api/auth/login', payload: { username: 'nobody-here', password: 'any-password-at-all' } });
    expect(oidcUser.statusCode).toBe(401);
    expect(oidcUser.json()).toEqual(unknown.json());
    expect(oidcUser.json().error.code).toBe('invalid_credentials');
  });
});

describe('refused logins create no user', () => {
  let usersBefore: unknown[];
  beforeEach(async () => {
    await createProvider();
    usersBefore = await snapshot(t.app, 'users');
  });
  afterEach(async () => {
    expect(await snapshot(t.app, 'users')).toEqual(usersBefore);
    expect(await snapshot(t.app, 'oidc_identities')).toEqual([]);
    expect(await snapshot(t.app, 'oidc_handoffs')).toEqual([]);
  });

  it('a tampered state', async () => {
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.authorize(authorizationUrl.href, 'sub-alice');
    back.searchParams.set('state', `${state}x`);
    const res = await callback(back, `${state}x`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('oidc_state_invalid');
  });

  it('a state from another browser (cookie missing or different)', async () => {
    const { authorizationUrl } = await startLogin();
    const other = await startLogin();
    const back = await idp.authorize(authorizationUrl.href, 'sub-alice');
    expect((await callback(back, undefined)).json().error.code).toBe('oidc_state_invalid');
    expect((await callback(back, other.state)).json().error.code).toBe('oidc_state_invalid');
  });

  it('a state older than 10 minutes', async () => {
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.authorize(authorizationUrl.href, 'sub-alice');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 10 * 60 * 1000 + 1000);
    expect((await callback(back, state)).json().error.code).toBe('oidc_state_invalid');
  });

  it('a wrong nonce: the ID token does not carry the nonce stored for this login', async () => {
    const { authorizationUrl, state } = await startLogin();
    await t.app.db.updateTable('oidc_login_states').set({ nonce: 'not-the-nonce-that-was-sent' }).execute();
    const res = await callback(await idp.authorize(authorizationUrl.href, 'sub-alice'), state);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('oidc_login_failed');
    expect(t.logs()).toMatch(/oidc login refused.*nonce|nonce.*oidc login refused/);
  });

  it('an error from the IdP (the user aborts)', async () => {
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.authorize(authorizationUrl.href, 'sub-alice', { abort: true });
    expect(back.searchParams.get('error')).toBe('access_denied');
    const res = await callback(back, state);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('oidc_login_failed');
  });

  it('a forged code', async () => {
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.authorize(authorizationUrl.href, 'sub-alice');
    back.searchParams.set('code', 'forged-code');
    expect((await callback(back, state)).json().error.code).toBe('oidc_login_failed');
  });

  it('plain PKCE: Hearth takes no PKCE parameter, and the IdP refuses plain and a missing challenge', async () => {
    const plain = await call({ method: 'GET', url: '/api/auth/oidc/corp/login?code_challenge_method=plain' });
    expect(plain.statusCode).toBe(400);
    expect(plain.json().error.code).toBe('validation_failed');
    expect(await snapshot(t.app, 'oidc_login_states')).toEqual([]);

    const { authorizationUrl } = await startLogin();
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const verifier = 'a'.repeat(43);
    for (const change of [{ code_challenge_method: 'plain', code_challenge: verifier }, { code_challenge_method: '', code_challenge: '' }]) {
      const url = new URL(authorizationUrl);
      for (const [key, value] of Object.entries(change)) value ? url.searchParams.set(key, value) : url.searchParams.delete(key);
      const refused = await fetch(url, { redirect: 'manual' });
      const back = new URL(refused.headers.get('location')!);
      expect(back.searchParams.get('error')).toBe('invalid_request');
    }
  });

});

describe('env fallback (rule 13)', () => {
  it('offers OIDC_PROVIDERS while the table is empty, with the container secret file, and ignores it once a provider is saved', async () => {
    const secrets = mkdtempSync(path.join(os.tmpdir(), 'hearth-secrets-'));
    writeFileSync(path.join(secrets, 'oidc_envcorp_client_secret'), `${idp.clientSecret}\n`);
    await restartWith({
      OIDC_PROVIDERS: 'envcorp,broken',
      OIDC_ENVCORP_CLIENT_ID: idp.clientId,
      OIDC_ENVCORP_DISCOVERY_URL: idp.discoveryUrl,
      OIDC_ENVCORP_REDIRECT_URI: redirectUriFor('envcorp'),
      OIDC_ENVCORP_SCOPES: 'openid email profile groups',
      OIDC_ENVCORP_ADMIN_GROUPS: 'hearth-admins,other',
      OIDC_ENVCORP_ALLOW_PRIVATE_NETWORK: '1',
    }, [secrets]);
    try {
      expect(t.logs()).toContain('OIDC provider \\"broken\\" from OIDC_PROVIDERS lacks');
      const listed = await call({ method: 'GET', url: '/api/auth/oidc/providers' });
      expect(listed.json()).toEqual([{ name: 'envcorp', display_name: 'envcorp', login_url: '/api/auth/oidc/envcorp/login' }]);
      // A confidential client: the token exchange succeeds only with the secret read from the file.
      const viaEnv = await me((await signIn('sub-root', 'envcorp')).access_token);
      expect(viaEnv).toMatchObject({ username: 'root.admin', role: 'admin' });

      await createProvider();
      expect((await call({ method: 'GET', url: '/api/auth/oidc/providers' })).json().map((p: { name: string }) => p.name)).toEqual(['corp']);
      expect((await call({ method: 'GET', url: '/api/auth/oidc/envcorp/login' })).statusCode).toBe(404);
      // The same (issuer, sub) through the saved provider is the same user.
      expect((await me((await signIn('sub-root')).access_token)).id).toBe(viaEnv.id);
    } finally {
      rmSync(secrets, { recursive: true, force: true });
    }
  });
});
