import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { Csr } from '../../plugins/search-index/default-embedder/linalg.js';
import { STOPWORDS, defaultTokenizerDir } from '../../plugins/search-index/default-embedder/build.js';

/** The built-in embedder's WordPiece tokenizer (the shipped all-MiniLM-L6-v2 one), as its build reads it. */
export async function defaultTokenizer(): Promise<Tokenizer> {
  const read = async (file: string) => JSON.parse(await readFile(path.join(defaultTokenizerDir(), file), 'utf8'));
  return new Tokenizer(await read('tokenizer.json'), await read('tokenizer_config.json'));
}

/**
 * The corpus-adaptive default embedder (issue 16 item 5): an experiment, not part of the product (it did not
 * gain on test: docs/retrieval-quality.md). Windowed co-occurrence counts of the collection's own WordPiece
 * tokens, turned into PPMI rows and blended into the built-in embedder's WordNet matrix before the SVD through
 * the build's `extendMatrix` hook.
 *
 * Counts are integers and the table is read back in sorted key order, so the result does not depend on
 * the order the chunks are fed in: the same corpus gives the same counts, hence the same model.
 */

/** Token-pair counts in an open-addressing hash (key = a · vocab + b + 1; 0 = empty), plus token counts. */
export class CooccurrenceCounts {
  private keys: Uint32Array;
  private counts: Uint32Array;
  private used = 0;
  readonly frequency: Uint32Array;
  tokens = 0;
  chunks = 0;

  constructor(readonly vocab: number, initialCapacity = 1 << 20) {
    if (vocab * vocab + 1 >= 2 ** 32) throw new Error('vocabulary too large for 32-bit pair keys');
    let capacity = 1;
    while (capacity < initialCapacity) capacity <<= 1;
    this.keys = new Uint32Array(capacity);
    this.counts = new Uint32Array(capacity);
    this.frequency = new Uint32Array(vocab);
  }

  get pairs(): number {
    return this.used;
  }

  /** Bytes held by the tables (the pair hash dominates). */
  get bytes(): number {
    return this.keys.byteLength + this.counts.byteLength + this.frequency.byteLength;
  }

  add(a: number, b: number, n = 1): void {
    if ((this.used + 1) * 2 > this.keys.length) this.grow();
    const key = a * this.vocab + b + 1;
    const mask = this.keys.length - 1;
    let slot = Math.imul(key, 0x9e3779b1) >>> 0 & mask;
    for (;;) {
      const k = this.keys[slot];
      if (k === key) {
        this.counts[slot] += n;
        return;
      }
      if (k === 0) {
        this.keys[slot] = key;
        this.counts[slot] = n;
        this.used++;
        return;
      }
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldCounts = this.counts;
    this.keys = new Uint32Array(oldKeys.length * 2);
    this.counts = new Uint32Array(oldKeys.length * 2);
    const mask = this.keys.length - 1;
    for (let i = 0; i < oldKeys.length; i++) {
      const key = oldKeys[i];
      if (key === 0) continue;
      let slot = Math.imul(key, 0x9e3779b1) >>> 0 & mask;
      while (this.keys[slot] !== 0) slot = (slot + 1) & mask;
      this.keys[slot] = key;
      this.counts[slot] = oldCounts[i];
    }
  }

  /**
   * Adds one chunk's token ids: every content token (per `content`) with each content token at most `window`
   * content tokens away, both directions (the non-content tokens are dropped first).
   */
  addChunk(ids: ArrayLike<number>, content: Uint8Array, window: number): void {
    const kept: number[] = [];
    for (let i = 0; i < ids.length; i++) if (content[ids[i]]) kept.push(ids[i]);
    this.chunks++;
    this.tokens += kept.length;
    for (let i = 0; i < kept.length; i++) {
      const a = kept[i];
      this.frequency[a]++;
      const end = Math.min(kept.length, i + window + 1);
      for (let j = i + 1; j < end; j++) {
        const b = kept[j];
        this.add(a, b);
        this.add(b, a);
      }
    }
  }

  /** Every pair (a, b, count), in ascending key order (a, then b). */
  sortedPairs(): { a: Uint32Array; b: Uint32Array; n: Uint32Array } {
    // Sort the keys themselves and look the counts up again.
    let p = 0;
    const keys = new Uint32Array(this.used);
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] !== 0) keys[p++] = this.keys[i];
    keys.sort();
    const a = new Uint32Array(this.used);
    const b = new Uint32Array(this.used);
    const n = new Uint32Array(this.used);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] - 1;
      a[i] = Math.floor(key / this.vocab);
      b[i] = key - a[i] * this.vocab;
      n[i] = this.lookup(keys[i]);
    }
    return { a, b, n };
  }

  private lookup(key: number): number {
    const mask = this.keys.length - 1;
    let slot = Math.imul(key, 0x9e3779b1) >>> 0 & mask;
    for (;;) {
      const k = this.keys[slot];
      if (k === key) return this.counts[slot];
      if (k === 0) return 0;
      slot = (slot + 1) & mask;
    }
  }
}

