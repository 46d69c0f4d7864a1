import { STOPWORDS } from '../default-embedder/build.js';
import { randomizedSvd, type Csr } from '../default-embedder/linalg.js';

/**
 * A static (Model2Vec) embedder adapted to the box's own collection (issue 16 item 5). The model's token rows
 * know what words mean in general; which words go together in *these* documents (a project's name and what it
 * does, an option and the word its manual uses for it) is in the collection. Each row gets a second part
 * learnt from the collection: the tokens' co-occurrence within a window of the indexed chunks, as PPMI, reduced
 * by a truncated SVD; a text's vector is the mean of [model row | weight · |model row| · corpus direction].
 * Measured (docs/retrieval-quality.md, session 28): the vector list finds 0.07-0.11 more right documents in its
 * first five on both test halves, hybrid search 0.01-0.02 more.
 *
 * Deterministic for a given collection: integer counts (whatever order the chunks come in), rows in token-id
 * order, a seeded SVD. Memory stays bounded whatever the collection's size: the counts are made one block of
 * rows at a time over the token stream (no table of every pair), and each row keeps its strongest contexts.
 */
export interface AdaptSettings {
  /** Content tokens at most this many places apart co-occur. */
  window: number;
  /** A token seen fewer times than this in the collection gets no corpus part. */
  minCount: number;
  /** Dimensions of the corpus part. */
  rank: number;
  /** The corpus part's length against the model row's. */
  weight: number;
  /** Contexts kept per token (the strongest by PPMI). */
  contextsPerToken: number;
}

/** Chosen on the dev halves of both evaluation sets (docs/retrieval-quality.md, session 28). */
export const ADAPT_SETTINGS: AdaptSettings = { window: 10, minCount: 10, rank: 64, weight: 1, contextsPerToken: 300 };

/** Cells of one block of dense counts (Uint32: 32 MB). */
const BLOCK_CELLS = 8 * 1024 * 1024;
/** Separates chunks in a token stream (co-occurrence does not cross chunks). */
export const CHUNK_END = -1;

