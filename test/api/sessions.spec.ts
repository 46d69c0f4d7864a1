import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { snapshot, startApp, type TestApp } from '../helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startApp();
});
afterEach(async () => {
  vi.useRealTimers();
  await t.close();
});

const me = (token: string, app = t) => app.request({ method: 'GET', url: '/api/auth/me', token });
const refresh = (token: string, app = t) => app.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: token } });

describe('session revocation', () => {
  it('DELETE /api/admin/auth/sessions refuses every earlier token, refresh tokens included, across a restart', async () => {
    const viewer = await t.userWithRole('viewer');
    const admin = await t.login();
    const res = await t.request({ method: 'DELETE', url: '/api/admin/auth/sessions', token: admin.access });
    expect(res.statusCode).toBe(200);
    expect(Date.parse(res.json().revoked_before)).toBeGreaterThan(0);
    for (const token of [viewer.access, admin.access]) expect((await me(token)).statusCode).toBe(401);
    for (const token of [viewer.refresh, admin.refresh]) expect((await refresh(token)).statusCode).toBe(401);

    t = await t.restart();
    expect((await me(viewer.access)).statusCode).toBe(401);
    expect((await refresh(admin.refresh)).statusCode).toBe(401);
    // New logins work after the cut-off.
    expect((await me((await t.login()).access)).statusCode).toBe(200);
  });

  it('DELETE /api/admin/auth/users/{username}/sessions revokes that user only', async () => {
    const viewer = await t.userWithRole('viewer', 'erin');
    const editor = await t.userWithRole('editor', 'frank');
    const admin = await t.login();
    const res = await t.request({ method: 'DELETE', url: '/api/admin/auth/users/erin/sessions', token: admin.access });
    expect(res.statusCode).toBe(200);
    expect((await me(viewer.access)).statusCode).toBe(401);
    expect((await refresh(viewer.refresh)).statusCode).toBe(401);
    expect((await me(editor.access)).statusCode).toBe(200);
    expect((await me(admin.access)).statusCode).toBe(200);

    t = await t.restart();
    expect((await me(viewer.access)).statusCode).toBe(401);
    expect((await me(editor.access)).statusCode).toBe(200);
    expect((await me((await t.login('erin', 'erin-password-long')).access)).statusCode).toBe(200);
  });

  it('answers 404 for an unknown username, and 403/401 for non-admins', async () => {
    const admin = await t.login();
    const viewer = await t.userWithRole('viewer');
    const before = await snapshot(t.app, 'auth_sessions');
    expect((await t.request({ method: 'DELETE', url: '/api/admin/auth/users/ghost/sessions', token: admin.access })).statusCode).toBe(404);
    expect((await t.request({ method: 'DELETE', url: '/api/admin/auth/sessions', token: viewer.access })).statusCode).toBe(403);
    expect((await t.request({ method: 'DELETE', url: '/api/admin/auth/users/admin/sessions', token: viewer.access })).statusCode).toBe(403);
    expect((await t.request({ method: 'DELETE', url: '/api/admin/auth/sessions' })).statusCode).toBe(401);
    expect(await snapshot(t.app, 'auth_sessions')).toEqual(before);
    expect(t.app.settings.get('TOKENS_VALID_AFTER', 0)).toBe(0);
  });
});

describe('runtime auth settings', () => {
  it('GET shows the seeded lifetimes; PATCH changes new tokens without restart', async () => {
    const admin = await t.login();
    const current = await t.request({ method: 'GET', url: '/api/admin/auth/settings', token: admin.access });
    expect(current.json()).toEqual({ access_token_seconds: 900, refresh_token_seconds: 604_800, access_token_seconds_admin: null, refresh_token_seconds_admin: null });

    const patched = await t.request({ method: 'PATCH', url: '/api/admin/auth/settings', token: admin.access, payload: { access_token_seconds: 120, refresh_token_seconds: 3600 } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ access_token_seconds: 120, refresh_token_seconds: 3600 });

    vi.useFakeTimers({ toFake: ['Date'] });
    const fresh = await t.login();
    expect(JSON.parse(Buffer.from(fresh.access.split('.')[1], 'base64url').toString()).exp * 1000 - Date.now()).toBeLessThanOrEqual(120_000);
    vi.setSystemTime(Date.now() + 121_000);
    expect((await me(fresh.access)).statusCode).toBe(401);
    expect((await refresh(fresh.refresh)).statusCode).toBe(200);
    vi.useRealTimers();

    t = await t.restart();
    expect((await t.request({ method: 'GET', url: '/api/admin/auth/settings', token: (await t.login()).access })).json().access_token_seconds).toBe(120);
  });

  it.each([
    [{ access_token_seconds: 10 }, 'body.access_token_seconds'],
    [{ refresh_token_seconds: 99_999_999 }, 'body.refresh_token_seconds'],
    [{ access_token_seconds: 'soon' }, 'body.access_token_seconds'],
    [{}, undefined],
    [{ lifetime: 5 }, 'body.lifetime'],
    [{ access_token_seconds: 7200, refresh_token_seconds: 3600 }, 'body.access_token_seconds'],
  ])('refuses %o with 400 and changes nothing', async (payload, field) => {
    const admin = await t.login();
    const before = await snapshot(t.app, 'settings');
    const res = await t.request({ method: 'PATCH', url: '/api/admin/auth/settings', token: admin.access, payload });
    expect(res.statusCode).toBe(400);
    if (field) expect(res.json().error.field).toBe(field);
    expect(await snapshot(t.app, 'settings')).toEqual(before);
  });

  it('per-role admin overrides need ENTERPRISE', async () => {
    const admin = await t.login();
    const before = await snapshot(t.app, 'settings');
    const res = await t.request({ method: 'PATCH', url: '/api/admin/auth/settings', token: admin.access, payload: { access_token_seconds_admin: 300 } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('tier_required');
    expect(res.json().error.message).toContain('ENTERPRISE');
    expect(await snapshot(t.app, 'settings')).toEqual(before);
  });

  it('is admin only', async () => {
    const editor = await t.userWithRole('editor');
    expect((await t.request({ method: 'GET', url: '/api/admin/auth/settings', token: editor.access })).statusCode).toBe(403);
    expect((await t.request({ method: 'PATCH', url: '/api/admin/auth/settings', token: editor.access, payload: { access_token_seconds: 120 } })).statusCode).toBe(403);
    expect((await t.request({ method: 'GET', url: '/api/admin/auth/settings' })).statusCode).toBe(401);
  });
});
