/**
 * The shipped static embedder adapted to the box's own collection (EMBED_ADAPT, issue 16 item 5): below
 * EMBED_ADAPT_MIN_CHUNKS nothing happens; past it an `index.adapt` job builds the adapted table in a worker thread,
 * installs it in MODEL_DIR, makes it active, and the vector index is rebuilt onto it; the same collection gives the
 * same model; EMBED_ADAPT=off leaves the model alone. The real shipped model, the real service and jobs.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { installShippedEmbedder, lexicalView, loadEmbedder, SHIPPED_EMBEDDER } from '../../native/embeddings/index.js';
import { modelFolder, readActiveModelId, readManifest } from '../../native/model-files/index.js';
import { buildAdaptedModel } from '../../plugins/search-index/corpus-adaptation/build.js';
import { BUSY } from '../../plugins/search-index/corpus-adaptation/index.js';
import { mulberry32 } from '../../plugins/search-index/default-embedder/linalg.js';
import { scratchFolders } from '../fixtures/scratch-folders.js';
import { adaptationDocuments as documents, ADAPTATION_WORDS as WORDS } from '../fixtures/adaptation-documents.js';
import { uploadTexts } from '../fixtures/upload-texts.js';
import { startApp, type TestApp } from '../helpers.js';

const tmp = scratchFolders('hearth-adapt-');

describe('the embedder adapted to the collection', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('EMBED_ADAPT is on by default, EMBED_ADAPT_MIN_CHUNKS 2,000; bad values are refused at start', () => {
    const secrets = { JWT_SECRET_KEY: 'x'.repeat(40), MFA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'), DATA_DIR: '/tmp' };
    expect(loadConfig(secrets).embedAdapt).toEqual({ enabled: true, minChunks: 2000, maxChunks: 50_000 });
    expect(loadConfig({ ...secrets, EMBED_ADAPT: 'off', EMBED_ADAPT_MIN_CHUNKS: '500', EMBED_ADAPT_MAX_CHUNKS: '0' }).embedAdapt).toEqual({ enabled: false, minChunks: 500, maxChunks: 0 });
    expect(() => loadConfig({ ...secrets, EMBED_ADAPT: 'sometimes' })).toThrow(/EMBED_ADAPT/);
    expect(() => loadConfig({ ...secrets, EMBED_ADAPT_MIN_CHUNKS: '5' })).toThrow(/EMBED_ADAPT_MIN_CHUNKS/);
    expect(() => loadConfig({ ...secrets, EMBED_ADAPT_MAX_CHUNKS: '-1' })).toThrow(/EMBED_ADAPT_MAX_CHUNKS/);
  });

  it('waits below EMBED_ADAPT_MIN_CHUNKS, then adapts the shipped model, installs it and rebuilds the index onto it', async () => {
    t = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped', EMBED_ADAPT_MIN_CHUNKS: '100', MODEL_WATCH_SECONDS: '1' });
    const editor = (await t.userWithRole('editor')).access;
    await uploadTexts(t, editor, documents(0, 3));
    const stats = async () => (await t.request({ method: 'GET', url: '/api/index/stats', token: editor })).json();
    const until = async (what: string, done: (s: any) => boolean) => {
      for (let i = 0; i < 600; i++) {
        const s = await stats();
        if (done(s)) return s;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await stats())}`);
    };
    const waiting = await until('a check of the uploaded documents', (s) => s.chunks > 0 && s.corpus_adaptation.detail.startsWith(`${s.chunks} chunks:`));
    expect(waiting.corpus_adaptation).toEqual({ state: 'waiting', detail: expect.stringMatching(/^\d+ chunks: the embedder is adapted to the collection from 100 \(EMBED_ADAPT_MIN_CHUNKS\)$/) });
    expect(waiting.model_id).toMatch(/^potion-base-4M-int8@/);

    await uploadTexts(t, editor, documents(3, 40));
    const settled = await until('the adapted model in force', (s) => s.corpus_adaptation.state === 'in_force' && /-corpus-/.test(s.model_id ?? '') && s.stale_chunks === 0);
    expect(settled.chunks).toBeGreaterThanOrEqual(100);
    expect(settled.dimension).toBe(128 + 64);
    const adaptedId = settled.model_id.split('@')[0];
    expect(adaptedId).toMatch(/^potion-base-4M-int8-corpus-[0-9a-f]{8}$/);
    expect(settled.corpus_adaptation.detail).toMatch(new RegExp(`^${adaptedId}, adapted to ${settled.chunks} chunks`));

    const modelDir = path.join(t.dataDir, 'models');
    expect(await readActiveModelId(modelDir, 'embedding')).toBe(adaptedId);
    const manifest = await readManifest(modelFolder(modelDir, 'embedding', adaptedId), 'embedding');
    expect(manifest).toMatchObject({ format: 'model2vec', dimension: 192, source: 'corpus:potion-base-4M-int8', method: expect.stringMatching(/^corpus adaptation of potion-base-4M-int8: .* over \d+ chunks$/) });
    await t.app.jobs.idle(); // the rebuild puts the new index in force before its last step
    const jobs = (await t.request({ method: 'GET', url: '/api/jobs?limit=100', token: editor })).json().jobs as Array<{ type: string; state: string; result?: Record<string, number> }>;
    const adapt = jobs.filter((job) => job.type === 'index.adapt');
    expect(adapt).toHaveLength(1);
    expect(adapt[0]).toMatchObject({ state: 'succeeded', result: { model: adaptedId, chunks: settled.chunks } });
    expect(adapt[0].result!.adapted_tokens).toBeGreaterThan(128);
    expect(jobs.some((job) => job.type === 'index.rebuild' && job.state === 'succeeded')).toBe(true);

    // Search runs on the adapted model; the base model stays installed for the next adaptation.
    const res = await t.request({ method: 'POST', url: '/api/search', token: editor, payload: { query: 'boiler radiator pipe', mode: 'hybrid', k: 3 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().retrieval_settings).toMatchObject({ mode_used: 'hybrid', model_id: settled.model_id });
    expect(await readManifest(modelFolder(modelDir, 'embedding', SHIPPED_EMBEDDER.id), 'embedding')).toMatchObject({ source: 'shipped:potion-base-4M-int8' });

    // Nothing changed enough: no second adaptation.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const again = (await t.request({ method: 'GET', url: '/api/jobs?limit=100', token: editor })).json().jobs as Array<{ type: string }>;
    expect(again.filter((job) => job.type === 'index.adapt')).toHaveLength(1);

    // The same collection gives the same model, byte for byte: built again elsewhere, it has the same id.
    const elsewhere = await tmp();
    await installShippedEmbedder({ modelDir: elsewhere });
    const rebuilt = await buildAdaptedModel({ databaseFile: path.join(t.dataDir, 'hearth.db'), modelDir: elsewhere, baseId: SHIPPED_EMBEDDER.id });
    expect(rebuilt.manifest!.id).toBe(adaptedId);
    expect(rebuilt.manifest!.sha256).toEqual(manifest.sha256);

    // Quoting and soft term matching compare with the model's own 128 dimensions.
    const embedder = (await loadEmbedder({ modelDir, device: 'cpu', id: adaptedId }))!;
    expect(embedder.lexicalDimensions).toBe(128);
    const view = lexicalView(embedder);
    expect(view.dimension).toBe(128);
    const [full] = await embedder.embed(['boiler radiator']);
    const [lexical] = await view.embed(['boiler radiator']);
    const norm = Math.hypot(...full.subarray(0, 128));
    expect(Array.from(lexical).map((x) => x.toFixed(5))).toEqual(Array.from(full.subarray(0, 128)).map((x) => (x / norm).toFixed(5)));
    await embedder.close();
  });

  /** `texts` (by default 30 documents: more than 100 chunks) uploaded to a fresh app with `env`, given time for a check; its stats and its jobs. */
  async function afterUploads(env: Record<string, string>, texts = documents(0, 30), settled: (stats: any) => boolean = () => true): Promise<{ stats: any; jobTypes: string[]; jobs: Array<{ type: string; state: string; result?: Record<string, unknown> }>; models: string[] }> {
    const app = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped', EMBED_ADAPT_MIN_CHUNKS: '100', MODEL_WATCH_SECONDS: '1', ...env });
    try {
      const editor = (await app.userWithRole('editor')).access;
      await uploadTexts(app, editor, texts);
      for (let i = 0; i < 600 && !settled((await app.request({ method: 'GET', url: '/api/index/stats', token: editor })).json()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      await new Promise((resolve) => setTimeout(resolve, 2500));
      await app.app.jobs.idle();
      const stats = (await app.request({ method: 'GET', url: '/api/index/stats', token: editor })).json();
      const jobs = (await app.request({ method: 'GET', url: '/api/jobs?limit=100', token: editor })).json().jobs as Array<{ type: string; state: string; result?: Record<string, unknown> }>;
      const models = (await readdir(path.join(app.dataDir, 'models', 'embeddings'))).sort();
      return { stats, jobTypes: jobs.map((job) => job.type), jobs, models };
    } finally {
      await app.close();
    }
  }

  it('with no embedding model the stats say so from the start (the first check runs at boot, not an interval later)', async () => {
    const app = await startApp({}); // no model installed; MODEL_WATCH_SECONDS as by default (10 s)
    try {
      const editor = (await app.userWithRole('editor')).access;
      let adaptation: unknown;
      for (let i = 0; i < 30; i++) {
        adaptation = (await app.request({ method: 'GET', url: '/api/index/stats', token: editor })).json().corpus_adaptation;
        if ((adaptation as { detail: string }).detail !== 'not checked yet') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(adaptation).toEqual({ state: 'off', detail: 'no embedding model in force' });
    } finally {
      await app.close();
    }
  });

  it('while jobs run the stats do not repeat what an earlier check found (0 chunks at boot), and say why it waits', async () => {
    const app = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped', EMBED_ADAPT_MIN_CHUNKS: '100', MODEL_WATCH_SECONDS: '1' });
    let release = () => {};
    try {
      const editor = (await app.userWithRole('editor')).access;
      const adaptation = async () => (await app.request({ method: 'GET', url: '/api/index/stats', token: editor })).json().corpus_adaptation;
      const until = async (detail: RegExp | string) => {
        for (let i = 0; i < 50; i++) {
          const now = await adaptation();
          if (typeof detail === 'string' ? now.detail === detail : detail.test(now.detail)) return now;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        return adaptation();
      };
      expect(await until(/^0 chunks:/)).toEqual({ state: 'waiting', detail: '0 chunks: the embedder is adapted to the collection from 100 (EMBED_ADAPT_MIN_CHUNKS)' });
      // A job held running (as a long scan would be): the next check says the adaptation waits for the jobs.
      const held = new Promise<void>((resolve) => (release = resolve));
      await app.app.jobs.enqueue('test.hold', () => held);
      expect(await until(BUSY)).toEqual({ state: 'waiting', detail: BUSY });
      release();
      await app.app.jobs.idle();
      expect((await until(/^0 chunks:/)).detail).toMatch(/^0 chunks:/);
    } finally {
      release();
      await app.close();
    }
  });

  it('EMBED_ADAPT=off: the model in force stays as it is', async () => {
    const { stats, jobTypes } = await afterUploads({ EMBED_ADAPT: 'off' });
    expect(stats.chunks).toBeGreaterThanOrEqual(100);
    expect(stats.corpus_adaptation).toEqual({ state: 'off', detail: 'EMBED_ADAPT=off' });
    expect(stats.model_id).toMatch(/^potion-base-4M-int8@/);
    expect(jobTypes).not.toContain('index.adapt');
  });

  it('a collection of too few distinct words is not adapted (its corpus part would be empty), once, and the stats say why', async () => {
    // 120 documents of the same 40 words: 240 chunks, 40-odd distinct frequent tokens where a corpus part needs 128.
    const narrow = WORDS.slice(0, 40);
    const texts = Object.fromEntries(Array.from({ length: 120 }, (_, d) => {
      const random = mulberry32(d + 1);
      return [`narrow-${d}.txt`, Array.from({ length: 2 }, () => Array.from({ length: 120 }, () => narrow[Math.floor(random() * narrow.length)]).join(' ') + '.').join('\n\n')];
    }));
    const { stats, jobs, models } = await afterUploads({}, texts, (s) => /distinct frequent words/.test(s.corpus_adaptation.detail));
    expect(stats.chunks).toBeGreaterThanOrEqual(100);
    expect(stats.corpus_adaptation.state).toBe('waiting');
    const [, frequent] = /^\d+ chunks with (\d+) distinct frequent words, 128 needed: not adapted \(tried again when the collection changes\)$/.exec(stats.corpus_adaptation.detail) ?? [];
    expect(Number(frequent), stats.corpus_adaptation.detail).toBeGreaterThanOrEqual(40); // a word may be two tokens
    expect(Number(frequent)).toBeLessThan(128);
    expect(stats.model_id).toMatch(/^potion-base-4M-int8@/);
    // One look (not one every check), nothing installed, no rebuild.
    const adapt = jobs.filter((job) => job.type === 'index.adapt');
    expect(adapt).toHaveLength(1);
    expect(adapt[0]).toMatchObject({ state: 'succeeded', result: { model: null, chunks: stats.chunks, adapted_tokens: 0 } });
    expect(jobs.some((job) => job.type === 'index.rebuild')).toBe(false);
    expect(models).toEqual(['ACTIVE', SHIPPED_EMBEDDER.id]);
  });

  it('past EMBED_ADAPT_MAX_CHUNKS the model is not adapted, and the stats say why', async () => {
    const { stats, jobTypes } = await afterUploads({ EMBED_ADAPT_MAX_CHUNKS: '120' });
    expect(stats.chunks).toBeGreaterThan(120);
    expect(stats.corpus_adaptation).toEqual({ state: 'waiting', detail: `${stats.chunks} chunks, over EMBED_ADAPT_MAX_CHUNKS 120: not adapted again (the index's rebuild onto a new model holds two indexes at once)` });
    expect(stats.model_id).toMatch(/^potion-base-4M-int8@/);
    expect(jobTypes).not.toContain('index.adapt');
  });
});
