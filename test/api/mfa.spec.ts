import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { generate } from 'otplib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateLicenseKeyPair, issueLicense } from '../../plugins/license/license-key.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

const DAY = 24 * 60 * 60 * 1000;
const signer = generateLicenseKeyPair();
const env = { LICENSE_PUBLIC_KEYS: signer.publicKeyBase64 };
/** One second into a 30 s step, so "now" and its neighbours are unambiguous. */
const T0 = Date.UTC(2031, 0, 1, 0, 0, 1);

let t: TestApp;
let admin: string;

const license = (tier: 'PRO' | 'ENTERPRISE') =>
  issueLicense(signer.privateKeyPem, {
    id: randomUUID(), licensee: 'Acme', tier, issued_at: new Date(Date.now() - DAY).toISOString(), expires_at: new Date(Date.now() + 365 * DAY).toISOString(),
    ...(tier === 'ENTERPRISE' ? { limits: { documents: 10, file_size_bytes: 10, storage_bytes: 10 } } : {}),
  });
const applyLicense = async (tier: 'PRO' | 'ENTERPRISE') => {
  const res = await t.request({ method: 'POST', url: '/api/license', token: admin, payload: { license_key: license(tier) } });
  expect(res.statusCode).toBe(200);
};
const advance = (seconds: number) => vi.setSystemTime(Date.now() + seconds * 1000);
/** The code an authenticator shows now (or `offset` seconds away). */
const code = (secret: string, offset = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset });
const post = (url: string, payload: unknown, token?: string, remoteAddress?: string) =>
  t.request({ method: 'POST', url, payload: payload as object, token, ...(remoteAddress ? { remoteAddress } : {}) });
const enroll = (token: string) => post('/api/auth/totp/enroll', undefined, token);
const confirm = (token: string, totp_code: unknown) => post('/api/auth/totp/enroll/confirm', { totp_code }, token);
const disable = (token: string, totp_code: unknown) => post('/api/auth/totp/disable', { totp_code }, token);
const me = async (token: string) => (await t.request({ method: 'GET', url: '/api/auth/me', token })).json();
const passwordLogin = (username: string, password: string) => post('/api/auth/login', { username, password });
const mfaLogin = (mfa_token: unknown, totp_code: unknown, remoteAddress?: string) => post('/api/auth/totp/mfa-login', { mfa_token, totp_code }, undefined, remoteAddress);
const totpRow = (userId: string) => t.app.db.selectFrom('totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
const tokenRow = (mfaToken: string) =>
  t.app.db.selectFrom('mfa_tokens').selectAll().where('id', '=', createHash('sha256').update(mfaToken).digest('hex')).executeTakeFirstOrThrow();

interface Enrolled { id: string; username: string; password: string; access: string; secret: string; recoveryCodes: string[] }

/** A viewer with TOTP enrolled, time moved on one step so the confirmation code is behind us. */
async function enrolledUser(username = `mfa-${randomUUID().slice(0, 8)}`): Promise<Enrolled> {
  const user = await t.userWithRole('viewer', username);
  const { secret } = (await enroll(user.access)).json();
  const confirmed = await confirm(user.access, await code(secret));
  expect(confirmed.statusCode).toBe(200);
  advance(30);
  return { ...user, username, password: `${username}-password-long`, secret, recoveryCodes: confirmed.json().recovery_codes };
}
/** Step one of the login of an enrolled user: the mfa_token. */
async function challenge(user: Enrolled): Promise<string> {
  const res = await passwordLogin(user.username, user.password);
  expect(res.statusCode).toBe(200);
  return res.json().mfa_token;
}

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
  t = await startApp(env);
  admin = (await t.login()).access;
  await applyLicense('ENTERPRISE');
});
afterEach(async () => {
  vi.useRealTimers();
  await t.close();
});

