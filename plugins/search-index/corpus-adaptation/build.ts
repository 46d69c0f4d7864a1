import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { installModel } from '../../../native/embeddings/index.js';
import { LEXICAL_DIMENSIONS } from '../../../native/embeddings/model2vec.js';
import { readTokenizer } from '../../../native/embeddings/onnx-embedder.js';
import { readTokenTable } from '../../../native/embeddings/safetensors.js';
import { modelFolder, readManifest, type EmbeddingManifest } from '../../../native/model-files/index.js';
import { ADAPT_SETTINGS, adaptTable, contentTokenMask, minFrequentTokens, TokenStream, type AdaptedTable } from './adapt.js';

/** Where an adapted model's id says it came from: `<base id>-corpus-<first 8 hex of its table's sha256>`. */
export const ADAPTED_SOURCE_PREFIX = 'corpus:';
export const adaptedModelId = (baseId: string, sha256: string) => `${baseId}-corpus-${sha256.slice(0, 8)}`;

export interface AdaptOptions {
  databaseFile: string;
  modelDir: string;
  /** The installed Model2Vec model the adaptation starts from. */
  baseId: string;
}

export interface AdaptResult {
  /** Null when the collection has too few distinct frequent words for a corpus part (nothing installed). */
  manifest: EmbeddingManifest | null;
  chunks: number;
  tokens: number;
  corpusRows: number;
  frequentTokens: number;
  /** The distinct frequent words a corpus part needs. */
  frequentNeeded: number;
  seconds: number;
}

/** A safetensors file of one 2-D tensor, `embeddings`, as Model2Vec writes its table. */
function safetensors(table: AdaptedTable, lexicalDimensions: number): Buffer {
  const int8 = table.data instanceof Int8Array;
  const bytes = Buffer.from(table.data.buffer, table.data.byteOffset, table.data.byteLength);
  let header = JSON.stringify({ __metadata__: { [LEXICAL_DIMENSIONS]: String(lexicalDimensions) }, embeddings: { dtype: int8 ? 'I8' : 'F32', shape: [table.rows, table.dimension], data_offsets: [0, bytes.length] } });
  header = header.padEnd(Math.ceil(header.length / 8) * 8, ' ');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([length, Buffer.from(header, 'utf8'), bytes]);
}

/** Every chunk's content tokens, read-only from the database; the tokenizer is let go with this function's scope. */
async function collectionTokens(databaseFile: string, tokenizerFile: string, rows: number, progress: (message: string) => void): Promise<TokenStream> {
  const { tokenizer } = await readTokenizer(tokenizerFile);
  const vocabulary: string[] = [];
  for (const [token, id] of tokenizer.get_vocab(true)) vocabulary[id] = token;
  const content = contentTokenMask(Array.from({ length: rows }, (_, id) => vocabulary[id]));
  const stream = new TokenStream(rows);
  const db = new Database(databaseFile, { readonly: true, fileMustExist: true });
  try {
    for (const row of db.prepare('SELECT text FROM chunks ORDER BY rowid').iterate() as Iterable<{ text: string }>) {
      stream.addChunk(tokenizer.encode(row.text, { add_special_tokens: false }).ids, content);
      if (stream.chunks % 10_000 === 0) progress(`tokenised ${stream.chunks} chunks`);
    }
  } finally {
    db.close();
  }
  progress(`tokenised ${stream.chunks} chunks`);
  return stream;
}

/**
 * Reads every chunk of the database (read-only; the service keeps writing), adapts the base model's table to them
 * and installs the result in MODEL_DIR as a Model2Vec model of its own (not made active: the caller decides). The
 * same collection gives the same bytes, hence the same id: a model already installed under it is reused.
 */
export async function buildAdaptedModel(options: AdaptOptions, progress: (message: string) => void = () => {}): Promise<AdaptResult> {
  const started = performance.now();
  const baseFolder = modelFolder(options.modelDir, 'embedding', options.baseId);
  const base = await readManifest(baseFolder, 'embedding');
  if (base.format !== 'model2vec') throw new Error(`${options.baseId} is not a static (Model2Vec) model: only a token table can be adapted`);
  const table = readTokenTable(await readFile(path.join(baseFolder, base.files.model)), 'embeddings');
  const stream = await collectionTokens(options.databaseFile, path.join(baseFolder, base.files.tokenizer), table.rows, progress);
  const adapted = adaptTable(table, stream, ADAPT_SETTINGS, progress);
  const summary = { chunks: stream.chunks, tokens: adapted.tokens, corpusRows: adapted.corpusRows, frequentTokens: adapted.frequentTokens, frequentNeeded: minFrequentTokens(ADAPT_SETTINGS) };
  // Its corpus part would be all zeros: the same ranking as the base model, for a rebuild of the whole index.
  if (adapted.corpusRows === 0) return { manifest: null, ...summary, seconds: (performance.now() - started) / 1000 };
  const file = safetensors(adapted, table.dimension);
  const id = adaptedModelId(options.baseId, createHash('sha256').update(file).digest('hex'));
  const existing = await readManifest(modelFolder(options.modelDir, 'embedding', id), 'embedding').catch(() => null);
  if (existing) return { manifest: existing, ...summary, seconds: (performance.now() - started) / 1000 };

  const staging = await mkdtemp(path.join(os.tmpdir(), 'hearth-adapt-'));
  try {
    const config = JSON.parse(await readFile(path.join(baseFolder, 'config.json'), 'utf8').catch(() => '{}')) as Record<string, unknown>;
    await writeFile(path.join(staging, 'model.safetensors'), file);
    await writeFile(path.join(staging, 'config.json'), JSON.stringify({ ...config, hidden_dim: adapted.dimension, hearth_corpus_adaptation: { base: options.baseId, ...ADAPT_SETTINGS, ...summary } }, null, 2));
    const { window, minCount, rank, weight, contextsPerToken } = ADAPT_SETTINGS;
    const manifest = await installModel({
      modelDir: options.modelDir,
      id,
      format: 'model2vec',
      files: { model: path.join(staging, 'model.safetensors'), tokenizer: path.join(baseFolder, base.files.tokenizer), config: path.join(staging, 'config.json') },
      source: `${ADAPTED_SOURCE_PREFIX}${options.baseId}`,
      name: `${base.name}, adapted to this box's collection (${stream.chunks} chunks)`,
      licence: `${base.licence}; the corpus part is computed on this box from its own documents`,
      method: `corpus adaptation of ${options.baseId}: PPMI of content-token co-occurrence (window ${window}, tokens seen at least ${minCount} times, ${contextsPerToken} contexts each), truncated SVD to ${rank} dimensions, weight ${weight}, over ${stream.chunks} chunks`,
      maxTokens: base.max_tokens,
      activate: false,
    });
    return { manifest, ...summary, seconds: (performance.now() - started) / 1000 };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
