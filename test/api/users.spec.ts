import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { snapshot, startApp, type TestApp } from '../helpers.js';

let t: TestApp;
let admin: string;
beforeEach(async () => {
  t = await startApp();
  admin = (await t.login()).access;
});
afterEach(async () => t.close());

const newUser = { username: 'carol', password: 'carol-password-long', role: 'editor', email: 'carol@example.test' };
const adminId = async () => (await t.request({ method: 'GET', url: '/api/auth/me', token: admin })).json().id as string;

describe('admin user management', () => {
  it('creates, lists, reads, updates and deletes a user', async () => {
    const created = await t.request({ method: 'POST', url: '/api/auth/users', token: admin, payload: newUser });
    expect(created.statusCode).toBe(201);
    const user = created.json();
    expect(user).toMatchObject({ username: 'carol', role: 'editor', email: 'carol@example.test', groups: ['everyone'], auth_source: 'local' });
    expect(JSON.stringify(user)).not.toMatch(/password/);

    const list = await t.request({ method: 'GET', url: '/api/auth/users?limit=10', token: admin });
    expect(list.json().total).toBe(2);
    expect(list.json().users.map((u: { username: string }) => u.username)).toEqual(['admin', 'carol']);
    expect(JSON.stringify(list.json())).not.toMatch(/hashed_password|argon2/);
    expect((await t.request({ method: 'GET', url: '/api/auth/users?limit=1&offset=1', token: admin })).json().users[0].username).toBe('carol');

    expect((await t.request({ method: 'GET', url: `/api/auth/users/${user.id}`, token: admin })).json().username).toBe('carol');

    const updated = await t.request({ method: 'PUT', url: `/api/auth/users/${user.id}`, token: admin, payload: { role: 'viewer', password: 'carol-new-password' } });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().role).toBe('viewer');
    expect((await t.login('carol', 'carol-new-password')).access).toBeTruthy();

    expect((await t.request({ method: 'DELETE', url: `/api/auth/users/${user.id}`, token: admin })).statusCode).toBe(204);
    expect((await t.request({ method: 'GET', url: `/api/auth/users/${user.id}`, token: admin })).statusCode).toBe(404);
  });

  it('an admin password reset ends that user’s sessions', async () => {
    const viewer = await t.userWithRole('viewer', 'dave');
    await t.request({ method: 'PUT', url: `/api/auth/users/${viewer.id}`, token: admin, payload: { password: 'dave-reset-password' } });
    expect((await t.request({ method: 'GET', url: '/api/auth/me', token: viewer.access })).statusCode).toBe(401);
  });

  it('refuses a duplicate username (any case) with 409 and changes nothing', async () => {
    await t.request({ method: 'POST', url: '/api/auth/users', token: admin, payload: newUser });
    const before = await snapshot(t.app, 'users');
    const dup = await t.request({ method: 'POST', url: '/api/auth/users', token: admin, payload: { ...newUser, username: 'CAROL' } });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error).toMatchObject({ code: 'username_taken', field: 'body.username' });
    expect(await snapshot(t.app, 'users')).toEqual(before);
  });

  it.each([
    [{ ...newUser, role: 'root' }, 'body.role', 'validation_failed'],
    [{ ...newUser, username: 'a' }, 'body.username', 'validation_failed'],
    [{ ...newUser, username: 'bad name!' }, 'body.username', 'validation_failed'],
    [{ ...newUser, password: 'short' }, 'body.password', 'weak_password'],
    [{ ...newUser, email: 'nope' }, 'body.email', 'validation_failed'],
    [{ username: 'x1x', password: 'long-enough-password' }, 'body.role', 'validation_failed'],
    [{ ...newUser, is_superuser: true }, 'body.is_superuser', 'validation_failed'],
    [{ ...newUser, role: 7 }, 'body.role', 'validation_failed'],
  ])('refuses bad input %o and changes nothing', async (payload, field, code) => {
    const before = await snapshot(t.app, 'users');
    const res = await t.request({ method: 'POST', url: '/api/auth/users', token: admin, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code, field });
    expect(await snapshot(t.app, 'users')).toEqual(before);
  });

  it('refuses a password equal to the username (any case), one long enough to pass the length rule, and changes nothing', async () => {
    const username = 'carol.longname';
    const before = await snapshot(t.app, 'users');
    for (const password of [username, 'CAROL.LongName']) {
      const res = await t.request({ method: 'POST', url: '/api/auth/users', token: admin, payload: { ...newUser, username, password } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toEqual({ code: 'weak_password', message: 'The password must not be the username', field: 'body.password' });
    }
    expect(await snapshot(t.app, 'users')).toEqual(before);
  });

  it('refuses an empty update and unknown ids', async () => {
    const empty = await t.request({ method: 'PUT', url: `/api/auth/users/${await adminId()}`, token: admin, payload: {} });
    expect(empty.statusCode).toBe(400);
    expect((await t.request({ method: 'PUT', url: '/api/auth/users/nope', token: admin, payload: { role: 'viewer' } })).statusCode).toBe(404);
    expect((await t.request({ method: 'DELETE', url: '/api/auth/users/nope', token: admin })).statusCode).toBe(404);
  });

  it('never deletes or demotes the last admin', async () => {
    const id = await adminId();
    const before = await snapshot(t.app, 'users');
    const demote = await t.request({ method: 'PUT', url: `/api/auth/users/${id}`, token: admin, payload: { role: 'editor' } });
    expect(demote.statusCode).toBe(409);
    expect(demote.json().error.code).toBe('last_admin');
    const remove = await t.request({ method: 'DELETE', url: `/api/auth/users/${id}`, token: admin });
    expect(remove.statusCode).toBe(409);
    expect(await snapshot(t.app, 'users')).toEqual(before);

    // With a second admin, the first may go.
    await t.userWithRole('admin', 'second-admin');
    expect((await t.request({ method: 'PUT', url: `/api/auth/users/${id}`, token: admin, payload: { role: 'editor' } })).statusCode).toBe(200);
  });

  it.each(['viewer', 'editor'] as const)('refuses a %s with 403 role_required, and anonymous callers with 401', async (role) => {
    const caller = await t.userWithRole(role);
    const before = await snapshot(t.app, 'users');
    for (const [method, url, payload] of [
      ['GET', '/api/auth/users', undefined],
      ['POST', '/api/auth/users', newUser],
      ['GET', `/api/auth/users/${caller.id}`, undefined],
      ['PUT', `/api/auth/users/${caller.id}`, { role: 'admin' }],
      ['DELETE', `/api/auth/users/${caller.id}`, undefined],
    ] as const) {
      const denied = await t.request({ method, url, token: caller.access, payload });
      expect(denied.statusCode, `${method} ${url}`).toBe(403);
      expect(denied.json().error.code).toBe('role_required');
      expect(denied.json().error.message).toContain('admin');
      expect((await t.request({ method, url, payload })).statusCode).toBe(401);
    }
    expect(await snapshot(t.app, 'users')).toEqual(before);
  });

  it('a demoted admin loses admin rights at once', async () => {
    const second = await t.userWithRole('admin', 'boss');
    await t.request({ method: 'PUT', url: `/api/auth/users/${second.id}`, token: admin, payload: { role: 'viewer' } });
    expect((await t.request({ method: 'GET', url: '/api/auth/users', token: second.access })).statusCode).toBe(403);
  });
});

describe('AUTH_REQUIRE_EMAIL', () => {
  it('refuses to create or leave a local user without an email', async () => {
    const strict = await startApp({ AUTH_REQUIRE_EMAIL: 'true', DEFAULT_ADMIN_EMAIL: 'admin@example.test' });
    const token = (await strict.login()).access;
    const before = await snapshot(strict.app, 'users');
    const { email: _email, ...withoutEmail } = newUser;
    const res = await strict.request({ method: 'POST', url: '/api/auth/users', token, payload: withoutEmail });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'email_required', field: 'body.email' });
    const created = await strict.request({ method: 'POST', url: '/api/auth/users', token, payload: newUser });
    expect(created.statusCode).toBe(201);
    const cleared = await strict.request({ method: 'PUT', url: `/api/auth/users/${created.json().id}`, token, payload: { email: null } });
    expect(cleared.statusCode).toBe(400);
    expect(cleared.json().error.code).toBe('email_required');
    expect((await snapshot(strict.app, 'users')).length).toBe(before.length + 1);
    await strict.close();
  });
});
