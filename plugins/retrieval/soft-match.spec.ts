import { beforeAll, describe, expect, it } from 'vitest';
import { decodeWordIds, encodeWordIds } from '../../core/db/chunk-words.js';
import { contentWords } from '../../core/text/words.js';
import { queryWords } from './keyword-query.js';
import type { Embedder } from '../../native/embeddings/index.js';
import { shippedEmbedderForSuite } from '../../test/fixtures/shipped-embedder.js';
import { DenseRows, WordNumbering, WordVectors, quantiseInto, softMatchScores, softTermWeight, type SoftTerm } from './soft-match.js';

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot / Math.hypot(...a) / Math.hypot(...b);
};

const unit = (...xs: number[]) => {
  const norm = Math.hypot(...xs);
  return Float32Array.from(xs.map((x) => x / norm));
};

/** A document's stored words as writeDocumentWords lays them out: each chunk's count of ids, then the ids chunk after chunk. */
const documentOf = (chunks: number[][]) => ({ counts: Int32Array.from(chunks, (ids) => ids.length), words: Int32Array.from(chunks.flat()) });

/** Texts as one document's stored words, over a vocabulary numbered here (ids far apart, as a large one's are). */
function stored(texts: string[]) {
  const vocabulary: string[] = [];
  const idOf = (word: string) => {
    if (!vocabulary.includes(word)) vocabulary.push(word);
    return 1000 + 7 * vocabulary.indexOf(word);
  };
  const document = documentOf(texts.map((text) => contentWords(text).map(idOf)));
  return { document, idOf: (word: string) => (vocabulary.includes(word) ? idOf(word) : undefined), wordOf: (id: number) => vocabulary[(id - 1000) / 7] };
}

describe('soft term matching', () => {
  const vectors = new Map([
    ['refresh', unit(1, 0, 0)],
    ['update', unit(0.8, 0.6, 0)],
    ['lists', unit(0, 0, 1)],
    ['catalogue', unit(0, 0.6, 0.8)],
    ['banana', unit(-1, 0, 0)],
  ]);
  const rows = (words: string[]) => {
    const packed = new Float32Array(words.length * 3);
    words.forEach((word, index) => vectors.has(word) && packed.set(vectors.get(word)!, index * 3));
    return packed;
  };
  const score = (terms: SoftTerm[], texts: string[]) => {
    const { document, idOf, wordOf } = stored(texts);
    const words = new WordNumbering().of(
      [document],
      terms.map((term) => idOf(term.word)),
      100,
    );
    const termRows = rows(terms.map((term) => term.word));
    // The words' vectors in a table of rows in another order, as WordVectors keeps them; a word without one: -1.
    const spelled = [...words.words].map(wordOf).reverse();
    const at = Int32Array.from(words.words, (id) => (vectors.has(wordOf(id)) ? spelled.indexOf(wordOf(id)) : -1));
    const table = { rows: new Int8Array(spelled.length * 3), scales: new Float32Array(spelled.length), dimension: 3 };
    spelled.forEach((word, row) => vectors.has(word) && quantiseInto(table, row, vectors.get(word)!));
    return [...softMatchScores(terms, termRows, words, { ...table, at })];
  };

  it("scores each term's best word of a chunk, weighed by the term's idf; the same word counts 1", () => {
    const terms = [
      { word: 'refresh', weight: 2 },
      { word: 'lists', weight: 1 },
    ];
    const [exact, similar, opposite, partly] = score(terms, ['Refresh the lists', 'update catalogue', 'banana', 'Update: banana!']);
    expect(exact).toBeCloseTo(1);
    expect(similar).toBeCloseTo((2 * 0.8 + 1 * 0.8) / 3);
    // A word pointing away matches nothing rather than counting against the chunk.
    expect(opposite).toBe(0);
    expect(partly).toBeCloseTo((2 * 0.8) / 3);
  });

  it('a word with no vector matches only itself; no terms score nothing', () => {
    expect(score([{ word: 'xyzzy', weight: 1 }], ['xyzzy', 'refresh'])).toEqual([1, 0]);
    expect(score([], ['refresh'])).toEqual([0]);
  });

  it('rare terms weigh more; a term no chunk holds weighs as if one did', () => {
    expect(softTermWeight(1, 1000)).toBeGreaterThan(softTermWeight(100, 1000));
    expect(softTermWeight(0, 1000)).toBe(softTermWeight(1, 1000));
  });

  it("numbers a search's words in order of first appearance, each call afresh; a term no candidate chunk holds is -1", () => {
    const numbering = new WordNumbering();
    const first = numbering.of([documentOf([[50, 3, 9]]), documentOf([[9, 70000]])], [3, 4, undefined, 70000], 100);
    expect([...first.words]).toEqual([50, 3, 9, 70000]);
    expect([...first.ids]).toEqual([0, 1, 2, 2, 3]);
    expect([...first.ends]).toEqual([3, 5]);
    expect([...first.documents]).toEqual([0, 1]);
    expect([...first.termWords]).toEqual([1, -1, -1, 3]);
    const second = numbering.of([documentOf([[], [9]])], [50, 9], 100);
    expect([...second.words]).toEqual([9]);
    expect([...second.ids]).toEqual([0]);
    expect([...second.ends]).toEqual([0, 1]);
    expect([...second.documents]).toEqual([0, 0]);
    expect([...second.termWords]).toEqual([-1, 0]);
  });

  it('takes the chunks in the order given up to the budget, the last document cut short and the rest left out', () => {
    const words = new WordNumbering().of([documentOf([[1, 2], [3]]), documentOf([[4], [5, 6], [7]]), documentOf([[8]])], [7, 5], 4);
    expect([...words.words]).toEqual([1, 2, 3, 4, 5, 6]);
    expect([...words.ends]).toEqual([2, 3, 4, 6]);
    expect([...words.documents]).toEqual([0, 0, 1, 1]);
    expect([...words.termWords]).toEqual([-1, 4]);
  });

  it('reads a stored blob whether or not SQLite hands it 4-byte aligned', () => {
    const aligned = encodeWordIds(Int32Array.from([5, 6]));
    const shifted = Buffer.concat([Buffer.from([0]), aligned]).subarray(1);
    expect(shifted.byteOffset % 4).not.toBe(0);
    expect([...decodeWordIds(shifted)]).toEqual([5, 6]);
    expect([...decodeWordIds(aligned)]).toEqual([5, 6]);
  });

  it("a chunk's words: distinct content words, lower-cased, as FTS5 cuts words (the questions' cut), without function words or very long ones", () => {
    expect(contentWords('Run the Update, then run it twice: the lists update.')).toEqual(['run', 'update', 'twice', 'lists']);
    const text = 'Café NAÏVE 𝐀bc x_y e\u0301te 北京 — “quoted” 42nd 😀ok İstanbul';
    const expected = ['café', 'naïve', '𝐀bc', 'x', 'y', 'e\u0301te', '北京', 'quoted', '42nd', 'ok', 'i\u0307stanbul'];
    expect(queryWords(text)).toEqual(expected);
    expect(contentWords(text)).toEqual(expected);
    expect(contentWords(`keep ${'x'.repeat(41)} ${'y'.repeat(40)}`)).toEqual(['keep', 'y'.repeat(40)]);
  });
});