export interface CorpusBlend {
  counts: CooccurrenceCounts;
  /** Weight of the corpus PPMI block against the WordNet block (after both are scaled to the same mean row norm). */
  weight: number;
  /** A token is a row or a context only when seen at least this often (default 10). */
  minCount?: number;
  /** Give corpus rows to tokens WordNet has no row for (subword pieces, technical words): default true. */
  newRows?: boolean;
}

export interface CorpusBlock {
  /** Rows: the WordNet rows first (same numbering), then one row per token given a row of its own. */
  rows: number;
  cols: number;
  ptr: Int32Array;
  idx: Int32Array;
  vals: Float32Array;
  /** Token id → row (WordNet rows kept; -1: none). */
  tokenRow: Int32Array;
  /** Rows added for tokens WordNet has none for. */
  newRows: number;
}

/**
 * PPMI (context-distribution smoothing α = 0.75, as the WordNet block) of the corpus counts: rows are the
 * tokens' WordNet rows (tokens sharing a base form add up) or new rows, contexts the frequent content tokens.
 */
export function corpusPpmi(blend: CorpusBlend, tokenRow: Int32Array, wordnetRows: number, content: Uint8Array): CorpusBlock {
  const { counts } = blend;
  const minCount = blend.minCount ?? 10;
  const vocab = counts.vocab;
  const ok = new Uint8Array(vocab);
  for (let t = 0; t < vocab; t++) ok[t] = content[t] && counts.frequency[t] >= minCount ? 1 : 0;
  const rowOfToken = Int32Array.from(tokenRow);
  let rows = wordnetRows;
  for (let t = 0; t < vocab; t++) {
    if (rowOfToken[t] >= 0) continue;
    if (ok[t] && blend.newRows !== false) rowOfToken[t] = rows++;
  }
  const colOf = new Int32Array(vocab).fill(-1);
  let cols = 0;
  for (let t = 0; t < vocab; t++) if (ok[t]) colOf[t] = cols++;

  const { a, b, n } = counts.sortedPairs();
  // Counting sort of the kept pairs by row.
  const perRow = new Int32Array(rows + 1);
  for (let i = 0; i < a.length; i++) if (ok[a[i]] && ok[b[i]] && rowOfToken[a[i]] >= 0) perRow[rowOfToken[a[i]] + 1]++;
  for (let r = 0; r < rows; r++) perRow[r + 1] += perRow[r];
  const fill = Int32Array.from(perRow);
  const entryCol = new Int32Array(perRow[rows]);
  const entryCount = new Float64Array(perRow[rows]);
  for (let i = 0; i < a.length; i++) {
    const row = rowOfToken[a[i]];
    if (!ok[a[i]] || !ok[b[i]] || row < 0) continue;
    const at = fill[row]++;
    entryCol[at] = colOf[b[i]];
    entryCount[at] = n[i];
  }
  // Per row: sort by column, merge equal columns (tokens of one base form).
  const ptr = new Int32Array(rows + 1);
  const idx = new Int32Array(perRow[rows]);
  const counted = new Float64Array(perRow[rows]);
  let p = 0;
  for (let r = 0; r < rows; r++) {
    const start = perRow[r];
    const end = perRow[r + 1];
    const order = Array.from({ length: end - start }, (_, i) => start + i).sort((x, y) => entryCol[x] - entryCol[y]);
    for (const e of order) {
      if (p > ptr[r] && idx[p - 1] === entryCol[e]) counted[p - 1] += entryCount[e];
      else {
        idx[p] = entryCol[e];
        counted[p] = entryCount[e];
        p++;
      }
    }
    ptr[r + 1] = p;
  }
  const rowSum = new Float64Array(rows);
  const colSum = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    for (let q = ptr[r]; q < ptr[r + 1]; q++) {
      rowSum[r] += counted[q];
      colSum[idx[q]] += counted[q];
    }
  }
  let smoothTotal = 0;
  for (let c = 0; c < cols; c++) smoothTotal += Math.pow(colSum[c], 0.75);
  const logColP = new Float64Array(cols);
  for (let c = 0; c < cols; c++) logColP[c] = colSum[c] > 0 ? Math.log(Math.pow(colSum[c], 0.75) / smoothTotal) : 0;
  const outPtr = new Int32Array(rows + 1);
  const outIdx = new Int32Array(p);
  const outVals = new Float32Array(p);
  let o = 0;
  for (let r = 0; r < rows; r++) {
    const logRow = Math.log(rowSum[r]);
    for (let q = ptr[r]; q < ptr[r + 1]; q++) {
      const pmi = Math.log(counted[q]) - logRow - logColP[idx[q]];
      if (pmi > 0) {
        outIdx[o] = idx[q];
        outVals[o] = pmi;
        o++;
      }
    }
    outPtr[r + 1] = o;
  }
  return { rows, cols, ptr: outPtr, idx: outIdx.subarray(0, o), vals: outVals.subarray(0, o), tokenRow: rowOfToken, newRows: rows - wordnetRows };
}

