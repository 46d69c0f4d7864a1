import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, writeSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../../core/config.js';
import { prose } from '../fixtures/documents.js';
import { LICENSE_ENV, licenseKey } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';
import { cleanupServices, ensureBuilt, exitWithin, listening, type Service, startService, tempDir, waitFor } from '../fixtures/service-process.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';

/**
 * Uploads refused part-way, through the built service as a real process with real sockets and a real
 * SIGTERM: the answer comes while the bytes arrive, the connection it came on is closed (a kept-alive
 * one would otherwise stall on the unread rest of the body), nothing half-written stays behind, and
 * the service still stops cleanly.
 *
 * A full disk is real: a 1 MiB tmpfs is mounted where the service writes (DATA_DIR/documents for
 * uploads, DATA_DIR/index for the vector index) and filled to the last byte. Mounting needs root (CI
 * runs as root); where the mount is refused the test fails and says so, it never passes without
 * having filled a disk.
 */

const mounts: string[] = [];

function mountSmallDisk(dir: string): void {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    const said = (error as { stderr?: Buffer }).stderr?.toString().trim() || String(error);
    throw new Error(`this test fills a real filesystem: it needs to mount a 1 MiB tmpfs at ${dir} (run as root), and mount refused: ${said}`);
  }
  mounts.push(dir);
}

/** Writes zeros into the directory until the filesystem says ENOSPC. */
function fillDisk(dir: string): void {
  const fd = openSync(path.join(dir, 'filler'), 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

beforeAll(() => {
  ensureBuilt();
}, 180_000);

afterAll(() => {
  // Detached first (lazily, a killed service may still hold files there), so the temp folders under them can be removed.
  for (const dir of mounts.splice(0)) execFileSync('umount', ['-l', dir]);
  cleanupServices();
});

async function boot(env: Record<string, string>): Promise<{ service: Service; url: string; token: string }> {
  const service = startService({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'INFO', ...env });
  const url = await listening(service, 30_000);
  const login = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD }),
  });
  expect(login.status).toBe(200);
  return { service, url, token: ((await login.json()) as { access_token: string }).access_token };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Resolves when the connection the answer came on is closed. */
  socketClosed: Promise<void>;
}

/**
 * One request through the given agent. With `sendOnly`, just that many bytes of the body are written and
 * the request is left unfinished: its answer must come while the bytes arrive. A write error after the
 * answer arrived (the server closed the connection) is not a failure.
 */
function send(agent: http.Agent, url: string, options: { method: string; path: string; headers?: Record<string, string>; body?: Buffer; sendOnly?: number }): Promise<Answer> {
  const { port } = new URL(url);
  const headers = { ...options.headers, ...(options.body ? { 'content-length': String(options.body.length) } : {}) };
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = http.request({ host: '127.0.0.1', port, agent, method: options.method, path: options.path, headers }, (response) => {
      answered = true;
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        if (options.sendOnly !== undefined) request.destroy();
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body, socketClosed });
      });
    });
    const socketClosed = new Promise<void>((closed) => request.once('socket', (socket) => socket.once('close', () => closed())));
    request.on('error', (error) => (answered ? undefined : reject(error)));
    if (options.sendOnly === undefined) request.end(options.body);
    else request.write(options.body!.subarray(0, options.sendOnly));
  });
}

