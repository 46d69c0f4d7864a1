import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HNSW_PARAMETERS, openVectorIndex } from './index.js';
import { nearestUnitVectors, unitVector } from '../../test/fixtures/unit-vectors.js';

const DIM = 16;

const vectorOf = (label: number, dimension = DIM) => unitVector(label, dimension);

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('HNSW vector index', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-vectors-'));
    file = path.join(dir, 'vectors.hnsw');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = (modelId = 'model-a@1', dimension = DIM) => openVectorIndex({ file, dimension, modelId });

  it('finds a stored vector as its own nearest neighbour with cosine similarity 1', async () => {
    const index = await open();
    expect(index.restored).toBe(false);
    index.add(range(1, 101), range(1, 101).map((l) => vectorOf(l)));
    const [best, second] = index.search(vectorOf(42), 5);
    expect(best.label).toBe(42);
    expect(best.score).toBeCloseTo(1, 5);
    expect(second.score).toBeLessThan(best.score);
    expect(index.search(vectorOf(1), 500)).toHaveLength(100); // k beyond the size is clamped
  });

  it('grows its capacity as vectors are added', async () => {
    const index = await open();
    const labels = range(0, HNSW_PARAMETERS.initialCapacity * 3);
    for (let i = 0; i < labels.length; i += 500) index.add(labels.slice(i, i + 500), labels.slice(i, i + 500).map((l) => vectorOf(l)));
    expect(index.size()).toBe(labels.length);
    expect(index.search(vectorOf(3000), 1)[0].label).toBe(3000);
  });

  it('replaces the vector of a label added twice', async () => {
    const index = await open();
    index.add([1, 2], [vectorOf(1), vectorOf(2)]);
    index.add([1], [vectorOf(99)]);
    expect(index.size()).toBe(2);
    expect(index.search(vectorOf(99), 1)[0]).toMatchObject({ label: 1 });
  });

  it('refuses vectors of another dimension', async () => {
    const index = await open();
    expect(() => index.add([1], [vectorOf(1, DIM + 1)])).toThrow(/dimensions/);
    expect(() => index.search(vectorOf(1, DIM - 1), 1)).toThrow(/dimensions/);
  });

  it('remove frees labels: never found again, re-addable, and their slots are reused', async () => {
    const index = await open();
    index.add(range(0, 200), range(0, 200).map((l) => vectorOf(l)));
    await index.save();
    const bytes = index.diskBytes();

    index.remove([5, 6, 7, 12345]); // an unknown label is ignored
    expect(index.size()).toBe(197);
    expect(index.has(5)).toBe(false);
    expect(index.labels()).not.toContain(6);
    expect(index.search(vectorOf(5), 200).map((r) => r.label)).not.toContain(5);

    index.add([6], [vectorOf(6)]); // its own slot comes back
    expect(index.search(vectorOf(6), 1)[0].label).toBe(6);
    index.add([500, 501], [vectorOf(500), vectorOf(501)]); // new labels take the two free slots
    expect(index.size()).toBe(200);
    await index.save();
    expect(index.diskBytes()).toBe(bytes);
  });

  it('saves and reopens with the same contents and the same answers', async () => {
    const index = await open();
    index.add(range(0, 300), range(0, 300).map((l) => vectorOf(l)));
    index.remove([10, 11]);
    await index.save();
    const before = index.search(vectorOf(77), 10);

    const reopened = await open();
    expect(reopened.restored).toBe(true);
    expect(reopened.size()).toBe(298);
    expect(reopened.has(10)).toBe(false);
    expect(reopened.search(vectorOf(77), 10)).toEqual(before);
    expect(reopened.diskBytes()).toBe(index.diskBytes());
  });


  it('searches a small index exactly: the true nearest, and the same answers however its graph was built', async () => {
    const labels = range(0, 4000); // up to 4,096 live vectors the addon compares them all (hnsw-int8.cc)
    const inOrder = await openVectorIndex({ file: path.join(dir, 'in-order.hnsw'), dimension: 24, modelId: 'model-a@1' });
    inOrder.add(labels, labels.map((l) => vectorOf(l, 24)));
    // Another graph over the same vectors: reversed, with a part added, removed and added again (a restored backup re-indexes what was mid-ingest).
    const rebuilt = await openVectorIndex({ file: path.join(dir, 'rebuilt.hnsw'), dimension: 24, modelId: 'model-a@1' });
    const reversed = [...labels].reverse();
    rebuilt.add(reversed, reversed.map((l) => vectorOf(l, 24)));
    rebuilt.remove(range(1000, 1500));
    rebuilt.add(range(1000, 1500), range(1000, 1500).map((l) => vectorOf(l, 24)));
    for (const q of range(0, 20)) {
      const query = vectorOf(900_000 + q, 24);
      const found = inOrder.search(query, 64);
      expect(rebuilt.search(query, 64)).toEqual(found);
      // Against float32 cosine, int8 rounding (cosine within 0.01) may only swap neighbours about as near as the 64th.
      const cosine = (label: number) => vectorOf(label, 24).reduce((sum, x, i) => sum + x * query[i], 0);
      const edge = cosine(nearestUnitVectors(query, labels, 64)[63]);
      const clearlyNearer = labels.filter((label) => cosine(label) > edge + 0.01);
      expect(clearlyNearer.filter((label) => !found.some((hit) => hit.label === label))).toEqual([]);
      expect(found.every(({ label }) => cosine(label) >= edge - 0.01)).toBe(true);
    }
  });
  it('never loads a saved index as another model or dimension: it is discarded and starts empty', async () => {
    const index = await open('model-a@1');
    index.add([1, 2, 3], [vectorOf(1), vectorOf(2), vectorOf(3)]);
    await index.save();

    const otherModel = await open('model-b@1');
    expect(otherModel.restored).toBe(false);
    expect(otherModel.size()).toBe(0);
    expect(otherModel.discarded).toMatch(/model-a@1/);

    const otherDimension = await open('model-a@1', DIM * 2);
    expect(otherDimension.size()).toBe(0);
    expect(otherDimension.discarded).toMatch(/dimension/);

    // Saving the new model's index replaces the old files.
    otherModel.add([9], [vectorOf(9)]);
    await otherModel.save();
    expect(readdirSync(dir).sort()).toEqual(['vectors.hnsw.2', 'vectors.hnsw.json']);
    expect((await open('model-b@1')).labels()).toEqual([9]);
    expect((await open('model-a@1')).size()).toBe(0);
  });

  it('discards a data file that does not match its sidecar, or a broken sidecar', async () => {
    const index = await open();
    index.add([1, 2], [vectorOf(1), vectorOf(2)]);
    await index.save();
    const data = path.join(dir, 'vectors.hnsw.1');
    writeFileSync(data, Buffer.alloc(statSync(data).size - 1));
    expect((await open()).discarded).toMatch(/size/);
    rmSync(data);
    expect((await open()).discarded).toMatch(/missing/);
    writeFileSync(`${file}.json`, '{ not json');
    expect((await open()).discarded).toMatch(/sidecar/);
  });

  it('ignores the data file of a save that crashed before its commit, and cleans it up', async () => {
    const index = await open();
    index.add([1], [vectorOf(1)]);
    await index.save();
    writeFileSync(path.join(dir, 'vectors.hnsw.7'), 'half-written');
    const reopened = await open();
    expect(reopened.restored).toBe(true);
    reopened.add([2], [vectorOf(2)]);
    await reopened.save();
    expect(readdirSync(dir).sort()).toEqual(['vectors.hnsw.2', 'vectors.hnsw.json']);
  });

  it('keeps vectors as int8: a quarter of float32 on disk, cosine within 0.01 and the same nearest neighbours', async () => {
    const dimension = 384;
    const index = await open('model-a@1', dimension);
    const labels = range(0, 2000);
    // Like text embeddings, each vector mixes a few of 48 topic directions plus noise (uniform random
    // 384-d vectors are all near-ties, where no index keeps the exact order).
    const topics = range(0, 48).map((t) => vectorOf(100_000 + t, dimension));
    const mixture = (seed: number) => {
      const noise = vectorOf(seed, dimension);
      const v = noise.map((x) => x * 0.3);
      for (let j = 0; j < 4; j++) {
        const weight = noise[j * 7] * 20;
        const topic = topics[Math.floor(Math.abs(noise[j * 11 + 1]) * 96) % 48];
        v.forEach((_, i) => (v[i] += weight * topic[i]));
      }
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    };
    const stored = labels.map(mixture);
    index.add(labels, stored);
    await index.save();
    // hnswlib's level 0 per element: 132 bytes of links + 8 of label + the vector (388 as int8, 1,536 as float32).
    expect(index.diskBytes() / labels.length).toBeLessThan(132 + 8 + 388 + 40);

    const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i], 0);
    let shared = 0;
    for (const q of range(5000, 5020)) {
      const query = mixture(q);
      const exact = labels.map((l) => ({ label: l, score: cosine(query, stored[l]) })).sort((a, b) => b.score - a.score);
      const found = index.search(query, 10);
      for (const hit of found) expect(Math.abs(hit.score - cosine(query, stored[hit.label]))).toBeLessThan(0.01);
      const top = new Set(exact.slice(0, 10).map((e) => e.label));
      shared += found.filter((hit) => top.has(hit.label)).length;
    }
    expect(shared / 200).toBeGreaterThan(0.95);
  });

  it('scores are the int8 cosine to the last bit, whatever the dimension (the AVX2 and portable dot products agree)', async () => {
    /** The addon's quantisation (hnsw-int8.cc Quantise) in float32 arithmetic: int8 components, then 1/|q|. */
    const quantised = (v: Float32Array) => {
      const largest = v.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
      const scale = Math.fround(127 / largest);
      const roundHalfEven = (x: number) => (Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x));
      const q = Array.from(v, (x) => Math.max(-127, Math.min(127, roundHalfEven(Math.fround(x * scale)))));
      const square = q.reduce((sum, x) => sum + x * x, 0);
      return { q, inverse: Math.fround(1 / Math.fround(Math.sqrt(Math.fround(square)))) };
    };
    const expectedScore = (a: Float32Array, b: Float32Array) => {
      const [x, y] = [quantised(a), quantised(b)];
      const dot = x.q.reduce((sum, value, i) => sum + value * y.q[i], 0);
      return 1 - Math.fround(1 - Math.fround(Math.fround(dot * x.inverse) * y.inverse));
    };
    // Around the AVX2 loop's steps of 32 and 16 and its scalar tail.
    for (const dimension of [1, 7, 15, 16, 17, 31, 32, 33, 47, 48, 49, 100, 256, 385]) {
      rmSync(dir, { recursive: true, force: true });
      const index = await open('model-a@1', dimension);
      const labels = range(1, 41);
      index.add(labels, labels.map((l) => vectorOf(l, dimension)));
      const query = vectorOf(1000 + dimension, dimension);
      const found = index.search(query, labels.length); // 40 vectors: compared exactly, every one scored
      expect(found).toHaveLength(labels.length);
      for (const hit of found) expect(hit.score, `dimension ${dimension}, label ${hit.label}`).toBe(expectedScore(query, vectorOf(hit.label, dimension)));
    }
  });

  it('refuses a vector with a non-finite component and changes nothing', async () => {
    const index = await open();
    index.add([1], [vectorOf(1)]);
    const broken = vectorOf(2);
    broken[3] = Number.NaN;
    expect(() => index.add([2], [broken])).toThrow(/non-finite/);
    expect(() => index.add([3, 2], [vectorOf(3), broken])).toThrow(/non-finite/); // nothing of the batch goes in
    expect(() => index.search(broken, 1)).toThrow(/non-finite/);
    expect(index.labels()).toEqual([1]);
  });

  it('discards an index saved as float32 by the earlier format, and a data file of another vector size', async () => {
    const index = await open();
    index.add([1, 2], [vectorOf(1), vectorOf(2)]);
    await index.save();
    const sidecar = JSON.parse(readFileSync(`${file}.json`, 'utf8'));
    writeFileSync(`${file}.json`, JSON.stringify({ ...sidecar, format: 1 }));
    expect((await open()).discarded).toMatch(/sidecar/);
    // A sidecar claiming another dimension for this file: the addon checks the file's element size itself.
    writeFileSync(`${file}.json`, JSON.stringify({ ...sidecar, dimension: DIM * 2 }));
    expect((await open('model-a@1', DIM * 2)).discarded).toMatch(/another type or dimension/);
  });

  it('a save that cannot be written in full (a full disk) fails and leaves the previous save in force', async () => {
    const index = await open();
    index.add([1], [vectorOf(1)]);
    await index.save();
    index.add([2], [vectorOf(2)]);
    symlinkSync('/dev/full', path.join(dir, 'vectors.hnsw.2')); // every write to it fails with ENOSPC
    await expect(index.save()).rejects.toThrow(/vector index could not be saved to .*vectors\.hnsw\.2: index file was not written in full/);
    expect(JSON.parse(readFileSync(`${file}.json`, 'utf8')).generation).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(['vectors.hnsw.1', 'vectors.hnsw.json']); // the partial file is gone
    const reopened = await open();
    expect(reopened.labels()).toEqual([1]);
  });

  it('with onSaved, a failed save is reported there and resolves; the next good save reports null', async () => {
    const reports: Array<string | null> = [];
    const index = await openVectorIndex({ file, dimension: DIM, modelId: 'model-a@1', onSaved: (error) => reports.push(error?.message ?? null) });
    index.add([1], [vectorOf(1)]);
    symlinkSync('/dev/full', path.join(dir, 'vectors.hnsw.1'));
    await expect(index.save()).resolves.toBeUndefined();
    expect(reports).toEqual([expect.stringMatching(/could not be saved/)]);
    await index.save(); // the failed save removed its partial file: this one writes a real file
    expect(reports[1]).toBeNull();
    expect((await open()).labels()).toEqual([1]);
  });

  it('applies changes made during a save once the save has finished', async () => {
    const index = await open();
    index.add(range(0, 50), range(0, 50).map((l) => vectorOf(l)));
    const saving = index.save();
    index.add([1000], [vectorOf(1000)]);
    index.remove([0]);
    await saving;
    expect(index.has(1000)).toBe(true);
    expect(index.has(0)).toBe(false);
    expect((await open()).size()).toBe(50); // the file holds the state at the start of the save
  });

  it('searches on the thread pool with the same answers as on the caller\'s thread, filtered or not, exact or walked', async () => {
    const index = await open();
    const labels = range(1, 6001); // above the exact path's 4,096: the unfiltered search walks the graph
    index.add(labels, labels.map((l) => vectorOf(l)), labels.map((l) => l % 50));
    const wide = Uint32Array.from(range(0, 25)); // half the labels: the filtered walk
    const narrow = Uint32Array.from([7]); // 120 labels: compared exactly
    for (const q of range(0, 20)) {
      const query = vectorOf(100_000 + q);
      for (const keys of [undefined, wide, narrow]) expect(await index.searchAsync(query, 10, keys)).toEqual(index.search(query, 10, keys));
    }
    expect(await index.searchAsync(vectorOf(1), 0)).toEqual([]);
    await expect(async () => index.searchAsync(new Float32Array(DIM + 1), 5)).rejects.toThrow(/dimension/);
  });

  it('changes made while searches run on the pool wait for them: every search answers from a whole graph', async () => {
    const index = await open();
    const keyOf = (label: number) => label % 10;
    index.add(range(0, 5000), range(0, 5000).map((l) => vectorOf(l)), range(0, 5000).map(keyOf));
    const searches: Array<Promise<Array<{ label: number; score: number }>>> = [];
    // Batches of searches on the pool, each followed at once by changes on this thread: the graph grows past its
    // capacity (its memory moves), labels go, keys move.
    for (let batch = 0; batch < 20; batch++) {
      for (let q = 0; q < 20; q++) searches.push(index.searchAsync(vectorOf(200_000 + batch * 20 + q), 50, q % 2 ? Uint32Array.from([1, 2, 3, 4, 5]) : undefined));
      const added = range(5000 + batch * 1000, 6000 + batch * 1000);
      index.add(added, added.map((l) => vectorOf(l)), added.map(keyOf));
      index.remove(range(batch * 100, batch * 100 + 100));
      index.setKeys(range(batch * 100 + 2000, batch * 100 + 2100), range(0, 100).map(() => 1));
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const [i, hits] of (await Promise.all(searches)).entries()) {
      expect(hits).toHaveLength(50);
      const removedBefore = Math.floor(i / 20) * 100; // labels below this went before the search was asked
      expect(hits.every(({ label }) => Number.isInteger(label) && label >= removedBefore && label < 25_000)).toBe(true);
      expect(hits.every(({ score }, at) => score >= -1.01 && score <= 1.01 && (at === 0 || score <= hits[at - 1].score))).toBe(true);
    }
    // Searches after the changes see them.
    for (const q of range(0, 20)) expect((await index.searchAsync(vectorOf(300_000 + q), 10)).every(({ label }) => label >= 2000)).toBe(true);
  });
});
