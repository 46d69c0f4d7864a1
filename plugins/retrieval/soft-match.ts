/**
 * Soft term matching (session 21; for search only when SEARCH_SOFT_MATCH_CHUNKS is set, in the chat's retrieval unless
 * CHAT_SOFT_MATCH_CHUNKS is 0): each of the question's content words
 * meets its most similar word of a chunk, by the cosine of the two words' own vectors from a token-table embedder (the
 * same word: 1), weighed by the question word's rarity (idf); a chunk scores the weighted mean of those best matches,
 * and a document its best chunk. A paraphrase ("refresh the package lists" against "update the cache") then counts word
 * by word, where bm25 needs the same word and a chunk's one vector averages the answering line with the rest of the
 * chunk. Hybrid search ranks its first candidate documents by it as one more RRF list (fusion.ts, weights.soft). Only
 * for an embedder whose words mean the same alone (Embedder.tokenTable): a word's vector is then a table lookup in the
 * embedder's thread, cached here. Since session 22 a chunk's words are cut once, when it is written (its word ids,
 * migration 0019), and the arithmetic runs in the native addon. docs/retrieval-quality.md has its figures and its cost.
 */
import { MAX_SOFT_WORD_LENGTH } from '../../core/text/words.js';
import type { Embedder } from '../../native/embeddings/index.js';
import { softMatchScores as nativeSoftMatchScores } from '../../native/vector-index/index.js';

/**
 * Word vectors kept between searches, in bytes at most (int8 rows and their scales): ~126k words of a 128-dimension
 * model, more than the evaluation's 16-19k chunks hold (~60k). Nothing is kept while soft matching is off.
 */
export const WORD_CACHE_BYTES = 16 * 1024 * 1024;
/** The question words' own vectors (a term need not be in the vocabulary: no chunk may hold it). */
export const TERM_CACHE_BYTES = 2 * 1024 * 1024;

/** A question word and its weight (idf over the chunks). */
export interface SoftTerm {
  word: string;
  weight: number;
}

/** idf of a word found in `frequency` of `chunks` chunks (the keyword plan's weighing: termWeight). */
export { termWeight as softTermWeight } from './keyword-query.js';

/** The candidate chunks' words for one search, numbered 0..n-1 in order of first appearance. */
export interface ChunkWords {
  /** Each distinct word's vocabulary id: word i's vector is row i. */
  words: Int32Array;
  /** The chunks' words as those numbers, one chunk after another; chunk i's end at `ends[i]`. */
  ids: Int32Array;
  ends: Int32Array;
  /** Each chunk's document: its index in the documents given. */
  documents: Int32Array;
  /** Each term's number among the words (it meets itself at 1), or -1 when no candidate chunk holds it. */
  termWords: Int32Array;
}

/** A document's stored words (migration 0019): each chunk's count of word ids, and the ids chunk after chunk. */
export interface DocumentWords {
  counts: Int32Array;
  words: Int32Array;
}

/**
 * Numbers the stored word ids of a search's chunks (~130k ids, ~6,600 distinct): a typed array indexed by vocabulary
 * id and stamped per call, one read an id, where a Map cost a hash each.
 */
export class WordNumbering {
  /** Per vocabulary id: the call that last met it, and its number then. */
  private stamp = new Int32Array(0);
  private number = new Int32Array(0);
  private epoch = 0;

  /**
   * The documents' chunks in the order given, each document's in reading order, `budget` chunks at most (the last
   * document read may be cut short); `termIds`: the terms' vocabulary ids (undefined: not in the vocabulary).
   * Synchronous: one call's numbers hold until the next.
   */
  of(documents: DocumentWords[], termIds: Array<number | undefined>, budget: number): ChunkWords {
    const taken: Array<{ chunks: number; ids: number }> = [];
    let chunkCount = 0;
    let total = 0;
    let largest = -1;
    for (const { counts, words } of documents) {
      const chunks = Math.min(counts.length, Math.max(0, budget - chunkCount));
      let ids = 0;
      for (let c = 0; c < chunks; c++) ids += counts[c];
      ids = Math.min(ids, words.length);
      for (let i = 0; i < ids; i++) if (words[i] > largest) largest = words[i];
      taken.push({ chunks, ids });
      chunkCount += chunks;
      total += ids;
    }
    if (largest >= this.stamp.length) {
      const size = Math.max(largest + 1, this.stamp.length * 2);
      this.stamp = new Int32Array(size);
      this.number = new Int32Array(size);
    }
    if (++this.epoch >= 0x7fffffff) {
      this.stamp.fill(0);
      this.epoch = 1;
    }
    const { stamp, number, epoch } = this;
    const words = new Int32Array(total);
    const ids = new Int32Array(total);
    const ends = new Int32Array(chunkCount);
    const documentOf = new Int32Array(chunkCount);
    let distinct = 0;
    let at = 0;
    let chunk = 0;
    for (let index = 0; index < documents.length; index++) {
      const { counts, words: stored } = documents[index];
      const { chunks, ids: count } = taken[index];
      let read = 0;
      for (let c = 0; c < chunks; c++) {
        const end = Math.min(count, read + counts[c]);
        for (; read < end; read++) {
          const id = stored[read];
          if (id < 0) continue;
          if (stamp[id] !== epoch) {
            stamp[id] = epoch;
            number[id] = distinct;
            words[distinct++] = id;
          }
          ids[at++] = number[id];
        }
        ends[chunk] = at;
        documentOf[chunk++] = index;
      }
    }
    const termWords = Int32Array.from(termIds, (id) => (id !== undefined && id >= 0 && id < stamp.length && stamp[id] === epoch ? number[id] : -1));
    return { words: words.subarray(0, distinct), ids: ids.subarray(0, at), ends, documents: documentOf, termWords };
  }
}

