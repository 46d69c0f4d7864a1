import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { SmtpEmailSender } from '../../plugins/password-reset/mailer.js';
import { decodeQuotedPrintable, linkIn, type MailSink, SMTP_PASS, SMTP_USER, smtpEnv as sinkEnv, startMailSink } from '../fixtures/mail-sink.js';
import { cleanupServices, ensureBuilt, exitWithin, listening, startService, tempDir, waitFor } from '../fixtures/service-process.js';
import { TEST_JWT_SECRET, TEST_MFA_KEY, snapshot, startApp, type TestApp } from '../helpers.js';

const PUBLIC_URL = 'https://hearth.example.test';
const smtpEnv = (sink: MailSink, extra: Record<string, string> = {}) => sinkEnv(sink, { PUBLIC_URL, ...extra });

const FORGOT_BODY = { message: 'If a local account uses this address, a password reset link has been sent to it.' };
const INVALID = 'reset_token_invalid';

let t: TestApp;
let sink: MailSink;
const responseBodies: string[] = [];

const forgot = async (email: unknown, remoteAddress?: string) => {
  const res = await t.request({ method: 'POST', url: '/api/auth/forgot-password', payload: { email }, ...(remoteAddress ? { remoteAddress } : {}) });
  responseBodies.push(res.body);
  return res;
};
const reset = async (token: unknown, newPassword: unknown = 'a-brand-new-password') => {
  const res = await t.request({ method: 'POST', url: '/api/auth/reset-password', payload: { token, new_password: newPassword } });
  responseBodies.push(res.body);
  return res;
};
const me = (token: string) => t.request({ method: 'GET', url: '/api/auth/me', token });
const resetRows = () => t.app.db.selectFrom('password_reset_tokens').selectAll().orderBy('created_at').execute();
const state = async () => ({ users: await snapshot(t.app, 'users'), sessions: await snapshot(t.app, 'auth_sessions'), tokens: await resetRows() });

/** Asks for a link for `email` and returns the token from the mail that arrived. */
async function mailedToken(email: string, headers: Record<string, string> = {}): Promise<{ link: string; token: string; to: string[] }> {
  const before = sink.mails.length;
  const res = await t.request({ method: 'POST', url: '/api/auth/forgot-password', payload: { email }, headers });
  responseBodies.push(res.body);
  expect(res.statusCode).toBe(200);
  await t.app.passwordReset.idle();
  expect(sink.mails).toHaveLength(before + 1);
  const mail = sink.mails[before];
  return { ...linkIn(decodeQuotedPrintable(mail.raw)), to: mail.to };
}

/** Each test of the calling block gets a fresh mail sink and an app that mails through it. */
function withMailingApp(): void {
  beforeEach(async () => {
    responseBodies.length = 0;
    sink = await startMailSink();
    t = await startApp(smtpEnv(sink));
  });
  afterEach(async () => {
    vi.useRealTimers();
    await t.close();
    await sink.close();
  });
}

