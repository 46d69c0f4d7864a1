import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openVectorIndex, type VectorIndex } from '../../native/vector-index/index.js';
import { searchVectors } from './vector-filter.js';
import { nearestUnitVectors, unitVector } from '../../test/fixtures/unit-vectors.js';

const DIM = 24;
const SIZE = 20_000;
const DOCUMENTS = 400; // 50 labels each: the key of label l is floor(l / 50) + 1

const vectorOf = (label: number) => unitVector(label, DIM);

const keyOf = (label: number) => Math.floor(label / 50) + 1;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('searchVectors with access keys', () => {
  let dir: string;
  let index: VectorIndex;
  /** The neighbour counts searchVectors asked the index for. */
  const asked: number[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-vector-filter-'));
    const real = await openVectorIndex({ file: path.join(dir, 'vectors.hnsw'), dimension: DIM, modelId: 'model@1' });
    for (let i = 0; i < SIZE; i += 1000) {
      const labels = range(i, i + 1000);
      real.add(labels, labels.map(vectorOf), labels.map(keyOf));
    }
    // The real index, with each search's k written down.
    index = Object.assign(Object.create(real) as VectorIndex, {
      searchAsync: (vector: Float32Array, k: number, keys?: Uint32Array) => (asked.push(k), real.searchAsync(vector, k, keys)),
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Recall@10 against exact filtered search over the admitted labels; every result must be admitted. */
  async function recallAt10(keys: number[], queries: number[]): Promise<number> {
    const admitted = new Set(keys);
    const labels = range(0, SIZE).filter((label) => admitted.has(keyOf(label)));
    let found = 0;
    for (const q of queries) {
      const query = vectorOf(1_000_000 + q);
      const hits = await searchVectors(index, query, 10, undefined, Uint32Array.from(keys));
      expect(hits).toHaveLength(10);
      expect(hits.every(({ label }) => admitted.has(keyOf(label)))).toBe(true);
      const truth = new Set(nearestUnitVectors(query, labels, 10));
      found += hits.filter(({ label }) => truth.has(label)).length;
    }
    return found / (queries.length * 10);
  }

  it.each([
    ['1%', 4],
    ['10%', 40],
    ['50%', 200],
  ])('keeps recall@10 at or above 0.95 with %s of the documents admitted, asking for no more than the k wanted', async (_share, documents) => {
    asked.length = 0;
    const keys = range(0, documents).map((d) => Math.floor((d * DOCUMENTS) / documents) + 1); // spread over the index
    expect(await recallAt10(keys, range(0, 20))).toBeGreaterThanOrEqual(0.95);
    // No filter needs a wider walk (hnswlib's filtered walk gathers efSearch admitted candidates itself, and few
    // admitted vectors are compared exactly): at 10% it once asked for 640 neighbours and walked most of the graph.
    expect(asked.every((k) => k === 10)).toBe(true);
  });

  it('asks for no wider a walk than an unfiltered search when every document is admitted', async () => {
    asked.length = 0;
    await searchVectors(index, vectorOf(42), 10, undefined, Uint32Array.from(range(1, DOCUMENTS + 1)));
    expect(asked).toEqual([10]);
  });
});