/** The rows a word-vector table starts with; it doubles as it fills, up to its bound. */
const FIRST_ROWS = 4096;

/** Which row holds a key: a Map for words, DenseRows for vocabulary ids. */
export interface RowIndex<Key> {
  get(key: Key): number | undefined;
  set(key: Key, row: number): void;
  delete(key: Key): void;
}

/** Rows by vocabulary id in a typed array indexed by the id (4 bytes an id up to the largest): one read a word, where a Map hashed. */
export class DenseRows implements RowIndex<number> {
  private rows = new Int32Array(0);

  get(id: number): number | undefined {
    const row = id < this.rows.length ? this.rows[id] : -1;
    return row >= 0 ? row : undefined;
  }

  set(id: number, row: number): void {
    if (id >= this.rows.length) {
      const grown = new Int32Array(Math.max(id + 1, this.rows.length * 2)).fill(-1);
      grown.set(this.rows);
      this.rows = grown;
    }
    this.rows[id] = row;
  }

  delete(id: number): void {
    if (id < this.rows.length) this.rows[id] = -1;
  }
}

/** Rows of word vectors as the native scoring reads them: int8 components, row r's times scales[r]. */
export interface QuantisedRows {
  rows: Int8Array;
  scales: Float32Array;
  dimension: number;
}

/** Writes `vector` as row `row` of `table`: each component / (largest magnitude / 127), rounded (cosine within ~0.005). */
export function quantiseInto(table: QuantisedRows, row: number, vector: Float32Array): void {
  const { rows, scales, dimension } = table;
  let largest = 0;
  for (let i = 0; i < dimension; i++) largest = Math.max(largest, Math.abs(vector[i]));
  const scale = largest / 127;
  scales[row] = scale;
  const at = row * dimension;
  for (let i = 0; i < dimension; i++) rows[at + i] = scale > 0 ? Math.round(vector[i] / scale) : 0;
}

/** The kept vectors: one array of rows, and which key each row holds. */
interface VectorTable<Key> {
  modelId: string;
  dimension: number;
  /** Rows the table may reach (maxBytes; more when one search needs more: see load). */
  capacity: number;
  rows: Int8Array;
  scales: Float32Array;
  filled: number;
  rowOf: RowIndex<Key>;
  keyAt: Array<Key | undefined>;
  /** CLOCK's bit: the row was read since the hand last passed it. */
  used: Uint8Array;
  hand: number;
}

/**
 * Each word's vector by the embedder in force, embedded once (in its thread, before bulk work) and kept as a row of
 * one table under its key (a vocabulary id, or the word itself), as int8 (quantiseInto: a quarter of float32): the
 * native scoring reads a search's ~6,600 words where they lie (copying them into one array cost ~4 ms a search), and
 * reading them was most of its time as float32. `maxBytes` bounds it, except that it always holds twice the words of
 * the largest search (a budget far above the default with a large model); when it is full, the first row not read
 * since the clock hand last passed it goes (CLOCK).
 */
export class WordVectors<Key extends number | string> {
  private table: VectorTable<Key> | null = null;

  constructor(
    private readonly maxBytes: number,
    private readonly rowIndex: () => RowIndex<Key>,
  ) {}