describe('TOTP on an account', () => {
  it('not enrolled → pending: enroll returns an SVG QR code and the base32 secret; login is unchanged while pending', async () => {
    const user = await t.userWithRole('viewer', 'pending-pat');
    const res = await enroll(user.access);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(['qr_code', 'secret']);
    expect(res.json().qr_code).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    expect(res.json().secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect((await totpRow(user.id))).toMatchObject({ state: 'pending', enrolled_at: null });
    expect((await me(user.access)).totp_enabled).toBe(false);
    expect((await passwordLogin('pending-pat', 'pending-pat-password-long')).json()).toHaveProperty('access_token');
  });

  it('enrolling again while pending replaces the secret: a code of the old one no longer confirms', async () => {
    const user = await t.userWithRole('viewer');
    const first = (await enroll(user.access)).json().secret;
    const second = (await enroll(user.access)).json().secret;
    expect(second).not.toBe(first);
    const stale = await confirm(user.access, await code(first));
    expect(stale.statusCode).toBe(400);
    expect(stale.json().error).toMatchObject({ code: 'invalid_totp_code', field: 'body.totp_code' });
    expect((await confirm(user.access, await code(second))).statusCode).toBe(200);
  });

  it('pending → enrolled: the first valid code returns 10 distinct recovery codes and sets totp_enabled', async () => {
    const user = await enrolledUser('enrolled-eve');
    expect(user.recoveryCodes).toHaveLength(10);
    expect(new Set(user.recoveryCodes).size).toBe(10);
    for (const recovery of user.recoveryCodes) expect(recovery).toMatch(/^[A-Z0-9]{5}-[A-Z0-9]{5}$/);
    expect(await totpRow(user.id)).toMatchObject({ state: 'enrolled', enrolled_at: expect.any(Number) });
    expect((await me(user.access)).totp_enabled).toBe(true);
    const list = await t.request({ method: 'GET', url: '/api/auth/users', token: admin });
    expect(list.json().users.find((u: { id: string }) => u.id === user.id).totp_enabled).toBe(true);
    expect(list.json().users.find((u: { username: string }) => u.username === 'admin').totp_enabled).toBe(false);
  });

  it('a wrong code leaves the enrolment pending (400); confirm with nothing pending or when enrolled is a 409', async () => {
    const user = await t.userWithRole('viewer');
    expect((await confirm(user.access, '123456')).json().error.code).toBe('totp_not_pending');
    const { secret } = (await enroll(user.access)).json();
    const before = await snapshot(t.app, 'totp');
    const wrong = await confirm(user.access, (await code(secret)) === '000000' ? '111111' : '000000');
    expect(wrong.statusCode).toBe(400);
    expect(await snapshot(t.app, 'totp')).toEqual(before);
    expect(await snapshot(t.app, 'recovery_codes')).toEqual([]);
    expect((await confirm(user.access, await code(secret))).statusCode).toBe(200);
    advance(30);
    const again = await confirm(user.access, await code(secret));
    expect(again.statusCode).toBe(409);
    const reEnroll = await enroll(user.access);
    expect(reEnroll.statusCode).toBe(409);
    expect(reEnroll.json().error.code).toBe('totp_already_enrolled');
  });

  it('enrolled → not enrolled: disable with a valid code deletes the secret and recovery codes; login gives tokens again', async () => {
    const user = await enrolledUser();
    expect((await disable(user.access, user.recoveryCodes[0])).statusCode).toBe(400); // a recovery code does not disable
    const wrong = await disable(user.access, (await code(user.secret)) === '000000' ? '111111' : '000000');
    expect(wrong.json().error).toMatchObject({ code: 'invalid_totp_code', field: 'body.totp_code' });
    const res = await disable(user.access, await code(user.secret));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: user.id, totp_enabled: false });
    expect(await totpRow(user.id)).toBeUndefined();
    expect(await snapshot(t.app, 'recovery_codes')).toEqual([]);
    expect((await passwordLogin(user.username, user.password)).json()).toHaveProperty('access_token');
    expect((await disable(user.access, await code(user.secret, 30))).json().error.code).toBe('totp_not_enrolled');
  });

  it("disable acts only on the caller's own account", async () => {
    const alice = await enrolledUser();
    const mallory = await t.userWithRole('admin');
    const res = await disable(mallory.access, await code(alice.secret));
    expect(res.statusCode).toBe(409);
    expect((await totpRow(alice.id))?.state).toBe('enrolled');
  });

  it("an admin clears any user's TOTP through the user management API", async () => {
    const user = await enrolledUser();
    const viewer = await t.userWithRole('viewer');
    const url = `/api/auth/users/${user.id}/totp`;
    expect((await t.request({ method: 'DELETE', url, token: viewer.access })).json().error.code).toBe('role_required');
    expect((await t.request({ method: 'DELETE', url: '/api/auth/users/nobody/totp', token: admin })).statusCode).toBe(404);
    expect((await t.request({ method: 'DELETE', url, token: admin })).statusCode).toBe(204);
    expect((await t.request({ method: 'DELETE', url, token: admin })).statusCode).toBe(204);
    expect(await snapshot(t.app, 'recovery_codes')).toEqual([]);
    expect((await t.request({ method: 'GET', url: `/api/auth/users/${user.id}`, token: admin })).json().totp_enabled).toBe(false);
    expect((await passwordLogin(user.username, user.password)).json()).toHaveProperty('access_token');
  });
});

