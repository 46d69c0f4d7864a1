/**
 * The service's embedder runs its ONNX session in a worker thread (native/embeddings/worker-embedder.ts):
 * the same vectors as the model on the calling thread, each call answered with its own vectors, a
 * short request (a search query) ahead of a long ingestion batch, and nothing answered after close.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEmbedder, loadEmbedderOnThisThread as loadOnThisThread, type Embedder } from './index.js';
import { prose } from '../../test/fixtures/documents.js';
import { installTinyEmbeddingModel } from '../../test/fixtures/tiny-embedding-model.js';

let modelDir: string;
let inWorker: Embedder;
let onThisThread: Embedder;

beforeAll(async () => {
  modelDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-worker-embedder-'));
  await installTinyEmbeddingModel(modelDir);
  inWorker = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
  onThisThread = (await loadOnThisThread({ modelDir, device: 'cpu' }))!;
});
afterAll(async () => {
  await inWorker?.close();
  await onThisThread?.close();
});

const texts = Array.from({ length: 40 }, (_, i) => prose(500 + i, 1 + (i % 9)));

describe('the embedder in a worker thread', () => {
  it('gives the vectors, identity and token counts of the same model on the calling thread', async () => {
    expect({ id: inWorker.modelId, dimension: inWorker.dimension, maxTokens: inWorker.maxTokens, device: inWorker.device }).toEqual({
      id: onThisThread.modelId,
      dimension: onThisThread.dimension,
      maxTokens: onThisThread.maxTokens,
      device: onThisThread.device,
    });
    const [fromWorker, direct] = [await inWorker.embed(texts), await onThisThread.embed(texts)];
    expect(fromWorker).toHaveLength(texts.length);
    fromWorker.forEach((vector, i) => {
      expect(vector).toHaveLength(direct[i].length);
      for (let j = 0; j < vector.length; j++) expect(vector[j]).toBeCloseTo(direct[i][j], 5);
    });
    for (const text of texts.slice(0, 5)) expect(inWorker.countTokens(text)).toBe(onThisThread.countTokens(text));
    expect(await inWorker.embed([])).toEqual([]);
  });

  it('answers concurrent calls each with its own vectors, a short one ahead of a long one', async () => {
    const alone = await onThisThread.embed(texts);
    const finished: string[] = [];
    const long = inWorker.embed([...texts, ...texts, ...texts]).then((vectors) => (finished.push('long'), vectors));
    const pieces = [0, 7, 19].map((at) => inWorker.embed(texts.slice(at, at + 5)));
    const query = inWorker.embed(['how do I bleed a radiator'], { priority: 'query' }).then((vectors) => (finished.push('query'), vectors));
    const [longVectors, queryVectors, ...pieceVectors] = await Promise.all([long, query, ...pieces]);
    expect(finished).toEqual(['query', 'long']);
    expect(longVectors).toHaveLength(texts.length * 3);
    expect(queryVectors).toHaveLength(1);
    const same = (a: Float32Array, b: Float32Array) => a.every((x, j) => Math.abs(x - b[j]) < 1e-5);
    longVectors.forEach((vector, i) => expect(same(vector, alone[i % texts.length])).toBe(true));
    [0, 7, 19].forEach((at, k) => pieceVectors[k].forEach((vector, i) => expect(same(vector, alone[at + i])).toBe(true)));
  });

  it('drops a call whose signal aborts: it rejects, and the calls after it are answered', async () => {
    const abort = new AbortController();
    const dropped = inWorker.embed([...texts, ...texts, ...texts], { signal: abort.signal });
    const next = inWorker.embed(texts.slice(0, 3));
    abort.abort();
    await expect(dropped).rejects.toThrow(/embedding request dropped/);
    const vectors = await next;
    expect(vectors).toHaveLength(3);
    const alone = await onThisThread.embed(texts.slice(0, 3));
    vectors.forEach((vector, i) => expect(vector.every((x, j) => Math.abs(x - alone[i][j]) < 1e-5)).toBe(true));
    await expect(inWorker.embed(['too late'], { signal: abort.signal })).rejects.toThrow(/embedding request dropped/);
  });

  it('refuses calls once closed', async () => {
    const embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
    await embedder.close();
    await expect(embedder.embed(['after close'])).rejects.toThrow(/embedding thread exited/);
  });
});
