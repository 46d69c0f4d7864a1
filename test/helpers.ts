import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../core/app.js';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD, loadConfig } from '../core/config.js';
import type { Database } from '../core/db/schema.js';
import type { Network } from '../core/net/ssrf-guard.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-signing';
export const TEST_MFA_KEY = Buffer.alloc(32, 7).toString('base64');
export const ADMIN = { username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD };

export interface TestApp {
  app: FastifyInstance;
  dataDir: string;
  /** Every log line written so far, raw. */
  logs: () => string;
  /** app.inject with an optional bearer token. */
  request: (options: InjectOptions & { token?: string }) => Promise<LightMyRequestResponse>;
  login: (username?: string, password?: string) => Promise<{ access: string; refresh: string }>;
  /** Creates a user through the API as admin and returns tokens for them. */
  userWithRole: (role: 'viewer' | 'editor' | 'admin', username?: string) => Promise<{ id: string; access: string; refresh: string }>;
  /** Rebuilds the app over the same data directory (a restart). */
  restart: () => Promise<TestApp>;
  close: () => Promise<void>;
}

/**
 * A real app over a real SQLite file in a fresh temp folder; container secrets come only from secretDirs (none by default);
 * outbound requests use network (test/fixtures/loopback-network.ts), the system's by default.
 */
export async function startApp(env: Record<string, string> = {}, dataDir?: string, removeOnClose = !dataDir, secretDirs: string[] = [], network?: Network): Promise<TestApp> {
  const dir = dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'hearth-test-'));
  const config = loadConfig(
    { JWT_SECRET_KEY: TEST_JWT_SECRET, MFA_ENCRYPTION_KEY: TEST_MFA_KEY, LOG_LEVEL: 'DEBUG', HEARTH_DEFAULT_EMBEDDER: 'off', ...env, DATA_DIR: dir },
    { secretDirs },
  );
  let captured = '';
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      captured += chunk.toString();
      done();
    },
  });
  const app = await buildApp({ config, logStream, network });
  try {
    await app.ready();
  } catch (error) {
    await app.close().catch(() => undefined);
    if (removeOnClose) rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const request: TestApp['request'] = ({ token, headers, ...options }) =>
    app.inject({ ...options, headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });

  const login: TestApp['login'] = async (username = ADMIN.username, password = ADMIN.password) => {
    const res = await request({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
    if (res.statusCode !== 200) throw new Error(`login ${username} failed: ${res.statusCode} ${res.body}`);
    return { access: res.json().access_token, refresh: res.json().refresh_token };
  };

  let counter = 0;
  const testApp: TestApp = {
    app,
    dataDir: dir,
    logs: () => captured,
    request,
    login,
    async userWithRole(role, username = `${role}-${++counter}`) {
      const admin = await login();
      const password = `${username}-password-long`;
      const created = await request({ method: 'POST', url: '/api/auth/users', token: admin.access, payload: { username, password, role, email: `${username}@example.test` } });
      if (created.statusCode !== 201) throw new Error(`create ${username} failed: ${created.body}`);
      return { id: created.json().id, ...(await login(username, password)) };
    },
    async restart() {
      await app.close();
      return startApp(env, dir, removeOnClose, secretDirs, network);
    },
    async close() {
      await app.close();
      if (removeOnClose) rmSync(dir, { recursive: true, force: true });
    },
  };
  return testApp;
}

/** Counts rows of a table straight from the database, to prove a rejected request changed nothing. */
export async function snapshot(app: FastifyInstance, table: keyof Database): Promise<unknown[]> {
  return app.db.selectFrom(table).selectAll().execute();
}
