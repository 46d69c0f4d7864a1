import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { modelFolder, readManifest } from '../../native/model-files/index.js';
import { runModelsCli } from '../fixtures/models-cli.js';
import { buildTinyCrossEncoder } from '../fixtures/tiny-cross-encoder.js';
import { scratchFolders } from '../fixtures/scratch-folders.js';
import { uploadTexts } from '../fixtures/upload-texts.js';
import { startApp, type TestApp } from '../helpers.js';

const tmp = scratchFolders('hearth-reranker-');

/** Keyword ranking puts the lighthouse manual first; only the second document mentions zebras. */
const DOCS = {
  'lighthouse.txt': 'Lighthouse lighthouse lighthouse. The lighthouse keeper trims the lighthouse lamp and logs the lighthouse beam every night.',
  'zebra.txt': 'A lighthouse appears once here. This page is about the zebra crossing painted near the harbour road.',
  'bakery.txt': 'The bakery opens at dawn and sells rye bread and cinnamon rolls.',
};

async function appWith(
  env: Record<string, string>,
): Promise<{ t: TestApp; search: (query: string) => Promise<{ filenames: string[]; rerank: Record<string, unknown> | null; candidates: { keyword: number } }> }> {
  const t = await startApp(env);
  const editor = (await t.userWithRole('editor')).access;
  await uploadTexts(t, editor, DOCS);
  const search = async (query: string) => {
    const res = await t.request({ method: 'POST', url: '/api/search', token: editor, payload: { query, mode: 'keyword', k: 3 } });
    expect(res.statusCode, res.body).toBe(200);
    const { results, retrieval_settings } = res.json();
    return { filenames: results.map((r: { filename: string }) => r.filename), rerank: retrieval_settings.rerank, candidates: retrieval_settings.candidates };
  };
  return { t, search };
}

describe('the optional reranker stage', () => {
  let modelDir: string;
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  beforeAll(async () => {
    modelDir = await tmp();
    const source = await buildTinyCrossEncoder(await tmp(), ['zebra']);
    const imported = await runModelsCli(modelDir, ['import-reranker', source, '--id', 'tiny-cross-encoder']);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toMatch(/imported reranker tiny-cross-encoder {2}max 512 tokens .*\(active\)/);
  });

  it('`models import-reranker` installs it under MODEL_DIR/rerankers with sha256 pins', async () => {
    const manifest = await readManifest(modelFolder(modelDir, 'reranker', 'tiny-cross-encoder'), 'reranker');
    expect(manifest).toMatchObject({ kind: 'reranker', max_tokens: 512, files: { model: 'model.onnx', tokenizer: 'tokenizer.json', tokenizer_config: 'tokenizer_config.json' } });
    expect(manifest.sha256['model.onnx']).toMatch(/^[0-9a-f]{64}$/);
    expect(await readFile(path.join(modelDir, 'rerankers', 'ACTIVE'), 'utf8')).toMatch(/tiny-cross-encoder/);
    expect((await runModelsCli(modelDir, ['list'])).out).toMatch(/^\* reranker tiny-cross-encoder {2}max 512 tokens/m);
  });

  it('is off when none is installed: fused order, rerank null', async () => {
    const app = await appWith({ MODEL_DIR: await tmp() });
    t = app.t;
    const { filenames, rerank } = await app.search('lighthouse');
    expect(filenames).toEqual(['lighthouse.txt', 'zebra.txt']);
    expect(rerank).toBeNull();
  });

  it('reorders the top candidates by the cross-encoder and reports what it did', async () => {
    const app = await appWith({ MODEL_DIR: modelDir });
    t = app.t;
    const { filenames, rerank } = await app.search('lighthouse');
    expect(filenames).toEqual(['zebra.txt', 'lighthouse.txt']);
    expect(rerank).toMatchObject({ model_id: expect.stringMatching(/^tiny-cross-encoder@[0-9a-f]{12}$/), top_n: 20, budget_ms: 300, scored: 2, ms: expect.any(Number) });
  });

  it('scores only RERANK_TOP_N candidates: the rest keep their fused order', async () => {
    const app = await appWith({ MODEL_DIR: modelDir, RERANK_TOP_N: '1' });
    t = app.t;
    const { filenames, rerank } = await app.search('lighthouse');
    expect(filenames).toEqual(['lighthouse.txt', 'zebra.txt']);
    expect(rerank).toMatchObject({ top_n: 1, scored: 1 });
  });

  it('RERANK_BUDGET_MS=0 turns it off (and RERANK_TOP_N then asks for no deeper candidates)', async () => {
    const app = await appWith({ MODEL_DIR: modelDir, RERANK_BUDGET_MS: '0', RERANK_TOP_N: '40' });
    t = app.t;
    const { filenames, rerank, candidates } = await app.search('lighthouse');
    expect(filenames).toEqual(['lighthouse.txt', 'zebra.txt']);
    expect(rerank).toBeNull();
    expect(candidates).toMatchObject({ keyword: 20 });
  });

  it('RERANK_TOP_N over 20 fetches that many candidates a side, so the reranker can see them', async () => {
    const app = await appWith({ MODEL_DIR: modelDir, RERANK_TOP_N: '40' });
    t = app.t;
    const { filenames, rerank, candidates } = await app.search('lighthouse');
    expect(filenames).toEqual(['zebra.txt', 'lighthouse.txt']);
    expect(rerank).toMatchObject({ top_n: 40, scored: 2 });
    expect(candidates).toMatchObject({ keyword: 40 });
  });

  it('a tampered reranker is refused at start with a warning, and search runs without it', async () => {
    const broken = await tmp();
    const source = await buildTinyCrossEncoder(await tmp(), ['zebra']);
    expect((await runModelsCli(broken, ['import-reranker', source, '--id', 'tampered'])).code).toBe(0);
    await writeFile(path.join(broken, 'rerankers', 'tampered', 'model.onnx'), 'not a model');
    const app = await appWith({ MODEL_DIR: broken });
    t = app.t;
    expect(t.logs()).toMatch(/reranker: not loaded, search runs without it/);
    const { filenames, rerank } = await app.search('lighthouse');
    expect(filenames).toEqual(['lighthouse.txt', 'zebra.txt']);
    expect(rerank).toBeNull();
  });
});
