import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { TEST_JWT_SECRET, TEST_MFA_KEY, startApp } from '../helpers.js';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'hearth-config-'));
const base = () => ({ DATA_DIR: tmp(), JWT_SECRET_KEY: TEST_JWT_SECRET, MFA_ENCRYPTION_KEY: TEST_MFA_KEY });
const load = (env: Record<string, string>) => loadConfig(env, { secretDirs: [], cores: 2 });

function failure(env: Record<string, string>): ConfigError {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('config', () => {
  it('applies the spec defaults', () => {
    const config = load(base());
    expect(config.port).toBe(8000);
    expect(config.jwtAlgorithm).toBe('HS256');
    expect(config.seed.ACCESS_TOKEN_EXPIRE_SECONDS).toBe(900);
    expect(config.seed.REFRESH_TOKEN_EXPIRE_SECONDS).toBe(604_800);
    expect(config.seed.LOG_LEVEL).toBe('INFO');
    expect(config.seed.RAG_LOG_ANONYMISE).toBe(true);
    expect(config.seed.RAG_MIN_CHUNK_LENGTH).toBe(50);
    // 2 cores: the x86 preset (or none elsewhere), one inference thread (bench/threads.ts).
    expect(config.llm).toMatchObject({ backend: 'local', nCtx: 8192, nThreads: 1, nGpuLayers: 0 });
    expect(config.connectorAllowedPaths).toEqual(['/app/docs']);
    expect(config.jobs.storeBackend).toBe('auto');
    expect(config.indexing.upsertBatchSize).toBe(256);
    expect(config.enableApiDocs).toBe(false);
    expect(config.tls).toMatchObject({ enabled: false, hstsMaxAge: 31_536_000, ocspStapling: true });
    expect(config.dbPool).toEqual({ size: 10, maxOverflow: 20, timeoutSeconds: 30, recycleSeconds: 1800 });
    expect(config.indexExtractionWorkers).toBe(1);
    expect(config.rerank).toEqual({ topN: 20, budgetMs: 300 });
    expect(config.seed.RAG_QUERY_EXPANSION_ENABLED).toBe(false);
  });

  it('parses typed values and 0/1 booleans', () => {
    const config = load({ ...base(), N_CTX: '4096', TLS_ENABLED: '1', SERVER_NAME: 'hearth.lan', ENABLE_API_DOCS: 'true', LOG_LEVEL: 'debug', N_GPU_LAYERS: '-1' });
    expect(config.llm.nCtx).toBe(4096);
    expect(config.tls.enabled).toBe(true);
    expect(config.enableApiDocs).toBe(true);
    expect(config.seed.LOG_LEVEL).toBe('DEBUG');
    expect(config.llm.nGpuLayers).toBe(-1);
  });

  it.each([
    [{ N_CTX: 'abc' }, 'N_CTX'],
    [{ LLM_BACKEND: 'foo' }, 'LLM_BACKEND'],
    [{ JOB_STORE_BACKEND: 'bar' }, 'JOB_STORE_BACKEND'],
    [{ CONNECTOR_ALLOWED_PATHS: '/srv/docs:/home' }, 'CONNECTOR_ALLOWED_PATHS'],
    [{ LLM_BACKEND: 'hosted', HOSTED_LLM_MODEL: 'gpt' }, 'HOSTED_LLM_API_KEY'],
    [{ LLM_BACKEND: 'hosted', HOSTED_LLM_API_KEY: 'k' }, 'HOSTED_LLM_MODEL'],
    [{ JWT_SECRET_KEY: 'short' }, 'JWT_SECRET_KEY'],
    [{ JWT_ALGORITHM: 'none' }, 'JWT_ALGORITHM'],
    [{ MFA_ENCRYPTION_KEY: 'not-32-bytes' }, 'MFA_ENCRYPTION_KEY'],
    [{ EMAIL_PROVIDER: 'smtp' }, 'SMTP_HOST'],
    [{ TLS_ENABLED: '1' }, 'SERVER_NAME'],
    [{ TLS_HTTP_REDIRECT_PORT: '8080' }, 'TLS_HTTP_REDIRECT_PORT'],
    [{ TLS_ENABLED: '1', SERVER_NAME: 'hearth.lan', TLS_HTTP_REDIRECT_PORT: 'http' }, 'TLS_HTTP_REDIRECT_PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ ENABLE_API_DOCS: 'maybe' }, 'ENABLE_API_DOCS'],
    [{ JOB_STORE_BACKEND: 'redis' }, 'JOB_STORE_BACKEND'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ ACCESS_TOKEN_EXPIRE_SECONDS: '999999' }, 'ACCESS_TOKEN_EXPIRE_SECONDS'],
    [{ RERANK_TOP_N: '0' }, 'RERANK_TOP_N'],
    [{ RERANK_BUDGET_MS: 'fast' }, 'RERANK_BUDGET_MS'],
  ])('refuses %o naming %s', (override, variable) => {
    const error = failure({ ...base(), ...override });
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}:`)).toBe(true);
    expect(error.message).not.toContain('\n');
  });

  it('accepts CONNECTOR_ALLOWED_PATHS that include /app/docs', () => {
    expect(load({ ...base(), CONNECTOR_ALLOWED_PATHS: '/srv/docs:/app/docs/' }).connectorAllowedPaths).toEqual(['/srv/docs', '/app/docs']);
  });

  it('generates missing secrets once into the data directory with mode 0600', () => {
    const dataDir = tmp();
    const first = load({ DATA_DIR: dataDir });
    const file = path.join(dataDir, 'secrets', 'jwt_secret_key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dataDir, 'secrets', 'mfa_encryption_key')).mode & 0o777).toBe(0o600);
    expect(first.notices.some((n) => n.startsWith('JWT_SECRET_KEY was not configured'))).toBe(true);
    const second = load({ DATA_DIR: dataDir });
    expect(second.jwtSecretKey).toBe(first.jwtSecretKey);
    expect(second.mfaEncryptionKey.equals(first.mfaEncryptionKey)).toBe(true);
    expect(second.notices).toEqual([]);
  });

  it('never generates a secret when a configured one is malformed', () => {
    const dataDir = tmp();
    expect(() => load({ DATA_DIR: dataDir, JWT_SECRET_KEY: 'short' })).toThrow(ConfigError);
    expect(() => statSync(path.join(dataDir, 'secrets'))).toThrow();
  });

  it('reads container secrets from $CREDENTIALS_DIRECTORY', () => {
    const secrets = tmp();
    const mfa = Buffer.alloc(32, 9).toString('hex');
    writeFileSync(path.join(secrets, 'mfa_encryption_key'), `${mfa}\n`);
    writeFileSync(path.join(secrets, 'smtp_password'), 'smtp-pass\n');
    writeFileSync(path.join(secrets, 'oidc_corp_client_secret'), 'oidc-secret\n');
    const config = loadConfig(
      { DATA_DIR: tmp(), JWT_SECRET_KEY: TEST_JWT_SECRET, CREDENTIALS_DIRECTORY: secrets, OIDC_PROVIDERS: 'corp', OIDC_CORP_CLIENT_ID: 'hearth' },
      { cores: 2 },
    );
    expect(config.mfaEncryptionKey.toString('hex')).toBe(mfa);
    expect(config.email.smtpPassword).toBe('smtp-pass');
    expect(config.oidcEnvProviders[0]).toMatchObject({ name: 'corp', clientId: 'hearth', clientSecret: 'oidc-secret', scopes: 'openid email profile' });
  });

  it('caps derived defaults by the cores present', () => {
    expect(loadConfig(base(), { secretDirs: [], cores: 8 }).indexExtractionWorkers).toBe(7);
  });
});

describe('seeded settings', () => {
  it('are copied on first boot and read from the settings table afterwards', async () => {
    const first = await startApp({ ACCESS_TOKEN_EXPIRE_SECONDS: '1200', RAG_MIN_CHUNK_LENGTH: '80' });
    expect(first.app.settings.current('ACCESS_TOKEN_EXPIRE_SECONDS')).toBe(1200);
    await first.app.settings.set({ RAG_MIN_CHUNK_LENGTH: 120 });
    await first.app.close();

    // A different environment value on the next boot does not override the stored setting.
    const again = await startApp({ ACCESS_TOKEN_EXPIRE_SECONDS: '600', RAG_MIN_CHUNK_LENGTH: '10' }, first.dataDir);
    expect(again.app.settings.current('ACCESS_TOKEN_EXPIRE_SECONDS')).toBe(1200);
    expect(again.app.settings.current('RAG_MIN_CHUNK_LENGTH')).toBe(120);
    await again.close();
  });

  it('LOG_LEVEL changes the logger at run time', async () => {
    const t = await startApp({ LOG_LEVEL: 'INFO' });
    expect(t.app.log.level).toBe('info');
    await t.app.settings.set({ LOG_LEVEL: 'ERROR' });
    expect(t.app.log.level).toBe('error');
    await t.close();
  });
});

describe('storage', () => {
  it('uses WAL and foreign keys, and migrations are recorded', async () => {
    const t = await startApp();
    const { sql } = await import('kysely');
    const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(t.app.db);
    const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(t.app.db);
    expect(journal.rows[0].journal_mode).toBe('wal');
    expect(fk.rows[0].foreign_keys).toBe(1);
    const migrations = await sql<{ name: string }>`select name from kysely_migration`.execute(t.app.db);
    expect(migrations.rows.map((r) => r.name)).toContain('0001-core');
    await t.close();
  });

  it('keeps a 16 MiB page cache, or HEARTH_SQLITE_CACHE_MB; a value out of 1..4096 stops the start', async () => {
    const { sql } = await import('kysely');
    const cacheSize = async (env: Record<string, string>) => {
      const t = await startApp(env);
      try {
        return (await sql<{ cache_size: number }>`pragma cache_size`.execute(t.app.db)).rows[0].cache_size;
      } finally {
        await t.close();
      }
    };
    expect(await cacheSize({})).toBe(-16 * 1024); // negative: KiB
    expect(await cacheSize({ HEARTH_SQLITE_CACHE_MB: '48' })).toBe(-48 * 1024);
    for (const bad of ['0', '4097', 'lots', '2.5']) expect(failure({ ...base(), HEARTH_SQLITE_CACHE_MB: bad }).message).toContain('HEARTH_SQLITE_CACHE_MB');
  });

  it('ignores DB_POOL_* for SQLite', () => {
    const config = load({ ...base(), DB_POOL_SIZE: '3' });
    expect(config.dbPool.size).toBe(3);
    expect(config.databaseFile.endsWith('hearth.db')).toBe(true);
  });
});


describe('firmware profiles', () => {
  it('every profile is a valid configuration', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { parseEnv } = await import('node:util');
    const dir = path.join(import.meta.dirname, '..', '..', 'firmware-profiles');
    const profiles = readdirSync(dir).filter((file) => file.endsWith('.env'));
    expect(profiles.length).toBeGreaterThanOrEqual(4);
    for (const profile of profiles) {
      const env = parseEnv(readFileSync(path.join(dir, profile), 'utf8')) as Record<string, string>;
      expect(() => load({ ...base(), ...env }), profile).not.toThrow();
    }
  });
});

describe('deployment', () => {
  it('npm start and the systemd unit run node with the same flags and environment as the benches measure', async () => {
    const { readFileSync } = await import('node:fs');
    const { DEPLOYED_ENV, DEPLOYED_NODE_ARGS } = await import('../../bench/harness.js');
    const root = path.join(import.meta.dirname, '..', '..');
    const start: string = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start;
    const unit = readFileSync(path.join(root, 'systemd', 'hearth.service'), 'utf8');
    const flags = DEPLOYED_NODE_ARGS.join(' ');
    expect(start).toContain(`node ${flags} dist/server.js`);
    expect(unit).toMatch(new RegExp(`^ExecStart=/usr/bin/node ${flags} /opt/hearth/dist/server\\.js$`, 'm'));
    for (const [name, value] of Object.entries(DEPLOYED_ENV)) {
      expect(start).toContain(`${name}=\${${name}:-${value}}`);
      expect(unit).toMatch(new RegExp(`^Environment=${name}=${value}$`, 'm'));
    }
  });
});

describe('password reset configuration', () => {
  it('defaults to 10 a minute with bursts of 20, and no PUBLIC_URL', () => {
    const config = load(base());
    expect(config.rateLimitReset).toEqual({ perMinute: 10, burst: 20 });
    expect(config.publicUrl).toBeUndefined();
    expect(config.email).toMatchObject({ provider: 'console', smtpTls: false, smtpStartTls: false });
  });

  it('reads RATE_LIMIT_RESET, RATE_LIMIT_RESET_BURST and PUBLIC_URL (trailing slash dropped)', () => {
    const config = load({ ...base(), RATE_LIMIT_RESET: '3', RATE_LIMIT_RESET_BURST: '5', PUBLIC_URL: 'https://hearth.lan/app/' });
    expect(config.rateLimitReset).toEqual({ perMinute: 3, burst: 5 });
    expect(config.publicUrl).toBe('https://hearth.lan/app');
  });

  it.each([
    [{ RATE_LIMIT_RESET: '0' }, 'RATE_LIMIT_RESET'],
    [{ RATE_LIMIT_RESET: '-5' }, 'RATE_LIMIT_RESET'],
    [{ RATE_LIMIT_RESET: '10/min' }, 'RATE_LIMIT_RESET'],
    [{ RATE_LIMIT_RESET: '2.5' }, 'RATE_LIMIT_RESET'],
    [{ RATE_LIMIT_RESET_BURST: '0' }, 'RATE_LIMIT_RESET_BURST'],
    [{ RATE_LIMIT_RESET_BURST: 'many' }, 'RATE_LIMIT_RESET_BURST'],
    [{ RATE_LIMIT_RESET_BURST: '100000' }, 'RATE_LIMIT_RESET_BURST'],
    [{ PUBLIC_URL: 'hearth.lan' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'ftp://hearth.lan' }, 'PUBLIC_URL'],
    [{ SMTP_TLS: '1', SMTP_STARTTLS: '1' }, 'SMTP_STARTTLS'],
  ])('refuses %o naming %s', (override, variable) => {
    const error = failure({ ...base(), ...override });
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}:`)).toBe(true);
  });
});

describe('TRUST_PROXY', () => {
  it('is off by default and accepts true or a list of proxy addresses', () => {
    expect(load(base()).trustProxy).toBe(false);
    expect(load({ ...base(), TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(load({ ...base(), TRUST_PROXY: '127.0.0.1, 10.0.0.0/8' }).trustProxy).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(failure({ ...base(), TRUST_PROXY: 'proxy.lan' }).variable).toBe('TRUST_PROXY');
  });

  it('makes throttles key on the forwarded client address', async () => {
    const t = await startApp({ TRUST_PROXY: '127.0.0.1' });
    for (let i = 0; i < 50; i++) {
      await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: `u${i}`, password: 'bad-password' }, headers: { 'x-forwarded-for': '192.0.2.7' } });
    }
    const blocked = await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: 'x' }, headers: { 'x-forwarded-for': '192.0.2.7' } });
    expect(blocked.statusCode).toBe(429);
    const other = await t.request({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: 'x' }, headers: { 'x-forwarded-for': '192.0.2.8' } });
    expect(other.statusCode).toBe(401);
    await t.close();
  });
});
