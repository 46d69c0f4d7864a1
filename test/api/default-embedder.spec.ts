/**
 * Hearth's built-in default embedder (plugins/search-index/default-embedder): deterministic build, the
 * normal loadEmbedder path, semantic usefulness, and first start without a model.
 * The determinism check builds a reduced variant (dimension 32, an explicit option) twice; the
 * service test builds the real 256-dimension model (~45 s on 2 cores) and the quality checks use it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import onnxProto from 'onnx-proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEmbedder, type Embedder } from '../../native/embeddings/index.js';
import { readManifest, sha256File } from '../../native/model-files/index.js';
import { DEFAULT_EMBEDDER_ID, DEFAULT_EMBEDDER_SOURCE, installDefaultModel } from '../../plugins/search-index/default-embedder/index.js';
import { FUSION_CANDIDATES, runRetrievalHarness } from '../../bench/retrieval-harness.js';
import { wordSimilarity } from '../../bench/word-similarity.js';
import { startApp, type TestApp } from '../helpers.js';

const { onnx } = onnxProto;
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-default-embedder-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i], 0);

describe('default embedder build (reduced variant: dimension 32)', () => {
  it('is deterministic: two builds give the same bytes and sha256, with a valid sentence-transformers-shaped graph', async () => {
    const [a, b] = [tempDir(), tempDir()];
    const first = await installDefaultModel({ modelDir: a, dimension: 32 });
    const second = await installDefaultModel({ modelDir: b, dimension: 32 });
    expect(first.sha256).toEqual(second.sha256);
    const folder = path.join(a, 'embeddings', DEFAULT_EMBEDDER_ID);
    expect(await sha256File(path.join(folder, 'model.onnx'))).toBe(first.sha256['model.onnx']);
    expect(await sha256File(path.join(b, 'embeddings', DEFAULT_EMBEDDER_ID, 'model.onnx'))).toBe(first.sha256['model.onnx']);

    const manifest = await readManifest(folder, 'embedding');
    expect(manifest).toMatchObject({ id: DEFAULT_EMBEDDER_ID, dimension: 32, source: DEFAULT_EMBEDDER_SOURCE, pooling: 'mean', normalize: true });
    expect(manifest.licence).toMatch(/WordNet 3\.1.*Princeton/);
    expect(manifest.licence).toMatch(/Apache-2\.0/);
    expect(manifest.method).toMatch(/PPMI.*SVD/);

    // The hand-written protobuf decodes with the reference ONNX schema.
    const model = onnx.ModelProto.decode(await readFile(path.join(folder, 'model.onnx')));
    expect(model.graph!.input!.map((i) => i.name)).toEqual(['input_ids', 'attention_mask', 'token_type_ids']);
    expect(model.graph!.output!.map((o) => o.name)).toEqual(['last_hidden_state']);
    const table = model.graph!.initializer!.find((t) => t.name === 'token_embeddings')!;
    expect(table.dims!.map(Number)).toEqual([30522, 32]);
    // Stored as int8 with a float scale per row: a quarter of a float32 table, on disk and in memory.
    expect(table.dataType).toBe(onnx.TensorProto.DataType.INT8);
    expect(model.graph!.initializer!.find((t) => t.name === 'token_scales')!.dims!.map(Number)).toEqual([30522]);
  }, 180_000); // two full builds: ~40 s on a quiet 2-core box, more under load (a deadline, not a speed check)
});

describe('first start without an embedding model (the real 256-dimension build)', () => {
  let app: TestApp;
  let embedder: Embedder | null = null;
  beforeAll(async () => {
    app = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'build' });
  }, 30_000);
  afterAll(async () => {
    await embedder?.close();
    await app?.close();
  });

  it('builds the default embedder in the background, keyword search serving meanwhile, then reports and uses it', async () => {
    const { access } = await app.login();
    const health = async () => (await app.request({ method: 'GET', url: '/api/health' })).json();
    const info = async () => (await app.request({ method: 'GET', url: '/api/model-info', token: access })).json();

    const early = await health();
    expect(early.capabilities.search).toBe('keyword');
    expect(early.components.embedder.detail).toMatch(/building Hearth's default embedder/);
    expect((await info()).default_embedder.state).toBe('building');
    const search = await app.request({ method: 'POST', url: '/api/search', token: access, payload: { query: 'boiler filter' } });
    expect(search.statusCode).toBe(200);

    // A deadline, not a speed check: the build takes ~1 min on a quiet 2-core box and several under load.
    const deadline = Date.now() + 420_000;
    while (app.app.defaultEmbedder.state === 'building' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    expect(app.app.defaultEmbedder).toMatchObject({ state: 'installed' });

    const late = await health();
    expect(late.components.embedder.status).toBe('ok');
    expect(late.components.embedder.detail).toMatch(/hearth-wordnet-static@.*built-in default embedder/);
    expect(late.capabilities.search).toBe('hybrid');
    const modelInfo = await info();
    expect(modelInfo.embedding).toMatchObject({ dimension: 256 });
    expect(modelInfo.embedding.model_id).toMatch(/^hearth-wordnet-static@/);
    expect(modelInfo.default_embedder.state).toBe('installed');
    expect(modelInfo.mode.search).toBe('hybrid');
    expect(app.logs()).toMatch(/default embedder: SVD: power iteration 2/);
    expect(app.logs()).toMatch(/default embedder installed and in force/);
  }, 480_000);

  it('loads through the normal loadEmbedder path: ≤ 40 MB, related words and paraphrases score above unrelated ones', async () => {
    const modelDir = path.join(app.dataDir, 'models');
    const manifest = await readManifest(path.join(modelDir, 'embeddings', DEFAULT_EMBEDDER_ID), 'embedding');
    expect(manifest.dimension).toBe(256);
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(path.join(modelDir, 'embeddings', DEFAULT_EMBEDDER_ID, 'model.onnx')));
    expect(size).toBeLessThanOrEqual(40 * 1024 * 1024);

    embedder = await loadEmbedder({ modelDir, device: 'cpu' });
    expect(embedder!.modelId).toMatch(/^hearth-wordnet-static@/);
    expect(embedder!.dimension).toBe(256);
    const [car, automobile, banana, doctor, physician, river] = await embedder!.embed(['car', 'automobile', 'banana', 'doctor', 'physician', 'river']);
    expect(cos(car, automobile)).toBeGreaterThan(cos(car, banana) + 0.2);
    expect(cos(doctor, physician)).toBeGreaterThan(cos(doctor, river) + 0.2);

    // Paraphrases sharing almost no words with their target.
    const [question, target, other] = await embedder!.embed([
      'How long can the heat pump go before its air-cleaning mesh needs swapping out?',
      'Replace the intake filter every 4 months, or sooner in dusty workshops.',
      'Staff accrue 25 days of paid holiday per year.',
    ]);
    expect(cos(question, target)).toBeGreaterThan(cos(question, other));
    const [q2, t2, o2] = await embedder!.embed([
      'My work computer was stolen; how quickly must I tell the company?',
      'Report a lost laptop or suspected breach to the service desk within 4 hours.',
      'Rinse the outdoor coil with low-pressure water each spring.',
    ]);
    expect(cos(q2, t2)).toBeGreaterThan(cos(q2, o2));

    // Hand-written topical pairs (none shares a WordNet synset) against re-paired controls.
    const report = await wordSimilarity(embedder!);
    expect(report.auc).toBeGreaterThan(0.8);
    expect(report.relatedMean).toBeGreaterThan(report.randomMean + 0.15);
  }, 60_000);

  // Since session 20 the default fusion (vector 3, keyword 1, documents 3, chosen with the shipped embedder) gives this table
  // hybrid 0.950 / 0.577. Before: docs/performance.md (and a run on this build): keyword 0.500 / 0.400, vector 0.875 / 0.642, hybrid default (RRF k=30, keyword list x2,
  // chosen on the real-collection evaluation, where keywords are the stronger arm) 0.850 / 0.545 (0.775 / 0.528 at k=60); with equal weights
  // at k=60 it was 0.900 / 0.561 on this harness, whose passages the project wrote and where vectors are the stronger arm. A smoke test, not the
  // tuning set. Floors: two questions of recall@5 and two first places of MRR below (build and harness are deterministic; the margin is for
  // float differences between CPUs).
  it('reaches the retrieval harness figures it reaches today, vector and hybrid well above keyword', async () => {
    const report = await runRetrievalHarness(embedder!, FUSION_CANDIDATES.slice(0, 1));
    const [keyword, vector, hybrid] = report.scores;
    console.log('retrieval harness:', JSON.stringify(report.scores));
    expect(report.scores.map((s) => s.label)).toEqual(['keyword', 'vector', FUSION_CANDIDATES[0].label]);
    expect(vector.recallAt5, 'vector recall@5').toBeGreaterThanOrEqual(0.825);
    expect(vector.mrr, 'vector MRR').toBeGreaterThanOrEqual(0.615);
    expect(hybrid.recallAt5, 'hybrid recall@5').toBeGreaterThanOrEqual(0.8);
    expect(hybrid.mrr, 'hybrid MRR').toBeGreaterThanOrEqual(0.495);
    expect(hybrid.recallAt5, 'hybrid recall@5 against keyword').toBeGreaterThan(keyword.recallAt5);
    expect(hybrid.mrr, 'hybrid MRR against keyword').toBeGreaterThan(keyword.mrr);
  }, 60_000);
});
