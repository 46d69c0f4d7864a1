import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../../core/config.js';
import { adaptationDocuments } from '../fixtures/adaptation-documents.js';
import { prose } from '../fixtures/documents.js';
import { multipartBody } from '../fixtures/multipart.js';
import { cleanupServices, ensureBuilt, exitWithin, listening, ROOT, type Service, startService, tempDir, waitFor } from '../fixtures/service-process.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { installShippedEmbedder, SHIPPED_EMBEDDER } from '../../native/embeddings/index.js';
import { buildAdaptedModel } from '../../plugins/search-index/corpus-adaptation/build.js';

/**
 * Backup and restore with real processes: the service ingests, `hearth backup` runs while a document is
 * part-way through indexing, the archive is restored into an empty DATA_DIR elsewhere, and the service
 * started there has the same users and answers every search the same as the original.
 */

const CLI = path.join(ROOT, 'dist', 'cli.js');
const MARKERS = ['quokka', 'axolotl', 'pangolin', 'narwhal'];
const PASSPHRASE = 'correct horse battery staple';
const JOB_TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

let modelDir: string;
let work: string;
let archive: string;

interface Running {
  service: Service;
  url: string;
  token: string;
}

function hearth(args: string[], dataDir: string, input?: string, models = modelDir) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', DATA_DIR: dataDir, MODEL_DIR: models, HEARTH_CREDENTIALS_SOURCE: path.join(work, 'no-credentials') },
    input,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function boot(dataDir: string): Promise<Running> {
  // No secrets in the environment: the service generates them into DATA_DIR/secrets (the quick start), which the backup carries encrypted.
  const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, MODEL_DIR: modelDir, INDEX_UPSERT_BATCH_SIZE: '4', LOG_LEVEL: 'INFO' });
  const url = await listening(service, 60_000);
  const res = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD }) });
  expect(res.status).toBe(200);
  return { service, url, token: ((await res.json()) as { access_token: string }).access_token };
}