describe('TOTP codes', () => {
  it('are accepted once: a replay inside the window is refused, the next step is accepted', async () => {
    const user = await enrolledUser();
    const now = await code(user.secret);
    expect((await mfaLogin(await challenge(user), now)).statusCode).toBe(200);
    const replay = await mfaLogin(await challenge(user), now);
    expect(replay.statusCode).toBe(401);
    expect(replay.json().error.code).toBe('invalid_mfa_code');
    expect((await disable(user.access, now)).statusCode).toBe(400); // nor can the spent code disable TOTP
    advance(30);
    expect((await mfaLogin(await challenge(user), await code(user.secret))).statusCode).toBe(200);
  });

  it('allow one step of clock drift either side, not two', async () => {
    const user = await enrolledUser();
    advance(90);
    expect((await mfaLogin(await challenge(user), await code(user.secret, -60))).statusCode).toBe(401);
    expect((await mfaLogin(await challenge(user), await code(user.secret, -30))).statusCode).toBe(200);
    expect((await mfaLogin(await challenge(user), await code(user.secret, 60))).statusCode).toBe(401);
    expect((await mfaLogin(await challenge(user), await code(user.secret, 30))).statusCode).toBe(200);
  });
});

describe('MFA token', () => {
  it('(none) → valid: login of an enrolled account returns only status and mfa_token, never tokens', async () => {
    const user = await enrolledUser();
    const sessions = await snapshot(t.app, 'auth_sessions');
    const res = await passwordLogin(user.username, user.password);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(['mfa_token', 'status']);
    expect(res.json().status).toBe('mfa_required');
    expect(await snapshot(t.app, 'auth_sessions')).toEqual(sessions);
    expect(await tokenRow(res.json().mfa_token)).toMatchObject({ user_id: user.id, attempts: 0, state: 'valid' });
    expect(JSON.stringify(await snapshot(t.app, 'mfa_tokens'))).not.toContain(res.json().mfa_token);
  });

  it('valid → consumed on a right TOTP code: a token pair, and the mfa_token is spent', async () => {
    const user = await enrolledUser();
    const mfaToken = await challenge(user);
    const res = await mfaLogin(mfaToken, await code(user.secret));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ token_type: 'bearer', expires_in: 900 });
    expect((await me(res.json().access_token)).username).toBe(user.username);
    expect((await tokenRow(mfaToken)).state).toBe('consumed');
    advance(30);
    const again = await mfaLogin(mfaToken, await code(user.secret));
    expect(again.statusCode).toBe(401);
    expect(again.json().error).toMatchObject({ code: 'mfa_token_invalid', message: expect.stringContaining('log in again') });
  });

  it('valid → consumed on an unused recovery code, which is invalidated at once', async () => {
    const user = await enrolledUser();
    const [first, second] = user.recoveryCodes;
    expect((await mfaLogin(await challenge(user), first.toLowerCase().replace('-', ''))).statusCode).toBe(200);
    const used = await t.app.db.selectFrom('recovery_codes').select('used_at').where('used_at', 'is not', null).execute();
    expect(used).toHaveLength(1);
    const reused = await mfaLogin(await challenge(user), first);
    expect(reused.statusCode).toBe(401);
    expect(reused.json().error.code).toBe('invalid_mfa_code');
    expect((await mfaLogin(await challenge(user), second)).statusCode).toBe(200);
  });

  it('valid → valid on a wrong code, the attempt counter increases; the 5th failure invalidates it for good', async () => {
    const user = await enrolledUser();
    const mfaToken = await challenge(user);
    for (let attempt = 1; attempt <= 4; attempt++) {
      const res = await mfaLogin(mfaToken, attempt % 2 ? '000000' : 'AAAAA-BBBBB');
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toMatchObject({ code: 'invalid_mfa_code', message: expect.stringContaining(`${5 - attempt} attempt`) });
      expect(await tokenRow(mfaToken)).toMatchObject({ attempts: attempt, state: 'valid' });
    }
    const fifth = await mfaLogin(mfaToken, '000000');
    expect(fifth.json().error).toMatchObject({ code: 'mfa_token_locked', message: expect.stringContaining('log in again') });
    expect(await tokenRow(mfaToken)).toMatchObject({ attempts: 5, state: 'invalidated' });
    const right = await mfaLogin(mfaToken, await code(user.secret));
    expect(right.statusCode).toBe(401);
    expect(right.json().error.code).toBe('mfa_token_locked');
    expect((await mfaLogin(await challenge(user), await code(user.secret))).statusCode).toBe(200);
  });

  it('valid → expired after 5 minutes', async () => {
    const user = await enrolledUser();
    const early = await challenge(user);
    const late = await challenge(user);
    advance(4 * 60 + 50);
    expect((await mfaLogin(early, await code(user.secret))).statusCode).toBe(200);
    advance(11);
    const res = await mfaLogin(late, await code(user.secret));
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toMatchObject({ code: 'mfa_token_expired', message: expect.stringContaining('log in again') });
  });

  it('refuses an unknown token with 401', async () => {
    const res = await mfaLogin('made-up-token', '123456');
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('mfa_token_invalid');
  });

  it('keeps enrolment, attempts and spent tokens across a restart', async () => {
    const user = await enrolledUser();
    const spent = await challenge(user);
    expect((await mfaLogin(spent, await code(user.secret))).statusCode).toBe(200);
    const mfaToken = await challenge(user);
    await mfaLogin(mfaToken, '000000');
    await mfaLogin(mfaToken, '000000');
    t = await t.restart();
    advance(30);
    expect((await mfaLogin(spent, await code(user.secret))).json().error.code).toBe('mfa_token_invalid');
    expect((await mfaLogin(mfaToken, '000000')).json().error.message).toContain('2 attempts left');
    expect((await mfaLogin(mfaToken, '000000')).json().error.message).toContain('1 attempt left');
    expect((await mfaLogin(mfaToken, '000000')).json().error.code).toBe('mfa_token_locked');
    expect((await passwordLogin(user.username, user.password)).json().status).toBe('mfa_required');
  });

  it('throttles wrong codes per account (not reset by a right password) and per client address', async () => {
    const user = await enrolledUser();
    for (let i = 0; i < 10; i++) await mfaLogin(await challenge(user), '000000', `10.0.0.${i}`);
    const blocked = await mfaLogin(await challenge(user), await code(user.secret), '10.0.1.1');
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    for (let i = 0; i < 50; i++) await mfaLogin(`guess-${i}`, '123456', '10.3.3.3');
    expect((await mfaLogin('guess-51', '123456', '10.3.3.3')).statusCode).toBe(429);
  });
});

