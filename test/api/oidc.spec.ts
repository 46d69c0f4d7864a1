import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { holdFirst, holdUntil } from '../fixtures/held-calls.js';
import { snapshot } from '../helpers.js';
import {
  HANDOFF_COOKIE, STATE_COOKIE, admin, call, callback, cookieOf, createProvider, idp, me, redeem, restartWith, signIn, startLogin, t, useOidcApp,
} from '../oidc-fixture.js';
import { type IdTokenForgery, redirectUriFor } from '../oidc-idp.js';

/** OIDC sign-in end to end against a real oidc-provider on loopback: the flow, its refusals, and the env fallback. */
useOidcApp();
/** The reason of the last warning with this message (the reason goes to the log only). */
const loggedReason = (message: string): string => {
  const lines = t.logs().split('\n').filter((line) => line.includes(`"msg":"${message}"`));
  return lines.length ? (JSON.parse(lines.at(-1)!) as { reason: string }).reason : '';
};
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

  it('PKCE: Hearth takes no PKCE parameter, sends S256, and the verifier it sends to the token endpoint matches the challenge', async () => {
    await createProvider();
    const plain = await call({ method: 'GET', url: '/api/auth/oidc/corp/login?code_challenge_method=plain' });
    expect(plain.statusCode).toBe(400);
    expect(plain.json().error.code).toBe('validation_failed');
    expect(await snapshot(t.app, 'oidc_login_states')).toEqual([]);

    const { authorizationUrl, state } = await startLogin();
    const challenge = authorizationUrl.searchParams.get('code_challenge')!;
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect((await callback(await idp.authorize(authorizationUrl.href, 'sub-alice'), state)).statusCode).toBe(302);
    expect(idp.tokenRequests).toHaveLength(1);
    const verifier = idp.tokenRequests[0].codeVerifier as string;
    expect(verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(verifier).not.toBe(challenge);
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(challenge);
    // The verifier itself travelled only in the token request; Hearth keeps it sealed.
    expect(authorizationUrl.href).not.toContain(verifier);
    expect(JSON.stringify(await snapshot(t.app, 'oidc_login_states'))).not.toContain(verifier);
  });

  it('an ID token re-signed with the IdP\'s own key and unchanged claims still signs in (the forgeries below change one thing each)', async () => {
    await createProvider();
    idp.forgeIdTokens({ claims: {} });
    expect(await me((await signIn('sub-alice')).access_token)).toMatchObject({ username: 'alice' });
    expect(idp.tokenRequests).toHaveLength(1);
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

  it('two first sign-ins at once whose usernames share one base get alice and alice-2 (one found the name free, the other took the next)', async () => {
    await createProvider();
    idp.accounts.set('sub-alice-twin', { preferred_username: 'alice', email: 'twin@corp.test' });
    // Both callbacks are held just before the user is made until both got there, so that both look for a free name before either inserts.
    const held = holdUntil(t.app.users, 'createExternal', 2);
    try {
      const signedIn = await Promise.all([signIn('sub-alice'), signIn('sub-alice-twin')]);
      expect(held).toHaveBeenCalledTimes(2);
      const users = await Promise.all(signedIn.map(async (tokens) => me(tokens.access_token)));
      expect(users.map((user) => user.username).sort()).toEqual(['alice', 'alice-2']);
      expect(await snapshot(t.app, 'oidc_identities')).toHaveLength(2);
    } finally {
      held.mockRestore();
      idp.accounts.delete('sub-alice-twin');
    }
  });

  it('two first sign-ins of one identity at once are one user: the one whose link came second signs in as the user the first made', async () => {
    await createProvider();
    // Both callbacks are held just before the user is made until both got there: both found no user for (issuer, sub).
    const held = holdUntil(t.app.users, 'createExternal', 2);
    try {
      const signedIn = await Promise.all([signIn('sub-alice'), signIn('sub-alice')]);
      expect(held).toHaveBeenCalledTimes(2);
      const users = await Promise.all(signedIn.map(async (tokens) => me(tokens.access_token)));
      expect(users[1]).toEqual(users[0]);
      expect(users[0]).toMatchObject({ username: 'alice', groups: ['everyone', 'staff'], auth_source: 'oidc' });
      expect((await snapshot(t.app, 'users')).filter((user) => (user as { auth_source: string }).auth_source === 'oidc')).toHaveLength(1);
      expect(await snapshot(t.app, 'oidc_identities')).toMatchObject([{ subject: 'sub-alice', user_id: users[0].id }]);
      // Provisioned once, as one after the other would be: one audit entry, one log line.
      expect((await snapshot(t.app, 'audit_log')).filter((entry) => (entry as { event: string }).event === 'user.create')).toHaveLength(1);
      expect(t.logs().split('\n').filter((line) => line.includes('"msg":"oidc user provisioned"'))).toHaveLength(1);
    } finally {
      held.mockRestore();
    }
  });

  for (const change of ['delete', 'rename'] as const) {
    it(`a claim group's ${change} while a first sign-in is held before its user is made: the user joins the group made again, never a name with no group`, async () => {
      await createProvider();
      const staff = await call({ method: 'POST', url: '/api/groups', token: admin, payload: { name: 'staff' } });
      expect(staff.statusCode, staff.body).toBe(201);
      const made = holdFirst(t.app.users, 'createExternal');
      const signedIn = signIn('sub-alice');
      await made.arrived;
      const res = change === 'delete'
        ? await call({ method: 'DELETE', url: `/api/groups/${staff.json().id}`, token: admin })
        : await call({ method: 'PUT', url: `/api/groups/${staff.json().id}`, token: admin, payload: { name: 'crew' } });
      expect(res.statusCode, res.body).toBe(change === 'delete' ? 204 : 200);
      made.release();
      // As a sign-in after the change: the claim's group is made again (origin oidc) and the user is in it.
      expect(await me((await signedIn).access_token)).toMatchObject({ username: 'alice', groups: ['everyone', 'staff'] });
      const groups = (await snapshot(t.app, 'groups')) as Array<{ name: string; origin: string }>;
      expect(groups.find((group) => group.name === 'staff')).toMatchObject({ origin: 'oidc' });
      expect(groups.map((group) => group.name).sort()).toEqual(change === 'delete' ? ['everyone', 'staff'] : ['crew', 'everyone', 'staff']);
    });
  }

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

  it('a browser navigation (Accept: text/html) goes back to the sign-in page with the code; a JSON client keeps the JSON error', async () => {
    const navigate = (back: URL, state: string, accept: string) =>
      call({ method: 'GET', url: back.pathname + back.search, headers: { accept }, cookies: { [STATE_COOKIE]: state } });
    const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const aborted = await startLogin();
    const res = await navigate(await idp.authorize(aborted.authorizationUrl.href, 'sub-alice', { abort: true }), aborted.state, BROWSER);
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/sign-in?sso_error=oidc_login_failed');
    expect(cookieOf(res, HANDOFF_COOKIE)).toBeUndefined();

    const tampered = await startLogin();
    const back = await idp.authorize(tampered.authorizationUrl.href, 'sub-alice');
    back.searchParams.set('state', `${tampered.state}x`);
    expect((await navigate(back, `${tampered.state}x`, BROWSER)).headers.location).toBe('/sign-in?sso_error=oidc_state_invalid');

    const api = await startLogin();
    const json = await navigate(await idp.authorize(api.authorizationUrl.href, 'sub-alice', { abort: true }), api.state, 'application/json');
    expect(json.statusCode).toBe(401);
    expect(json.json().error.code).toBe('oidc_login_failed');
  });

  it('a forged code', async () => {
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.authorize(authorizationUrl.href, 'sub-alice');
    back.searchParams.set('code', 'forged-code');
    expect((await callback(back, state)).json().error.code).toBe('oidc_login_failed');
  });

  it('an ID token with a wrong issuer', async () => {
    await refusedIdToken({ claims: { iss: 'https://someone-else.test' } }, /unexpected JWT "iss" \(issuer\) claim value/);
  });

  it('an ID token for another client (wrong audience)', async () => {
    await refusedIdToken({ claims: { aud: 'another-client' } }, /unexpected JWT "aud" \(audience\) claim value/);
  });

  it('an expired ID token', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refusedIdToken({ claims: { iat: now - 7200, exp: now - 3600 } }, /unexpected JWT "exp" \(expiration time\) claim value/);
  });

  it('an ID token signed by a key the IdP never published', async () => {
    await refusedIdToken({ foreignKey: true }, /signature/i);
  });

  it.each([
    ['token_endpoint', 'http://[64:ff9b::a9fe:a9fe]/token'],
    ['jwks_uri', 'http://[::a9fe:a9fe]/jwks'],
    ['userinfo_endpoint', 'http://169.254.170.2/userinfo'],
  ])('a discovery document whose %s is a metadata address: refused without connecting', async (endpoint, url) => {
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.authorize(authorizationUrl.href, 'sub-alice');
    idp.overrideDiscovery({ [endpoint]: url });
    const res = await callback(back, state);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('oidc_login_failed');
    expect(loggedReason('oidc login refused')).toMatch(/not allowed.*metadata/);
    if (endpoint === 'token_endpoint') expect(idp.tokenRequests).toEqual([]);
  });
});

