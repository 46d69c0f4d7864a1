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

/** Cells of one block of dense counts (Uint32: 8 MB). */
const BLOCK_CELLS = 2 * 1024 * 1024;
/** Token ids a page of the stream holds: the stream grows by pages, never by copying what it holds. */
const PAGE = 1 << 20;
/** Ids or rows in two bytes, the last value separating chunks (co-occurrence does not cross them), when they fit. */
const SHORT_END = 0xffff;
const LONG_END = -1;
type Ids = Uint16Array | Int32Array;
const idArray = (short: boolean, length: number): Ids => (short ? new Uint16Array(length) : new Int32Array(length));

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

/** The collection's content tokens, chunk after chunk, in pages; `adaptTable` releases them once it has read them. */
export class TokenStream {
  /** What separates two chunks: two bytes an id when the vocabulary fits them (WordPiece's 30k do). */
  readonly end: number;
  private readonly short: boolean;
  private pages: Ids[] = [];
  private used = PAGE;
  length = 0;
  chunks = 0;

  constructor(vocabulary: number) {
    this.short = vocabulary < SHORT_END;
    this.end = this.short ? SHORT_END : LONG_END;
  }

  addChunk(ids: ArrayLike<number>, keep: Uint8Array): void {
    for (let i = 0; i < ids.length; i++) if (keep[ids[i]]) this.push(ids[i]);
    this.push(this.end);
    this.chunks++;
  }

  /** Each page's filled part, in order. */
  *filled(): Generator<Ids> {
    for (let p = 0; p < this.pages.length; p++) yield p === this.pages.length - 1 ? this.pages[p].subarray(0, this.used) : this.pages[p];
  }

  release(): void {
    this.pages = [];
    this.used = PAGE;
  }

  private push(id: number): void {
    if (this.used === PAGE) {
      this.pages.push(idArray(this.short, PAGE));
      this.used = 0;
    }
    this.pages[this.pages.length - 1][this.used++] = id;
    this.length++;
  }
}

/** The distinct frequent tokens a corpus part needs: twice its dimensions (fewer cannot fill the SVD's directions). */
export const minFrequentTokens = (settings: AdaptSettings): number => 2 * settings.rank;

export interface BaseTable {
  rows: number;
  dimension: number;
  /** Int8 rows keep int8 (the corpus part is written in the same units); float rows stay float. */
  data: Int8Array | Float32Array;
}

export interface AdaptedTable extends BaseTable {
  /** Tokens that got a corpus part: none when fewer than `minFrequentTokens` were frequent enough. */
  corpusRows: number;
  /** Distinct content tokens seen at least `minCount` times. */
  frequentTokens: number;
  /** Content tokens read. */
  tokens: number;
}

/**
 * The adapted table: `stream` holds the collection's content tokens (ids of `base`'s vocabulary); it is released
 * once read (the frequent tokens' rows, two bytes each, are what the counting needs). `progress` hears each step.
 */
export function adaptTable(base: BaseTable, stream: TokenStream, settings: AdaptSettings = ADAPT_SETTINGS, progress: (step: string) => void = () => {}): AdaptedTable {
  const { minCount, rank, weight } = settings;
  const frequency = new Uint32Array(base.rows);
  let tokens = 0;
  for (const page of stream.filled()) {
    for (const id of page) {
      if (id === stream.end) continue;
      frequency[id]++;
      tokens++;
    }
  }
  // Rows: the frequent tokens, in id order; the stream rewritten as rows (rare tokens dropped).
  const rowOf = new Int32Array(base.rows).fill(-1);
  const tokenOf: number[] = [];
  for (let t = 0; t < base.rows; t++) if (frequency[t] >= minCount) rowOf[t] = tokenOf.push(t) - 1;
  const k = tokenOf.length;
  progress(`${tokens} content tokens, ${k} frequent enough for a corpus part`);
  // The stream as rows lives only while the pairs are counted: the SVD runs without it.
  const table = k >= minFrequentTokens(settings) ? svdRows(ppmi(rowStream(stream, rowOf, k), k, settings, progress), rank, progress) : null;

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
  return { rows: base.rows, dimension, data, corpusRows: table ? k : 0, frequentTokens: k, tokens };
}

/** The stream as rows: `end` between chunks. */
interface RowStream {
  rows: Ids;
  end: number;
}

/** The stream rewritten as rows (the rare tokens dropped); the stream is released. */
function rowStream(stream: TokenStream, rowOf: Int32Array, k: number): RowStream {
  const end = k < SHORT_END ? SHORT_END : LONG_END;
  const rows = idArray(k < SHORT_END, stream.length);
  let n = 0;
  for (const page of stream.filled()) {
    for (const id of page) {
      if (id === stream.end) rows[n++] = end;
      else if (rowOf[id] >= 0) rows[n++] = rowOf[id];
    }
  }
  stream.release();
  return { rows: rows.subarray(0, n), end };
}

/**
 * PPMI of the rows' co-occurrence (contexts smoothed by α 0.75), each row's `contextsPerToken` strongest kept. The
 * counts are symmetric, so a row's total is its context's total: both come from one pass; the pairs themselves are
 * counted one block of rows at a time into a dense block.
 */

function ppmi(seq: RowStream, k: number, settings: AdaptSettings, progress: (step: string) => void): Csr {
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
function forEachNeighbour({ rows, end }: RowStream, window: number, first: number, last: number, visit: (row: number, neighbour: number) => void): void {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (row === end || row < first || row >= last) continue;
    for (let j = i - 1; j >= 0 && j >= i - window && rows[j] !== end; j--) visit(row, rows[j]);
    for (let j = i + 1; j < rows.length && j <= i + window && rows[j] !== end; j++) visit(row, rows[j]);
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
