import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makePdf } from '../fixtures/documents.js';
import { multipartBody } from '../fixtures/multipart.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { startApp, type TestApp } from '../helpers.js';

let t: TestApp;
afterEach(async () => t.close());

async function ingestPdfs(app: TestApp, count: number, pages: number): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-index-fixtures-'));
  const editor = (await app.userWithRole('editor')).access;
  for (let i = 0; i < count; i++) {
    const file = await makePdf(dir, pages, `manual-${i}.pdf`);
    const res = await app.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content: Buffer.concat([readFileSync(file), Buffer.from(`\n% ${i}`)]), filename: `manual-${i}.pdf` }]) });
    expect(res.statusCode, res.body).toBe(202);
  }
  await app.app.jobs.idle();
}

const stats = async (app: TestApp) => (await app.request({ method: 'GET', url: '/api/index/stats', token: (await app.login()).access })).json();

describe('the vector index', () => {
  it('POST /api/index/rebuild rebuilds into a new file that replaces the old one', async () => {
    const modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-index-models-'));
    await installTinyEmbeddingModel(modelDir);
    t = await startApp({ MODEL_DIR: modelDir });
    await ingestPdfs(t, 2, 4);
    const before = await stats(t);
    const editor = (await t.userWithRole('editor')).access;
    const viewer = (await t.userWithRole('viewer')).access;
    expect((await t.request({ method: 'POST', url: '/api/index/rebuild', token: viewer })).statusCode).toBe(403);
    const res = await t.request({ method: 'POST', url: '/api/index/rebuild', token: editor });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ type: 'index.rebuild', state: 'queued' });
    await t.app.jobs.idle();
    expect((await t.request({ method: 'GET', url: `/api/jobs/${res.json().id}`, token: viewer })).json().state).toBe('succeeded');
    const after = await stats(t);
    expect(after).toMatchObject({ chunks: before.chunks, vectors: before.chunks, stale_chunks: 0, model_id: before.model_id });
    expect(after.last_rebuild_at).not.toBeNull();
    const files = readdirSync(path.join(t.dataDir, 'index')).filter((name) => name.includes('.hnsw'));
    expect(files.every((name) => name.includes('-'))).toBe(true); // only the rebuilt generation remains
  });

  it('a changed embedding model is rebuilt in the background while the previous one keeps answering', async () => {
    const modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-index-models-'));
    await installTinyEmbeddingModel(modelDir, { id: 'model-a', seed: 1 });
    t = await startApp({ MODEL_DIR: modelDir });
    await ingestPdfs(t, 3, 30);
    const first = await stats(t);
    expect(first.model_id).toMatch(/^model-a@/);
    await t.app.close();

    await installTinyEmbeddingModel(modelDir, { id: 'model-b', seed: 2 }); // becomes ACTIVE
    t = await startApp({ MODEL_DIR: modelDir }, t.dataDir, true);
    // Right after the restart the rebuild runs in the background: model A still answers.
    expect(t.app.activeEmbedding.embedder()!.modelId).toMatch(/^model-a@/);
    expect(t.app.activeEmbedding.vectors()!.size()).toBe(first.chunks);
    await t.app.jobs.idle();
    const second = await stats(t);
    expect(second.model_id).toMatch(/^model-b@/);
    expect(second).toMatchObject({ chunks: first.chunks, vectors: first.chunks, stale_chunks: 0 });
    const search = await t.request({ method: 'POST', url: '/api/search', token: (await t.login()).access, payload: { query: 'manual', mode: 'vector' } });
    expect(search.statusCode).toBe(200);
    expect(search.json().results.length).toBeGreaterThan(0);
  }, 120_000); // a deadline, not a speed check: two models' indexing on a loaded 2-core box took 30 s
});

