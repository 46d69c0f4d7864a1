import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../../core/config.js';
import { prose } from '../fixtures/documents.js';
import { multipartBody } from '../fixtures/multipart.js';
import { ROOT, cleanupServices, ensureBuilt, exitWithin, listening, startService, tempDir, waitFor } from '../fixtures/service-process.js';
import { TINY_MODEL_ID, buildTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';

/**
 * The built service as a real process: `node dist/server.js`, real sockets, real signals.
 * Everything else in the suite goes through app.inject; this file proves the entry point
 * (config errors, quick-start secrets, listen, graceful shutdown) works as shipped.
 */

beforeAll(() => {
  ensureBuilt();
}, 180_000);

afterAll(() => {
  cleanupServices();
});

describe('node dist/server.js', () => {
  it('starts with no secrets configured, serves over HTTP, and shuts down gracefully on SIGTERM', async () => {
    const dataDir = tempDir();
    const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
    const baseUrl = await listening(service);
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // Quick start: secrets generated into DATA_DIR/secrets, owner-only, with a notice in the log.
    const jwtFile = path.join(dataDir, 'secrets', 'jwt_secret_key');
    expect(statSync(jwtFile).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dataDir, 'secrets', 'mfa_encryption_key')).mode & 0o777).toBe(0o600);
    const messages = () => service.logs().map((entry) => String(entry.msg));
    expect(messages().some((msg) => msg.includes('JWT_SECRET_KEY was not configured') && msg.includes(jwtFile))).toBe(true);
    // The documented default admin password is still in use: the log says so, loudly.
    await waitFor('the default-password warning', service, () =>
      service.logs().find((entry) => entry.level === 40 && String(entry.msg).includes('SECURITY WARNING') && String(entry.msg).includes('default password')),
    );

    const health = await fetch(`${baseUrl}/api/health`);
    expect(health.status).toBe(200);

    const login = await fetch(`${baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD }),
    });
    expect(login.status).toBe(200);
    const { access_token: token } = (await login.json()) as { access_token: string };
    expect(typeof token).toBe('string');

    const me = await fetch(`${baseUrl}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { username: string; role: string })).toMatchObject({ username: 'admin', role: 'admin' });
    expect((await fetch(`${baseUrl}/api/auth/me`)).status).toBe(401);

    // A request in flight when SIGTERM arrives: headers and half the body now, the rest after shutdown has begun.
    const body = JSON.stringify({ username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD });
    const logins = () => service.logs().filter((entry) => entry.msg === 'incoming request' && (entry.req as { url?: string })?.url === '/api/auth/login').length;
    const loginsBefore = logins();
    const { port } = new URL(baseUrl);
    const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/api/auth/login', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        },
      );
      request.on('error', reject);
      request.write(body.slice(0, 10));
      waitFor('the in-flight request to arrive', service, () => logins() > loginsBefore)
        .then(() => {
          service.child.kill('SIGTERM');
          return waitFor('the shutdown line', service, () => service.logs().find((entry) => entry.msg === 'shutting down'));
        })
        .then(() => request.end(body.slice(10)), reject);
    });

    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(JSON.parse(finished.body)).toHaveProperty('access_token');

    const { code, signal } = await exitWithin(service, 5_000);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(service.logs().find((entry) => entry.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM' });
    // The shutdown began before the in-flight request completed.
    const order = service.logs().map((entry) => entry.msg);
    expect(order.indexOf('shutting down')).toBeLessThan(order.lastIndexOf('request completed'));

    // The database was closed cleanly: the WAL was checkpointed away and the file opens with everything in it.
    const dbFile = path.join(dataDir, 'hearth.db');
    expect(existsSync(`${dbFile}-wal`) ? statSync(`${dbFile}-wal`).size : 0).toBe(0);
    const db = new Database(dbFile);
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT role FROM users WHERE username = ?').get('admin')).toEqual({ role: 'admin' });
      expect((db.prepare('SELECT count(*) AS n FROM auth_sessions').get() as { n: number }).n).toBe(2);
    } finally {
      db.close();
    }
  });

  it.each([
    ['JWT_SECRET_KEY', 'short'],
    ['N_CTX', 'abc'],
  ])('exits 78 (EX_CONFIG, a configuration error) at once with a one-line message when %s is malformed', async (variable, value) => {
    const dataDir = tempDir();
    const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, [variable]: value });
    // 78, not just "not 0": the unit's Restart=on-failure and operators' scripts tell a bad configuration from a crash (1) by it.
    // A deadline, not a speed check (a node start takes seconds on a loaded box); "at once" is what follows: one line, nothing written.
    expect(await exitWithin(service, 20_000)).toEqual({ code: 78, signal: null });
    const lines = service.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
    expect(lines[0]).toMatch(/invalid configuration/);
    // Nothing was written: a rejected configuration does not generate secrets or open a database.
    expect(existsSync(path.join(dataDir, 'secrets'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'hearth.db'))).toBe(false);
  });

  it('exits 1 (a runtime failure, not a configuration error) with a clear message when the port is already in use', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve, reject) => blocker.once('error', reject).listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const service = startService({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: tempDir() });
      // A deadline, not a speed check: the whole boot runs before listen, and it outlasted 15 s on a loaded 2-core box.
      expect(await exitWithin(service, 60_000)).toEqual({ code: 1, signal: null });
      expect(service.stderr()).toContain(`port ${port} on 127.0.0.1 is already in use`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  }, 90_000);
});