async function api<T>(run: Running, method: string, route: string, body?: unknown, token = run.token): Promise<T> {
  const res = await fetch(`${run.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

async function stop(run: Running): Promise<void> {
  run.service.child.kill('SIGTERM');
  expect((await exitWithin(run.service, 15_000)).code).toBe(0);
}

async function jobsFinished(run: Running): Promise<void> {
  await waitFor('every job to finish', run.service, async () => {
    const { jobs } = await api<{ jobs: Array<{ state: string }> }>(run, 'GET', '/api/jobs?limit=500');
    return jobs.length > 0 && jobs.every((job) => JOB_TERMINAL.has(job.state));
  }, 240_000, 100);
}

/** What a user sees: the users, and each marker's hybrid and vector results (ids, text, scores to 4 places). */
async function observable(run: Running) {
  const users = (await api<{ users: Array<{ id: string; username: string; role: string; email: string | null }> }>(run, 'GET', '/api/auth/users?limit=100')).users
    .map(({ id, username, role, email }) => ({ id, username, role, email }))
    .sort((a, b) => a.username.localeCompare(b.username));
  const searches: Record<string, unknown> = {};
  for (const marker of MARKERS) {
    for (const mode of ['hybrid', 'vector', 'keyword']) {
      const { results } = await api<{ results: Array<{ chunk_id: string; document_id: string; text: string; score: number }> }>(run, 'POST', '/api/search', { query: `the ${marker} appendix`, mode, k: 5 });
      searches[`${mode}:${marker}`] = results.map((r) => ({ chunk: r.chunk_id, document: r.document_id, text: r.text, score: r.score.toFixed(4) }));
    }
  }
  return { users, searches };
}

const listing = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : null);

beforeAll(async () => {
  ensureBuilt();
  work = tempDir('hearth-backup-');
  modelDir = path.join(work, 'models');
  await installTinyEmbeddingModel(modelDir);
  archive = path.join(work, 'hearth.tar.gz');
}, 300_000);
afterAll(() => cleanupServices());

describe('hearth backup / restore', () => {
  let before: Awaited<ReturnType<typeof observable>>;
  let originalToken: string;

  it('backs up during an ingest; the restore elsewhere has the same users and the same search results', async () => {
    const dataDir = path.join(work, 'original');
    const run = await boot(dataDir);
    originalToken = run.token;
    await api(run, 'POST', '/api/auth/users', { username: 'editor-eve', password: 'editor-eve-password', role: 'editor', email: 'eve@example.test' });
    MARKERS.forEach((marker, i) => {
      const paragraphs = Array.from({ length: 120 }, (_, p) => prose(i * 1000 + p, 14));
      writeFileSync(path.join(work, `${marker}.txt`), `${paragraphs.join('\n\n')}\n\nThe ${marker} appendix closes this volume.\n`);
    });
    const watcher = new Database(path.join(dataDir, 'hearth.db'), { readonly: true });
    const midIngest = watcher.prepare("SELECT count(*) AS n FROM documents d JOIN chunks c ON c.document_id = d.id WHERE d.status = 'indexing'");
    try {
      for (const marker of MARKERS) {
        const { payload, headers } = multipartBody([{ name: 'file', content: readFileSync(path.join(work, `${marker}.txt`)), filename: `${marker}.txt` }]);
        const res = await fetch(`${run.url}/api/docs/upload`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${run.token}` }, body: payload });
        expect(res.status, await res.text()).toBe(202);
      }
      await waitFor('a document part-way through indexing', run.service, () => (midIngest.get() as { n: number }).n > 0, 60_000, 2);
    } finally {
      watcher.close();
    }

    const backup = hearth(['backup', archive, '--with-secrets', '--passphrase-stdin'], dataDir, `${PASSPHRASE}\n`);
    expect(backup.code, backup.stderr).toBe(0);
    const entries: string[] = [];
    await tar.t({ file: archive, onReadEntry: (entry) => entries.push(entry.path) });
    expect(entries).toContain('hearth-backup.json');
    expect(entries).toContain('data/hearth.db');
    expect(entries).toContain('secrets.enc');
    expect(entries.some((e) => e.startsWith('data/documents/'))).toBe(true);
    expect(entries.some((e) => e.startsWith('data/index/'))).toBe(true);
    expect(entries.some((e) => /^models\/embeddings\/[^/]+\/manifest\.json$/.test(e))).toBe(true);
    expect(entries.some((e) => e.endsWith('.onnx'))).toBe(false); // weights only with --with-weights
    // The secrets are in the archive only encrypted.
    const raw = readFileSync(path.join(dataDir, 'secrets', 'jwt_secret_key'), 'utf8').trim();
    const extracted = path.join(work, 'peek');
    mkdirSync(extracted);
    await tar.x({ file: archive, cwd: extracted });
    expect(readFileSync(path.join(extracted, 'secrets.enc'), 'utf8')).not.toContain(raw);

    await jobsFinished(run);
    before = await observable(run);
    expect(Object.values(before.searches).every((results) => (results as unknown[]).length > 0)).toBe(true);
    await stop(run);

    const restoredDir = path.join(work, 'restored');
    const restored = hearth(['restore', archive, '--passphrase-stdin'], restoredDir, `${PASSPHRASE}\n`);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain('secrets restored');

    const again = await boot(restoredDir);
    try {
      await jobsFinished(again); // what was mid-ingest at the backup resumes here
      expect(await observable(again)).toEqual(before);
      // The same JWT secret: a token of the original service is good here.
      expect((await api<{ username: string }>(again, 'GET', '/api/auth/me', undefined, originalToken)).username).toBe('admin');
    } finally {
      await stop(again);
    }
  }, 400_000);

  it('refuses a damaged archive, a foreign one, a wrong passphrase and a non-empty DATA_DIR, changing nothing', async () => {
    const damaged = path.join(work, 'damaged.tar.gz');
    const bytes = readFileSync(archive);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    writeFileSync(damaged, bytes);
    const truncated = path.join(work, 'truncated.tar.gz');
    writeFileSync(truncated, readFileSync(archive).subarray(0, Math.floor(bytes.length * 0.7)));
    const foreign = path.join(work, 'foreign.tar.gz');
    mkdirSync(path.join(work, 'foreign', 'data'), { recursive: true });
    writeFileSync(path.join(work, 'foreign', 'data', 'hearth.db'), 'not a database');
    await tar.c({ file: foreign, cwd: path.join(work, 'foreign'), gzip: true }, ['data']);

    for (const [file, message] of [[damaged, /not a readable backup archive|damaged archive/], [truncated, /not a readable backup archive|damaged archive/], [foreign, /not a Hearth backup/]] as const) {
      const target = path.join(work, `target-${path.basename(file)}`);
      const result = hearth(['restore', file], target);
      expect(result.code, `${path.basename(file)}: ${result.stdout}`).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(listing(target)).toBeNull();
      expect(readdirSync(work).filter((name) => name.includes('-restore-'))).toEqual([]);
    }

    const wrong = hearth(['restore', archive, '--passphrase-stdin'], path.join(work, 'target-wrong'), 'not the passphrase\n');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('passphrase does not open');
    expect(listing(path.join(work, 'target-wrong'))).toBeNull();

    const occupied = path.join(work, 'occupied');
    mkdirSync(occupied);
    writeFileSync(path.join(occupied, 'keep.txt'), 'mine');
    const refused = hearth(['restore', archive], occupied);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is not empty');
    expect(listing(occupied)).toEqual(['keep.txt']);
  }, 120_000);

  it('an embedder adapted to the collection travels with its weights (nothing could download it again); other weights only with --with-weights', async () => {
    // The shipped model adapted to a collection, in a MODEL_DIR of its own (the original's few documents hold too few
    // distinct words to adapt to: a chunks table of enough of them stands for its collection).
    const models = path.join(work, 'adapted-models');
    await installShippedEmbedder({ modelDir: models });
    const collection = path.join(work, 'collection.db');
    const db = new Database(collection);
    db.exec('CREATE TABLE chunks (rowid INTEGER PRIMARY KEY, text TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO chunks (text) VALUES (?)');
    for (const text of Object.values(adaptationDocuments(0, 40))) for (const paragraph of text.split('\n\n')) insert.run(paragraph);
    db.close();
    const manifest = (await buildAdaptedModel({ databaseFile: collection, modelDir: models, baseId: SHIPPED_EMBEDDER.id })).manifest!;
    expect(manifest).not.toBeNull();
    const file = path.join(work, 'adapted.tar.gz');
    const backup = hearth(['backup', file], path.join(work, 'original'), undefined, models);
    expect(backup.code, backup.stderr).toBe(0);
    const entries: string[] = [];
    await tar.t({ file, onReadEntry: (entry) => entries.push(entry.path) });
    expect(entries).toContain(`models/embeddings/${manifest.id}/model.safetensors`);
    expect(entries).toContain(`models/embeddings/${SHIPPED_EMBEDDER.id}/manifest.json`);
    expect(entries).not.toContain(`models/embeddings/${SHIPPED_EMBEDDER.id}/model.safetensors`);

    const restoredModels = path.join(work, 'restored-models');
    const restored = hearth(['restore', file], path.join(work, 'restored-adapted'), undefined, restoredModels);
    expect(restored.code, restored.stderr).toBe(0);
    expect(existsSync(path.join(restoredModels, 'embeddings', manifest.id, 'model.safetensors'))).toBe(true);
    expect(restored.stdout).toContain(`model embeddings/${SHIPPED_EMBEDDER.id}: manifest restored, weights missing`);
    expect(restored.stdout).not.toContain(`model embeddings/${manifest.id}:`);
  }, 120_000);
});
