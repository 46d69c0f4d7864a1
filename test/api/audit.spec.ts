import { createHash } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { generate } from 'otplib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyLicense, LICENSE_ENV } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';
import { ADMIN, snapshot, startApp, type TestApp } from '../helpers.js';

/** The audit log through HTTP on a real app and SQLite file; the tamper test edits that file with another connection. */

const DAY = 24 * 60 * 60 * 1000;
let t: TestApp;
let admin: string;

afterEach(async () => {
  vi.useRealTimers();
  await t?.close();
  t = undefined as unknown as TestApp;
});

async function start(tier: 'FREE' | 'PRO' | 'ENTERPRISE', env: Record<string, string> = {}): Promise<void> {
  t = await startApp({ ...LICENSE_ENV, ...env });
  if (tier !== 'FREE') await applyLicense(t, tier);
  admin = (await t.login()).access;
}

const api = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, token?: string, payload?: object, headers: Record<string, string> = {}) =>
  t.request({ method, url, headers, ...(token ? { token } : {}), ...(payload ? { payload } : {}) });

interface Entry {
  id: number;
  time: string;
  event: string;
  actor: { user_id: string | null; username: string | null };
  client_address: string | null;
  target: string | null;
  outcome: 'success' | 'failure';
  details: Record<string, unknown>;
}

async function entries(query = ''): Promise<Entry[]> {
  const res = await api('GET', `/api/audit?limit=200${query}`, admin);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().entries;
}

const verify = async () => (await api('GET', '/api/audit/verify', admin)).json();

const AUDIT_ROUTES: Array<['GET' | 'PUT', string, object?]> = [
  ['GET', '/api/audit'],
  ['GET', '/api/audit/1'],
  ['GET', '/api/audit/verify'],
  ['GET', '/api/audit/config'],
  ['PUT', '/api/audit/config', { retention_days: 30 }],
];

describe('audit: tiers and roles', { timeout: 90_000 }, () => {
  it('below ENTERPRISE nothing is recorded and every endpoint is 403 tier_required', async () => {
    for (const tier of ['FREE', 'PRO'] as const) {
      await start(tier);
      expect((await api('POST', '/api/auth/users', admin, { username: `u-${tier}`, password: 'a-long-password-1', role: 'viewer' })).statusCode).toBe(201);
      expect((await api('POST', '/api/auth/login', undefined, { username: 'admin', password: 'wrong-password' })).statusCode).toBe(401);
      expect((await api('POST', '/api/connectors/sync-all', admin)).statusCode).toBe(202);
      for (const [method, url, body] of AUDIT_ROUTES) {
        const res = await api(method, url, admin, body);
        expect(res.statusCode, `${tier} ${method} ${url}`).toBe(403);
        expect(res.json().error.code).toBe('tier_required');
      }
      expect(await snapshot(t.app, 'audit_log')).toEqual([]);
      await t.close();
    }
  });

  it('on ENTERPRISE only admins read it: viewer and editor 403 role_required, no token 401', async () => {
    await start('ENTERPRISE');
    const viewer = (await t.userWithRole('viewer')).access;
    const editor = (await t.userWithRole('editor')).access;
    for (const [method, url, body] of AUDIT_ROUTES) {
      for (const token of [viewer, editor]) {
        const res = await api(method, url, token, body);
        expect(res.statusCode, `${method} ${url}`).toBe(403);
        expect(res.json().error.code).toBe('role_required');
      }
      expect((await api(method, url, undefined, body)).statusCode).toBe(401);
      expect((await api(method, url, admin, body)).statusCode, `${method} ${url}`).toBe(200);
    }
  });
});