/** Every file and folder under `root` (root included) whose mode gives group or other any access. */
function openToOthers(root: string): string[] {
  const found: string[] = [];
  const visit = (file: string) => {
    const stat = lstatSync(file);
    if (stat.mode & 0o077) found.push(`${path.relative(root, file) || '.'} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(file)) visit(path.join(file, name));
  };
  visit(root);
  return found;
}

/** A 0755 folder this process cannot chmod: made immutable (chattr +i) as root, a system folder otherwise; undefined where neither is available. */
function folderThatCannotBeTightened(): { dir: string; release: () => void } | undefined {
  if (process.getuid?.() !== 0) return statSync('/usr/share').mode & 0o077 ? { dir: '/usr/share', release: () => undefined } : undefined;
  const dir = tempDir();
  chmodSync(dir, 0o755);
  if (spawnSync('chattr', ['+i', dir]).status !== 0) return undefined;
  return { dir, release: () => void spawnSync('chattr', ['-i', dir]) };
}

describe('files the service and the models CLI write', () => {
  it('are owner-only: pre-existing 0755 DATA_DIR and MODEL_DIR are tightened with a log line; the database, its WAL, the index and models are 0600/0700', async () => {
    // As an installer or a volume leaves them; this test process keeps its usual umask (022), which the CLI and the service inherit.
    const dataDir = tempDir();
    const modelDir = tempDir();
    chmodSync(dataDir, 0o755);
    chmodSync(modelDir, 0o755);
    const modelSource = await buildTinyEmbeddingModel(path.join(tempDir(), 'tiny-model'));

    const cli = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), 'models', 'import', modelSource], { env: { PATH: process.env.PATH, MODEL_DIR: modelDir }, encoding: 'utf8' });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stderr).toContain(`MODEL_DIR ${modelDir} was open to group/other (mode 0755): tightened to 0700`);
    expect(openToOthers(modelDir)).toEqual([]);

    const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, MODEL_DIR: modelDir, LOG_LEVEL: 'INFO' });
    const baseUrl = await listening(service);
    expect(service.logs().find((entry) => entry.msg === `DATA_DIR ${dataDir} was open to group/other (mode 0755): tightened to 0700`)).toMatchObject({ level: 40 });

    const login = await fetch(`${baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD }),
    });
    const { access_token: token } = (await login.json()) as { access_token: string };
    const authorization = `Bearer ${token}`;
    const { payload, headers } = multipartBody([{ name: 'file', content: Buffer.from(`# Modes\n\n${prose(7, 40)}\n`), filename: 'modes.txt' }]);
    const upload = await fetch(`${baseUrl}/api/docs/upload`, { method: 'POST', headers: { ...headers, authorization }, body: payload });
    expect(upload.status, await upload.clone().text()).toBe(202);
    // Indexed, and its vectors saved: the index folder holds the addon's file and its sidecar.
    await waitFor('the document to be indexed with vectors', service, async () => {
      const docs = (await (await fetch(`${baseUrl}/api/docs`, { headers: { authorization } })).json()) as { documents: { status: string }[] };
      const indexDir = path.join(dataDir, 'index');
      return docs.documents[0]?.status === 'indexed' && existsSync(indexDir) && readdirSync(indexDir).some((name) => name.endsWith('.json') && name !== 'current.json');
    }, 30_000, 50);

    // While it runs: hearth.db-wal and -shm exist and take the database file's mode.
    expect(existsSync(path.join(dataDir, 'hearth.db-wal'))).toBe(true);
    expect(openToOthers(dataDir)).toEqual([]);
    expect(openToOthers(modelDir)).toEqual([]);
    expect(readdirSync(path.join(modelDir, 'embeddings'))).toContain(TINY_MODEL_ID);

    service.child.kill('SIGTERM');
    expect(await exitWithin(service, 15_000)).toEqual({ code: 0, signal: null });
    expect(openToOthers(dataDir)).toEqual([]);
    expect(openToOthers(modelDir)).toEqual([]);
  });

  const unchangeable = folderThatCannotBeTightened();
  it.skipIf(!unchangeable)('a DATA_DIR open to others that cannot be tightened stops the start: one line, exit 78', async () => {
    const { dir, release } = unchangeable!;
    try {
      // Secrets configured, so nothing needs writing before the check.
      const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, JWT_SECRET_KEY: 'x'.repeat(40), MFA_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64') });
      expect(await exitWithin(service, 10_000)).toEqual({ code: 78, signal: null });
      const mode = `0${(statSync(dir).mode & 0o777).toString(8)}`;
      expect(service.stderr()).toBe(`hearth: invalid configuration: DATA_DIR: ${dir} has mode ${mode} and cannot be tightened to 0700 (EPERM): chown it to the service's user or chmod it 0700\n`);
      expect(existsSync(path.join(dir, 'hearth.db'))).toBe(false);
    } finally {
      release();
    }
  });
});
