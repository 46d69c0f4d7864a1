import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../default-embedder/linalg.js';
import { adaptTable, contentTokenMask, TokenStream, type AdaptSettings } from './adapt.js';

const SETTINGS: AdaptSettings = { window: 3, minCount: 2, rank: 4, weight: 1, contextsPerToken: 300 };
const ROWS = 40;
const DIMENSION = 8;

/** A base table whose rows are random: two tokens' rows say nothing about each other. */
function baseTable(): { rows: number; dimension: number; data: Int8Array } {
  const random = mulberry32(3);
  return { rows: ROWS, dimension: DIMENSION, data: Int8Array.from({ length: ROWS * DIMENSION }, () => Math.round((random() * 2 - 1) * 100)) };
}

/** Chunks where tokens 0 and 1 always come together, as do 2 and 3; the rest (4-39) is filler. */
function chunks(seed: number): number[][] {
  const random = mulberry32(seed);
  const filler = () => 4 + Math.floor(random() * (ROWS - 4));
  return Array.from({ length: 200 }, (_, i) => {
    const pair = i % 2 === 0 ? [0, 1] : [2, 3];
    return [filler(), filler(), ...pair, filler(), filler()];
  });
}

const every = new Uint8Array(ROWS).fill(1);
const streamOf = (list: number[][]) => {
  const stream = new TokenStream(ROWS);
  for (const ids of list) stream.addChunk(ids, every);
  return stream;
};
const row = (table: { dimension: number; data: ArrayLike<number> }, id: number) => Array.from({ length: table.dimension }, (_, h) => table.data[id * table.dimension + h]);
const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0) / (Math.hypot(...a) * Math.hypot(...b));

describe('adaptTable', () => {
  it('draws together the tokens the collection puts together, and keeps each model row as it was', () => {
    const base = baseTable();
    const adapted = adaptTable(base, streamOf(chunks(1)), SETTINGS);
    expect(adapted.dimension).toBe(DIMENSION + SETTINGS.rank);
    expect(adapted.data).toBeInstanceOf(Int8Array);
    expect(adapted.corpusRows).toBe(ROWS);
    for (const id of [0, 5, 39]) expect(row(adapted, id).slice(0, DIMENSION)).toEqual(row(base, id));
    // The corpus part alone: 0 with 1 (always together) against 0 with 2 (never).
    const corpus = (id: number) => row(adapted, id).slice(DIMENSION);
    expect(cosine(corpus(0), corpus(1))).toBeGreaterThan(0.9);
    expect(cosine(corpus(0), corpus(2))).toBeLessThan(0.5);
    // The whole rows: the pair that goes together is closer than in the base table.
    expect(cosine(row(adapted, 0), row(adapted, 1))).toBeGreaterThan(cosine(row(base, 0), row(base, 1)) + 0.3);
  });

  it('is the same whatever order the chunks come in', () => {
    const list = chunks(1);
    const shuffled = [...list].reverse();
    const a = adaptTable(baseTable(), streamOf(list), SETTINGS);
    const b = adaptTable(baseTable(), streamOf(shuffled), SETTINGS);
    expect(Buffer.from(b.data.buffer).equals(Buffer.from(a.data.buffer))).toBe(true);
  });

  it('gives rare tokens and a collection too small for the rank no corpus part', () => {
    const tiny = adaptTable(baseTable(), streamOf([[0, 1, 2]]), SETTINGS);
    expect(tiny.corpusRows).toBe(0);
    expect(row(tiny, 0).slice(DIMENSION)).toEqual([0, 0, 0, 0]);
  });

  it('counts content tokens only: special tokens, function words and pieces without a letter are not', () => {
    expect(Array.from(contentTokenMask(['[CLS]', 'the', 'valve', '##s', '42', 'Ġpump', 'Ġthe', '<s>', '▁boiler']))).toEqual([0, 0, 1, 1, 0, 1, 0, 0, 1]);
  });
});