describe('the word-vector table (the shipped Model2Vec model, for real)', () => {
  const shipped = shippedEmbedderForSuite();
  let embedder: Embedder;
  beforeAll(() => {
    embedder = shipped();
  });

  const spelled = new Map([
    [10, 'refresh'],
    [11, 'update'],
    [12, 'catalogue'],
    [13, 'mirror'],
    [14, 'banana'],
    [15, 'kernel'],
    [16, 'x'.repeat(41)],
  ]);
  const wordsOf = async (ids: number[]) => new Map(ids.filter((id) => spelled.has(id)).map((id) => [id, spelled.get(id)!]));
  const rowOf = (vectors: WordVectors<number>, id: number) => vectors.rowsOf([id]).at[0];

  it("keeps each word's own vector as a row, embedded once; a word it cannot name or too long a one gets none", async () => {
    const vectors = new WordVectors<number>(1 << 20, () => new DenseRows());
    let asked = 0;
    const counting = async (ids: number[]) => ((asked += ids.length), wordsOf(ids));
    await vectors.load(embedder, [10, 11, 16, 99], counting);
    await vectors.load(embedder, [11, 10], counting);
    expect(asked).toBe(4); // the second load found both
    const [refresh] = await embedder.embed(['refresh']);
    const { dimension, at } = vectors.rowsOf([10, 16, 99]);
    expect(dimension).toBe(embedder.dimension);
    expect(at[0]).toBeGreaterThanOrEqual(0);
    expect([at[1], at[2]]).toEqual([-1, -1]);
    // Kept as int8: each component within half a step of the largest / 127, the cosine with the original ~1.
    const kept = vectors.copy([10]).rows;
    const step = Math.max(...refresh.map(Math.abs)) / 127;
    kept.forEach((x, i) => expect(Math.abs(x - refresh[i])).toBeLessThanOrEqual(step / 2 + 1e-6));
    expect(cosine(kept, refresh)).toBeGreaterThan(0.999);
  });

  it('when full, drops the first row not read since the clock hand passed it; the rows read lately stay', async () => {
    // Room for four rows of this model (int8 and a scale each; and at least twice the words of one load).
    const vectors = new WordVectors<number>(4 * (embedder.dimension + 4), () => new DenseRows());
    await vectors.load(embedder, [10, 11], wordsOf);
    await vectors.load(embedder, [12, 13], wordsOf);
    await vectors.load(embedder, [14], wordsOf); // every row read once: the hand clears them all and takes the first
    expect(rowOf(vectors, 10)).toBe(-1);
    expect(rowOf(vectors, 14)).toBe(0);
    await vectors.load(embedder, [11], wordsOf); // read again since
    await vectors.load(embedder, [15], wordsOf);
    expect(rowOf(vectors, 11)).toBe(1);
    expect(rowOf(vectors, 12)).toBe(-1);
    expect(rowOf(vectors, 15)).toBe(2);
    const [kernel] = await embedder.embed(['kernel']);
    expect(cosine(vectors.copy([15]).rows, kernel)).toBeGreaterThan(0.999);
    // One load of more words than the bound holds keeps them all: the table grows to twice that.
    await vectors.load(embedder, [10, 11, 12, 13, 14, 15], wordsOf);
    expect([10, 11, 12, 13, 14, 15].map((id) => rowOf(vectors, id) >= 0)).toEqual([true, true, true, true, true, true]);
  });

  it('starts afresh for another model', async () => {
    const vectors = new WordVectors<number>(1 << 20, () => new DenseRows());
    await vectors.load(embedder, [10], wordsOf);
    const other = { ...embedder, modelId: `${embedder.modelId}-other`, dimension: embedder.dimension, embed: embedder.embed.bind(embedder) } as Embedder;
    let asked = 0;
    await vectors.load(other, [10], async (ids) => ((asked += ids.length), wordsOf(ids)));
    expect(asked).toBe(1);
  });
});
