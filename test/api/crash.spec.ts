import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import PDFDocument from 'pdfkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../../core/config.js';
import { openVectorIndex } from '../../native/vector-index/index.js';
import { prose } from '../fixtures/documents.js';
import { multipartBody } from '../fixtures/multipart.js';
import { cleanupServices, ensureBuilt, exitWithin, listening, type Service, startService, tempDir, waitFor } from '../fixtures/service-process.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';

/**
 * Crash consistency with a real process: the built service is SIGKILLed mid-ingest (and, in a
 * second case, right after the uploads answered), restarted on the same DATA_DIR, and must end
 * with every document indexed, SQLite and the vector index agreeing label for label, the same
 * chunks (position and text) as a clean ingest of the same files, and each document searchable.
 */

const BATCH_SIZE = 4;
const JOB_TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

interface Corpus {
  /** Upload order. */
  files: Array<{ file: string; marker: string }>;
}

/** Reference chunks (ordinal and text) per document sha256, from a clean ingest in a fresh data dir. */
type Reference = Map<string, string[]>;

let modelDir: string;
let corpus: Corpus;
let reference: Reference;

// --- fixtures: documents with a unique word on their last page, so search proves the resumed tail is indexed ---

async function writeMarkedPdf(file: string, pages: number, seed: number, marker: string): Promise<string> {
  const doc = new PDFDocument({ info: { Title: `Crash corpus ${seed}` } });
  const stream = createWriteStream(file);
  doc.pipe(stream);
  for (let page = 1; page <= pages; page++) {
    if (page > 1) doc.addPage();
    doc.fontSize(16).text(`Section ${page} of volume ${seed}`);
    doc.moveDown(0.5).fontSize(10).text(prose(seed * 1000 + page, 14));
    doc.moveDown().text(prose(seed * 1000 + page + 500, 12));
    if (page === pages) doc.moveDown().text(`The final ${marker} appendix closes volume ${seed}.`);
  }
  doc.end();
  await once(stream, 'finish');
  return file;
}

function writeMarkedText(file: string, seed: number, marker: string): string {
  const paragraphs = Array.from({ length: 24 }, (_, i) => prose(seed * 1000 + i, 12));
  writeFileSync(file, `${paragraphs.join('\n\n')}\n\nThe last paragraph mentions the ${marker} once.\n`);
  return file;
}

async function makeCorpus(dir: string): Promise<Corpus> {
  mkdirSync(dir, { recursive: true });
  return {
    files: [
      { file: await writeMarkedPdf(path.join(dir, 'volume-1.pdf'), 18, 1, 'quokka'), marker: 'quokka' },
      { file: await writeMarkedPdf(path.join(dir, 'volume-2.pdf'), 18, 2, 'axolotl'), marker: 'axolotl' },
      { file: writeMarkedText(path.join(dir, 'notes-3.txt'), 3, 'pangolin'), marker: 'pangolin' },
      { file: await writeMarkedPdf(path.join(dir, 'volume-4.pdf'), 18, 4, 'narwhal'), marker: 'narwhal' },
      { file: writeMarkedText(path.join(dir, 'notes-5.txt'), 5, 'okapi'), marker: 'okapi' },
    ],
  };
}

// --- the service over HTTP ---

interface Running {
  service: Service;
  url: string;
  token: string;
  dataDir: string;
}

async function boot(dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  const service = startService({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    MODEL_DIR: modelDir,
    INDEX_UPSERT_BATCH_SIZE: String(BATCH_SIZE),
    JWT_SECRET_KEY: 'crash-test-secret-that-is-long-enough-for-hs256',
    MFA_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    LOG_LEVEL: 'INFO',
    ...env,
  });
  const url = await listening(service, 30_000);
  const login = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD }),
  });
  expect(login.status, await login.clone().text()).toBe(200);
  const { access_token: token } = (await login.json()) as { access_token: string };
  return { service, url, token, dataDir };
}

