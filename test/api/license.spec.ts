import { execFile } from 'node:child_process';
import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PLAN_LIMITS } from '../../core/tiers.js';
import { generateLicenseKeyPair, issueLicense, type LicensePayload } from '../../plugins/license/license-key.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

const DAY = 24 * 60 * 60 * 1000;
const signer = generateLicenseKeyPair();
const stranger = generateLicenseKeyPair();
const ENTERPRISE_LIMITS = { documents: 123_456, file_size_bytes: 3_000_000_000, storage_bytes: 50_000_000_000_000 };

const payload = (overrides: Partial<LicensePayload> = {}): LicensePayload => ({
  id: randomUUID(),
  licensee: 'Acme Ltd',
  tier: 'PRO',
  issued_at: new Date(Date.now() - DAY).toISOString(),
  expires_at: new Date(Date.now() + 365 * DAY).toISOString(),
  ...overrides,
});
const key = (overrides: Partial<LicensePayload> = {}, privateKeyPem = signer.privateKeyPem) => issueLicense(privateKeyPem, payload(overrides));
/** Signs anything, bypassing issueLicense's own checks, to prove the service checks too. */
const signRaw = (body: object) => {
  const bytes = Buffer.from(JSON.stringify(body));
  return `HEARTH-LICENSE-1.${bytes.toString('base64url')}.${sign(null, bytes, createPrivateKey(signer.privateKeyPem)).toString('base64url')}`;
};
const enterpriseKey = () => key({ tier: 'ENTERPRISE', licensee: 'Big Corp', limits: ENTERPRISE_LIMITS });

let t: TestApp;
let admin: string;
const env = { LICENSE_PUBLIC_KEYS: signer.publicKeyBase64 };
const getLicense = (token = admin) => t.request({ method: 'GET', url: '/api/license', token });
const apply = (licenseKey: string, token = admin) => t.request({ method: 'POST', url: '/api/license', token, payload: { license_key: licenseKey } });

beforeEach(async () => {
  t = await startApp(env);
  admin = (await t.login()).access;
});
afterEach(async () => {
  vi.useRealTimers();
  await t.close();
  rmSync(t.dataDir, { recursive: true, force: true }); // restarted apps do not own their folder
});

describe('GET /api/license', () => {
  it('shows FREE with plan limits and zero usage when no licence was applied', async () => {
    const viewer = await t.userWithRole('viewer');
    const res = await getLicense(viewer.access);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      tier: 'FREE', licensee: null, licence_id: null, expires_at: null, expired: false,
      limits: PLAN_LIMITS.FREE, usage: { documents: 0, storage_bytes: 0 },
    });
  });

  it('sums every registered usage source', async () => {
    t.app.usage.register(async () => ({ documents: 3, storage_bytes: 1000 }));
    t.app.usage.register(async () => ({ documents: 2, storage_bytes: 24 }));
    expect((await getLicense()).json().usage).toEqual({ documents: 5, storage_bytes: 1024 });
  });

  it('answers 401 without a token, on GET and POST', async () => {
    expect((await t.request({ method: 'GET', url: '/api/license' })).statusCode).toBe(401);
    const post = await t.request({ method: 'POST', url: '/api/license', payload: { license_key: key() } });
    expect(post.statusCode).toBe(401);
    expect(await snapshot(t.app, 'licences')).toEqual([]);
  });
});

