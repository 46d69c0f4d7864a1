import { createSigner } from 'fast-jwt';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ADMIN, TEST_JWT_SECRET, snapshot, startApp, type TestApp } from '../helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startApp();
});
afterEach(async () => {
  vi.useRealTimers();
  await t.close();
});

const decode = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const me = (token: string) => t.request({ method: 'GET', url: '/api/auth/me', token });

describe('POST /api/auth/login', () => {
  it('returns a bearer token pair for the default admin', async () => {
    const res = await t.request({ method: 'POST', url: '/api/auth/login', payload: ADMIN });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 900 });
    expect(decode(body.access_token)).toMatchObject({ typ: 'access' });
    expect(decode(body.access_token).exp - decode(body.access_token).iat).toBe(900);
    expect(decode(body.refresh_token).exp - decode(body.refresh_token).iat).toBe(604_800);
    expect((await me(body.access_token)).json()).toMatchObject({ username: 'admin', role: 'admin' });
  });

  it('accepts the username in any case', async () => {
    const res = await t.request({ method: 'POST', url: '/api/auth/login', payload: { ...ADMIN, username: 'ADMIN' } });
    expect(res.statusCode).toBe(200);
  });

  it('answers a wrong password and an unknown user identically', async () => {
    const wrong = await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: 'wrong-password-123' } });
    const unknown = await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'nobody', password: 'wrong-password-123' } });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(unknown.body).toBe(wrong.body);
    expect(wrong.json()).toEqual({ error: { code: 'invalid_credentials', message: 'Invalid username or password' } });
    expect(Object.keys(unknown.headers).sort()).toEqual(Object.keys(wrong.headers).sort());
  });

  it('spends the same password-hashing work on an unknown user as on a wrong password', async () => {
    const time = async (username: string) => {
      const samples: number[] = [];
      for (let i = 0; i < 7; i++) {
        const started = performance.now();
        await t.request({ method: 'POST', url: '/api/auth/login', payload: { username, password: `guess-number-${i}` } });
        samples.push(performance.now() - started);
      }
      // The fastest run is the least disturbed by whatever else the machine is doing.
      return Math.min(...samples);
    };
    await time('warm-up');
    const [known, unknown] = [await time('admin'), await time('nobody-here')];
    // Both run one argon2id verification; without the decoy, unknown users answer ~100x faster.
    expect(unknown / known).toBeGreaterThan(0.4);
    expect(unknown / known).toBeLessThan(2.5);
  });

  it.each([
    [{ username: 'admin' }, 'body.password'],
    [{ password: 'x' }, 'body.username'],
    [{ username: 'admin', password: 5 }, 'body.password'],
    [{ username: 'admin', password: 'x', extra: true }, 'body.extra'],
  ])('refuses %o with 400 naming %s', async (payload, field) => {
    const res = await t.request({ method: 'POST', url: '/api/auth/login', payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'validation_failed', field });
  });

  it('refuses malformed JSON and non-JSON bodies', async () => {
    const malformed = await t.request({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"username":' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.code).toBe('malformed_json');
    const text = await t.request({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
    expect(text.statusCode).toBe(415);
    expect(text.json().error.code).toBe('unsupported_media_type');
  });

  it('refuses oversize bodies with 413', async () => {
    const res = await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: 'x'.repeat(2 * 1024 * 1024) } });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('payload_too_large');
  });

  it('throttles failed logins per account and client address with 429 and Retry-After', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: `bad-password-${i}` } });
      expect(res.statusCode).toBe(401);
    }
    const blocked = await t.request({ method: 'POST', url: '/api/auth/login', payload: ADMIN });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.json().error.code).toBe('too_many_requests');
    // Another account from another address is unaffected.
    const other = await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'someone', password: 'x' }, remoteAddress: '10.9.9.9' });
    expect(other.statusCode).toBe(401);
  });

  it('throttles failed logins per client address across accounts', async () => {
    for (let i = 0; i < 50; i++) {
      await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: `user${i}`, password: 'bad-password' }, remoteAddress: '10.1.1.1' });
    }
    const blocked = await t.request({ method: 'POST', url: '/api/auth/login', payload: ADMIN, remoteAddress: '10.1.1.1' });
    expect(blocked.statusCode).toBe(429);
    const elsewhere = await t.request({ method: 'POST', url: '/api/auth/login', payload: ADMIN, remoteAddress: '10.2.2.2' });
    expect(elsewhere.statusCode).toBe(200);
  });

  it('a successful login resets the account counter', async () => {
    for (let i = 0; i < 9; i++) await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: `bad-${i}-password` } });
    expect((await t.request({ method: 'POST', url: '/api/auth/login', payload: ADMIN })).statusCode).toBe(200);
    for (let i = 0; i < 9; i++) await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: `bad-${i}-password` } });
    expect((await t.request({ method: 'POST', url: '/api/auth/login', payload: ADMIN })).statusCode).toBe(200);
  });
});

