import type { LightMyRequestResponse } from 'fastify';
import { generate } from 'otplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyLicense, LICENSE_ENV } from '../fixtures/license.js';
import { ADMIN, startApp, type TestApp } from '../helpers.js';
import { callback, cookieOf, createProvider, HANDOFF_COOKIE, idp, startLogin, t as oidcApp, useOidcApp } from '../oidc-fixture.js';

/**
 * The web UI's refresh token as an HttpOnly cookie: asked for with `X-Hearth-Refresh: cookie`, scoped to the
 * refresh path, rotated in place, reuse still ends the session, and sign-out clears it. API clients that do not
 * ask keep the JSON contract.
 */
const COOKIE = 'hearth_refresh';
const ASK = { 'x-hearth-refresh': 'cookie' };

let t: TestApp;
beforeEach(async () => {
  t = await startApp(LICENSE_ENV);
});
afterEach(() => t.close());

const refreshCookie = (res: LightMyRequestResponse) => res.cookies.find((cookie) => cookie.name === COOKIE);
const loginForCookie = () => t.request({ method: 'POST', url: '/api/auth/login', headers: ASK, payload: ADMIN });
const refreshWith = (value: string | undefined) =>
  t.request({ method: 'POST', url: '/api/auth/refresh', headers: ASK, payload: {}, ...(value ? { cookies: { [COOKIE]: value } } : {}) });
const me = (token: string) => t.request({ method: 'GET', url: '/api/auth/me', token });