/** Mean L2 norm of the non-empty rows of a CSR block. */
export function meanRowNorm(ptr: Int32Array, vals: Float32Array, rows: number): number {
  let sum = 0;
  let n = 0;
  for (let r = 0; r < rows; r++) {
    if (ptr[r + 1] === ptr[r]) continue;
    let s = 0;
    for (let q = ptr[r]; q < ptr[r + 1]; q++) s += vals[q] * vals[q];
    sum += Math.sqrt(s);
    n++;
  }
  return n ? sum / n : 0;
}

/** 1 for the tokens whose co-occurrence says something: not special, not a function word, holds a letter. */
export function contentTokenMask(tokens: string[]): Uint8Array {
  const mask = new Uint8Array(tokens.length);
  tokens.forEach((t, id) => {
    if (/^\[.*\]$/.test(t)) return;
    const piece = t.startsWith('##');
    const body = piece ? t.slice(2) : t;
    if (!/[a-z]/.test(body) || (!piece && STOPWORDS.has(body))) return;
    mask[id] = 1;
  });
  return mask;
}

/**
 * The build's `extendMatrix` hook for a blend: [WordNet PPMI | s · weight · corpus PPMI], s putting both blocks
 * at the same mean row norm; rows the corpus gives new tokens (when `newRows`) come after WordNet's.
 */
export function blendCorpus(blend: CorpusBlend) {
  return ({ matrix, tokenRow, tokens }: { matrix: Csr; tokenRow: Int32Array; tokens: string[] }) => {
    const block = corpusPpmi(blend, tokenRow, matrix.rows, contentTokenMask(tokens));
    const scale = (blend.weight * meanRowNorm(matrix.ptr, matrix.vals, matrix.rows)) / (meanRowNorm(block.ptr, block.vals, block.rows) || 1);
    const total = matrix.vals.length + block.vals.length;
    const ptr = new Int32Array(block.rows + 1);
    const idx = new Int32Array(total);
    const vals = new Float32Array(total);
    let q = 0;
    for (let r = 0; r < block.rows; r++) {
      if (r < matrix.rows) {
        for (let e = matrix.ptr[r]; e < matrix.ptr[r + 1]; e++) {
          idx[q] = matrix.idx[e];
          vals[q++] = matrix.vals[e];
        }
      }
      for (let e = block.ptr[r]; e < block.ptr[r + 1]; e++) {
        idx[q] = matrix.cols + block.idx[e];
        vals[q++] = block.vals[e] * scale;
      }
      ptr[r + 1] = q;
    }
    return {
      matrix: { rows: block.rows, cols: matrix.cols + block.cols, ptr, idx, vals },
      tokenRow: block.tokenRow,
      stats: { corpusChunks: blend.counts.chunks, corpusTokens: blend.counts.tokens, corpusPairs: blend.counts.pairs, corpusRows: block.newRows, corpusContexts: block.cols, weight: blend.weight },
    };
  };
}
