import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../core/app.js';
import { loadConfig } from '../core/config.js';
import { SessionsRepository } from '../plugins/sessions/repository.js';
import Fastify from 'fastify';
import helmet from '@fastify/helmet';

const dir = mkdtempSync(path.join(os.tmpdir(), 'hm-'));
const config = loadConfig({ DATA_DIR: dir, JWT_SECRET_KEY: 'x'.repeat(40), MFA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'), LOG_LEVEL: 'ERROR' }, { secretDirs: [] });
const app = await buildApp({ config });
await app.ready();
const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: 'hearth-change-me' } });
const token = login.json().access_token as string;
const claims = app.tokens.check(token, 'access');

async function time(name: string, n: number, fn: () => unknown) {
  for (let i = 0; i < Math.min(n, 2000); i++) await fn();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  const us = Number(process.hrtime.bigint() - t) / 1000 / n;
  console.log(name.padEnd(52), us.toFixed(1), 'µs/op');
}
const repo = new SessionsRepository(app.db);
const sqlite = (app.db as any).getExecutor().adapter; // unused
await time('jwt verify (fast-jwt, cached)', 50000, () => app.tokens.check(token, 'access'));
await time('kysely principal() join query', 20000, () => repo.principal(claims.sub, claims.sid));
await time('kysely users.findById', 20000, () => app.users.get(claims.sub));
await time('identity.resolve (principal + JSON.parse)', 20000, () => app.identity.resolve(claims));
// raw better-sqlite3, prepared once
const Database = (await import('better-sqlite3')).default;
const raw = new Database(path.join(dir, 'hearth.db'));
const c = repo.principal(claims.sub, claims.sid);
const compiled = app.db.selectFrom('users').innerJoin('auth_sessions', 'auth_sessions.user_id', 'users.id').select(['users.id', 'users.username', 'users.role', 'users.email', 'users.groups', 'users.tokens_valid_after']).select('auth_sessions.revoked_at as session_revoked_at').where('users.id', '=', claims.sub).where('auth_sessions.id', '=', claims.sid).compile();
const stmt = raw.prepare(compiled.sql);
await time('raw better-sqlite3 prepared-once principal', 50000, () => stmt.get(...(compiled.parameters as any[])));
await time('raw better-sqlite3 prepare+get each time', 50000, () => raw.prepare(compiled.sql).get(...(compiled.parameters as any[])));
await time('kysely compile() only (no execute)', 20000, () => app.db.selectFrom('users').innerJoin('auth_sessions', 'auth_sessions.user_id', 'users.id').select(['users.id', 'users.username', 'users.role', 'users.email', 'users.groups', 'users.tokens_valid_after']).select('auth_sessions.revoked_at as session_revoked_at').where('users.id', '=', claims.sub).where('auth_sessions.id', '=', claims.sid).compile());
await time('kysely executeQuery(precompiled)', 20000, () => app.db.executeQuery(compiled));
await time('inject GET /api/auth/me', 5000, () => app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } }));
await time('inject GET /api/auth/me (no token, 401)', 5000, () => app.inject({ method: 'GET', url: '/api/auth/me' }));
await time('inject GET /nope (404)', 5000, () => app.inject({ method: 'GET', url: '/nope' }));
const bare = Fastify({ logger: false }); bare.get('/', async () => ({ hello: 'world' })); await bare.ready();
await time('inject bare fastify hello', 5000, () => bare.inject({ method: 'GET', url: '/' }));
const h = Fastify({ logger: false }); await h.register(helmet); h.get('/', async () => ({ hello: 'world' })); await h.ready();
await time('inject fastify + helmet hello', 5000, () => h.inject({ method: 'GET', url: '/' }));
const l = Fastify({ logger: { level: 'error' } }); l.get('/', async () => ({ hello: 'world' })); await l.ready();
await time('inject fastify + pino(error) hello', 5000, () => l.inject({ method: 'GET', url: '/' }));
await app.close();
