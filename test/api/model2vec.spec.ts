import { readFile, writeFile, cp } from 'node:fs/promises';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEmbedder, type Embedder } from '../../native/embeddings/index.js';
import { modelFolder, readManifest } from '../../native/model-files/index.js';
import { runModelsCli } from '../fixtures/models-cli.js';
import { POTION_BASE_4M_DIR } from '../fixtures/models.js';
import { scratchFolders } from '../fixtures/scratch-folders.js';
import { uploadTexts } from '../fixtures/upload-texts.js';
import { startApp, type TestApp } from '../helpers.js';

const POTION_ID = 'potion-base-4M-int8';
/** From native/embeddings/default-model/potion-base-4M-int8/README.md. */
const POTION_TABLE_SHA256 = '48003d10a1f686321e4e79f5f306fe1fcf1d2b883a90785c939563a506bb89be';
const silent = { info: () => {}, warn: () => {} };
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((s, v, i) => s + v * b[i], 0);

const tmp = scratchFolders('hearth-model2vec-');

/**
 * What Model2Vec computes, written out here from the file format, without Hearth's reader: the safetensors
 * header (u64 LE length, JSON), the int8 rows of the text's tokens (no special tokens, [UNK] dropped),
 * their mean, L2-normalised.
 */
async function referenceVector(text: string): Promise<number[]> {
  const file = await readFile(path.join(POTION_BASE_4M_DIR, 'model.safetensors'));
  const headerLength = Number(file.readBigUInt64LE(0));
  const { embeddings } = JSON.parse(file.subarray(8, 8 + headerLength).toString('utf8'));
  const [, dimension] = embeddings.shape as [number, number];
  const data = file.subarray(8 + headerLength + embeddings.data_offsets[0]);
  const tokenizerJson = JSON.parse(await readFile(path.join(POTION_BASE_4M_DIR, 'tokenizer.json'), 'utf8'));
  const tokenizer = new Tokenizer(tokenizerJson, {});
  const unknown = tokenizer.token_to_id(tokenizerJson.model.unk_token);
  const ids = tokenizer.encode(text, { add_special_tokens: false }).ids.filter((id: number) => id !== unknown);
  const mean = new Array<number>(dimension).fill(0);
  for (const id of ids) for (let h = 0; h < dimension; h++) mean[h] += data.readInt8(id * dimension + h) / ids.length;
  const norm = Math.sqrt(dot(mean, mean));
  return mean.map((v) => v / norm);
}

describe('Model2Vec static models (potion-base-4M-int8)', () => {
  let modelDir: string;
  let embedder: Embedder;

  beforeAll(async () => {
    modelDir = await tmp();
    const imported = await runModelsCli(modelDir, ['import', POTION_BASE_4M_DIR]);
    expect(imported.code, imported.err).toBe(0);
    embedder = (await loadEmbedder({ modelDir, device: 'cpu', log: silent }))!;
  });
  afterAll(() => embedder?.close());

  it('`models import DIR` recognises the folder, pins its files and records the format, dimension and token limit', async () => {
    const manifest = await readManifest(modelFolder(modelDir, 'embedding', POTION_ID), 'embedding');
    expect(manifest).toMatchObject({ id: POTION_ID, format: 'model2vec', dimension: 128, max_tokens: 512, files: { model: 'model.safetensors', tokenizer: 'tokenizer.json' } });
    expect(manifest.sha256['model.safetensors']).toBe(POTION_TABLE_SHA256);
    expect(manifest.sha256['config.json']).toMatch(/^[0-9a-f]{64}$/);
    expect((await runModelsCli(modelDir, ['list'])).out).toMatch(/^\* potion-base-4M-int8 {2}128d {2}max 512 tokens/m);
  });

  it('runs in the embedder thread and gives the mean of the token rows, normalised', async () => {
    expect(embedder.constructor.name).toBe('WorkerEmbedder');
    expect(embedder).toMatchObject({ dimension: 128, maxTokens: 512, device: 'cpu' });
    expect(embedder.modelId).toBe(`${POTION_ID}@${POTION_TABLE_SHA256.slice(0, 12)}`);
    const texts = ['How do I reset my password?', 'The lighthouse keeper writes the logbook at dusk.', 'zxqvw ☃ naïve café'];
    const vectors = await embedder.embed(texts);
    for (const [i, text] of texts.entries()) {
      const expected = await referenceVector(text);
      expect(dot(vectors[i], vectors[i])).toBeCloseTo(1, 5);
      vectors[i].forEach((v, h) => expect(v).toBeCloseTo(expected[h], 5));
    }
  });

  it('is a real pretrained embedder: paraphrases are close, unrelated texts are not', async () => {
    const [car, automobile, banana, reset, recover, weather] = await embedder.embed(['car', 'automobile', 'banana', 'how do I reset my password', 'steps to recover a forgotten login password', 'the weather is sunny today']);
    expect(dot(car, automobile)).toBeGreaterThan(0.7);
    expect(dot(car, banana)).toBeLessThan(0.2);
    expect(dot(reset, recover)).toBeGreaterThan(0.6);
    expect(dot(reset, weather)).toBeLessThan(0.2);
  });

  it('a table that is not what its header says is refused at import, and nothing is installed', async () => {
    const broken = await tmp();
    await cp(POTION_BASE_4M_DIR, broken, { recursive: true });
    const table = await readFile(path.join(broken, 'model.safetensors'));
    await writeFile(path.join(broken, 'model.safetensors'), table.subarray(0, table.length - 1000));
    const target = await tmp();
    const result = await runModelsCli(target, ['import', broken, '--id', 'truncated']);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/byte range .* does not hold \[29528, 128\] I8/);
    expect((await runModelsCli(target, ['list'])).out).toMatch(/no embedding model installed/);
  });

  describe('through the service', () => {
    let t: TestApp;
    afterAll(() => t?.close());

    it('vector search finds a paraphrase with no shared content word', async () => {
      t = await startApp({ MODEL_DIR: modelDir });
      const editor = (await t.userWithRole('editor')).access;
      const docs = {
        'cars.txt': 'Automobile maintenance. Change the engine oil of your vehicle every ten thousand kilometres and check the tyre pressure monthly.',
        'baking.txt': 'Baking bread at home. Knead the dough, let it rise for an hour, then bake it in a hot oven until the crust is golden.',
        'garden.txt': 'Growing tomatoes. Plant the seedlings in full sun, water them deeply twice a week and stake the stems as they grow.',
      };
      await uploadTexts(t, editor, docs);
      const res = await t.request({ method: 'POST', url: '/api/search', token: editor, payload: { query: 'servicing a car motor lubricant', mode: 'vector', k: 3 } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().retrieval_settings).toMatchObject({ mode_used: 'vector', model_id: embedder.modelId });
      expect(res.json().results[0].filename).toBe('cars.txt');
    });
  });
});