  /**
   * Embeds the keys not kept yet; `wordsOf` names them (a key it does not name, or a word longer than
   * MAX_SOFT_WORD_LENGTH, gets no vector: it then matches only itself).
   */
  async load(embedder: Embedder, keys: ArrayLike<Key>, wordsOf: (keys: Key[]) => Promise<Map<Key, string>>): Promise<void> {
    if (this.table?.modelId !== embedder.modelId) this.table = this.emptyTable(embedder);
    const table = this.table;
    table.capacity = Math.max(table.capacity, 2 * keys.length);
    const missing: Key[] = [];
    for (let index = 0; index < keys.length; index++) {
      const row = table.rowOf.get(keys[index]);
      if (row === undefined) missing.push(keys[index]);
      else table.used[row] = 1;
    }
    if (!missing.length) return;
    const named = await wordsOf(missing);
    const known = missing.filter((key) => (named.get(key)?.length ?? Infinity) <= MAX_SOFT_WORD_LENGTH);
    if (!known.length) return;
    const embedded = await embedder.embed(
      known.map((key) => named.get(key)!),
      { priority: 'query' },
    );
    if (this.table !== table) return; // another model came in meanwhile
    known.forEach((key, index) => this.keep(table, key, embedded[index]));
  }

  /** Where each key's vector lies in `rows` (-1: none). Synchronous: read the rows before anything else runs. */
  rowsOf(keys: ArrayLike<Key>): QuantisedRows & { at: Int32Array } {
    const table = this.table;
    if (!table) return { rows: new Int8Array(0), scales: new Float32Array(0), dimension: 1, at: new Int32Array(keys.length).fill(-1) };
    const at = new Int32Array(keys.length);
    for (let index = 0; index < keys.length; index++) at[index] = table.rowOf.get(keys[index]) ?? -1;
    return { rows: table.rows.subarray(0, table.filled * table.dimension), scales: table.scales.subarray(0, table.filled), dimension: table.dimension, at };
  }

  /** The keys' vectors as floats, one after another (zeros where none): for a few keys (the question's terms). */
  copy(keys: ArrayLike<Key>): { rows: Float32Array; dimension: number } {
    const { rows, scales, dimension, at } = this.rowsOf(keys);
    const copied = new Float32Array(keys.length * dimension);
    at.forEach((row, index) => {
      for (let i = 0; row >= 0 && i < dimension; i++) copied[index * dimension + i] = rows[row * dimension + i] * scales[row];
    });
    return { rows: copied, dimension };
  }

  private emptyTable(embedder: Embedder): VectorTable<Key> {
    const capacity = Math.max(1, Math.floor(this.maxBytes / (embedder.dimension + 4)));
    const first = Math.min(capacity, FIRST_ROWS);
    return { modelId: embedder.modelId, dimension: embedder.dimension, capacity, rows: new Int8Array(first * embedder.dimension), scales: new Float32Array(first), filled: 0, rowOf: this.rowIndex(), keyAt: [], used: new Uint8Array(first), hand: 0 };
  }

  private keep(table: VectorTable<Key>, key: Key, vector: Float32Array): void {
    let row = table.rowOf.get(key);
    if (row === undefined) {
      const rowsNow = table.used.length;
      if (table.filled === rowsNow && rowsNow < table.capacity) {
        const grown = Math.min(table.capacity, rowsNow * 2);
        table.rows = grownTo(table.rows, grown * table.dimension);
        table.scales = grownTo(table.scales, grown);
        table.used = grownTo(table.used, grown);
      }
      if (table.filled < table.used.length) row = table.filled++;
      else {
        while (table.used[table.hand]) {
          table.used[table.hand] = 0;
          table.hand = (table.hand + 1) % table.filled;
        }
        row = table.hand;
        table.hand = (table.hand + 1) % table.filled;
        table.rowOf.delete(table.keyAt[row]!);
      }
      table.rowOf.set(key, row);
      table.keyAt[row] = key;
    }
    quantiseInto(table, row, vector);
    table.used[row] = 1;
  }
}

/** A longer array of the same kind holding `array` at its start. */
function grownTo<T extends Int8Array | Uint8Array | Float32Array>(array: T, length: number): T {
  const grown = new (array.constructor as new (length: number) => T)(length);
  grown.set(array);
  return grown;
}

/**
 * Each chunk's soft match with the terms, 0 to 1, in the order given: Σ weight × (best cosine of the term with one of
 * the chunk's words, at least 0) / Σ weight. A term meets itself at 1 (words.termWords) whether or not it has a vector;
 * a word without one matches only itself. `termRows`: the terms' vectors; `wordRows`: where the words' vectors lie
 * (WordVectors.rowsOf). The arithmetic runs in the native addon (native/vector-index): every distinct word against
 * every term, then each chunk's best per term.
 */
export function softMatchScores(terms: SoftTerm[], termRows: Float32Array, words: ChunkWords, wordRows: QuantisedRows & { at: Int32Array }): Float64Array {
  if (!terms.length) return new Float64Array(words.ends.length);
  const { rows, scales, dimension, at } = wordRows;
  return nativeSoftMatchScores(termRows, rows, scales, dimension, at, Float64Array.from(terms, (term) => term.weight), words.termWords, words.ids, words.ends);
}