/** 1 for the tokens whose co-occurrence says something: not special, not a function word, holding a letter. */
export function contentTokenMask(tokens: string[]): Uint8Array {
  const mask = new Uint8Array(tokens.length);
  tokens.forEach((token, id) => {
    if (token === undefined || /^\[.*\]$|^<.*>$/.test(token)) return;
    // WordPiece marks a word's continuation with ##; byte-level BPE and SentencePiece mark a word's start.
    const piece = token.startsWith('##');
    const body = token.replace(/^(##|Ġ|▁)/, '').toLowerCase();
    if (!/\p{L}/u.test(body) || (!piece && STOPWORDS.has(body))) return;
    mask[id] = 1;
  });
  return mask;
}

/** A growable stream of token ids with CHUNK_END between chunks. */
export class TokenStream {
  private data = new Int32Array(1 << 16);
  length = 0;
  chunks = 0;

  addChunk(ids: ArrayLike<number>, keep: Uint8Array): void {
    for (let i = 0; i < ids.length; i++) if (keep[ids[i]]) this.push(ids[i]);
    this.push(CHUNK_END);
    this.chunks++;
  }

  view(): Int32Array {
    return this.data.subarray(0, this.length);
  }

  private push(id: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = id;
  }
}

export interface BaseTable {
  rows: number;
  dimension: number;
  /** Int8 rows keep int8 (the corpus part is written in the same units); float rows stay float. */
  data: Int8Array | Float32Array;
}

export interface AdaptedTable extends BaseTable {
  /** Tokens that got a corpus part. */
  corpusRows: number;
  /** Content tokens read. */
  tokens: number;
}

/**
 * The adapted table: `stream` holds the collection's content tokens (ids of `base`'s vocabulary, CHUNK_END between
 * chunks). `progress` hears each step.
 */
export function adaptTable(base: BaseTable, stream: Int32Array, settings: AdaptSettings = ADAPT_SETTINGS, progress: (step: string) => void = () => {}): AdaptedTable {
  const { window, minCount, rank, weight } = settings;
  const frequency = new Uint32Array(base.rows);
  let tokens = 0;
  for (const id of stream) {
    if (id === CHUNK_END) continue;
    frequency[id]++;
    tokens++;
  }
  // Rows: the frequent tokens, in id order; the stream rewritten as rows (rare tokens dropped).
  const rowOf = new Int32Array(base.rows).fill(-1);
  const tokenOf: number[] = [];
  for (let t = 0; t < base.rows; t++) if (frequency[t] >= minCount) rowOf[t] = tokenOf.push(t) - 1;
  const k = tokenOf.length;
  const rows = new Int32Array(stream.length);
  let n = 0;
  for (const id of stream) {
    if (id === CHUNK_END) rows[n++] = CHUNK_END;
    else if (rowOf[id] >= 0) rows[n++] = rowOf[id];
  }
  const seq = rows.subarray(0, n);
  progress(`${tokens} content tokens, ${k} frequent enough for a corpus part`);
  const table = k >= 2 * rank ? svdRows(ppmi(seq, k, settings, progress), rank, progress) : null;

  const dimension = base.dimension + rank;
  const int8 = base.data instanceof Int8Array;
  const data = int8 ? new Int8Array(base.rows * dimension) : new Float32Array(base.rows * dimension);
  for (let t = 0; t < base.rows; t++) {
    const from = t * base.dimension;
    const to = t * dimension;
    let norm = 0;
    for (let h = 0; h < base.dimension; h++) {
      data[to + h] = base.data[from + h];
      norm += base.data[from + h] * base.data[from + h];
    }
    const row = rowOf[t];
    if (!table || row < 0) continue;
    const scale = weight * Math.sqrt(norm);
    for (let j = 0; j < rank; j++) {
      const value = scale * table[row * rank + j];
      data[to + base.dimension + j] = int8 ? Math.max(-127, Math.min(127, Math.round(value))) : value;
    }
  }
  return { rows: base.rows, dimension, data, corpusRows: table ? k : 0, tokens };
}

/**
 * PPMI of the rows' co-occurrence (contexts smoothed by α 0.75), each row's `contextsPerToken` strongest kept. The
 * counts are symmetric, so a row's total is its context's total: both come from one pass; the pairs themselves are
 * counted one block of rows at a time into a dense block.
 */
function ppmi(seq: Int32Array, k: number, settings: AdaptSettings, progress: (step: string) => void): Csr {
  const { window, contextsPerToken } = settings;
  const total = new Float64Array(k);
  forEachNeighbour(seq, window, 0, k, (row) => total[row]++);
  let smoothed = 0;
  for (let c = 0; c < k; c++) smoothed += Math.pow(total[c], 0.75);
  const logContext = Float64Array.from(total, (sum) => (sum > 0 ? Math.log(Math.pow(sum, 0.75) / smoothed) : 0));

  const blockRows = Math.max(1, Math.min(k, Math.floor(BLOCK_CELLS / k)));
  const counts = new Uint32Array(blockRows * k);
  const ptr = new Int32Array(k + 1);
  let idx = new Int32Array(1 << 16);
  let vals = new Float32Array(1 << 16);
  let used = 0;
  const kept: Array<[number, number]> = [];
  for (let first = 0; first < k; first += blockRows) {
    const last = Math.min(k, first + blockRows);
    counts.fill(0);
    forEachNeighbour(seq, window, first, last, (row, context) => counts[(row - first) * k + context]++);
    for (let row = first; row < last; row++) {
      kept.length = 0;
      const logRow = Math.log(total[row]);
      const offset = (row - first) * k;
      for (let c = 0; c < k; c++) {
        const count = counts[offset + c];
        if (count === 0) continue;
        const value = Math.log(count) - logRow - logContext[c];
        if (value > 0) kept.push([c, value]);
      }
      if (kept.length > contextsPerToken) {
        kept.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
        kept.length = contextsPerToken;
        kept.sort((a, b) => a[0] - b[0]);
      }
      if (used + kept.length > idx.length) {
        const size = Math.max(idx.length * 2, used + kept.length);
        const grownIdx = new Int32Array(size);
        grownIdx.set(idx);
        idx = grownIdx;
        const grownVals = new Float32Array(size);
        grownVals.set(vals);
        vals = grownVals;
      }
      for (const [c, value] of kept) {
        idx[used] = c;
        vals[used++] = value;
      }
      ptr[row + 1] = used;
    }
    progress(`co-occurrence: ${last} of ${k} tokens`);
  }
  return { rows: k, cols: k, ptr, idx: idx.slice(0, used), vals: vals.slice(0, used) };
}

/** Calls `visit(row, neighbour)` for every occurrence of a row in [first, last) and each row at most `window` places away in its chunk. */
function forEachNeighbour(seq: Int32Array, window: number, first: number, last: number, visit: (row: number, neighbour: number) => void): void {
  for (let i = 0; i < seq.length; i++) {
    const row = seq[i];
    if (row < first || row >= last) continue;
    for (let j = i - 1; j >= 0 && j >= i - window && seq[j] !== CHUNK_END; j--) visit(row, seq[j]);
    for (let j = i + 1; j < seq.length && j <= i + window && seq[j] !== CHUNK_END; j++) visit(row, seq[j]);
  }
}

/** Each row's direction in the SVD's space (U · S^½, normalised), rows × rank, row-major. */
function svdRows(matrix: Csr, rank: number, progress: (step: string) => void): Float32Array {
  progress(`PPMI ${matrix.rows} x ${matrix.cols}, ${matrix.vals.length} non-zeros: truncated SVD to ${rank} dimensions`);
  const { u, singular } = randomizedSvd(matrix, { rank, seed: 7, powerIterations: 3 });
  const out = new Float32Array(matrix.rows * rank);
  const weights = Array.from(singular, (s) => Math.sqrt(Math.max(0, s)));
  for (let r = 0; r < matrix.rows; r++) {
    let norm = 0;
    for (let j = 0; j < rank; j++) norm += (u[r * rank + j] * weights[j]) ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let j = 0; j < rank; j++) out[r * rank + j] = (u[r * rank + j] * weights[j]) / norm;
  }
  return out;
}