describe('ENTERPRISE gate', () => {
  it('enroll and confirm answer 403 tier_required on FREE and PRO, and change nothing', async () => {
    await t.close();
    t = await startApp(env);
    admin = (await t.login()).access;
    const user = await t.userWithRole('viewer');
    for (const tier of ['FREE', 'PRO'] as const) {
      if (tier === 'PRO') await applyLicense('PRO');
      for (const res of [await enroll(user.access), await confirm(user.access, '123456')]) {
        expect(res.statusCode).toBe(403);
        expect(res.json().error).toMatchObject({ code: 'tier_required', message: expect.stringContaining('ENTERPRISE') });
      }
    }
    expect(await snapshot(t.app, 'totp')).toEqual([]);
  });

  it('a licence that drops below ENTERPRISE still asks enrolled users for the second factor; they can still get out', async () => {
    const user = await enrolledUser();
    const other = await enrolledUser();
    await applyLicense('PRO');
    expect((await enroll(user.access)).statusCode).toBe(403);
    expect((await passwordLogin(user.username, user.password)).json()).toEqual({ status: 'mfa_required', mfa_token: expect.any(String) });
    expect((await mfaLogin(await challenge(user), await code(user.secret))).statusCode).toBe(200);
    advance(30);
    expect((await disable(user.access, await code(user.secret))).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/auth/users/${other.id}/totp`, token: admin })).statusCode).toBe(204);
  });
});

describe('bad input is a 400 that changes nothing', () => {
  it('confirm and disable refuse a missing, short, long, numeric or lettered code and unknown fields', async () => {
    const user = await enrolledUser();
    const before = [await snapshot(t.app, 'totp'), await snapshot(t.app, 'recovery_codes')];
    const bodies: [unknown, string][] = [
      [{}, 'body.totp_code'], [{ totp_code: '12345' }, 'body.totp_code'], [{ totp_code: '1234567' }, 'body.totp_code'],
      [{ totp_code: 123456 }, 'body.totp_code'], [{ totp_code: 'abcdef' }, 'body.totp_code'], [{ totp_code: '123456', user_id: 'x' }, 'body.user_id'],
    ];
    for (const url of ['/api/auth/totp/enroll/confirm', '/api/auth/totp/disable']) {
      for (const [payload, field] of bodies) {
        const res = await post(url, payload, user.access);
        expect([res.statusCode, res.json().error], `${url} ${JSON.stringify(payload)}`).toEqual([400, expect.objectContaining({ code: 'validation_failed', field })]);
      }
    }
    expect([await snapshot(t.app, 'totp'), await snapshot(t.app, 'recovery_codes')]).toEqual(before);
  });

  it('mfa-login refuses a missing or mistyped token or code without spending an attempt', async () => {
    const user = await enrolledUser();
    const mfa_token = await challenge(user);
    const before = await snapshot(t.app, 'mfa_tokens');
    const bodies: [unknown, string][] = [
      [{ mfa_token }, 'body.totp_code'], [{ totp_code: '123456' }, 'body.mfa_token'], [{ mfa_token, totp_code: 123456 }, 'body.totp_code'],
      [{ mfa_token, totp_code: '12' }, 'body.totp_code'], [{ mfa_token, totp_code: 'not-a-recovery-code' }, 'body.totp_code'],
      [{ mfa_token: 5, totp_code: '123456' }, 'body.mfa_token'], [{ mfa_token, totp_code: '123456', remember: true }, 'body.remember'],
    ];
    for (const [payload, field] of bodies) {
      const res = await post('/api/auth/totp/mfa-login', payload);
      expect([res.statusCode, res.json().error], JSON.stringify(payload)).toEqual([400, expect.objectContaining({ code: 'validation_failed', field })]);
    }
    expect(await snapshot(t.app, 'mfa_tokens')).toEqual(before);
    expect((await mfaLogin(mfa_token, await code(user.secret))).statusCode).toBe(200);
  });
});

describe('secrets', () => {
  it('never shows the TOTP secret, recovery codes or mfa_token after enrolment, in any response, log line or raw row', async () => {
    const user = await enrolledUser();
    const mfaToken = await challenge(user);
    const row = await totpRow(user.id);
    const later = [
      await mfaLogin(mfaToken, user.recoveryCodes[0]),
      await passwordLogin(user.username, user.password),
      await t.request({ method: 'GET', url: '/api/auth/me', token: user.access }),
      await t.request({ method: 'GET', url: '/api/auth/users', token: admin }),
      await t.request({ method: 'GET', url: `/api/auth/users/${user.id}`, token: admin }),
      await enroll(user.access),
      await disable(user.access, await code(user.secret)),
    ].map((res) => res.body);
    const stored = JSON.stringify([row, await snapshot(t.app, 'recovery_codes'), await snapshot(t.app, 'mfa_tokens')]);
    const database = readFileSync(t.app.config.databaseFile).toString('latin1') + readFileSync(`${t.app.config.databaseFile}-wal`).toString('latin1');
    for (const secret of [user.secret, ...user.recoveryCodes, mfaToken]) {
      for (const body of later) expect(body).not.toContain(secret);
      expect(t.logs()).not.toContain(secret);
      expect(stored).not.toContain(secret);
      expect(database).not.toContain(secret);
    }
    expect(row?.secret_sealed).toMatch(/^v1\./);
    expect(t.app.secretBox.open(row!.secret_sealed, `totp:${user.id}`)).toBe(user.secret);
    expect(() => t.app.secretBox.open(row!.secret_sealed, 'totp:someone-else')).toThrow();
  });
});
