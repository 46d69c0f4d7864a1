import { describe, expect, it } from 'vitest';
import { queryWords } from './keyword-query.js';
import { chunkWords, softMatchScores, softTermWeight } from './soft-match.js';

const unit = (...xs: number[]) => {
  const norm = Math.hypot(...xs);
  return Float32Array.from(xs.map((x) => x / norm));
};

describe('soft term matching', () => {
  const vectors = new Map([
    ['refresh', unit(1, 0, 0)],
    ['update', unit(0.8, 0.6, 0)],
    ['lists', unit(0, 0, 1)],
    ['catalogue', unit(0, 0.6, 0.8)],
    ['banana', unit(-1, 0, 0)],
  ]);

  it("scores each term's best word of a chunk, weighed by the term's idf; the same word counts 1", () => {
    const terms = [
      { word: 'refresh', weight: 2 },
      { word: 'lists', weight: 1 },
    ];
    const [exact, similar, opposite, partly] = softMatchScores(terms, chunkWords(['Refresh the lists', 'update catalogue', 'banana', 'Update: banana!']), vectors);
    expect(exact).toBeCloseTo(1);
    expect(similar).toBeCloseTo((2 * 0.8 + 1 * 0.8) / 3);
    // A word pointing away matches nothing rather than counting against the chunk.
    expect(opposite).toBe(0);
    expect(partly).toBeCloseTo((2 * 0.8) / 3);
  });

  it('a word with no vector matches only itself; no terms score nothing', () => {
    const terms = [{ word: 'xyzzy', weight: 1 }];
    expect([...softMatchScores(terms, chunkWords(['xyzzy', 'refresh']), vectors)]).toEqual([1, 0]);
    expect([...softMatchScores([], chunkWords(['refresh']), vectors)]).toEqual([0]);
  });

  it('rare terms weigh more; a term no chunk holds weighs as if one did', () => {
    expect(softTermWeight(1, 1000)).toBeGreaterThan(softTermWeight(100, 1000));
    expect(softTermWeight(0, 1000)).toBe(softTermWeight(1, 1000));
  });

  it("numbers each chunk's distinct content words in one vocabulary, lower-cased, as FTS5 cuts words, without function words", () => {
    const words = chunkWords(['Run the Update, then run it twice: the lists update.', 'Lists of CAFÉ-crème 42']);
    expect(words.vocabulary).toEqual(['run', 'update', 'twice', 'lists', 'café', 'crème', '42']);
    expect(words.chunks.map((ids) => [...ids])).toEqual([
      [0, 1, 2, 3],
      [3, 4, 5, 6],
    ]);
  });

  it('cuts words as FTS5 unicode61 does, the same cut as the questions get: letters, digits and marks, a character beyond the BMP whole', () => {
    const text = 'Café NAÏVE 𝐀bc x_y e\u0301te 北京 — “quoted” 42nd 😀ok İstanbul';
    const expected = ['café', 'naïve', '𝐀bc', 'x', 'y', 'e\u0301te', '北京', 'quoted', '42nd', 'ok', 'i\u0307stanbul'];
    expect(queryWords(text)).toEqual(expected);
    expect(chunkWords([text]).vocabulary).toEqual(expected);
  });
});

