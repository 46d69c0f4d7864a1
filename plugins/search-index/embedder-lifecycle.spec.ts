import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../core/db/database.js';
import { MemoryJobStore } from '../../core/jobs/memory-store.js';
import { JobRunner } from '../../core/jobs/runner.js';
import { modelFolder, modelsRoot } from '../../native/model-files/index.js';
import { installTinyEmbeddingModel } from '../../test/fixtures/tiny-embedding-model.js';
import { ChunkMetadataRepository } from './chunk-metadata-repository.js';
import { DocumentKeywords } from './document-keywords.sqlite.js';
import { ChunksRepository } from './chunks-repository.js';
import { EmbedderLifecycle, type EmbedderLifecycleOptions } from './embedder-lifecycle.js';
import { ActiveEmbedding } from './active-embedding.js';
import { IndexAdmin } from './service.js';
import { IndexStore } from './store.js';

/** The lifecycle over a real SQLite file, job runner, index service and MODEL_DIR of small real models. */
interface Harness {
  lifecycle: EmbedderLifecycle;
  activeEmbedding: ActiveEmbedding;
  jobs: JobRunner;
  modelDir: string;
  logs: () => string;
  close: () => Promise<void>;
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const CHUNKS = 12;

async function withChunks(db: Db, store: IndexStore): Promise<void> {
  await db.insertInto('documents').values({
    id: 'doc-1', filename: 'notes.txt', file_type: 'txt', mime_type: 'text/plain', size_bytes: 1, sha256: 'x', source_type: 'upload', source_id: null,
    source_path: null, storage_path: null, status: 'indexed', error: null, page_count: null, chunk_count: CHUNKS, metadata: '{}', groups: '["everyone"]',
    uploaded_by: null, created_at: 0, updated_at: 0, indexed_at: 0,
  }).execute();
  await store.insertChunks(Array.from({ length: CHUNKS }, (_, i) => ({
    id: `chunk-${i}`, document_id: 'doc-1', ordinal: i, text: `harbour lantern note number ${i}`, page: null, heading: null, sheet: null, row: null,
    char_count: 30, token_count: 6, metadata: '{}', embedded_with: null, created_at: 0,
  })));
}

async function start(options: Partial<EmbedderLifecycleOptions> = {}, prepare?: (modelDir: string) => Promise<void>): Promise<Harness> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-lifecycle-'));
  const modelDir = path.join(dir, 'models');
  await prepare?.(modelDir);
  let captured = '';
  const log = pino({ level: 'info' }, new Writable({ write: (line, _encoding, done) => ((captured += line), done()) })) as unknown as FastifyBaseLogger;
  const db = await openDatabase(path.join(dir, 'hearth.db'));
  const jobs = new JobRunner(new MemoryJobStore(600), log);
  const activeEmbedding = new ActiveEmbedding();
  const chunks = new ChunksRepository(db);
  const store = new IndexStore(chunks, activeEmbedding, log, new ChunkMetadataRepository(db), new DocumentKeywords(db));
  await withChunks(db, store);
  const index = new IndexAdmin(activeEmbedding, store, chunks, jobs, path.join(dir, 'hearth.db'), dir, log);
  const lifecycle = new EmbedderLifecycle(activeEmbedding, index, { modelDir, device: 'cpu', defaultEmbedder: 'off', defaultEmbedderDimension: 64, modelWatchSeconds: 0, log, ...options });
  await lifecycle.load();
  return {
    lifecycle, activeEmbedding, jobs, modelDir,
    logs: () => captured,
    close: async () => {
      await lifecycle.stop();
      await jobs.close();
      await store.flush();
      await activeEmbedding.embedder()?.close();
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const jobsOf = async (jobs: JobRunner, type: string) => (await jobs.store.list({ type, limit: 50, offset: 0 })).jobs;

describe('EmbedderLifecycle at boot', () => {
  it('with no model and HEARTH_DEFAULT_EMBEDDER=off: keyword search only, and health says so', async () => {
    harness = await start();
    expect(harness.activeEmbedding.embedder()).toBeNull();
    expect(harness.lifecycle.defaultEmbedder()).toEqual({ state: 'off', detail: '' });
    expect(harness.lifecycle.embedderHealth()).toEqual({ status: 'not_installed', detail: 'no embedding model installed: search runs on keywords only' });
    expect(harness.lifecycle.vectorIndexHealth().status).toBe('not_installed');
    expect(harness.logs()).toContain('search runs on keywords only');
  });

  it('puts the active model in force (the default embedder not needed) and embeds the chunks without a vector once the service is ready', async () => {
    harness = await start({ defaultEmbedder: 'build' }, (modelDir) => installTinyEmbeddingModel(modelDir, { id: 'model-a', seed: 1 }).then(() => undefined));
    expect(harness.activeEmbedding.embedder()!.modelId).toMatch(/^model-a@/);
    expect(harness.lifecycle.defaultEmbedder()).toEqual({ state: 'not_needed', detail: '' });
    expect(harness.lifecycle.embedderHealth()).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^model-a@\w+ \(\d+ dimensions, cpu\)$/) });
    await harness.lifecycle.start();
    await harness.jobs.idle();
    expect(harness.activeEmbedding.vectors()!.size()).toBe(CHUNKS);
    expect(harness.lifecycle.vectorIndexHealth()).toEqual({ status: 'ok', detail: `${CHUNKS} vectors` });
  });

  it('an ACTIVE file naming a model that is not there keeps the service up on keywords, and health reports the error', async () => {
    harness = await start({}, async (modelDir) => {
      await installTinyEmbeddingModel(modelDir, { id: 'model-a', seed: 1 });
      writeFileSync(path.join(modelsRoot(modelDir, 'embedding'), 'ACTIVE'), 'no-such-model\n');
    });
    expect(harness.activeEmbedding.embedder()).toBeNull();
    expect(harness.lifecycle.embedderHealth()).toEqual({ status: 'error', detail: 'the embedding model could not be loaded: search runs on keywords only' });
    expect(harness.logs()).toContain('no-such-model');
  });

  it('with no model and HEARTH_DEFAULT_EMBEDDER=build: the build waits for the service to be ready, and a stop cancels it quietly', async () => {
    harness = await start({ defaultEmbedder: 'build' });
    expect(harness.lifecycle.defaultEmbedder()).toEqual({ state: 'building', detail: 'queued: starts once the service is ready' });
    expect(harness.lifecycle.embedderHealth()).toMatchObject({ status: 'not_installed', detail: expect.stringContaining("building Hearth's default embedder in the background") });
    await harness.lifecycle.start();
    await harness.lifecycle.stop();
    expect(harness.lifecycle.defaultEmbedder().state).toBe('building');
    expect(harness.logs()).not.toContain('building the default embedder failed');
  });
});

