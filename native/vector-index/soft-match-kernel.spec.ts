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
