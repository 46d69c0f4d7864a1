import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { softMatchScores } from './index.js';

/** The same scores written plainly: what the addon's loop must equal. */
function reference(terms: Float32Array, rows: Int8Array, scales: Float32Array, dimension: number, wordRows: Int32Array, weights: Float64Array, termWords: Int32Array, ids: Int32Array, ends: Int32Array) {
  const similarity = (w: number, t: number) => {
    if (termWords[t] === w) return 1;
    if (wordRows[w] < 0) return 0;
    let dot = 0;
    for (let i = 0; i < dimension; i++) dot += rows[wordRows[w] * dimension + i] * scales[wordRows[w]] * terms[t * dimension + i];
    return Math.max(0, dot);
  };
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let start = 0;
  return [...ends].map((end) => {
    let sum = 0;
    for (let t = 0; t < weights.length; t++) {
      let best = 0;
      for (let i = start; i < end; i++) best = Math.max(best, similarity(ids[i], t));
      sum += weights[t] * best;
    }
    start = end;
    return sum / total;
  });
}

/** One case of the comparison, from a seed: `width` terms, 40 words in 50 rows, 5 chunks (two of them empty). */
function randomCase(dimension: number, width: number, seed: number) {
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  return {
    terms: Float32Array.from({ length: width * dimension }, random),
    rows: Int8Array.from({ length: 50 * dimension }, () => Math.round(random() * 127)),
    scales: Float32Array.from({ length: 50 }, () => Math.abs(random()) / 127),
    dimension,
    wordRows: Int32Array.from({ length: 40 }, (_, w) => (w % 9 === 4 ? -1 : (w * 13) % 50)),
    weights: Float64Array.from({ length: width }, (_, t) => 0.5 + t),
    termWords: Int32Array.from({ length: width }, (_, t) => [4, -1, 39][t % 3]),
    ids: Int32Array.from({ length: 120 }, (_, i) => (i * 7 + Math.floor(i / 3)) % 40),
    ends: Int32Array.from([0, 10, 10, 55, 120]),
  };
}
const CASES = [1, 5, 8, 13, 128].flatMap((dimension) => [3, 12].map((width) => [dimension, width] as const));

describe('softMatchScores (native)', () => {
  it('equals the plain loop on random vectors, any dimension (not only multiples of 8), empty chunks and words without a row included', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    for (const dimension of [1, 5, 8, 13, 128]) {
      const terms = Float32Array.from({ length: 3 * dimension }, random);
      const rows = Int8Array.from({ length: 50 * dimension }, () => Math.round(random() * 127));
      const scales = Float32Array.from({ length: 50 }, () => Math.abs(random()) / 127);
      const wordRows = Int32Array.from({ length: 40 }, (_, w) => (w % 9 === 4 ? -1 : (w * 13) % 50));
      const weights = Float64Array.from([2, 0.5, 1]);
      const termWords = Int32Array.from([4, -1, 39]); // word 4 has no row: it still meets its term at 1
      const ids = Int32Array.from({ length: 120 }, (_, i) => (i * 7 + Math.floor(i / 3)) % 40);
      const ends = Int32Array.from([0, 10, 10, 55, 120]);
      const scores = softMatchScores(terms, rows, scales, dimension, wordRows, weights, termWords, ids, ends);
      const expected = reference(terms, rows, scales, dimension, wordRows, weights, termWords, ids, ends);
      expect(scores).toHaveLength(5);
      [...scores].forEach((score, index) => expect(score).toBeCloseTo(expected[index], 5));
      expect(scores[0]).toBe(0);
    }
  });

  it('gives the same scores with the portable loop (what an ARM box runs) as with the AVX2 one, for 3 and 12 terms', () => {
    // The loop is chosen once a process: a child runs the same cases with HEARTH_PORTABLE_KERNEL=1.
    const script = `
      const addon = require(${JSON.stringify(createRequire(import.meta.url).resolve('@hearth/hnsw-int8'))});
      const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
      const typed = (c) => [Float32Array.from(c.terms), Int8Array.from(c.rows), Float32Array.from(c.scales), c.dimension, Int32Array.from(c.wordRows), Float64Array.from(c.weights), Int32Array.from(c.termWords), Int32Array.from(c.ids), Int32Array.from(c.ends)];
      process.stdout.write(JSON.stringify(cases.map((c) => [...addon.softMatchScores(...typed(c))])));`;
    const cases = CASES.map(([dimension, width]) => randomCase(dimension, width, dimension * 31 + width));
    const plain = (c: ReturnType<typeof randomCase>) => Object.fromEntries(Object.entries(c).map(([key, value]) => [key, typeof value === 'number' ? value : [...value]]));
    const portable = JSON.parse(execFileSync(process.execPath, ['-e', script], { input: JSON.stringify(cases.map(plain)), env: { ...process.env, HEARTH_PORTABLE_KERNEL: '1' } }).toString()) as number[][];
    cases.forEach((c, index) => {
      const here = softMatchScores(c.terms, c.rows, c.scales, c.dimension, c.wordRows, c.weights, c.termWords, c.ids, c.ends);
      const expected = reference(c.terms, c.rows, c.scales, c.dimension, c.wordRows, c.weights, c.termWords, c.ids, c.ends);
      expect(portable[index]).toHaveLength(5);
      portable[index].forEach((score, chunk) => {
        expect(score).toBeCloseTo(expected[chunk], 5);
        expect(here[chunk]).toBeCloseTo(score, 5);
      });
    });
  });

  it('refuses wrong types, ragged rows and ids out of range instead of reading past an array', () => {
    const args = (change: Partial<Record<'terms' | 'rows' | 'scales' | 'dimension' | 'wordRows' | 'weights' | 'termWords' | 'ids' | 'ends', unknown>>) => {
      const base = { terms: Float32Array.from([1, 0]), rows: Int8Array.from([127, 0]), scales: Float32Array.from([1 / 127]), dimension: 2, wordRows: Int32Array.from([0]), weights: Float64Array.from([1]), termWords: Int32Array.from([-1]), ids: Int32Array.from([0]), ends: Int32Array.from([1]), ...change };
      return () => (softMatchScores as (...a: unknown[]) => Float64Array)(base.terms, base.rows, base.scales, base.dimension, base.wordRows, base.weights, base.termWords, base.ids, base.ends);
    };
    expect([...args({})()]).toEqual([1]);
    expect(args({ rows: [127, 0] })).toThrow(TypeError);
    expect(args({ rows: Float32Array.from([1, 0]) })).toThrow(TypeError);
    expect(args({ weights: Float32Array.from([1]) })).toThrow(TypeError);
    expect(args({ rows: Int8Array.from([1, 0, 0]) })).toThrow(RangeError);
    expect(args({ scales: new Float32Array(0) })).toThrow(RangeError); // a row without its scale
    expect(args({ wordRows: Int32Array.from([1]) })).toThrow(RangeError);
    expect(args({ wordRows: Int32Array.from([-2]) })).toThrow(RangeError);
    expect(args({ dimension: 0 })).toThrow(RangeError);
    expect(args({ weights: Float64Array.from([1, 1]) })).toThrow(RangeError);
    expect(args({ termWords: Int32Array.from([1]) })).toThrow(RangeError);
    expect(args({ ids: Int32Array.from([1]) })).toThrow(RangeError);
    expect(args({ ids: Int32Array.from([-1]) })).toThrow(RangeError);
    expect(args({ ends: Int32Array.from([2]) })).toThrow(RangeError);
    expect(args({ ends: Int32Array.from([1, 0]) })).toThrow(RangeError);
  });
});
