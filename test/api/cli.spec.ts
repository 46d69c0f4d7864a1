import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../../core/config.js';
import { LICENSE_ENV, licenseKey } from '../fixtures/license.js';
import { STORIES_GGUF } from '../fixtures/models.js';
import { cleanupServices, ensureBuilt, exitWithin, listening, ROOT, type Service, startService, tempDir, waitFor } from '../fixtures/service-process.js';

/**
 * The `hearth` command as an admin runs it (node dist/cli.js), against a real service process on the same
 * DATA_DIR, both while it runs and while it is stopped. Secrets live as systemd would hand them over: the
 * service reads CREDENTIALS_DIRECTORY, the CLI the folder they are loaded from (HEARTH_CREDENTIALS_SOURCE).
 */

const CLI = path.join(ROOT, 'dist', 'cli.js');
let dataDir: string;
let credentials: string;

function hearth(args: string[], input?: string, env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', DATA_DIR: dataDir, HEARTH_CREDENTIALS_SOURCE: credentials, ...LICENSE_ENV, ...env },
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function boot(): Service {
  return startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, CREDENTIALS_DIRECTORY: credentials, LOG_LEVEL: 'INFO', ...LICENSE_ENV });
}

async function stop(service: Service): Promise<void> {
  service.child.kill('SIGTERM');
  expect((await exitWithin(service, 15_000)).code).toBe(0);
}

