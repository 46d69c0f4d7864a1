import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../core/config.js';

/**
 * The built service as a real process: `node dist/server.js`, real sockets, real signals.
 * Everything else in the suite goes through app.inject; this file proves the entry point
 * (config errors, quick-start secrets, listen, graceful shutdown) works as shipped.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = path.join(ROOT, 'dist', 'server.js');
const SOURCE_DIRS = ['core', 'plugins', 'native', 'scripts'];
const BUILD_INPUTS = ['package.json', 'tsup.config.ts'];

const children = new Set<ChildProcess>();
const tempDirs: string[] = [];

/** Newest modification time among the build's inputs (sources, not tests). */
function newestSourceMtime(): number {
  let newest = 0;
  const visit = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (/\.(ts|js|json)$/.test(entry.name) && !/\.spec\.ts$/.test(entry.name)) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of SOURCE_DIRS) visit(path.join(ROOT, dir));
  for (const file of BUILD_INPUTS) newest = Math.max(newest, statSync(path.join(ROOT, file)).mtimeMs);
  return newest;
}

/** `npm test` builds before vitest; a lone `vitest run` of this file rebuilds only when dist is stale. */
function ensureBuilt(): void {
  if (existsSync(SERVER) && statSync(SERVER).mtimeMs >= newestSourceMtime()) return;
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0 || !existsSync(SERVER)) {
    throw new Error(`npm run build failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`.slice(-4000));
  }
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-process-'));
  tempDirs.push(dir);
  return dir;
}

interface Service {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** stdout parsed as pino JSON lines (anything else is skipped). */
  logs: () => Array<Record<string, unknown>>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node dist/server.js` with only the given variables (plus PATH/HOME), so the caller's shell cannot leak secrets in. */
function startService(env: Record<string, string>): Service {
  const base: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[name]) base[name] = process.env[name]!;
  const child = spawn(process.execPath, [SERVER], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    logs: () =>
      out.split('\n').flatMap((line) => {
        if (!line.trim()) return [];
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    exit,
  };
}

async function waitFor<T>(what: string, service: Service, probe: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (service.child.exitCode !== null || service.child.signalCode !== null) {
      throw new Error(`service exited (${service.child.exitCode ?? service.child.signalCode}) before ${what}\nstdout:\n${service.stdout()}\nstderr:\n${service.stderr()}`);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nstdout:\n${service.stdout()}\nstderr:\n${service.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Resolves with the exit status, or rejects if the process is still alive after timeoutMs. */
async function exitWithin(service: Service, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms\nstdout:\n${service.stdout()}\nstderr:\n${service.stderr()}`)), timeoutMs);
  });
  try {
    return await Promise.race([service.exit, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function listening(service: Service): Promise<string> {
  return waitFor('the listening line', service, () => {
    const line = service.logs().find((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('Server listening at '));
    return line ? (line.msg as string).replace('Server listening at ', '') : undefined;
  });
}

beforeAll(() => {
  ensureBuilt();
}, 180_000);

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
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
  ])('exits non-zero at once with a one-line message when %s is malformed', async (variable, value) => {
    const dataDir = tempDir();
    const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, [variable]: value });
    const { code } = await exitWithin(service, 5_000);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    const lines = service.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
    expect(lines[0]).toMatch(/invalid configuration/);
    // Nothing was written: a rejected configuration does not generate secrets or open a database.
    expect(existsSync(path.join(dataDir, 'secrets'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'hearth.db'))).toBe(false);
  });

  it('exits non-zero with a clear message when the port is already in use', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve, reject) => blocker.once('error', reject).listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const service = startService({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: tempDir() });
      const { code } = await exitWithin(service, 15_000);
      expect(code).not.toBe(0);
      expect(code).not.toBeNull();
      expect(service.stderr()).toContain(`port ${port} on 127.0.0.1 is already in use`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