describe('EmbedderLifecycle.syncActiveModel (what the MODEL_DIR watch runs)', () => {
  it('turns a keyword-only service hybrid when its first model is installed', async () => {
    harness = await start();
    await harness.lifecycle.start();
    await installTinyEmbeddingModel(harness.modelDir, { id: 'model-a', seed: 1 });
    await harness.lifecycle.syncActiveModel();
    await harness.jobs.idle();
    expect(harness.activeEmbedding.embedder()!.modelId).toMatch(/^model-a@/);
    expect(harness.activeEmbedding.vectors()!.size()).toBe(CHUNKS);
  });

  it('rebuilds once for a changed model, the previous one answering until the new index is complete', async () => {
    harness = await start({}, (modelDir) => installTinyEmbeddingModel(modelDir, { id: 'model-a', seed: 1 }).then(() => undefined));
    await harness.lifecycle.start();
    await harness.jobs.idle();
    await installTinyEmbeddingModel(harness.modelDir, { id: 'model-b', seed: 2 });
    await harness.lifecycle.syncActiveModel();
    expect(harness.activeEmbedding.embedder()!.modelId).toMatch(/^model-a@/);
    await harness.lifecycle.syncActiveModel(); // a second poll while the rebuild runs starts nothing
    await harness.jobs.idle();
    expect(harness.activeEmbedding.embedder()!.modelId).toMatch(/^model-b@/);
    expect(harness.activeEmbedding.vectors()!.size()).toBe(CHUNKS);
    expect(await jobsOf(harness.jobs, 'index.rebuild')).toHaveLength(1);
    await harness.lifecycle.syncActiveModel();
    expect(await jobsOf(harness.jobs, 'index.rebuild')).toHaveLength(1);
  });

  it('refuses a model that fails to load once, and still puts in force the next model installed', async () => {
    harness = await start();
    await installTinyEmbeddingModel(harness.modelDir, { id: 'model-bad', seed: 3 });
    appendFileSync(path.join(modelFolder(harness.modelDir, 'embedding', 'model-bad'), 'model.onnx'), 'tampered');
    await expect(harness.lifecycle.syncActiveModel()).rejects.toThrow(/model-bad/);
    await expect(harness.lifecycle.syncActiveModel()).resolves.toBeUndefined(); // refused: not loaded again every poll
    await installTinyEmbeddingModel(harness.modelDir, { id: 'model-a', seed: 1 });
    await harness.lifecycle.syncActiveModel();
    expect(harness.activeEmbedding.embedder()!.modelId).toMatch(/^model-a@/);
  });

  it('does nothing once stopped', async () => {
    harness = await start();
    await harness.lifecycle.stop();
    await installTinyEmbeddingModel(harness.modelDir, { id: 'model-a', seed: 1 });
    await harness.lifecycle.syncActiveModel();
    expect(harness.activeEmbedding.embedder()).toBeNull();
  });
});