describe('upgrading from the float32 index (sidecar format 1)', () => {
  it('discards the old file at the next start and embeds every chunk again in the background; keywords answer meanwhile', async () => {
    const modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-index-models-'));
    await installTinyEmbeddingModel(modelDir);
    t = await startApp({ MODEL_DIR: modelDir });
    await ingestPdfs(t, 2, 4);
    const before = await stats(t);
    await t.app.close();
    // What the earlier release left: its sidecar said format 1 and its data file held float32 vectors.
    const indexDir = path.join(t.dataDir, 'index');
    const sidecarName = readdirSync(indexDir).find((name) => name.endsWith('.hnsw.json'))!;
    const sidecar = JSON.parse(readFileSync(path.join(indexDir, sidecarName), 'utf8'));
    writeFileSync(path.join(indexDir, sidecarName), JSON.stringify({ ...sidecar, format: 1 }));

    t = await startApp({ MODEL_DIR: modelDir }, t.dataDir, true);
    expect(t.logs()).toMatch(/saved vector index not used.*unreadable or unknown sidecar|unreadable or unknown sidecar.*saved vector index not used/);
    const viewer = (await t.userWithRole('viewer')).access;
    const keyword = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'report', mode: 'keyword' } });
    expect(keyword.json().results.length).toBeGreaterThan(0);
    await t.app.jobs.idle();
    const jobs = (await t.request({ method: 'GET', url: '/api/jobs', token: viewer })).json().jobs;
    expect(jobs).toContainEqual(expect.objectContaining({ type: 'index.embed', state: 'succeeded' }));
    expect(await stats(t)).toMatchObject({ chunks: before.chunks, vectors: before.chunks, stale_chunks: 0, model_id: before.model_id });
    const vector = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'report', mode: 'vector' } });
    expect(vector.json().results.length).toBeGreaterThan(0);
  });
});

describe('a model activated while the service runs (MODEL_WATCH_SECONDS)', () => {
  const until = async (what: () => Promise<boolean>, ms = 30_000) => {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 100))) if (await what()) return;
    throw new Error('timed out');
  };

  it('is put in force without a restart: rebuilt in the background while the previous one answers', async () => {
    const modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-index-models-'));
    await installTinyEmbeddingModel(modelDir, { id: 'model-a', seed: 1 });
    t = await startApp({ MODEL_DIR: modelDir, MODEL_WATCH_SECONDS: '1' });
    await ingestPdfs(t, 2, 20);
    const first = await stats(t);
    const viewer = (await t.userWithRole('viewer')).access;

    await installTinyEmbeddingModel(modelDir, { id: 'model-b', seed: 2 }); // what `npm run models -- import|use` does
    await until(async () => (await t.request({ method: 'GET', url: '/api/jobs', token: viewer })).json().jobs.some((job: { type: string }) => job.type === 'index.rebuild'));
    const search = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'manual', mode: 'vector' } });
    expect(search.statusCode).toBe(200);
    expect(search.json().results.length).toBeGreaterThan(0);
    await until(async () => (await stats(t)).model_id.startsWith('model-b@'));
    await t.app.jobs.idle();
    expect(await stats(t)).toMatchObject({ chunks: first.chunks, vectors: first.chunks, stale_chunks: 0 });
    // One rebuild, not one per poll.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const rebuilds = (await t.request({ method: 'GET', url: '/api/jobs', token: viewer })).json().jobs.filter((job: { type: string }) => job.type === 'index.rebuild');
    expect(rebuilds).toHaveLength(1);
  });

  it('turns a keyword-only box hybrid when its first model is installed', async () => {
    const modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-index-models-'));
    t = await startApp({ MODEL_DIR: modelDir, MODEL_WATCH_SECONDS: '1' });
    await ingestPdfs(t, 1, 10);
    const viewer = (await t.userWithRole('viewer')).access;
    const health = async () => (await t.request({ method: 'GET', url: '/api/health' })).json();
    expect((await health()).capabilities.search).toBe('keyword');

    await installTinyEmbeddingModel(modelDir);
    await until(async () => (await health()).capabilities.search === 'hybrid');
    await t.app.jobs.idle();
    const after = await stats(t);
    expect(after).toMatchObject({ vectors: after.chunks, stale_chunks: 0 });
    const search = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'manual' } });
    expect(search.json().retrieval_settings.mode_used).toBe('hybrid');
  });
});