describe('password reset over SMTP', () => {
  withMailingApp();

  it('mails a link that works once, ends existing sessions, and never shows the token', async () => {
    const alice = await t.userWithRole('viewer', 'alice');
    const { link, token, to } = await mailedToken('Alice@Example.test');
    expect(to).toEqual(['alice@example.test']);
    expect(link).toBe(`${PUBLIC_URL}/reset-password?token=${token}`);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    const text = decodeQuotedPrintable(sink.mails[0].raw);
    expect(text).toMatch(/^From: Hearth <hearth@example\.test>/m);
    expect(text).toContain('expires in 30 minutes');
    // Stored hashed only.
    const [row] = await resetRows();
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(row.expires_at - row.created_at).toBe(30 * 60_000);
    expect(JSON.stringify(await resetRows())).not.toContain(token);

    const done = await reset(token, 'alice-new-password-1');
    expect(done.statusCode).toBe(200);
    expect((await me(alice.access)).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: alice.refresh } })).statusCode).toBe(401);
    await expect(t.login('alice', 'alice-password-long')).rejects.toThrow(/401/);
    expect((await me((await t.login('alice', 'alice-new-password-1')).access)).statusCode).toBe(200);

    const again = await reset(token, 'alice-other-password-2');
    expect(again.statusCode).toBe(400);
    expect(again.json().error.code).toBe(INVALID);
    await t.login('alice', 'alice-new-password-1');

    for (const body of responseBodies) expect(body).not.toContain(token);
    expect(t.logs()).not.toContain(token);
    expect(t.logs()).not.toContain(SMTP_PASS);
  });

  it('refuses an expired token and changes nothing', async () => {
    await t.userWithRole('viewer', 'bea');
    vi.useFakeTimers({ toFake: ['Date'] });
    const { token } = await mailedToken('bea@example.test');
    vi.setSystemTime(Date.now() + 30 * 60_000 + 1);
    const before = await state();
    const res = await reset(token);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: INVALID, field: 'body.token' });
    expect(await state()).toEqual(before);
    await t.login('bea', 'bea-password-long');
  });

  it('accepts a token just inside its 30 minutes', async () => {
    await t.userWithRole('viewer', 'cleo');
    vi.useFakeTimers({ toFake: ['Date'] });
    const { token } = await mailedToken('cleo@example.test');
    vi.setSystemTime(Date.now() + 29 * 60_000);
    expect((await reset(token)).statusCode).toBe(200);
  });

  it('refuses unknown tokens with the same code and changes nothing', async () => {
    await t.userWithRole('viewer', 'dora');
    await mailedToken('dora@example.test');
    const before = await state();
    for (const token of [randomBytes(32).toString('base64url'), 'not-a-token', 'x'.repeat(512)]) {
      const res = await reset(token);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe(INVALID);
    }
    expect(await state()).toEqual(before);
  });

  it('a new link invalidates the earlier one', async () => {
    await t.userWithRole('viewer', 'edna');
    const first = await mailedToken('edna@example.test');
    const second = await mailedToken('edna@example.test');
    expect(second.token).not.toBe(first.token);
    expect((await reset(first.token)).json().error.code).toBe(INVALID);
    expect((await reset(second.token)).statusCode).toBe(200);
  });

  it('a link mailed before the account changed (email, password, sessions revoked) no longer works and changes nothing', async () => {
    const admin = await t.login('admin', 'hearth-change-me');
    const changes: [string, (id: string, access: string) => Promise<{ statusCode: number }>][] = [
      ['own email', (_id, access) => t.request({ method: 'PUT', url: '/api/auth/me/email', token: access, payload: { email: 'elsewhere@example.test' } })],
      ['password set by an admin', (id) => t.request({ method: 'PUT', url: `/api/auth/users/${id}`, token: admin.access, payload: { password: 'set-by-the-admin-1' } })],
      ['sessions revoked by an admin', (_id) => t.request({ method: 'DELETE', url: `/api/admin/auth/users/${encodeURIComponent(user)}/sessions`, token: admin.access })],
    ];
    let user = '';
    vi.useFakeTimers({ toFake: ['Date'] });
    for (const [what, change] of changes) {
      user = `ivy-${changes.findIndex(([w]) => w === what)}`;
      const ivy = await t.userWithRole('viewer', user);
      const { token } = await mailedToken(`${user}@example.test`);
      vi.setSystemTime(Date.now() + 1000);
      expect((await change(ivy.id, ivy.access)).statusCode, what).toBeLessThan(300);
      const before = await state();
      const res = await reset(token, 'ivy-takes-over-123');
      expect(res.statusCode, what).toBe(400);
      expect(res.json().error.code, what).toBe(INVALID);
      expect(await state(), what).toEqual(before);
    }
  });

  it('answers an unknown address and an OIDC-only account exactly like a match, and mails neither', async () => {
    await t.userWithRole('viewer', 'fay');
    const oidcUser = await t.app.users.createExternal({ usernameBase: 'gil', email: 'gil@example.test', role: 'viewer' });
    const answers = [await forgot('fay@example.test'), await forgot('nobody@example.test'), await forgot('gil@example.test')];
    await t.app.passwordReset.idle();
    for (const res of answers) {
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(FORGOT_BODY);
    }
    expect(new Set(answers.map((res) => res.body)).size).toBe(1);
    expect(sink.mails.map((mail) => mail.to)).toEqual([['fay@example.test']]);
    expect((await resetRows()).map((row) => row.user_id)).not.toContain(oidcUser);
  });

  it('answers before the mail is handed over, so a match is not slower', async () => {
    await t.userWithRole('viewer', 'hal');
    let release!: () => void;
    sink.hold = new Promise<void>((resolve) => (release = resolve));
    const res = await forgot('hal@example.test');
    expect(res.statusCode).toBe(200);
    expect(sink.mails).toHaveLength(0);
    release();
    await t.app.passwordReset.idle();
    expect(sink.mails).toHaveLength(1);
  });

  it('refuses bad input with 400 and the field, changing nothing', async () => {
    await t.userWithRole('viewer', 'ivy');
    const { token } = await mailedToken('ivy@example.test');
    const before = await state();
    const cases: [() => Promise<{ statusCode: number; json: () => any }>, string, string][] = [
      [() => t.request({ method: 'POST', url: '/api/auth/forgot-password', payload: {} }), 'validation_failed', 'body.email'],
      [() => forgot('not-an-email'), 'validation_failed', 'body.email'],
      [() => forgot(42), 'validation_failed', 'body.email'],
      [() => t.request({ method: 'POST', url: '/api/auth/forgot-password', payload: { email: 'ivy@example.test', extra: 1 } }), 'validation_failed', 'body.extra'],
      [() => t.request({ method: 'POST', url: '/api/auth/reset-password', payload: { token } }), 'validation_failed', 'body.new_password'],
      [() => t.request({ method: 'POST', url: '/api/auth/reset-password', payload: { new_password: 'long-enough-password' } }), 'validation_failed', 'body.token'],
      [() => reset(token, 'short'), 'weak_password', 'body.new_password'],
      [() => reset(token, 'hearth-change-me'), 'weak_password', 'body.new_password'],
    ];
    for (const [send, code, field] of cases) {
      const res = await send();
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code, field });
    }
    await t.app.passwordReset.idle();
    expect(await state()).toEqual(before);
    // A refused password leaves the link usable.
    expect((await reset(token, 'ivy-finally-a-good-one')).statusCode).toBe(200);
  });

  it('logs a failed delivery (refused recipient, server down) without token or address, and still answers 200', async () => {
    await t.close();
    await sink.close();
    sink = await startMailSink({ onRcptTo: (address, _session, callback) => callback(new Error(`No mailbox for ${address.address}`)) });
    t = await startApp(smtpEnv(sink));
    await t.userWithRole('viewer', 'joan');
    expect((await forgot('joan@example.test')).json()).toEqual(FORGOT_BODY);
    await t.app.passwordReset.idle();
    await sink.close();
    expect((await forgot('joan@example.test')).json()).toEqual(FORGOT_BODY);
    await t.app.passwordReset.idle();
    const failures = t.logs().split('\n').filter((line) => line.includes('password_reset.send_failed'));
    expect(failures).toHaveLength(2);
    expect(failures[0]).toContain('[address]');
    expect(t.logs()).not.toContain('token=');
    expect(t.logs()).not.toContain('joan@example.test');
    sink = await startMailSink(); // afterEach closes it
  });
});