async function api<T>(run: Running, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${run.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${run.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

async function upload(run: Running, file: string): Promise<{ document: { id: string; status: string }; job: { id: string } }> {
  const { payload, headers } = multipartBody([{ name: 'file', content: readFileSync(file), filename: path.basename(file) }]);
  const res = await fetch(`${run.url}/api/docs/upload`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${run.token}` }, body: payload });
  const text = await res.text();
  expect(res.status, text).toBe(202);
  return JSON.parse(text);
}

interface DocView {
  id: string;
  filename: string;
  sha256: string;
  status: string;
  error: string | null;
  chunk_count: number;
}
interface JobView {
  id: string;
  type: string;
  state: string;
  error?: string;
}

const listDocs = async (run: Running) => (await api<{ documents: DocView[] }>(run, 'GET', '/api/docs?limit=500')).documents;
const listJobs = async (run: Running) => (await api<{ jobs: JobView[] }>(run, 'GET', '/api/jobs?limit=500')).jobs;

/** Waits until every job the service knows of has finished, then returns them. */
async function jobsFinished(run: Running, timeoutMs = 40_000): Promise<JobView[]> {
  return waitFor('every job to finish', run.service, async () => {
    const jobs = await listJobs(run);
    return jobs.length > 0 && jobs.every((job) => JOB_TERMINAL.has(job.state)) ? jobs : undefined;
  }, timeoutMs, 50);
}

async function stop(run: Running): Promise<void> {
  run.service.child.kill('SIGTERM');
  const { code } = await exitWithin(run.service, 15_000);
  expect(code).toBe(0);
}

async function kill(run: Running): Promise<void> {
  run.service.child.kill('SIGKILL');
  const { signal } = await exitWithin(run.service, 10_000);
  expect(signal).toBe('SIGKILL');
}

/**
 * Uploads the files and ends the service (`end`) once a document is part-way through indexing, some of its
 * batches committed: the database itself is watched (read-only; WAL lets it read beside the writer).
 */
async function uploadThenEndMidIngest(run: Running, files: string[], end: (run: Running) => Promise<void>): Promise<void> {
  const watcher = openDb(run.dataDir);
  const midIngest = watcher.prepare(`
    SELECT d.id, count(c.rowid) AS chunks FROM documents d JOIN chunks c ON c.document_id = d.id
    WHERE d.status = 'indexing' GROUP BY d.id`);
  try {
    for (const file of files) await upload(run, file);
    await waitFor('a document part-way through indexing', run.service, () => (midIngest.all() as Array<{ chunks: number }>).find((row) => row.chunks > 0), 40_000, 2);
    await end(run);
  } finally {
    watcher.close();
  }
}

// --- reading the files directly ---

const openDb = (dataDir: string) => new Database(path.join(dataDir, 'hearth.db'), { readonly: true, fileMustExist: true });

interface DbState {
  documents: Array<{ id: string; sha256: string; status: string; error: string | null; chunk_count: number }>;
  chunks: Array<{ rowid: number; id: string; document_id: string; ordinal: number; text: string; embedded_with: string | null }>;
}

function readDb(dataDir: string): DbState {
  const db = openDb(dataDir);
  try {
    return {
      documents: db.prepare('SELECT id, sha256, status, error, chunk_count FROM documents ORDER BY created_at').all() as DbState['documents'],
      chunks: db.prepare('SELECT rowid, id, document_id, ordinal, text, embedded_with FROM chunks ORDER BY document_id, ordinal').all() as DbState['chunks'],
    };
  } finally {
    db.close();
  }
}

/** The labels of the vector index as saved on disk (read after the service stopped). */
async function savedVectorLabels(dataDir: string): Promise<number[]> {
  const pointer = JSON.parse(readFileSync(path.join(dataDir, 'index', 'current.json'), 'utf8')) as { model_id: string; base: string };
  const file = path.join(dataDir, 'index', pointer.base);
  const sidecar = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as { model_id: string; dimension: number };
  const index = await openVectorIndex({ file, dimension: sidecar.dimension, modelId: sidecar.model_id });
  expect(index.discarded).toBeUndefined();
  expect(index.restored).toBe(true);
  return index.labels().sort((a, b) => a - b);
}

/** Chunk ids include the document's (random) id, so a clean ingest elsewhere is compared by position and text. */
function chunksBySha(state: DbState): Map<string, string[]> {
  const shaOf = new Map(state.documents.map((d) => [d.id, d.sha256]));
  const out = new Map<string, string[]>();
  for (const chunk of state.chunks) {
    const sha = shaOf.get(chunk.document_id)!;
    if (!out.has(sha)) out.set(sha, []);
    out.get(sha)!.push(`${chunk.ordinal}\n${chunk.text}`);
  }
  return out;
}

// --- the proof, shared by both cases ---

async function expectConsistentAfterRestart(dataDir: string): Promise<void> {
  const run = await boot(dataDir);
  try {
    // The interrupted work was picked up at boot: a resume job (and possibly an embed job), all finished.
    const jobs = await jobsFinished(run);
    expect(jobs.map((job) => job.type)).toContain('ingest.resume');
    for (const job of jobs) expect({ type: job.type, state: job.state, error: job.error }).toEqual({ type: job.type, state: 'succeeded', error: undefined });

    const docs = await listDocs(run);
    expect(docs).toHaveLength(corpus.files.length);
    for (const doc of docs) {
      expect({ file: doc.filename, status: doc.status, error: doc.error }).toEqual({ file: doc.filename, status: 'indexed', error: null });
      expect(doc.chunk_count, doc.filename).toBe(reference.get(doc.sha256)!.length);
    }

    const expectedChunks = [...reference.values()].reduce((sum, ids) => sum + ids.length, 0);
    const stats = await api<{ chunks: number; vectors: number; stale_chunks: number; model_id: string | null }>(run, 'GET', '/api/index/stats');
    expect(stats).toMatchObject({ chunks: expectedChunks, vectors: expectedChunks, stale_chunks: 0 });
    expect(stats.model_id).not.toBeNull();

    // Search finds each document's last words (indexed after the kill): first by keyword, among the results in hybrid mode.
    const byName = new Map(docs.map((doc) => [doc.filename, doc]));
    for (const { file, marker } of corpus.files) {
      const doc = byName.get(path.basename(file))!;
      type Found = { results: Array<{ document_id: string; text: string }> };
      const keyword = await api<Found>(run, 'POST', '/api/search', { query: marker, mode: 'keyword', k: 3 });
      expect(keyword.results[0]?.document_id, `keyword search for ${marker}`).toBe(doc.id);
      expect(keyword.results[0].text).toContain(marker);
      const hybrid = await api<Found>(run, 'POST', '/api/search', { query: marker, mode: 'hybrid', k: 5 });
      expect(hybrid.results.some((r) => r.document_id === doc.id && r.text.includes(marker)), `hybrid search for ${marker}`).toBe(true);
    }

    // Each vector sits under the right label: a chunk's own text finds that very chunk by vector search.
    const state = readDb(dataDir);
    for (const doc of docs) {
      const chunks = state.chunks.filter((chunk) => chunk.document_id === doc.id);
      for (const chunk of [chunks[0], chunks[Math.floor(chunks.length / 2)], chunks[chunks.length - 1]]) {
        const { results } = await api<{ results: Array<{ chunk_id: string; score: number }> }>(run, 'POST', '/api/search', { query: chunk.text, mode: 'vector', k: 1 });
        expect(results[0]?.chunk_id).toBe(chunk.id);
        expect(results[0].score).toBeGreaterThan(0.999);
      }
    }
    expect(state.chunks.length).toBe(expectedChunks);
  } finally {
    await stop(run);
  }

  // After a clean stop, straight from the files: SQLite and the saved vector index agree label for label.
  const db = openDb(dataDir);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.prepare(`SELECT count(*) AS n FROM documents WHERE status IN ('queued', 'indexing')`).get()).toEqual({ n: 0 });
    // The keyword index covers exactly the chunk rows (external-content FTS5 keeps one docsize row per indexed row).
    const ftsRowids = db.prepare('SELECT id FROM chunks_fts_docsize ORDER BY id').pluck().all();
    expect(ftsRowids).toEqual(db.prepare('SELECT rowid FROM chunks ORDER BY rowid').pluck().all());
  } finally {
    db.close();
  }
  const state = readDb(dataDir);
  expect(state.documents.every((d) => d.status === 'indexed')).toBe(true);
  expect(chunksBySha(state)).toEqual(reference);
  expect(new Set(state.chunks.map((chunk) => chunk.id)).size).toBe(state.chunks.length);
  const modelIds = new Set(state.chunks.map((chunk) => chunk.embedded_with));
  expect(modelIds.size).toBe(1);
  expect(modelIds.has(null)).toBe(false);
  for (const doc of state.documents) expect(doc.chunk_count).toBe(reference.get(doc.sha256)!.length);
  expect(await savedVectorLabels(dataDir)).toEqual(state.chunks.map((chunk) => chunk.rowid).sort((a, b) => a - b));
}

beforeAll(async () => {
  ensureBuilt();
  const root = tempDir('hearth-crash-');
  modelDir = path.join(root, 'models');
  await installTinyEmbeddingModel(modelDir);
  corpus = await makeCorpus(path.join(root, 'corpus'));

  // The reference: a clean ingest of the same files in a fresh data dir, stopped gracefully.
  const dataDir = path.join(root, 'reference');
  const run = await boot(dataDir);
  try {
    for (const { file } of corpus.files) await upload(run, file);
    const jobs = await jobsFinished(run);
    expect(jobs.every((job) => job.state === 'succeeded')).toBe(true);
  } finally {
    await stop(run);
  }
  const state = readDb(dataDir);
  expect(state.documents.map((d) => d.status)).toEqual(corpus.files.map(() => 'indexed'));
  reference = chunksBySha(state);
  // Every document spans many upsert batches, so a kill can land between two of them.
  for (const ids of reference.values()) expect(ids.length).toBeGreaterThanOrEqual(BATCH_SIZE * 4);
}, 90_000);

afterAll(() => {
  cleanupServices();
});

describe('kill -9 of the built service', () => {
  it('mid-ingest: after a restart every document is indexed once, SQLite and vectors agree, search finds everything', async () => {
    const dataDir = tempDir('hearth-crash-data-');
    const run = await boot(dataDir);
    // The first document alone, until its vectors are on disk (the service spaces index saves out by a few seconds).
    const [first, ...rest] = corpus.files;
    await upload(run, first.file);
    const sidecar = () => {
      const dir = path.join(dataDir, 'index');
      const name = existsSync(dir) ? readdirSync(dir).find((entry) => entry.endsWith('.hnsw.json')) : undefined;
      return name ? (JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as { count: number }) : undefined;
    };
    const saved = await waitFor('the first vectors saved', run.service, () => sidecar(), 30_000, 20);
    expect(saved.count).toBe(reference.get(sha256Of(first.file))!.length);

    // Then the others, killed with a document part-way, some of its batches committed, its vectors only in memory.
    await uploadThenEndMidIngest(run, rest.map(({ file }) => file), kill);

    // What the kill left behind: the first document indexed with its vectors saved, one half-indexed
    // (chunk rows committed), the rest queued or indexed with vectors that were never saved.
    const left = readDb(dataDir);
    expect(left.documents).toHaveLength(corpus.files.length);
    expect(left.documents[0]).toMatchObject({ sha256: sha256Of(first.file), status: 'indexed' });
    const indexing = new Set(left.documents.filter((d) => d.status === 'indexing').map((d) => d.id));
    expect(indexing.size).toBe(1);
    expect(left.chunks.filter((c) => indexing.has(c.document_id)).length).toBeGreaterThan(0);
    expect(left.documents.filter((d) => d.status !== 'indexed').length).toBeGreaterThan(0);

    await expectConsistentAfterRestart(dataDir);
  }, 60_000);

  it('right after the uploads answered: the queued documents are indexed after the restart', async () => {
    const dataDir = tempDir('hearth-crash-data-');
    const run = await boot(dataDir);
    // All at once: the first starts indexing (a worker thread has to start first), the others wait in the queue.
    await Promise.all(corpus.files.map(({ file }) => upload(run, file)));
    await kill(run);

    const left = readDb(dataDir);
    expect(left.documents).toHaveLength(corpus.files.length);
    expect(left.documents.filter((d) => d.status === 'queued').length).toBeGreaterThan(0);
    // Every upload that answered 202 is on disk and in SQLite, whatever the kill interrupted.
    expect(readdirSync(path.join(dataDir, 'documents')).filter((name) => !name.startsWith('.'))).toHaveLength(corpus.files.length);

    await expectConsistentAfterRestart(dataDir);
  }, 60_000);
});

describe('a graceful stop (SIGTERM) of the built service', () => {
  it('mid-ingest: the documents it had not reached are resumed at the next start, not failed as cancelled', async () => {
    const dataDir = tempDir('hearth-crash-data-');
    const run = await boot(dataDir);
    await uploadThenEndMidIngest(run, corpus.files.map(({ file }) => file), stop);

    // The stop rolled back the document in progress and left it, with those not reached, queued: none failed.
    const left = readDb(dataDir);
    expect(left.documents).toHaveLength(corpus.files.length);
    expect(left.documents.filter((d) => d.status === 'failed')).toEqual([]);
    expect(left.documents.filter((d) => d.status === 'indexing')).toEqual([]);
    const queued = new Set(left.documents.filter((d) => d.status === 'queued').map((d) => d.id));
    expect(queued.size).toBeGreaterThan(0);
    expect(left.chunks.filter((c) => queued.has(c.document_id))).toEqual([]);

    await expectConsistentAfterRestart(dataDir);
  }, 60_000);
});

describe('a connector scan interrupted while it registers files', () => {
  const NOTES = 300;

  it.each(['SIGKILL', 'SIGTERM'] as const)('(%s) runs again at the next start: every file ends registered and indexed, and the connector shows the scan', async (signal) => {
    const share = tempDir('hearth-crash-share-');
    for (let i = 0; i < NOTES; i++) writeFileSync(path.join(share, `memo-${String(i).padStart(3, '0')}.txt`), `Memo ${i} on the shelf${i}marker. ${prose(9000 + i, 3)}\n`);
    const env = { CONNECTOR_ALLOWED_PATHS: `/app/docs:${share}` };
    const dataDir = tempDir('hearth-crash-data-');
    const run = await boot(dataDir, env);
    const connector = await api<{ id: string }>(run, 'POST', '/api/connectors', { name: 'Share', path: share });
    const watcher = openDb(dataDir);
    const registered = watcher.prepare(`SELECT count(*) FROM documents WHERE source_type = 'connector'`).pluck();
    try {
      await api(run, 'POST', `/api/connectors/${connector.id}/scan`);
      await waitFor('part of the files registered', run.service, () => {
        const count = registered.get() as number;
        return count > 0 && count < NOTES;
      }, 40_000, 2);
      if (signal === 'SIGKILL') await kill(run);
      else await stop(run);
    } finally {
      watcher.close();
    }
    const left = readDb(dataDir);
    expect(left.documents.length).toBeGreaterThan(0);
    expect(left.documents.length).toBeLessThan(NOTES);

    const again = await boot(dataDir, env);
    try {
      const jobs = await jobsFinished(again, 120_000);
      expect(jobs.map((job) => job.type)).toContain('connector.scan');
      for (const job of jobs) expect({ type: job.type, state: job.state, error: job.error }).toEqual({ type: job.type, state: 'succeeded', error: undefined });
      const docs = (await api<{ documents: DocView[]; total: number }>(again, 'GET', `/api/docs?source_id=${connector.id}&status=indexed&limit=1`));
      expect(docs.total).toBe(NOTES);
      const view = await api<{ last_scan_at: string | null; last_scan: { state: string; found: number; changed: number; unchanged: number; skipped_total: number } | null }>(again, 'GET', `/api/connectors/${connector.id}`);
      expect(view.last_scan_at).not.toBeNull();
      expect(view.last_scan).toMatchObject({ state: 'succeeded', found: NOTES, skipped_total: 0 });
      expect(view.last_scan!.changed + view.last_scan!.unchanged).toBe(NOTES);
      const found = await api<{ results: Array<{ document_id: string }> }>(again, 'POST', '/api/search', { query: `shelf${NOTES - 1}marker`, mode: 'keyword', k: 1 });
      expect(found.results).toHaveLength(1);
    } finally {
      await stop(again);
    }
  }, 240_000);
});

function sha256Of(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}