/** Starts a login, has the IdP forge the ID token it issues, and expects the callback to refuse it for the reason given. */
async function refusedIdToken(forgery: IdTokenForgery, reason: RegExp): Promise<void> {
  const { authorizationUrl, state } = await startLogin();
  idp.forgeIdTokens(forgery);
  const res = await callback(await idp.authorize(authorizationUrl.href, 'sub-alice'), state);
  expect(res.statusCode).toBe(401);
  expect(res.json().error).toMatchObject({ code: 'oidc_login_failed', message: 'The identity provider login could not be completed or verified' });
  expect(idp.tokenRequests).toHaveLength(1);
  expect(loggedReason('oidc login refused')).toMatch(reason);
}

describe('the SSRF guard on OIDC requests', () => {
  it('an env provider on loopback without OIDC_<NAME>_ALLOW_PRIVATE_NETWORK is not contacted: the login answers 502', async () => {
    await restartWith({
      OIDC_PROVIDERS: 'envcorp',
      OIDC_ENVCORP_CLIENT_ID: idp.clientId,
      OIDC_ENVCORP_DISCOVERY_URL: idp.discoveryUrl,
      OIDC_ENVCORP_REDIRECT_URI: redirectUriFor('envcorp'),
    });
    const login = await call({ method: 'GET', url: '/api/auth/oidc/envcorp/login' });
    expect(login.statusCode).toBe(502);
    expect(login.json().error.code).toBe('oidc_provider_unreachable');
    expect(loggedReason('oidc discovery failed')).toMatch(/not allowed.*loopback address \(allow_private_network is off\)/);
    expect(await snapshot(t.app, 'oidc_login_states')).toEqual([]);
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