/** What an attacker sends to aim the victim's link at a host of theirs. */
const FORGED_HOST = { host: 'evil.example.test', 'x-forwarded-host': 'evil.example.test', 'x-forwarded-proto': 'http', 'x-forwarded-for': '192.0.2.66' };

describe('reset links come from configuration, never from the request', () => {
  afterEach(async () => {
    await t.close();
    await sink.close();
  });

  it.each([
    ['PUBLIC_URL', { PUBLIC_URL: 'https://hearth.example.test/app/' }, 'https://hearth.example.test/app'],
    ['https://SERVER_NAME with TLS on 443', { PUBLIC_URL: '', TLS_ENABLED: '1', SERVER_NAME: 'hearth.lan', PORT: '443' }, 'https://hearth.lan'],
    ['https://SERVER_NAME:PORT with TLS on another port', { PUBLIC_URL: '', TLS_ENABLED: '1', SERVER_NAME: 'hearth.lan', PORT: '8443' }, 'https://hearth.lan:8443'],
  ])('mails a link to %s whatever Host and X-Forwarded-Host say, with and without TRUST_PROXY', async (_what, origin, expected) => {
    sink = await startMailSink();
    for (const proxy of [{}, { TRUST_PROXY: 'true' }] as Record<string, string>[]) {
      t = await startApp(smtpEnv(sink, { ...origin, ...proxy }));
      await t.userWithRole('viewer', 'vera');
      const { link, token } = await mailedToken('vera@example.test', FORGED_HOST);
      expect(link, JSON.stringify(proxy)).toBe(`${expected}/reset-password?token=${token}`);
      await t.close();
    }
    t = await startApp(); // afterEach closes it
  });
});