describe('failed-login throttling keeps guessers out, not the owner', () => {
  const OWNER_ADDRESS = '198.51.100.20';
  const login = (password: string, remoteAddress: string) =>
    t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password }, remoteAddress });
  const guess = (remoteAddress: string, i = 0) => login(`wrong-guess-${i}-password`, remoteAddress);
  const retryAfter = (res: { headers: Record<string, unknown> }) => Number(res.headers['retry-after']);

  it('an attacker failing many times at one address does not keep the owner out at another', async () => {
    for (let i = 0; i < 30; i++) await guess('203.0.113.9', i);
    expect((await login(ADMIN.password, '203.0.113.9')).statusCode).toBe(429);
    // The owner's first login from this address: no earlier success vouches for it.
    expect((await login(ADMIN.password, OWNER_ADDRESS)).statusCode).toBe(200);
  }, 60_000);

  it('still locks brute force from one address: 10 failures, then 429 with Retry-After until the 15 minutes pass', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    for (let i = 0; i < 10; i++) expect((await guess('203.0.113.9', i)).statusCode).toBe(401);
    const locked = await login(ADMIN.password, '203.0.113.9');
    expect(locked.statusCode).toBe(429);
    expect(locked.json().error.code).toBe('too_many_requests');
    expect(retryAfter(locked)).toBeGreaterThan(14 * 60);
    expect(retryAfter(locked)).toBeLessThanOrEqual(15 * 60);
    vi.setSystemTime(Date.now() + retryAfter(locked) * 1000);
    expect((await login(ADMIN.password, '203.0.113.9')).statusCode).toBe(200);
  });

  it('slows a distributed attack account-wide, doubling the wait up to 15 minutes, while the owner’s known address is exempt', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    expect((await login(ADMIN.password, OWNER_ADDRESS)).statusCode).toBe(200);
    // 20 failures a day from all addresses together pass untouched…
    for (let i = 0; i < 20; i++) expect((await guess(`203.0.113.${i}`)).statusCode).toBe(401);
    // …then every address that has not signed in to the account waits, even with the right password.
    const held = await login(ADMIN.password, '203.0.113.99');
    expect(held.statusCode).toBe(429);
    expect(retryAfter(held)).toBe(1);
    expect((await login(ADMIN.password, OWNER_ADDRESS)).statusCode).toBe(200);

    const waits: number[] = [];
    let wait = retryAfter(held);
    for (let i = 0; i < 12; i++) {
      vi.setSystemTime(Date.now() + wait * 1000);
      expect((await guess(`203.0.113.${100 + i}`)).statusCode).toBe(401);
      const next = await login(ADMIN.password, `203.0.113.${200 + i}`);
      expect(next.statusCode).toBe(429);
      waits.push((wait = retryAfter(next)));
    }
    expect(waits).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900]);
    // The owner's success does not wipe the attacker's count: the next failure still costs the longest wait.
    expect((await login(ADMIN.password, OWNER_ADDRESS)).statusCode).toBe(200);
    vi.setSystemTime(Date.now() + wait * 1000);
    expect((await guess('203.0.113.250')).statusCode).toBe(401);
    expect(retryAfter(await login(ADMIN.password, '203.0.113.251'))).toBe(900);
    // A day after it began, the count starts afresh.
    vi.setSystemTime(Date.now() + 24 * 60 * 60 * 1000);
    expect((await guess('203.0.113.252')).statusCode).toBe(401);
    expect((await login(ADMIN.password, '203.0.113.253')).statusCode).toBe(200);
  }, 90_000);

  it('counts a wrong current password in a password change like a failed login from that address', async () => {
    const stolen = await t.login();
    const change = (current: string, remoteAddress: string, token: string) =>
      t.request({ method: 'PUT', url: '/api/auth/password', token, remoteAddress, payload: { current_password: current, new_password: 'a-new-admin-password-1' } });
    for (let i = 0; i < 10; i++) {
      const res = await change(`guess-${i}-password`, '203.0.113.7', stolen.access);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('wrong_password');
    }
    const held = await change(ADMIN.password, '203.0.113.7', stolen.access);
    expect(held.statusCode).toBe(429);
    expect(retryAfter(held)).toBeGreaterThan(0);
    // One count for guesses at this account's password from that address, by either route.
    expect((await login(ADMIN.password, '203.0.113.7')).statusCode).toBe(429);
    // The owner elsewhere signs in and changes the password.
    const owner = await login(ADMIN.password, OWNER_ADDRESS);
    expect(owner.statusCode).toBe(200);
    expect((await change(ADMIN.password, OWNER_ADDRESS, owner.json().access_token)).statusCode).toBe(200);
  });
});