async function call(url: string, method: string, route: string, body?: unknown, token?: string): Promise<{ status: number; json: Record<string, any> }> {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

async function login(url: string, username: string, password: string): Promise<string> {
  const res = await call(url, 'POST', '/api/auth/login', { username, password });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.access_token;
}

/** A revoked token is refused once the service's one-second identity cache has passed. */
async function refused(service: Service, url: string, token: string): Promise<void> {
  await waitFor('the token to be refused', service, async () => (await call(url, 'GET', '/api/auth/me', undefined, token)).status === 401, 5_000, 100);
}

beforeAll(() => {
  ensureBuilt();
  dataDir = path.join(tempDir('hearth-cli-'), 'data');
  credentials = tempDir('hearth-credentials-');
  writeFileSync(path.join(credentials, 'jwt_secret_key'), `${randomBytes(48).toString('base64url')}\n`, { mode: 0o600 });
  writeFileSync(path.join(credentials, 'mfa_encryption_key'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
}, 300_000);
afterAll(() => cleanupServices());

describe('hearth (the command line)', () => {
  it('prints help for itself and every command, and documents its exit codes', () => {
    const top = hearth(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Exit codes: 0 done, 1 failed');
    for (const command of ['admin', 'sessions', 'models', 'backup', 'restore', 'keys', 'doctor', 'install-service', 'uninstall-service']) {
      const help = hearth([command, '--help']);
      expect(help.code, `${command} --help`).toBe(0);
      expect(help.stdout, command).toMatch(/Exit codes/);
    }
    expect(hearth([]).code).toBe(2);
    expect(hearth(['frobnicate']).code).toBe(2);
    expect(hearth(['admin', 'reset-password']).code).toBe(2);
    expect(hearth(['admin', 'reset-password', 'x', '--bogus']).code).toBe(2);
    const badConfig = hearth(['sessions', 'revoke-all'], undefined, { N_CTX: 'abc' });
    expect(badConfig.code).toBe(78);
    expect(badConfig.stderr).toContain('N_CTX');
  }, 180_000);

  it('works while the service runs: reset-password, create-admin and revoke-all take effect at once; doctor reads the running service', async () => {
    const service = boot();
    const url = await listening(service, 60_000);
    try {
      const before = await login(url, 'admin', DOCUMENTED_DEFAULT_ADMIN_PASSWORD);

      const reset = hearth(['admin', 'reset-password', 'admin', '--password-stdin'], 'a-new-admin-password-1\n');
      expect(reset.code, reset.stderr).toBe(0);
      await refused(service, url, before);
      expect((await call(url, 'POST', '/api/auth/login', { username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD })).status).toBe(401);
      await login(url, 'admin', 'a-new-admin-password-1');

      const created = hearth(['admin', 'create-admin', '--username', 'rescue']);
      expect(created.code, created.stderr).toBe(0);
      const password = /password: (\S+)/.exec(created.stdout)![1];
      const rescue = await login(url, 'rescue', password);
      expect((await call(url, 'GET', '/api/auth/me', undefined, rescue)).json).toMatchObject({ username: 'rescue', role: 'admin' });
      expect(hearth(['admin', 'create-admin', '--username', 'rescue']).code).toBe(1);
      expect(hearth(['admin', 'reset-password', 'nobody']).code).toBe(1);
      expect(hearth(['admin', 'reset-password', 'rescue', '--password-stdin'], 'short\n').code).toBe(1);

      expect(hearth(['sessions', 'revoke-all']).code).toBe(0);
      await refused(service, url, rescue);

      const doctor = hearth(['doctor']);
      expect(doctor.code, doctor.stdout).toBe(0);
      for (const check of ['configuration', 'permissions', 'disk space', 'database', 'tls', 'licence', 'port']) expect(doctor.stdout).toMatch(new RegExp(`^(OK|WARN) +${check}:`, 'm'));
      expect(doctor.stdout).toMatch(/^WARN  embedding models: no embedding model installed/m);
      expect(doctor.stdout).toContain('-> search runs on keywords until one is installed');
    } finally {
      await stop(service);
    }
  }, 120_000);

  it('works while the service is stopped, and the service starts on what it wrote', async () => {
    const reset = hearth(['admin', 'reset-password', 'admin', '--password-stdin'], 'a-second-admin-password\n');
    expect(reset.code, reset.stderr).toBe(0);
    const created = hearth(['admin', 'create-admin', '--username', 'offline-rescue', '--password-stdin'], 'offline-rescue-password\n');
    expect(created.code, created.stderr).toBe(0);
    expect(hearth(['sessions', 'revoke-all']).code).toBe(0);
    // Stopped: the port is free for it, the rest as before.
    const doctor = hearth(['doctor'], undefined, { PORT: '0' });
    expect(doctor.stdout).toMatch(/^OK +port: .* is free/m);
    // A backup of the stopped service restores elsewhere (the running case: test/api/backup.spec.ts).
    const archive = path.join(tempDir('hearth-cli-backup-'), 'stopped.tar.gz');
    expect(hearth(['backup', archive]).code).toBe(0);
    const restored = hearth(['restore', archive], undefined, { DATA_DIR: path.join(path.dirname(archive), 'restored') });
    expect(restored.code, restored.stderr).toBe(0);
    expect(existsSync(path.join(path.dirname(archive), 'restored', 'hearth.db'))).toBe(true);

    const service = boot();
    const url = await listening(service, 60_000);
    try {
      await login(url, 'admin', 'a-second-admin-password');
      await login(url, 'offline-rescue', 'offline-rescue-password');
    } finally {
      await stop(service);
    }
  }, 120_000);

  it('doctor tests the CUDA build where N_GPU_LAYERS asks for it: a warning with the reason and a remedy when it cannot decode', () => {
    const modelDir = path.join(tempDir('hearth-cli-models-'), 'models');
    expect(hearth(['models', 'import-llm', STORIES_GGUF], undefined, { MODEL_DIR: modelDir }).code).toBe(0);
    const cpu = hearth(['doctor'], undefined, { MODEL_DIR: modelDir, N_GPU_LAYERS: '0' });
    expect(cpu.stdout).toMatch(/^OK +gpu: N_GPU_LAYERS=0: the chat model runs on the CPU$/m);
    const wanted = hearth(['doctor'], undefined, { MODEL_DIR: modelDir, N_GPU_LAYERS: '-1' });
    expect(wanted.code, wanted.stdout).toBe(0);
    const line = wanted.stdout.split('\n').find((l) => / gpu: /.test(l)) ?? '';
    if (line.startsWith('OK')) expect(line).toContain('the CUDA build decoded stories260K with a layer on the GPU');
    else {
      expect(line).toMatch(/^WARN  gpu: N_GPU_LAYERS=-1, but the CUDA build failed its self-test \(.+\): the chat model runs on the CPU$/);
      expect(wanted.stdout).toContain('-> build the CUDA backend on this box (scripts/build-cuda-backend.sh');
    }
  }, 120_000);

  it('doctor names a failing check with its remedy and exits 3', () => {
    const result = hearth(['doctor'], undefined, { TLS_ENABLED: '1', SERVER_NAME: 'hearth.lan', TLS_CERT_PATH: path.join(dataDir, 'missing.pem'), TLS_KEY_PATH: path.join(dataDir, 'missing-key.pem') });
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/^FAIL  tls: /m);
    expect(result.stdout).toContain('-> fix TLS_CERT_PATH / TLS_KEY_PATH');
  });
});

describe('hearth keys', () => {
  const code = (secret: string, offset = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset });
  const totpRows = () => {
    const db = new Database(path.join(dataDir, 'hearth.db'), { readonly: true });
    try {
      return db.prepare('SELECT user_id, secret_sealed FROM totp ORDER BY user_id').all() as Array<{ user_id: string; secret_sealed: string }>;
    } finally {
      db.close();
    }
  };

  /** Enrols TOTP for a new admin over HTTP (ENTERPRISE): its secret. */
  async function enrolled(url: string, admin: string, username: string): Promise<string> {
    const created = await call(url, 'POST', '/api/auth/users', { username, password: `${username}-password`, role: 'viewer' }, admin);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const token = await login(url, username, `${username}-password`);
    const { secret } = (await call(url, 'POST', '/api/auth/totp/enroll', undefined, token)).json;
    expect((await call(url, 'POST', '/api/auth/totp/enroll/confirm', { totp_code: await code(secret) }, token)).status).toBe(200);
    return secret;
  }

  async function mfaLogin(url: string, username: string, secret: string): Promise<number> {
    const first = await call(url, 'POST', '/api/auth/login', { username, password: `${username}-password` });
    return (await call(url, 'POST', '/api/auth/totp/mfa-login', { mfa_token: first.json.mfa_token, totp_code: await code(secret, 30) })).status;
  }

  it('rotate-mfa re-seals every TOTP secret under a new key (run while the service runs; it signs in with TOTP after its restart)', async () => {
    const keyFile = path.join(credentials, 'mfa_encryption_key');
    let service = boot();
    let url = await listening(service, 60_000);
    const admin = await login(url, 'admin', 'a-second-admin-password');
    expect((await call(url, 'POST', '/api/license', { license_key: licenseKey('ENTERPRISE') }, admin)).status).toBe(200);
    const secret = await enrolled(url, admin, 'totp-user');
    const oldKey = readFileSync(keyFile, 'utf8');
    const sealedBefore = totpRows();

    const rotated = hearth(['keys', 'rotate-mfa']);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(readFileSync(keyFile, 'utf8')).not.toBe(oldKey);
    expect(readFileSync(`${keyFile}.previous`, 'utf8')).toBe(oldKey);
    expect(totpRows().map((row) => row.secret_sealed)).not.toEqual(sealedBefore.map((row) => row.secret_sealed));

    await stop(service);
    service = boot();
    url = await listening(service, 60_000);
    try {
      expect(await mfaLogin(url, 'totp-user', secret)).toBe(200);
    } finally {
      await stop(service);
    }
  }, 120_000);

  it('rotate-mfa changes nothing when one sealed value cannot be opened (one transaction, the key file untouched)', () => {
    const keyFile = path.join(credentials, 'mfa_encryption_key');
    const keyBefore = readFileSync(keyFile, 'utf8');
    // A second TOTP row sealed under some other key: it cannot be re-sealed.
    const db = new Database(path.join(dataDir, 'hearth.db'));
    const userId = (db.prepare("SELECT id FROM users WHERE username = 'rescue'").get() as { id: string }).id;
    db.prepare("INSERT INTO totp (user_id, secret_sealed, state, last_used_step, created_at, enrolled_at) VALUES (?, 'v1.AAAA.AAAA.AAAA', 'enrolled', NULL, 0, 0)").run(userId);
    db.close();
    const before = totpRows();

    const result = hearth(['keys', 'rotate-mfa']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot be opened with the current key: nothing was changed');
    expect(totpRows()).toEqual(before);
    expect(readFileSync(keyFile, 'utf8')).toBe(keyBefore);
    expect(existsSync(`${keyFile}.new`)).toBe(false);
  });

  it('rotate-jwt writes a new key: after a restart, tokens signed with the old one are refused', async () => {
    let service = boot();
    let url = await listening(service, 60_000);
    const token = await login(url, 'admin', 'a-second-admin-password');
    const rotated = hearth(['keys', 'rotate-jwt']);
    expect(rotated.code, rotated.stderr).toBe(0);
    await stop(service);
    service = boot();
    url = await listening(service, 60_000);
    try {
      expect((await call(url, 'GET', '/api/auth/me', undefined, token)).status).toBe(401);
      await login(url, 'admin', 'a-second-admin-password');
    } finally {
      await stop(service);
    }
    // A key set in the environment is the environment's to change.
    const refusedEnv = hearth(['keys', 'rotate-jwt'], undefined, { JWT_SECRET_KEY: 'x'.repeat(40) });
    expect(refusedEnv.code).toBe(1);
    expect(refusedEnv.stderr).toContain('JWT_SECRET_KEY is set in the environment');
  }, 120_000);
});

describe('hearth install-service --dry-run', () => {
  it('writes the unit, credentials, settings and data folder into a temporary root and runs no system command', () => {
    const root = tempDir('hearth-root-');
    const result = hearth(['install-service', '--root', root, '--dry-run', '--profile', 'jetson-orin-nano']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('would run: useradd --system');
    expect(result.stdout).toContain('would run: systemctl enable --now hearth');
    const unit = readFileSync(path.join(root, 'etc/systemd/system/hearth.service'), 'utf8');
    expect(unit).toMatch(/^MemoryMax=6G$/m);
    expect(unit).toMatch(/^LoadCredential=jwt_secret_key:\/etc\/hearth\/credentials\/jwt_secret_key$/m);
    expect(unit).toMatch(new RegExp(`^ExecStart=${process.execPath.replace(/[/.]/g, '\\$&')} --optimize-for-size ${ROOT.replace(/[/.]/g, '\\$&')}/dist/server.js$`, 'm'));
    const mode = (file: string) => (existsSync(path.join(root, file)) ? statSync(path.join(root, file)).mode & 0o777 : -1);
    expect(mode('var/lib/hearth')).toBe(0o700);
    expect(mode('etc/hearth/credentials')).toBe(0o700);
    expect(mode('etc/hearth/credentials/jwt_secret_key')).toBe(0o600);
    expect(mode('etc/hearth/credentials/mfa_encryption_key')).toBe(0o600);
    expect(Buffer.from(readFileSync(path.join(root, 'etc/hearth/credentials/mfa_encryption_key'), 'utf8').trim(), 'base64')).toHaveLength(32);
    expect(readFileSync(path.join(root, 'etc/hearth/hearth.env'), 'utf8')).toContain('N_CTX=4096');

    // Again: the credentials are kept (a reinstall must not lock every TOTP secret away).
    const jwt = readFileSync(path.join(root, 'etc/hearth/credentials/jwt_secret_key'), 'utf8');
    expect(hearth(['install-service', '--root', root, '--dry-run']).stdout).toContain('kept /etc/hearth/credentials/jwt_secret_key');
    expect(readFileSync(path.join(root, 'etc/hearth/credentials/jwt_secret_key'), 'utf8')).toBe(jwt);

    mkdirSync(path.join(root, 'var/lib/hearth/documents'), { recursive: true });
    const uninstall = hearth(['uninstall-service', '--root', root, '--dry-run']);
    expect(uninstall.code).toBe(0);
    expect(existsSync(path.join(root, 'etc/systemd/system/hearth.service'))).toBe(false);
    expect(existsSync(path.join(root, 'var/lib/hearth/documents'))).toBe(true);
    expect(existsSync(path.join(root, 'etc/hearth/credentials/jwt_secret_key'))).toBe(true);
    expect(hearth(['uninstall-service', '--root', root, '--dry-run', '--purge']).code).toBe(0);
    expect(existsSync(path.join(root, 'var/lib/hearth'))).toBe(false);
  });

  it('produces a unit that systemd-analyze verify accepts (where systemd-analyze exists)', () => {
    const analyze = spawnSync('systemd-analyze', ['--version']);
    if (analyze.error) return; // not installed here: the check is skipped, not faked
    const root = tempDir('hearth-root-');
    expect(hearth(['install-service', '--root', root, '--dry-run']).code).toBe(0);
    const unit = path.join(root, 'etc/systemd/system/hearth.service');
    const result = spawnSync('systemd-analyze', ['verify', '--root', root, unit], { encoding: 'utf8' });
    // verify warns about the missing user and node outside a real install; any line about the unit's own syntax fails.
    const problems = `${result.stdout}${result.stderr}`.split('\n').filter((line) => /hearth\.service:\d+|Unknown (key|section)|Failed to parse/i.test(line));
    expect(problems).toEqual([]);
  });
});