describe('password reset rate limit', () => {
  withMailingApp();

  it('allows a burst of 20 per client across both endpoints; the 21st gets 429 with Retry-After', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    for (let i = 0; i < 10; i++) expect((await forgot(`nobody${i}@example.test`)).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) expect((await reset(`unknown-${i}`)).statusCode).toBe(400);
    const limited = await forgot('nobody@example.test');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('too_many_requests');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect((await reset('unknown')).statusCode).toBe(429);
    // Another client address has its own allowance.
    expect((await forgot('nobody@example.test', '10.9.8.7')).statusCode).toBe(200);
    // The average rate is 10 a minute: after a burst of 20 the allowance returns two minutes later, not one.
    vi.setSystemTime(Date.now() + 60_000);
    expect((await forgot('nobody@example.test')).statusCode).toBe(429);
    vi.setSystemTime(Date.now() + 60_000);
    expect((await forgot('nobody@example.test')).statusCode).toBe(200);
    await t.app.passwordReset.idle();
    expect(sink.mails).toHaveLength(0);
  });

  it('follows RATE_LIMIT_RESET and RATE_LIMIT_RESET_BURST', async () => {
    await t.close();
    t = await startApp(smtpEnv(sink, { RATE_LIMIT_RESET: '1', RATE_LIMIT_RESET_BURST: '2' }));
    expect((await forgot('a@example.test')).statusCode).toBe(200);
    expect((await forgot('a@example.test')).statusCode).toBe(200);
    const limited = await forgot('a@example.test');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(120);
  });
});

describe('password reset with EMAIL_PROVIDER=console', () => {
  afterEach(async () => {
    await t.close();
  });

  it('writes the link to the log as one marked INFO line, and the link works', async () => {
    t = await startApp({ PUBLIC_URL: 'https://hearth.example.test/' });
    await t.userWithRole('editor', 'kim');
    const res = await forgot('kim@example.test');
    expect(res.json()).toEqual(FORGOT_BODY);
    await t.app.passwordReset.idle();
    const lines = t.logs().split('\n').filter((line) => line.includes('[EMAIL_PROVIDER=console]'));
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]);
    expect(entry.level).toBe(30);
    expect(entry.event).toBe('password_reset.console_link');
    const { link, token } = linkIn(entry.msg);
    expect(link).toBe(`https://hearth.example.test/reset-password?token=${token}`);
    expect((await reset(token, 'kim-new-password-123')).statusCode).toBe(200);
    for (const body of responseBodies) expect(body).not.toContain(token);
    // The deliberate line is the only one that carries the token.
    expect(t.logs().split('\n').filter((line) => line.includes(token))).toHaveLength(1);
  });

  it('without PUBLIC_URL logs the path only, whatever Host and X-Forwarded-Host say, and warns at start', async () => {
    for (const proxy of [{}, { TRUST_PROXY: 'true' }] as Record<string, string>[]) {
      t = await startApp(proxy);
      const warning = t.logs().split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((entry) => entry.plugin === 'password-reset');
      await t.userWithRole('editor', 'lou');
      const res = await t.request({ method: 'POST', url: '/api/auth/forgot-password', payload: { email: 'lou@example.test' }, headers: FORGED_HOST });
      expect(res.json()).toEqual(FORGOT_BODY);
      await t.app.passwordReset.idle();
      const [line] = t.logs().split('\n').filter((entry) => entry.includes('[EMAIL_PROVIDER=console]'));
      const { link, token } = linkIn(JSON.parse(line).msg);
      expect(link, JSON.stringify(proxy)).toBe(`/reset-password?token=${token}`);
      expect(t.logs()).not.toContain('evil.example.test');
      expect(warning).toMatchObject({ level: 40, msg: expect.stringContaining('PUBLIC_URL is not set') });
      expect((await reset(token, 'lou-new-password-123')).statusCode).toBe(200);
      await t.close();
    }
    t = await startApp({ PUBLIC_URL }); // afterEach closes it
  });
});

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl; its files live in `dir`. */
function loopbackCertificate(dir: string): { key: Buffer; cert: Buffer; certFile: string } {
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile };
}