describe('bearer token checks', () => {
  const sign = (key: string, algorithm: 'HS256' | 'HS512', payload: Record<string, unknown>): string =>
    createSigner({ key, algorithm })(payload) as string;

  it('refuses a missing, malformed or tampered token', async () => {
    const { access } = await t.login();
    expect((await t.request({ method: 'GET', url: '/api/auth/me' })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/auth/me', headers: { authorization: 'Basic abc' } })).statusCode).toBe(401);
    expect((await me('not.a.jwt')).statusCode).toBe(401);
    const [h, p, s] = access.split('.');
    const forged = Buffer.from(JSON.stringify({ ...decode(access), sub: 'someone-else' })).toString('base64url');
    expect((await me(`${h}.${forged}.${s}`)).statusCode).toBe(401);
    expect((await me(`${h}.${p}.${s}`)).statusCode).toBe(200);
  });

  it('refuses alg none and any algorithm other than the configured one', async () => {
    const { access } = await t.login();
    const claims = decode(access);
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${access.split('.')[1]}.`;
    expect((await me(none)).statusCode).toBe(401);
    const hs512 = sign(TEST_JWT_SECRET, 'HS512', claims);
    expect((await me(hs512)).statusCode).toBe(401);
    const otherKey = sign('another-secret-that-is-long-enough-to-sign', 'HS256', claims);
    expect((await me(otherKey)).statusCode).toBe(401);
  });

  it('refuses an expired access token', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { access } = await t.login();
    vi.setSystemTime(Date.now() + 899_000);
    expect((await me(access)).statusCode).toBe(200);
    vi.setSystemTime(Date.now() + 2_000);
    const res = await me(access);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toBe('Token expired');
  });

  it('refuses a refresh token as an access token and vice versa', async () => {
    const { access, refresh } = await t.login();
    const asAccess = await me(refresh);
    expect(asAccess.statusCode).toBe(401);
    const asRefresh = await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: access } });
    expect(asRefresh.statusCode).toBe(401);
  });

  it('refuses the token of a deleted user', async () => {
    const viewer = await t.userWithRole('viewer');
    const { access } = await t.login();
    expect((await t.request({ method: 'DELETE', url: `/api/auth/users/${viewer.id}`, token: access })).statusCode).toBe(204);
    expect((await me(viewer.access)).statusCode).toBe(401);
  });
});

describe('POST /api/auth/refresh', () => {
  it('rotates: the new pair works, the old refresh token is refused and ends that session, and only that one', async () => {
    // A second login session of the same user (another device), begun before the reuse.
    const otherDevice = await t.login();
    const first = await t.login();
    const res = await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: first.refresh } });
    expect(res.statusCode).toBe(200);
    const second = res.json();
    expect(second.refresh_token).not.toBe(first.refresh);
    expect((await me(second.access_token)).statusCode).toBe(200);

    const reuse = await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: first.refresh } });
    expect(reuse.statusCode).toBe(401);
    // Reuse means a copy leaked: the whole session, the newest tokens included, is over.
    expect((await me(second.access_token)).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: second.refresh_token } })).statusCode).toBe(401);
    expect((await me(first.access)).statusCode).toBe(401);
    // The other session of the same user is untouched: its access token works and its refresh token still rotates.
    expect((await me(otherDevice.access)).statusCode).toBe(200);
    const otherRefreshed = await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: otherDevice.refresh } });
    expect(otherRefreshed.statusCode).toBe(200);
    expect((await me(otherRefreshed.json().access_token)).statusCode).toBe(200);
  });

  it('refuses an expired refresh token', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { refresh } = await t.login();
    vi.setSystemTime(Date.now() + 604_801_000);
    expect((await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: refresh } })).statusCode).toBe(401);
  });

  it('validates its body', async () => {
    const res = await t.request({ method: 'POST', url: '/api/auth/refresh', payload: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.field).toBe('body.refresh_token');
  });
});

describe('the caller’s own account', () => {
  it('PUT /api/auth/me/email sets the email; a bad one changes nothing', async () => {
    const { access } = await t.login();
    const ok = await t.request({ method: 'PUT', url: '/api/auth/me/email', token: access, payload: { email: 'root@example.test' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().email).toBe('root@example.test');
    const before = await snapshot(t.app, 'users');
    const bad = await t.request({ method: 'PUT', url: '/api/auth/me/email', token: access, payload: { email: 'not-an-email' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.field).toBe('body.email');
    expect(await snapshot(t.app, 'users')).toEqual(before);
    expect((await t.request({ method: 'PUT', url: '/api/auth/me/email', payload: { email: 'a@b.test' } })).statusCode).toBe(401);
  });

  it('GET /api/auth/me answers from the identity cache yet shows every change at once', async () => {
    const user = await t.userWithRole('viewer');
    const { access: admin } = await t.login();
    const me = async () => (await t.request({ method: 'GET', url: '/api/auth/me', token: user.access })).json();
    const first = await me();
    expect(first).toMatchObject({ id: user.id, role: 'viewer', totp_enabled: false });
    expect(await me()).toEqual(first);
    // Changed by an admin (another session), then by the user: no second-long stale window.
    const promoted = await t.request({ method: 'PUT', url: `/api/auth/users/${user.id}`, token: admin, payload: { role: 'editor', email: 'new@example.test' } });
    expect(promoted.statusCode).toBe(200);
    expect(await me()).toMatchObject({ role: 'editor', email: 'new@example.test', updated_at: promoted.json().updated_at });
    await t.request({ method: 'PUT', url: '/api/auth/me/email', token: user.access, payload: { email: 'mine@example.test' } });
    expect((await me()).email).toBe('mine@example.test');
    expect((await t.request({ method: 'DELETE', url: `/api/auth/users/${user.id}`, token: admin })).statusCode).toBe(204);
    expect((await t.request({ method: 'GET', url: '/api/auth/me', token: user.access })).statusCode).toBe(401);
  });

  it('PUT /api/auth/password needs the current password and ends the other sessions', async () => {
    const other = await t.login();
    const mine = await t.login();
    const before = await snapshot(t.app, 'users');
    const wrong = await t.request({ method: 'PUT', url: '/api/auth/password', token: mine.access, payload: { current_password: 'nope-nope-nope', new_password: 'a-brand-new-password' } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toMatchObject({ code: 'wrong_password', field: 'body.current_password' });
    const weak = await t.request({ method: 'PUT', url: '/api/auth/password', token: mine.access, payload: { current_password: ADMIN.password, new_password: 'short' } });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().error).toMatchObject({ code: 'weak_password', field: 'body.new_password' });
    expect(await snapshot(t.app, 'users')).toEqual(before);

    const ok = await t.request({ method: 'PUT', url: '/api/auth/password', token: mine.access, payload: { current_password: ADMIN.password, new_password: 'a-brand-new-password' } });
    expect(ok.statusCode).toBe(200);
    expect((await me(ok.json().access_token)).statusCode).toBe(200);
    expect((await me(other.access)).statusCode).toBe(401);
    expect((await me(mine.access)).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api/auth/login', payload: ADMIN })).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: 'a-brand-new-password' } })).statusCode).toBe(200);
  });
});

describe('default admin', () => {
  it('warns loudly while the documented default password is in use', async () => {
    expect(t.logs()).toContain('still uses the documented default password');
    const { access } = await t.login();
    await t.request({ method: 'PUT', url: '/api/auth/password', token: access, payload: { current_password: ADMIN.password, new_password: 'a-brand-new-password' } });
    const restarted = await t.restart();
    t = restarted;
    expect(restarted.logs()).not.toContain('still uses the documented default password');
    expect((await restarted.app.users.list(10, 0)).total).toBe(1);
  });

  it('is created once, from DEFAULT_ADMIN_*', async () => {
    const custom = await startApp({ DEFAULT_ADMIN_USER: 'root', DEFAULT_ADMIN_PASSWORD: 'a-custom-admin-password', DEFAULT_ADMIN_EMAIL: 'root@example.test' });
    const { access } = await custom.login('root', 'a-custom-admin-password');
    expect((await custom.request({ method: 'GET', url: '/api/auth/me', token: access })).json()).toMatchObject({ role: 'admin', email: 'root@example.test' });
    expect(custom.logs()).not.toContain('still uses the documented default password');
    await custom.close();
  });
});
