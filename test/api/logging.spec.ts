import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../core/app.js';
import { loadConfig } from '../../core/config.js';
import { ADMIN, TEST_JWT_SECRET, TEST_MFA_KEY, startApp } from '../helpers.js';

describe('logging', () => {
  it('never writes passwords, tokens, secrets or Authorization headers', async () => {
    const t = await startApp({ LOG_LEVEL: 'DEBUG' });
    const pair = await t.login();
    const refreshed = (await t.request({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: pair.refresh } })).json();
    await t.request({ method: 'POST', url: '/api/auth/users', token: refreshed.access_token, payload: { username: 'gina', password: 'gina-secret-password', role: 'viewer' } });
    await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'gina', password: 'wrong-secret-guess' } });
    await t.request({ method: 'GET', url: '/api/auth/me?token=query-secret-value', token: refreshed.access_token });
    const changed = await t.request({
      method: 'PUT',
      url: '/api/auth/password',
      token: refreshed.access_token,
      payload: { current_password: ADMIN.password, new_password: 'another-secret-password' },
    });
    expect(changed.statusCode).toBe(200);

    const logs = t.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [
      ADMIN.password,
      'gina-secret-password',
      'wrong-secret-guess',
      'another-secret-password',
      'query-secret-value',
      pair.access,
      pair.refresh,
      refreshed.access_token,
      refreshed.refresh_token,
      changed.json().access_token,
      TEST_JWT_SECRET,
      TEST_MFA_KEY,
      'Bearer ',
    ]) {
      expect(logs, `log contains ${secret.slice(0, 12)}…`).not.toContain(secret);
    }
    await t.close();
  });

  it('anonymises user identifiers and client addresses with a keyed hash by default', async () => {
    const t = await startApp();
    await t.login();
    const lines = t.logs().split('\n').filter(Boolean).map((line) => JSON.parse(line));
    const login = lines.find((line) => line.msg === 'login');
    expect(login.user).toMatch(/^anon:[0-9a-f]{16}$/);
    expect(t.logs()).not.toContain('"user":"admin"');
    expect(t.logs()).not.toContain('127.0.0.1');
    // Stable: the same user hashes the same way, so lines can still be correlated.
    expect(t.app.logPrivacy.user('admin')).toBe(login.user);
    await t.close();
  });

  it('logs a request as its route pattern with anonymised parameters: one user, one anon id, by username or by id', async () => {
    const t = await startApp();
    const admin = (await t.login()).access;
    const viewer = await t.userWithRole('viewer', 'viewer2');
    expect((await t.request({ method: 'GET', url: `/api/auth/users/${viewer.id}`, token: admin })).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: '/api/admin/auth/users/Viewer2/sessions', token: admin })).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/auth/users/${viewer.id}/sessions`, token: admin })).statusCode).toBe(404);
    expect((await t.request({ method: 'DELETE', url: `/api/auth/users/${viewer.id}`, token: admin })).statusCode).toBe(204);

    expect(t.logs().toLowerCase()).not.toContain('viewer2');
    expect(t.logs()).not.toContain(viewer.id);
    const lines = t.logs().split('\n').filter(Boolean).map((line) => JSON.parse(line));
    const requests = lines.filter((line) => line.msg === 'incoming request').map((line) => line.req);
    const revoke = requests.find((req) => req.method === 'DELETE' && req.url === '/api/admin/auth/users/:username/sessions');
    expect(revoke).toEqual({ method: 'DELETE', url: '/api/admin/auth/users/:username/sessions', params: { username: expect.stringMatching(/^anon:[0-9a-f]{16}$/) }, ip: expect.stringMatching(/^anon:/) });
    const anon = revoke.params.username;
    expect(requests).toContainEqual({ method: 'GET', url: '/api/auth/users/:id', params: { id: anon }, ip: expect.any(String) });
    expect(requests).toContainEqual({ method: 'DELETE', url: '/api/auth/users/:id', params: { id: anon }, ip: expect.any(String) });
    // An unmatched path is one anonymised parameter too.
    expect(requests).toContainEqual({ method: 'DELETE', url: '*', params: { '*': expect.stringMatching(/^anon:/) }, ip: expect.any(String) });
    // The lines the handlers write name the same user the same way, whether they had the username or the id.
    const named = (msg: string) => lines.filter((line) => line.msg === msg).map((line) => line.user);
    expect(named('user created')).toEqual([anon]);
    expect(named('login')).toContain(anon);
    expect(named('user sessions revoked')).toEqual([anon]);
    expect(named('user deleted')).toEqual([anon]);
    await t.close();
  });

  it('logs identifiers in clear when RAG_LOG_ANONYMISE is false, and query text only when RAG_LOG_REDACT_QUERIES is false', async () => {
    const t = await startApp({ RAG_LOG_ANONYMISE: 'false' });
    await t.login();
    expect(t.logs()).toContain('"user":"admin"');
    expect(t.app.logPrivacy.query('what is the refund policy?')).toBe('[redacted 26 chars]');
    await t.app.settings.set({ RAG_LOG_REDACT_QUERIES: false });
    expect(t.app.logPrivacy.query('what is the refund policy?')).toBe('what is the refund policy?');
    await t.close();
  });

  it('tags every request line with its request id, and follows LOG_LEVEL changed at run time', async () => {
    const t = await startApp({ LOG_LEVEL: 'INFO', RAG_LOG_ANONYMISE: 'false' });
    const lines = () => t.logs().split('\n').filter(Boolean).map((line) => JSON.parse(line));
    await t.login();
    const login = lines().find((line) => line.msg === 'login');
    expect(login.reqId).toEqual(expect.any(String));
    expect(lines().filter((line) => line.reqId === login.reqId).map((line) => line.msg)).toEqual(['incoming request', 'login', 'request completed']);

    await t.app.settings.set({ LOG_LEVEL: 'ERROR' });
    const before = lines().length;
    await t.login();
    expect(lines().length).toBe(before);

    await t.app.settings.set({ LOG_LEVEL: 'DEBUG' });
    await t.login();
    expect(lines().slice(before).map((line) => line.msg)).toEqual(expect.arrayContaining(['incoming request', 'login', 'request completed']));
    expect(new Set(lines().slice(before).map((line) => line.reqId)).size).toBe(1);
    await t.close();
  });
});

describe('5xx answers', () => {
  it('never carry internals', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-5xx-'));
    let captured = '';
    const app = await buildApp({
      config: loadConfig({ DATA_DIR: dataDir, JWT_SECRET_KEY: TEST_JWT_SECRET, MFA_ENCRYPTION_KEY: TEST_MFA_KEY }, { secretDirs: [] }),
      logStream: new Writable({ write: (chunk, _e, done) => { captured += chunk; done(); } }),
    });
    app.get('/api/test-boom', { config: { access: { public: true } } }, async () => {
      throw new Error('disk /var/secret/path exploded');
    });
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/api/test-boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: { code: 'internal_error', message: 'Internal server error' } });
    expect(res.body).not.toContain('exploded');
    expect(captured).toContain('exploded'); // the operator still sees it in the log
    await app.close();
  });

  it('a route that does not declare its access is refused at boot', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-undeclared-'));
    const app = await buildApp({
      config: loadConfig({ DATA_DIR: dataDir, JWT_SECRET_KEY: TEST_JWT_SECRET, MFA_ENCRYPTION_KEY: TEST_MFA_KEY }, { secretDirs: [] }),
      logStream: new Writable({ write: (_c, _e, done) => done() }),
    });
    app.get('/api/undeclared', async () => 'open');
    await expect(app.ready()).rejects.toThrow(/without config.access: GET \/api\/undeclared/);
    await app.close().catch(() => undefined);
  });
});