describe('POST /api/license', () => {
  it('applies a PRO licence at once, with the PRO plan limits whatever the payload says', async () => {
    const pro = payload({ limits: ENTERPRISE_LIMITS });
    const res = await apply(issueLicense(signer.privateKeyPem, pro));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ tier: 'PRO', licensee: 'Acme Ltd', licence_id: pro.id, expires_at: pro.expires_at, expired: false, limits: PLAN_LIMITS.PRO });
    expect((await getLicense()).json().tier).toBe('PRO');
    expect(await snapshot(t.app, 'licences')).toHaveLength(1);
  });

  it('applies ENTERPRISE with the limits of the licence, and a later key replaces it', async () => {
    const res = await apply(enterpriseKey());
    expect(res.json()).toMatchObject({ tier: 'ENTERPRISE', licensee: 'Big Corp', limits: ENTERPRISE_LIMITS });
    const replaced = await apply(key({ licensee: 'Acme Renewed' }));
    expect(replaced.json()).toMatchObject({ tier: 'PRO', licensee: 'Acme Renewed', limits: PLAN_LIMITS.PRO });
    expect(await snapshot(t.app, 'licences')).toHaveLength(2);
  });

  it('logs license.apply with licensee and tier, never the key', async () => {
    const licenseKey = key();
    await apply(licenseKey);
    const line = t.logs().split('\n').find((l) => l.includes('"license.apply"'));
    expect(JSON.parse(line!)).toMatchObject({ event: 'license.apply', licensee: 'Acme Ltd', tier: 'PRO' });
    expect(t.logs()).not.toContain(licenseKey.split('.')[2]);
  });

  it('tolerates whitespace and line breaks pasted from a licence file', async () => {
    const wrapped = `\n  ${key().match(/.{1,64}/g)!.join('\n  ')}\n\n`;
    expect((await apply(wrapped)).json().tier).toBe('PRO');
  });

  it('refuses a viewer with 403 and changes nothing', async () => {
    const viewer = await t.userWithRole('viewer');
    const res = await apply(key(), viewer.access);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('role_required');
    expect(await snapshot(t.app, 'licences')).toEqual([]);
  });

  describe('rejects a bad key with a 4xx and changes nothing', () => {
    const tamper = (licenseKey: string) => {
      const [prefix, body, signature] = licenseKey.split('.');
      const forged = { ...JSON.parse(Buffer.from(body, 'base64url').toString()), tier: 'ENTERPRISE', limits: ENTERPRISE_LIMITS };
      return [prefix, Buffer.from(JSON.stringify(forged)).toString('base64url'), signature].join('.');
    };
    const notJson = `HEARTH-LICENSE-1.${Buffer.from('{nope').toString('base64url')}.${Buffer.alloc(64).toString('base64url')}`;
    const cases: [string, () => string, number, string][] = [
      ['a tampered payload', () => tamper(key()), 422, 'license_signature_invalid'],
      ['a key from another signer', () => key({}, stranger.privateKeyPem), 422, 'license_signature_invalid'],
      ['an expired key', () => key({ issued_at: new Date(Date.now() - 10 * DAY).toISOString(), expires_at: new Date(Date.now() - DAY).toISOString() }), 422, 'license_expired'],
      ['random text', () => 'not a licence', 400, 'license_malformed'],
      ['an empty string', () => '', 400, 'license_malformed'],
      ['another prefix', () => key().replace('HEARTH-LICENSE-1', 'HEARTH-LICENSE-2'), 400, 'license_malformed'],
      ['a truncated signature', () => key().slice(0, -10), 400, 'license_malformed'],
      ['a payload that is not JSON', () => notJson, 400, 'license_malformed'],
      ['ENTERPRISE without limits', () => signRaw(payload({ tier: 'ENTERPRISE' })), 400, 'license_malformed'],
      ['an unknown tier', () => signRaw({ ...payload(), tier: 'PLATINUM' }), 400, 'license_malformed'],
    ];

    it.each(cases)('%s', async (_name, make, status, code) => {
      await apply(key({ licensee: 'Current Holder' }));
      const before = await snapshot(t.app, 'licences');
      const res = await apply(make());
      expect(res.statusCode).toBe(status);
      expect(res.json().error).toMatchObject({ code, field: 'body.license_key' });
      expect(await snapshot(t.app, 'licences')).toEqual(before);
      expect((await getLicense()).json()).toMatchObject({ tier: 'PRO', licensee: 'Current Holder' });
    });

    it('a body that breaks the schema', async () => {
      const tooLong = await apply('H'.repeat(16 * 1024 + 1));
      expect(tooLong.json().error).toMatchObject({ code: 'validation_failed', field: 'body.license_key' });
      const extra = await t.request({ method: 'POST', url: '/api/license', token: admin, payload: { license_key: key(), tier: 'ENTERPRISE' } });
      expect(extra.statusCode).toBe(400);
      expect(await snapshot(t.app, 'licences')).toEqual([]);
    });
  });

  it('answers 422 license_no_public_key, naming LICENSE_PUBLIC_KEYS, when none is configured', async () => {
    await t.close();
    t = await startApp();
    admin = (await t.login()).access;
    const res = await apply(key());
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('license_no_public_key');
    expect(res.json().error.message).toContain('LICENSE_PUBLIC_KEYS');
    expect(await snapshot(t.app, 'licences')).toEqual([]);
  });
});

