import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openVectorIndex, type VectorIndex } from './index.js';
import { nearestUnitVectors, unitVector } from '../../test/fixtures/unit-vectors.js';

const DIM = 24;

const vectorOf = (label: number) => unitVector(label, DIM);

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const labelsOf = (hits: Array<{ label: number }>) => hits.map(({ label }) => label);

/** The most admitted vectors the addon compares exactly, for an index of `size` keyed vectors (hnsw-int8.cc). */
const exactPathBound = (size: number) => Math.max(4096, Math.floor(Math.sqrt(3200 * size)));


/** Recall@10 of the search filtered to one key against exact filtered search; every result must be admitted. */
function filteredRecall(index: VectorIndex, queries: Float32Array[], key: number, admitted: number[]): number {
  const allowed = new Set(admitted);
  let hits = 0;
  for (const query of queries) {
    const found = index.search(query, 10, Uint32Array.of(key));
    expect(found.every(({ label }) => allowed.has(label))).toBe(true);
    const truth = new Set(nearestUnitVectors(query, admitted, 10));
    hits += found.filter(({ label }) => truth.has(label)).length;
  }
  return hits / (queries.length * 10);
}

describe('filtered vector search (access keys)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-filtered-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = () => openVectorIndex({ file: path.join(dir, 'vectors.hnsw'), dimension: DIM, modelId: 'model@1' });
  /** n labels, the key of label l being l % keys + 1 (keys 1..keys, each holding n/keys labels). */
  async function filled(n: number, keys: number) {
    const index = await open();
    const labels = range(0, n);
    for (let i = 0; i < n; i += 1000) {
      const batch = labels.slice(i, i + 1000);
      index.add(batch, batch.map(vectorOf), batch.map((l) => (l % keys) + 1));
    }
    return index;
  }

  it('returns only labels whose key is allowed, as many as asked for, when few are admitted (exact path)', async () => {
    const index = await filled(3000, 100); // key 7 holds 30 labels: well under the exact-path bound
    const query = vectorOf(123456);
    const found = index.search(query, 10, Uint32Array.of(7));
    expect(found).toHaveLength(10);
    expect(found.every(({ label }) => label % 100 === 6)).toBe(true);
    const admitted = range(0, 3000).filter((l) => l % 100 === 6);
    expect(found.map(({ label }) => label)).toEqual(nearestUnitVectors(query, admitted, 10));
    expect(found[0].score).toBeGreaterThanOrEqual(found[9].score);
  });

  it('keeps recall@10 at or above 0.95 against exact filtered search when half the index is admitted (graph path)', async () => {
    const index = await filled(20_000, 2);
    const admitted = range(0, 20_000).filter((l) => l % 2 === 1); // key 2
    expect(admitted.length).toBeGreaterThan(exactPathBound(20_000)); // so the addon walks the graph
    expect(filteredRecall(index, range(0, 40).map((q) => vectorOf(1_000_000 + q)), 2, admitted)).toBeGreaterThanOrEqual(0.95);
  });

  it('admits nothing for no keys, unknown keys, or labels that were never given a key', async () => {
    const index = await filled(500, 5);
    index.add([9000], [vectorOf(9000)]); // no key: never admitted by a filtered search
    expect(index.search(vectorOf(9000), 5, new Uint32Array(0))).toEqual([]);
    expect(index.search(vectorOf(9000), 5, Uint32Array.of(77))).toEqual([]);
    expect(index.search(vectorOf(9000), 600, Uint32Array.of(1, 2, 3, 4, 5)).some(({ label }) => label === 9000)).toBe(false);
    expect(index.search(vectorOf(9000), 1)[0].label).toBe(9000); // the unfiltered search still finds it
  });

  it('follows key changes and removals on the next search', async () => {
    const index = await filled(400, 4);
    index.setKeys([5, 6], [99, 99]);
    expect(index.search(vectorOf(5), 10, Uint32Array.of(99)).map(({ label }) => label).sort()).toEqual([5, 6]);
    index.remove([5]);
    expect(index.search(vectorOf(5), 10, Uint32Array.of(99)).map(({ label }) => label)).toEqual([6]);
    index.setKeys([6], [1]);
    expect(index.search(vectorOf(5), 10, Uint32Array.of(99))).toEqual([]);
  });

  it('a removed label\'s slot taken by another label of another key: each key finds its own, exact path and after a reload', async () => {
    const index = await filled(6000, 3);
    index.setKeys([10, 11, 12], [50, 50, 50]);
    index.remove([11]);
    index.add([90_000], [vectorOf(11)], [60]); // reuses the freed slot (hnswlib's replace_deleted): the same vector as 11 had
    const search = (from: VectorIndex, key: number) => labelsOf(from.search(vectorOf(11), 10, Uint32Array.of(key))).sort((a, b) => a - b);
    expect(search(index, 50)).toEqual([10, 12]);
    expect(search(index, 60)).toEqual([90_000]);
    index.setKeys([11], [50]); // a key for a label no longer in the graph: its old slot now holds 90000, of key 60
    expect(search(index, 50)).toEqual([10, 12]);
    index.remove([90_000]);
    index.add([11], [vectorOf(11)], [50]); // back again, into whichever slot is free
    expect(search(index, 50)).toEqual([10, 11, 12]);
    expect(search(index, 60)).toEqual([]);
    await index.save();
    const reopened = await open();
    reopened.setKeys([10, 11, 12], [50, 50, 50]);
    expect(search(reopened, 50)).toEqual([10, 11, 12]);
  });

  it('forgets keys on reload (they are set again from the database), so nothing is admitted until then', async () => {
    const index = await filled(300, 3);
    await index.save();
    const reopened = await open();
    expect(reopened.restored).toBe(true);
    expect(reopened.search(vectorOf(1), 5, Uint32Array.of(1, 2, 3))).toEqual([]);
    reopened.setKeys(range(0, 300), range(0, 300).map((l) => (l % 3) + 1));
    expect(reopened.search(vectorOf(1), 5, Uint32Array.of(2))[0].label).toBe(1);
  });

  it('filters labels beyond the dense key array of the addon (2^24 and above) as it filters the rest', async () => {
    const index = await open();
    const high = 2 ** 24;
    const labels = [...range(0, 10_000), ...range(high, high + 10_000)];
    for (let i = 0; i < labels.length; i += 1000) {
      const batch = labels.slice(i, i + 1000);
      index.add(batch, batch.map(vectorOf), batch.map((l) => (l % 2) + 1));
    }
    const admitted = labels.filter((l) => l % 2 === 1); // key 2, half of them above 2^24: the graph path
    expect(admitted.length).toBeGreaterThan(exactPathBound(labels.length));
    expect(filteredRecall(index, range(0, 20).map((q) => vectorOf(2_000_000 + q)), 2, admitted)).toBeGreaterThanOrEqual(0.95);
    expect(labelsOf(index.search(vectorOf(high + 7), 5, Uint32Array.of(2)))).toContain(high + 7);
    index.setKeys([high + 7, 3], [40, 40]); // a key of its own: the exact path
    expect(labelsOf(index.search(vectorOf(high + 7), 5, Uint32Array.of(40))).sort((a, b) => a - b)).toEqual([3, high + 7]);
    index.remove([high + 7]);
    expect(labelsOf(index.search(vectorOf(high + 7), 5, Uint32Array.of(40)))).toEqual([3]);
  });

  it('refuses allowed keys that are not a Uint32Array', async () => {
    const index = await filled(50, 2);
    expect(() => index.search(vectorOf(1), 5, [1, 2] as unknown as Uint32Array)).toThrow(/Uint32Array/);
    expect(() => index.setKeys([1], [-1])).toThrow(/unsigned/);
    expect(() => index.setKeys([1], [2 ** 32 - 1])).toThrow(/below 2\^32 - 1/); // the addon's mark of no key
  });
});