/** A text file of exactly this many bytes; the seed makes its content (and sha256) its own. */
const textOf = (bytes: number, seed: number) => prose(seed, 400).repeat(Math.ceil(bytes / 30_000)).slice(0, bytes);

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('a full disk', () => {
  it('an upload is answered 507 disk_full on a closed connection; reads go on, one warning is logged, SIGTERM exits 0', async () => {
    const dataDir = tempDir();
    const documentsDir = path.join(dataDir, 'documents');
    mountSmallDisk(documentsDir);
    const { service, url, token } = await boot({ DATA_DIR: dataDir });
    fillDisk(documentsDir);

    // One connection at a time, kept alive: a second request reuses the first one's socket unless the server closed it.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const auth = { authorization: `Bearer ${token}` };
    const uploadOnce = () => {
      const { payload, headers } = multipartBody([{ name: 'file', content: textOf(2 * 1024 * 1024, 7), filename: 'notes.txt' }]);
      return within(send(agent, url, { method: 'POST', path: '/api/docs/upload', headers: { ...headers, ...auth }, body: payload }), 10_000, 'the upload');
    };

    const first = await uploadOnce();
    expect(first.status, first.body).toBe(507);
    const { error } = JSON.parse(first.body) as { error: { code: string; message: string } };
    expect(error.code).toBe('disk_full');
    expect(error.message).toMatch(/^[A-Z].* (disk|space) .*/);
    expect(first.headers.connection).toBe('close');
    await within(first.socketClosed, 5_000, 'the server closing the upload connection');

    // The next request on the agent is answered (the old connection is not left waiting for the unread body).
    const list = await within(send(agent, url, { method: 'GET', path: '/api/docs', headers: auth }), 5_000, 'a read after the failed upload');
    expect(list.status).toBe(200);
    expect(JSON.parse(list.body)).toMatchObject({ total: 0 });
    expect((await uploadOnce()).status).toBe(507);
    expect((await within(send(agent, url, { method: 'GET', path: '/api/health' }), 5_000, 'health')).status).toBe(200);

    // Nothing half-written stays behind, and the condition is logged once, not per request.
    expect(readdirSync(path.join(documentsDir, '.incoming'))).toEqual([]);
    const warnings = service.logs().filter((entry) => /disk is full/i.test(String(entry.msg)));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40 });
    agent.destroy();

    service.child.kill('SIGTERM');
    expect(await exitWithin(service, 15_000)).toEqual({ code: 0, signal: null });
    expect(service.stderr()).toBe('');
  }, 60_000);

  it('a vector index that cannot be saved is reported once through the log, and SIGTERM still exits 0', async () => {
    const dataDir = tempDir();
    const modelDir = tempDir('hearth-disk-full-models-');
    await installTinyEmbeddingModel(modelDir);
    mountSmallDisk(path.join(dataDir, 'index'));
    const { service, url, token } = await boot({ DATA_DIR: dataDir, MODEL_DIR: modelDir });
    fillDisk(path.join(dataDir, 'index'));

    const { payload, headers } = multipartBody([{ name: 'file', content: prose(11, 60), filename: 'notes.txt' }]);
    const uploaded = await fetch(`${url}/api/docs/upload`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}` }, body: payload });
    expect(uploaded.status, await uploaded.clone().text()).toBe(202);
    const saveFailed = () => service.logs().filter((entry) => /vector index could not be saved/i.test(String(entry.msg)));
    await waitFor('the failed save to be logged', service, () => saveFailed().length > 0, 30_000, 50);

    service.child.kill('SIGTERM');
    expect(await exitWithin(service, 15_000)).toEqual({ code: 0, signal: null });
    // The shutdown's save failed too: still the one line, a warning through pino, and nothing raw on stderr.
    expect(saveFailed()).toHaveLength(1);
    expect(saveFailed()[0]).toMatchObject({ level: 40 });
    expect(service.stderr()).toBe('');
  }, 90_000);
});

describe('plan limits while the bytes arrive', () => {
  const limits = { documents: 100, file_size_bytes: 200_000, storage_bytes: 300_000 };

  /** The service on an ENTERPRISE license with small limits, and uploads over one kept-alive connection. */
  async function limited() {
    const dataDir = tempDir();
    const { service, url, token } = await boot({ DATA_DIR: dataDir, ...LICENSE_ENV });
    const auth = { authorization: `Bearer ${token}` };
    const license = await fetch(`${url}/api/license`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ license_key: licenseKey('ENTERPRISE', limits) }) });
    expect(license.status, await license.clone().text()).toBe(200);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    return {
      service,
      upload: (bytes: number, seed: number, sendOnly?: number) => {
        const { payload, headers } = multipartBody([{ name: 'file', content: textOf(bytes, seed), filename: `notes-${seed}.txt` }]);
        return within(send(agent, url, { method: 'POST', path: '/api/docs/upload', headers: { ...headers, ...auth }, body: payload, sendOnly }), 15_000, 'the upload answer');
      },
      /** Documents listed, asked on the same connection: it must not be stalled by the refused upload's unread body. */
      listed: async () => JSON.parse((await within(send(agent, url, { method: 'GET', path: '/api/docs', headers: auth }), 5_000, 'the document list')).body).total as number,
      incoming: () => readdirSync(path.join(dataDir, 'documents', '.incoming')),
      stored: () => readdirSync(path.join(dataDir, 'documents')).filter((name) => !name.startsWith('.')),
      stop: async () => {
        agent.destroy();
        service.child.kill('SIGTERM');
        expect(await exitWithin(service, 15_000)).toEqual({ code: 0, signal: null });
        expect(service.stderr()).toBe('');
      },
    };
  }

  it('over the file size: 413 before the body has all arrived, the connection closed, no temp file left', async () => {
    const run = await limited();
    // A 5 MB file of which only 300 kB (over the 200 kB limit) is ever sent: the answer cannot wait for the rest.
    const tooBig = await run.upload(5_000_000, 1, 300_000);
    expect(tooBig.status, tooBig.body).toBe(413);
    expect(JSON.parse(tooBig.body).error.code).toBe('payload_too_large');
    expect(tooBig.headers.connection).toBe('close');
    await within(tooBig.socketClosed, 5_000, 'the server closing the refused upload connection');
    expect(run.incoming()).toEqual([]);
    expect(await run.listed()).toBe(0);
    await run.stop();
  }, 60_000);

  it('over the storage: 403 plan_limit_exceeded once the space left is passed, nothing stored, no temp file left', async () => {
    const run = await limited();
    expect((await run.upload(150_000, 2)).status).toBe(202);
    // 150 kB stored + 2 MB > 300 kB: refused once the 150 kB left are passed, the rest of the body unread.
    const overStorage = await run.upload(2_000_000, 3);
    expect(overStorage.status, overStorage.body).toBe(403);
    expect(JSON.parse(overStorage.body).error).toMatchObject({ code: 'plan_limit_exceeded', message: expect.stringMatching(/storage/) });
    expect(overStorage.headers.connection).toBe('close');
    expect(run.incoming()).toEqual([]);
    expect(await run.listed()).toBe(1);
    expect(run.stored()).toHaveLength(1);
    await run.stop();
  }, 60_000);
});