describe('login and refresh for a browser (X-Hearth-Refresh: cookie)', () => {
  it('sets the refresh token as an HttpOnly, SameSite=Strict cookie on the refresh path, not in the body', async () => {
    const res = await loginForCookie();
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    const cookie = refreshCookie(res)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/auth/refresh', maxAge: 604_800 });
    expect(cookie.secure).toBeFalsy();
    expect(cookie.value.split('.')).toHaveLength(3);
    expect((await me(body.access_token)).statusCode).toBe(200);
  });

  it('keeps the JSON contract for API clients that do not ask: refresh token in the body, no cookie', async () => {
    const res = await t.request({ method: 'POST', url: '/api/auth/login', payload: ADMIN });
    expect(Object.keys(res.json()).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    expect(res.headers['set-cookie']).toBeUndefined();
    const refreshed = await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: res.json().refresh_token } });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json().refresh_token).toEqual(expect.any(String));
    expect(refreshed.headers['set-cookie']).toBeUndefined();
    const missing = await t.request({ method: 'POST', url: '/api/auth/refresh', payload: {} });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toMatchObject({ code: 'validation_failed', field: 'body.refresh_token' });
  });

  it('rotates the cookie on refresh: the new one works, and the access token it came with too', async () => {
    const first = refreshCookie(await loginForCookie())!.value;
    const res = await refreshWith(first);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().refresh_token).toBeUndefined();
    const second = refreshCookie(res)!;
    expect(second).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/auth/refresh' });
    expect(second.value).not.toBe(first);
    expect((await me(res.json().access_token)).statusCode).toBe(200);
    expect((await refreshWith(second.value)).statusCode).toBe(200);
  });

  it('ends the whole session when a spent cookie comes back (reuse detection), and clears the cookie', async () => {
    const login = await loginForCookie();
    const first = refreshCookie(login)!.value;
    const rotated = await refreshWith(first);
    const second = refreshCookie(rotated)!.value;

    const replay = await refreshWith(first);
    expect(replay.statusCode).toBe(401);
    expect(replay.json().error.code).toBe('unauthorized');
    expect(refreshCookie(replay)).toMatchObject({ value: '', maxAge: 0, path: '/api/auth/refresh' });
    // The legitimate holder's cookie and the session's access tokens are dead too.
    expect((await refreshWith(second)).statusCode).toBe(401);
    expect((await me(rotated.json().access_token)).statusCode).toBe(401);
    expect((await me(login.json().access_token)).statusCode).toBe(401);
  });

  it('answers 401 without a cookie, and a refresh token in the body still wins', async () => {
    const none = await refreshWith(undefined);
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('unauthorized');
    const json = await t.request({ method: 'POST', url: '/api/auth/login', payload: ADMIN });
    const viaBody = await t.request({ method: 'POST', url: '/api/auth/refresh', headers: ASK, payload: { refresh_token: json.json().refresh_token } });
    expect(viaBody.statusCode).toBe(200);
    expect(refreshCookie(viaBody)?.value).toEqual(expect.any(String));
  });

  it('puts the pair of a password change in the cookie too', async () => {
    const user = await t.userWithRole('viewer', 'carol');
    const res = await t.request({
      method: 'PUT', url: '/api/auth/password', token: user.access, headers: ASK,
      payload: { current_password: 'carol-password-long', new_password: 'a-brand-new-password' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().refresh_token).toBeUndefined();
    expect((await refreshWith(refreshCookie(res)!.value)).statusCode).toBe(200);
  });

  it('sets the second factor step’s refresh token as the cookie', async () => {
    await applyLicense(t, 'ENTERPRISE');
    const user = await t.userWithRole('viewer', 'dave');
    const { secret } = (await t.request({ method: 'POST', url: '/api/auth/totp/enroll', token: user.access })).json();
    const confirmed = await t.request({ method: 'POST', url: '/api/auth/totp/enroll/confirm', token: user.access, payload: { totp_code: await generate({ secret }) } });
    const [recoveryCode] = confirmed.json().recovery_codes;
    const step = await t.request({ method: 'POST', url: '/api/auth/login', headers: ASK, payload: { username: 'dave', password: 'dave-password-long' } });
    expect(step.json().status).toBe('mfa_required');
    expect(refreshCookie(step)).toBeUndefined();
    const res = await t.request({ method: 'POST', url: '/api/auth/totp/mfa-login', headers: ASK, payload: { mfa_token: step.json().mfa_token, totp_code: recoveryCode } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().refresh_token).toBeUndefined();
    expect((await refreshWith(refreshCookie(res)!.value)).statusCode).toBe(200);
  });
});

describe('POST /api/auth/logout', () => {
  it('ends the session (refresh cookie and access token) and clears the cookie', async () => {
    const login = await loginForCookie();
    const access = login.json().access_token;
    const res = await t.request({ method: 'POST', url: '/api/auth/logout', token: access });
    expect(res.statusCode).toBe(204);
    expect(refreshCookie(res)).toMatchObject({ value: '', maxAge: 0, path: '/api/auth/refresh', httpOnly: true, sameSite: 'Strict' });
    expect((await refreshWith(refreshCookie(login)!.value)).statusCode).toBe(401);
    expect((await me(access)).statusCode).toBe(401);
  });

  it('ends only that session: the same user signed in elsewhere stays signed in', async () => {
    const here = (await loginForCookie()).json().access_token;
    const elsewhere = await t.login();
    await t.request({ method: 'POST', url: '/api/auth/logout', token: here });
    expect((await me(elsewhere.access)).statusCode).toBe(200);
    expect((await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: elsewhere.refresh } })).statusCode).toBe(200);
  });

  it('is refused without a token', async () => {
    const res = await t.request({ method: 'POST', url: '/api/auth/logout' });
    expect(res.statusCode).toBe(401);
  });
});

describe('a TLS deployment', () => {
  it('marks the refresh cookie Secure', async () => {
    await t.close();
    t = await startApp({ TLS_ENABLED: '1', SERVER_NAME: 'hearth.lan' });
    expect(refreshCookie(await loginForCookie())!.secure).toBe(true);
  });
});

describe('the OIDC handoff for a browser', () => {
  useOidcApp();

  it('sets the refresh token as the cookie when the web UI redeems the handoff', async () => {
    await createProvider();
    const { authorizationUrl, state } = await startLogin();
    const done = await callback(await idp.authorize(authorizationUrl.href, 'sub-alice'), state);
    const res = await oidcApp.request({ method: 'POST', url: '/api/auth/oidc/session', headers: ASK, cookies: { [HANDOFF_COOKIE]: cookieOf(done, HANDOFF_COOKIE)!.value } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().refresh_token).toBeUndefined();
    const cookie = refreshCookie(res)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/auth/refresh' });
    const refreshed = await oidcApp.request({ method: 'POST', url: '/api/auth/refresh', headers: ASK, payload: {}, cookies: { [COOKIE]: cookie.value } });
    expect(refreshed.statusCode).toBe(200);
  });
});