describe('public keys and persistence', () => {
  it('survives a restart', async () => {
    await apply(enterpriseKey());
    t = await t.restart();
    admin = (await t.login()).access;
    expect((await getLicense()).json()).toMatchObject({ tier: 'ENTERPRISE', licensee: 'Big Corp', limits: ENTERPRISE_LIMITS });
  });

  it('ignores a stored licence whose signer is no longer configured, with a warning', async () => {
    await apply(enterpriseKey());
    await t.app.close();
    const rotated = await startApp({ LICENSE_PUBLIC_KEYS: stranger.publicKeyBase64 }, t.dataDir);
    try {
      const res = await rotated.request({ method: 'GET', url: '/api/license', token: (await rotated.login()).access });
      expect(res.json()).toMatchObject({ tier: 'FREE', licensee: null });
      expect(rotated.logs()).toContain('"license.ignored"');
    } finally {
      await rotated.app.close();
    }
    t = await startApp(env, t.dataDir);
  });

  it('accepts several keys, in base64 SPKI or PEM form', async () => {
    await t.close();
    t = await startApp({ LICENSE_PUBLIC_KEYS: `${stranger.publicKeyBase64},${signer.publicKeyPem}` });
    admin = (await t.login()).access;
    expect((await apply(key())).statusCode).toBe(200);
    expect((await apply(key({}, stranger.privateKeyPem))).statusCode).toBe(200);
  });

  it('refuses to boot with a public key that is not Ed25519', async () => {
    await expect(startApp({ LICENSE_PUBLIC_KEYS: 'bm90IGEga2V5' })).rejects.toThrow(/LICENSE_PUBLIC_KEYS/);
  });
});

describe('expiry', () => {
  it('falls back to FREE once the licence expires, and says so', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const license = payload({ tier: 'ENTERPRISE', limits: ENTERPRISE_LIMITS, expires_at: new Date(Date.now() + 30 * DAY).toISOString() });
    await apply(issueLicense(signer.privateKeyPem, license));
    vi.setSystemTime(Date.now() + 31 * DAY);
    admin = (await t.login()).access; // the earlier token expired too
    const expected = { tier: 'FREE', licensee: 'Acme Ltd', licence_id: license.id, expires_at: license.expires_at, expired: true, limits: PLAN_LIMITS.FREE };
    expect((await getLicense()).json()).toMatchObject(expected);
    t = await t.restart();
    admin = (await t.login()).access;
    expect((await getLicense()).json()).toMatchObject(expected);
  });
});

describe('ENTERPRISE-gated behaviour', () => {
  const patch = () => t.request({ method: 'PATCH', url: '/api/admin/auth/settings', token: admin, payload: { access_token_seconds_admin: 600 } });

  it('admin token lifetime overrides answer 403 tier_required on FREE and work on ENTERPRISE', async () => {
    const free = await patch();
    expect(free.statusCode).toBe(403);
    expect(free.json().error.code).toBe('tier_required');
    await apply(enterpriseKey());
    const enterprise = await patch();
    expect(enterprise.statusCode).toBe(200);
    expect(enterprise.json().access_token_seconds_admin).toBe(600);
  });
});

describe('scripts/issue-license.ts', () => {
  const run = promisify(execFile);
  const tsx = path.resolve('node_modules/.bin/tsx');

  it('generates a key pair and issues a key the service accepts', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-issuer-'));
    try {
      const generated = await run(tsx, ['scripts/issue-license.ts', '--generate-keypair', path.join(dir, 'keys')]);
      const publicKey = generated.stdout.match(/^LICENSE_PUBLIC_KEYS=(\S+)$/m)![1];
      expect(statSync(path.join(dir, 'keys', 'private.pem')).mode & 0o777).toBe(0o600);
      await run(tsx, [
        'scripts/issue-license.ts', '--private-key', path.join(dir, 'keys', 'private.pem'), '--licensee', 'CLI Corp', '--tier', 'ENTERPRISE',
        '--days', '30', '--documents', '10', '--file-size-bytes', '2048', '--storage-bytes', '4096', '--out', path.join(dir, 'licence.txt'),
      ]);
      await t.close();
      t = await startApp({ LICENSE_PUBLIC_KEYS: publicKey });
      admin = (await t.login()).access;
      const res = await apply(readFileSync(path.join(dir, 'licence.txt'), 'utf8'));
      expect(res.json()).toMatchObject({ tier: 'ENTERPRISE', licensee: 'CLI Corp', limits: { documents: 10, file_size_bytes: 2048, storage_bytes: 4096 } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