describe('audit: events', { timeout: 90_000 }, () => {
  it('records the spec’s events, sign-ins, role changes, revocations and TOTP with actor, address, target and outcome; never a secret or a query text', async () => {
    await start('ENTERPRISE');
    const [licence] = await entries('&event=license.apply');
    expect(licence).toMatchObject({ event: 'license.apply', outcome: 'success', actor: { username: 'admin' }, client_address: '127.0.0.1', details: { tier: 'ENTERPRISE' } });

    const created = await api('POST', '/api/auth/users', admin, { username: 'dana', password: 'dana-password-long', role: 'viewer' });
    const danaId = created.json().id;
    expect((await api('PUT', `/api/auth/users/${danaId}`, admin, { role: 'editor' })).statusCode).toBe(200);
    expect((await api('PUT', `/api/auth/users/${danaId}`, admin, { password: 'dana-password-longer' })).statusCode).toBe(200);
    expect((await api('POST', '/api/auth/login', undefined, { username: 'dana', password: 'not-her-password' })).statusCode).toBe(401);
    const dana = await t.login('dana', 'dana-password-longer');
    expect((await api('DELETE', '/api/admin/auth/users/dana/sessions', admin)).statusCode).toBe(200);
    expect((await api('PATCH', '/api/admin/auth/settings', admin, { access_token_seconds: 600 })).statusCode).toBe(200);
    expect((await api('PUT', '/api/branding', admin, { app_name: 'Audited' })).statusCode).toBe(200);
    const secret = 'oidc-client-secret-value-7731';
    const provider = await api('POST', '/api/admin/oidc/providers', admin, {
      name: 'corp', display_name: 'Corp', client_id: 'hearth', client_secret: secret,
      discovery_url: 'http://127.0.0.1:9/.well-known/openid-configuration', redirect_uri: 'http://127.0.0.1:8000/api/auth/oidc/corp/callback', allow_private_network: true,
    });
    expect(provider.statusCode, provider.body).toBe(201);
    expect((await api('POST', '/api/connectors/sync-all', admin)).statusCode).toBe(202);
    const query = 'hello there';
    const chat = await api('POST', '/api/chat', admin, { query });
    expect(chat.statusCode, chat.body).toBe(200);
    const streamed = await api('POST', '/api/chat', admin, { query: 'hi' }, { accept: 'text/event-stream' });
    expect(streamed.statusCode).toBe(200);

    const adminId = (await api('GET', '/api/auth/me', admin)).json().id;
    const enrol = await api('POST', '/api/auth/totp/enroll', admin);
    const code = await generate({ secret: enrol.json().secret, epoch: Math.floor(Date.now() / 1000) });
    expect((await api('POST', '/api/auth/totp/enroll/confirm', admin, { totp_code: code })).statusCode).toBe(200);
    // A sign-in through the second factor: one wrong code, then the next step's code.
    const challenge = (await api('POST', '/api/auth/login', undefined, { username: 'admin', password: ADMIN.password })).json();
    expect(challenge.status).toBe('mfa_required');
    const wrong = code === '123456' ? '654321' : '123456';
    expect((await api('POST', '/api/auth/totp/mfa-login', undefined, { mfa_token: challenge.mfa_token, totp_code: wrong })).statusCode).toBe(401);
    const next = await generate({ secret: enrol.json().secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    expect((await api('POST', '/api/auth/totp/mfa-login', undefined, { mfa_token: challenge.mfa_token, totp_code: next })).statusCode).toBe(200);
    expect((await api('DELETE', `/api/auth/users/${adminId}/totp`, admin)).statusCode).toBe(204);
    expect((await api('DELETE', `/api/auth/users/${danaId}`, admin)).statusCode).toBe(204);
    expect((await api('DELETE', '/api/admin/auth/sessions', admin)).statusCode).toBe(200);
    admin = (await t.login()).access;

    const log = await entries();
    const ids = log.map((entry) => entry.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const one = (event: string, match: Partial<Entry> = {}) => {
      const found = log.filter((entry) => entry.event === event && Object.entries(match).every(([key, value]) => JSON.stringify(entry[key as keyof Entry]) === JSON.stringify(value)));
      expect(found, `${event} ${JSON.stringify(match)}`).toHaveLength(1);
      return found[0];
    };
    const byAdmin = { user_id: adminId, username: 'admin' };
    expect(one('user.create', { target: danaId })).toMatchObject({ actor: byAdmin, client_address: '127.0.0.1', outcome: 'success', details: { username: 'dana', role: 'viewer' } });
    expect(one('user.role_change')).toMatchObject({ actor: byAdmin, target: danaId, details: { from: 'viewer', to: 'editor' } });
    expect(one('auth.login', { outcome: 'failure', actor: { user_id: null, username: 'dana' } })).toMatchObject({ details: { method: 'password' } });
    expect(one('auth.login', { target: danaId })).toMatchObject({ outcome: 'success', actor: { user_id: danaId, username: 'dana' } });
    expect(one('session.revoke', { target: danaId })).toMatchObject({ actor: byAdmin, details: { scope: 'user' } });
    expect(one('session.revoke', { target: '*' })).toMatchObject({ actor: byAdmin, details: { scope: 'all' } });
    expect(one('config.update', { target: 'auth.settings' }).details).toEqual({ fields: ['access_token_seconds'] });
    expect(one('config.update', { target: 'branding' }).details.fields).toContain('app_name');
    expect(one('config.update', { target: 'oidc_provider:corp' }).details.fields).toContain('client_secret');
    expect(one('sync.all')).toMatchObject({ actor: byAdmin, outcome: 'success' });
    expect(one('totp.enroll')).toMatchObject({ actor: byAdmin, target: adminId });
    const secondFactor = log.filter((entry) => entry.event === 'auth.login' && entry.details.method === 'totp');
    expect(secondFactor.map((entry) => [entry.outcome, entry.actor.user_id])).toEqual([['success', adminId], ['failure', null]]);
    expect(one('totp.clear')).toMatchObject({ actor: byAdmin, target: adminId, details: { by: 'admin' } });
    expect(one('user.delete')).toMatchObject({ actor: byAdmin, target: danaId, details: { username: 'dana' } });

    const chats = log.filter((entry) => entry.event === 'chat.query');
    expect(chats).toHaveLength(2);
    const jsonChat = chats.find((entry) => entry.target === chat.json().conversation_id)!;
    expect(jsonChat).toMatchObject({ actor: byAdmin, details: { query_length: query.length } });
    expect(jsonChat.details.query_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(jsonChat.details.query_hash).not.toBe(createHash('sha256').update(query).digest('hex'));
    expect(Object.keys(jsonChat.details).sort()).toEqual(['query_hash', 'query_length']);

    const stored = JSON.stringify(await snapshot(t.app, 'audit_log'));
    for (const leaked of [secret, query, 'dana-password-long', 'not-her-password']) expect(stored).not.toContain(leaked);
    void dana;
  });

  it('stores the query text only when RAG_LOG_REDACT_QUERIES is false', async () => {
    await start('ENTERPRISE', { RAG_LOG_REDACT_QUERIES: 'false' });
    expect((await api('POST', '/api/chat', admin, { query: 'hello friend' })).statusCode).toBe(200);
    const [entry] = await entries('&event=chat.query');
    expect(entry.details).toMatchObject({ query: 'hello friend', query_length: 12 });
  });
});

describe('audit: group and access changes', { timeout: 90_000 }, () => {
  it('records group create, rename, members, document access and delete with the acting admin and the target', async () => {
    await start('ENTERPRISE');
    const viewer = await t.userWithRole('viewer', 'gina');
    const created = await api('POST', '/api/groups', admin, { name: 'finance' });
    expect(created.statusCode, created.body).toBe(201);
    const group = created.json().id as string;
    expect((await api('PUT', `/api/groups/${group}`, admin, { name: 'finance-team' })).statusCode).toBe(200);
    expect((await api('PUT', `/api/groups/${group}/members/${viewer.id}`, admin)).statusCode).toBe(204);
    expect((await api('DELETE', `/api/groups/${group}/members/${viewer.id}`, admin)).statusCode).toBe(204);
    const uploaded = await t.request({ method: 'POST', url: '/api/docs/upload', token: admin, ...multipartBody([{ name: 'file', content: 'Budget notes for the year.', filename: 'budget.txt' }]) });
    const docId = uploaded.json().document.id as string;
    // The admin is not in finance-team: keeping everyone lets them change it back (a restricted document is hidden from them too).
    expect((await api('PUT', `/api/documents/${docId}/access`, admin, { groups: ['finance-team', 'everyone'] })).statusCode).toBe(200);
    expect((await api('PUT', `/api/documents/${docId}/access`, admin, { groups: ['everyone'] })).statusCode).toBe(200);
    expect((await api('DELETE', `/api/groups/${group}`, admin)).statusCode).toBe(204);

    const got = (await entries()).filter((e) => e.event.startsWith('group.') || e.event.startsWith('access.')).reverse();
    expect(got.map((e) => e.event)).toEqual(['group.create', 'group.rename', 'group.member_add', 'group.member_remove', 'access.document', 'access.document', 'group.delete']);
    for (const e of got) expect(e.actor.username).toBe('admin');
    expect(got[0]).toMatchObject({ target: group, details: { name: 'finance' } });
    expect(got[2]).toMatchObject({ target: group, details: { user_id: viewer.id } });
    expect(got[4].target).toBe(docId);
    expect(got[4].details.groups).toEqual(expect.arrayContaining(['finance-team', 'everyone']));
    expect((await verify()).ok).toBe(true);
  });
});

describe('audit: reading', { timeout: 90_000 }, () => {
  it('filters by event type, user and date range, pages newest first, and reads one entry', async () => {
    await start('ENTERPRISE');
    const viewer = await t.userWithRole('viewer', 'vera');
    // The instant between: a millisecond clear of vera's own login (stamped in ms) on both sides.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const middle = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let i = 0; i < 3; i++) await api('POST', '/api/auth/login', undefined, { username: 'vera', password: 'wrong-password' });

    const all = await entries();
    const failures = await entries('&event=auth.login');
    expect(failures.filter((entry) => entry.outcome === 'failure')).toHaveLength(3);
    expect(failures.every((entry) => entry.event === 'auth.login')).toBe(true);
    const vera = await entries(`&user=${viewer.id}`);
    expect(vera.map((entry) => entry.event)).toEqual(['auth.login']);
    expect((await entries('&user=vera')).length).toBe(4);
    const later = await entries(`&from=${encodeURIComponent(middle)}`);
    expect(later.map((entry) => entry.outcome)).toEqual(['failure', 'failure', 'failure']);
    const earlier = await entries(`&to=${encodeURIComponent(middle)}`);
    expect(earlier.length + later.length).toBe(all.length);

    const page = (await api('GET', '/api/audit?limit=2&offset=1', admin)).json();
    expect(page).toMatchObject({ total: all.length, limit: 2, offset: 1 });
    expect(page.entries.map((entry: Entry) => entry.id)).toEqual(all.slice(1, 3).map((entry) => entry.id));

    const single = await api('GET', `/api/audit/${all[0].id}`, admin);
    expect(single.statusCode).toBe(200);
    expect(single.json()).toMatchObject(all[0]);
    expect((await api('GET', '/api/audit/999999', admin)).statusCode).toBe(404);
    for (const [url, field] of [
      ['/api/audit/abc', 'params.id'],
      ['/api/audit?from=yesterday', 'querystring.from'],
      ['/api/audit?limit=500', 'querystring.limit'],
      ['/api/audit?event=DROP%20TABLE', 'querystring.event'],
      ['/api/audit?colour=red', 'querystring.colour'],
    ]) {
      const res = await api('GET', url, admin);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.field).toBe(field);
    }
  });
});

describe('audit: integrity and retention', { timeout: 90_000 }, () => {
  it('refuses UPDATE and DELETE of single entries at the database', async () => {
    await start('ENTERPRISE');
    const [entry] = await entries();
    await expect(t.app.db.updateTable('audit_log').set({ outcome: 'failure' }).where('id', '=', entry.id).execute()).rejects.toThrow(/append-only/);
    await expect(t.app.db.deleteFrom('audit_log').where('id', '=', entry.id).execute()).rejects.toThrow(/retention sweep/);
    expect((await verify()).ok).toBe(true);
  });

  it('verify finds an entry edited or removed in the SQLite file', async () => {
    await start('ENTERPRISE');
    for (const username of ['ann', 'ben', 'cy', 'dee']) await api('POST', '/api/auth/users', admin, { username, password: `${username}-password-long`, role: 'viewer' });
    const before = await verify();
    expect(before).toEqual({ ok: true, entries_checked: 5, first_broken: null });
    const target = (await entries('&event=user.create')).find((entry) => entry.details.username === 'ben')!;
    const dataDir = t.dataDir;
    await t.app.close();

    // Someone with the file: drop the guard, edit one entry's details (keeping its hash), delete another.
    const file = new Database(path.join(dataDir, 'hearth.db'));
    file.exec('drop trigger audit_log_no_update; drop trigger audit_log_no_delete');
    file.prepare('update audit_log set details = ? where id = ?').run(JSON.stringify({ username: 'benjamin', role: 'viewer' }), target.id);
    file.close();
    t = await startApp({ ...LICENSE_ENV }, dataDir, true);
    admin = (await t.login()).access;
    expect(await verify()).toEqual({ ok: false, entries_checked: target.id - 1, first_broken: { id: target.id, reason: 'hash_mismatch' } });

    const restored = new Database(path.join(t.dataDir, 'hearth.db'));
    restored.prepare('update audit_log set details = ? where id = ?').run(JSON.stringify({ username: 'ben', role: 'viewer' }), target.id);
    expect((await verify()).ok).toBe(true);
    restored.prepare('delete from audit_log where id = ?').run(target.id + 1);
    restored.close();
    expect(await verify()).toMatchObject({ ok: false, first_broken: { id: target.id + 2, reason: 'entry_missing' } });
  });

  it('retention: config seeded from RAG_AUDIT_RETENTION_DAYS, bounded, and a sweep removes only entries older than it, chain still verified', async () => {
    // The box ran 20 days ago (the fake Date) and 10 days ago, then today.
    const now = Date.now();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now - 20 * DAY);
    await start('ENTERPRISE', { RAG_AUDIT_RETENTION_DAYS: '30' });
    const adminId = (await api('GET', '/api/auth/me', admin)).json().id;
    await t.app.audit.record(null, { event: 'user.create', actor: { id: adminId, username: 'admin' }, target: 'old-20' });
    vi.setSystemTime(now - 10 * DAY);
    await t.app.audit.record(null, { event: 'user.create', actor: { id: adminId, username: 'admin' }, target: 'old-10' });
    vi.useRealTimers();
    admin = (await t.login()).access;
    expect((await api('GET', '/api/audit/config', admin)).json()).toEqual({ retention_days: 30, retention_bounds: { min: 1, max: 3650 }, sweeps_enabled: true, recording: true });
    const all = await entries();
    const total = all.length;
    const older = all.filter((entry) => Date.parse(entry.time) < now - 15 * DAY).length;
    expect(older).toBeGreaterThanOrEqual(3); // license.apply, the sign-in and old-20

    const before = await snapshot(t.app, 'settings');
    for (const body of [{ retention_days: 0 }, { retention_days: 3651 }, { retention_days: '7' }, { retention_days: 7, extra: 1 }, {}]) {
      const res = await api('PUT', '/api/audit/config', admin, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect(await snapshot(t.app, 'settings')).toEqual(before);
    expect(await entries()).toHaveLength(total);

    const put = await api('PUT', '/api/audit/config', admin, { retention_days: 15 });
    expect(put.statusCode).toBe(200);
    expect(put.json().retention_days).toBe(15);
    const kept = await entries();
    expect(kept.map((entry) => entry.target)).not.toContain('old-20');
    expect(kept.map((entry) => entry.target)).toContain('old-10');
    expect(kept.every((entry) => Date.parse(entry.time) >= now - 15 * DAY)).toBe(true);
    expect(kept).toHaveLength(total - older + 1); // the config.update added
    expect(kept[0]).toMatchObject({ event: 'config.update', target: 'audit', details: { fields: ['retention_days'] } });
    expect(await verify()).toEqual({ ok: true, entries_checked: kept.length, first_broken: null });
    expect((await api('GET', '/api/audit/config', admin)).json().retention_days).toBe(15);
  });
});