describe('SMTP transport security', () => {
  const mail = { to: 'x@example.test', username: 'x', link: 'https://h/reset-password?token=abc', expiresAt: new Date() };

  it('SMTP_STARTTLS refuses a server that does not offer STARTTLS rather than sending in clear', async () => {
    const plain = await startMailSink({ disabledCommands: ['STARTTLS'] });
    const sender = new SmtpEmailSender({
      provider: 'smtp', smtpHost: '127.0.0.1', smtpPort: plain.port, smtpFrom: 'hearth@example.test',
      smtpUsername: SMTP_USER, smtpPassword: SMTP_PASS, smtpStartTls: true, smtpTls: false,
    }, 30);
    await expect(sender.sendResetLink(mail)).rejects.toThrow(/STARTTLS/);
    expect(plain.mails).toHaveLength(0);
    sender.close();
    await plain.close();
  });
});

/**
 * The built service (`node dist/server.js`) configured only through its environment, as shipped:
 * config refusals and their exit code, and mail over TLS to a relay whose certificate the test made
 * (trusted the way an operator trusts a private CA: NODE_EXTRA_CA_CERTS).
 */
describe('the service process', () => {
  beforeAll(() => {
    ensureBuilt();
  }, 180_000);
  afterAll(() => {
    cleanupServices();
  });

  const serviceEnv = (sinkPort: number, extra: Record<string, string>) => ({
    PORT: '0', HOST: '127.0.0.1', DATA_DIR: tempDir(), JWT_SECRET_KEY: TEST_JWT_SECRET, MFA_ENCRYPTION_KEY: TEST_MFA_KEY,
    DEFAULT_ADMIN_EMAIL: 'admin@example.test', PUBLIC_URL, EMAIL_PROVIDER: 'smtp', SMTP_HOST: '127.0.0.1', SMTP_PORT: String(sinkPort),
    SMTP_FROM: 'hearth@example.test', SMTP_USERNAME: SMTP_USER, SMTP_PASSWORD: SMTP_PASS, ...extra,
  });

  it('refuses EMAIL_PROVIDER=smtp without PUBLIC_URL or TLS: exit 78 (EX_CONFIG), one line naming PUBLIC_URL', async () => {
    const service = startService(serviceEnv(2525, { PUBLIC_URL: '' }));
    const { code } = await exitWithin(service, 30_000);
    expect(code).toBe(78);
    const lines = service.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^hearth: invalid configuration: PUBLIC_URL: /);
  }, 60_000);

  it.each([
    ['SMTP_STARTTLS=1', { SMTP_STARTTLS: '1' }, {}],
    ['SMTP_TLS=1', { SMTP_TLS: '1' }, { secure: true }],
  ])('%s: the reset mail reaches the relay over TLS', async (_what, tlsEnv, sinkOptions) => {
    const { key, cert, certFile } = loopbackCertificate(tempDir('hearth-smtp-tls-'));
    // Authentication only over TLS: a mail sent in clear would not even get past AUTH.
    const relay = await startMailSink({ key, cert, allowInsecureAuth: false, ...sinkOptions });
    try {
      const service = startService(serviceEnv(relay.port, { ...tlsEnv, NODE_EXTRA_CA_CERTS: certFile }));
      const baseUrl = await listening(service, 60_000);
      const res = await fetch(`${baseUrl}/api/auth/forgot-password`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@example.test' }),
      });
      expect(res.status).toBe(200);
      const failed = () => service.logs().some((entry) => entry.event === 'password_reset.send_failed');
      await waitFor('the reset mail or its failure', service, () => relay.mails.length > 0 || failed(), 30_000);
      expect(failed()).toBe(false);
      const [received] = relay.mails;
      expect(received.secure).toBe(true);
      expect(received.to).toEqual(['admin@example.test']);
      expect(linkIn(decodeQuotedPrintable(received.raw)).link).toMatch(new RegExp(`^${PUBLIC_URL}/reset-password\\?token=`));
      service.child.kill('SIGTERM');
      expect((await exitWithin(service, 15_000)).code).toBe(0);
    } finally {
      await relay.close();
    }
  }, 120_000);
});
