import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { EMBED_RUN, EmbeddingDropped } from './batching.js';
import type { EmbedOptions, Embedder } from './embedder.js';

export type EmbedDevice = 'auto' | 'cpu' | 'cuda';
/** A pino logger fits; only one-line messages are written. */
export interface EmbedLog {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface OnnxEmbedderOptions {
  modelPath: string;
  tokenizerPath: string;
  tokenizerConfigPath?: string;
  /** Reported as Embedder.modelId. */
  modelId: string;
  maxTokens: number;
  /** Expected output size; checked by a probe at load when given, inferred when not. */
  dimension?: number;
  normalize?: boolean;
  device?: EmbedDevice;
  /** Intra-op threads; capped at the cores present (more threads than cores is much slower). */
  threads?: number;
  /** Texts per ONNX run (default: batching.ts's); bounds memory of a single call. */
  batchSize?: number;
  log?: EmbedLog;
}

const KNOWN_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);
const LONG_TEXT_CHARS_PER_TOKEN = 8;
const LITTLE_ENDIAN = os.endianness() === 'LE';

/** True when this onnxruntime-node build can load its CUDA provider (the library ships separately). */
export function cudaRuntimeAvailable(): { ok: boolean; reason: string } {
  const cuda = ort.listSupportedBackends().find((b) => b.name === 'cuda');
  if (!cuda) return { ok: false, reason: 'this onnxruntime-node build has no CUDA execution provider' };
  if (cuda.bundled) return { ok: true, reason: '' };
  const binDir = path.join(path.dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json')), 'bin', 'napi-v6', process.platform, process.arch);
  if (existsSync(path.join(binDir, 'libonnxruntime_providers_cuda.so'))) return { ok: true, reason: '' };
  return { ok: false, reason: 'the onnxruntime-node CUDA provider libraries are not installed' };
}

/** The model's own tokenizer: tokenizer.json, with tokenizer_config.json where the model ships one. */
export async function readTokenizer(tokenizerPath: string, configPath?: string): Promise<{ tokenizer: Tokenizer; config: Record<string, unknown> }> {
  const json = JSON.parse(await readFile(tokenizerPath, 'utf8'));
  const config = configPath ? JSON.parse(await readFile(configPath, 'utf8')) : {};
  return { tokenizer: new Tokenizer(json, config), config };
}

async function createSession(opts: OnnxEmbedderOptions): Promise<{ session: ort.InferenceSession; device: 'cpu' | 'cuda' }> {
  const cores = os.availableParallelism();
  const base: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: Math.max(1, Math.min(opts.threads ?? cores, cores)),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    // Idle ORT threads spin by default and steal the core that tokenises the next batch.
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  };
  const device = opts.device ?? 'auto';
  if (device !== 'cpu') {
    const cuda = cudaRuntimeAvailable();
    let reason = cuda.reason;
    if (cuda.ok) {
      try {
        return { session: await ort.InferenceSession.create(opts.modelPath, { ...base, executionProviders: ['cuda'] }), device: 'cuda' };
      } catch (err) {
        reason = (err as Error).message;
      }
    }
    if (device === 'cuda') throw new Error(`EMBED_DEVICE=cuda but CUDA is not usable: ${reason}. Set EMBED_DEVICE=cpu or auto.`);
    opts.log?.info(`embeddings: CUDA not available (${reason}); running on CPU`);
  }
  return { session: await ort.InferenceSession.create(opts.modelPath, { ...base, executionProviders: ['cpu'] }), device: 'cpu' };
}

interface Encoded {
  ids: number[];
  types: number[];
}

export class OnnxEmbedder implements Embedder {
  readonly modelId: string;
  readonly maxTokens: number;
  readonly device: 'cpu' | 'cuda';
  readonly tokenTable = false;
  private outputDimension = 0;
  private readonly normalize: boolean;
  private readonly batchSize: number;
  private readonly outputName: string;
  private readonly int32Inputs: boolean;
  private readonly padId: number;
  /** Special tokens the post-processor puts before and after a single text ([CLS] … [SEP]). */
  private readonly prefix: number;
  private readonly suffix: number;

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: Tokenizer,
    tokenizerConfig: Record<string, unknown>,
    device: 'cpu' | 'cuda',
    opts: OnnxEmbedderOptions,
  ) {
    this.modelId = opts.modelId;
    this.maxTokens = opts.maxTokens;
    this.device = device;
    this.normalize = opts.normalize ?? true;
    this.batchSize = Math.max(1, opts.batchSize ?? EMBED_RUN.maxTexts);
    const unknown = session.inputNames.filter((n) => !KNOWN_INPUTS.has(n));
    if (unknown.length || !session.inputNames.includes('input_ids')) {
      throw new Error(`embedding model inputs [${session.inputNames.join(', ')}] are not a sentence-transformers export (input_ids, attention_mask, token_type_ids)`);
    }
    this.outputName = session.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : session.outputNames[0];
    const idsMeta = session.inputMetadata?.find((m) => m.name === 'input_ids');
    this.int32Inputs = !!idsMeta && idsMeta.isTensor && idsMeta.type === 'int32';
    const padToken = typeof tokenizerConfig.pad_token === 'string' ? tokenizerConfig.pad_token : '[PAD]';
    this.padId = tokenizer.token_to_id(padToken) ?? 0;
    const bare = tokenizer.encode('a', { add_special_tokens: false }).ids;
    const full = tokenizer.encode('a').ids;
    this.prefix = Math.max(0, full.indexOf(bare[0]));
    this.suffix = Math.max(0, full.length - this.prefix - bare.length);
    if (this.prefix + this.suffix >= this.maxTokens) throw new Error(`max_tokens ${this.maxTokens} leaves no room for text`);
  }

  static async create(opts: OnnxEmbedderOptions): Promise<OnnxEmbedder> {
    const { tokenizer, config: tokenizerConfig } = await readTokenizer(opts.tokenizerPath, opts.tokenizerConfigPath);
    const { session, device } = await createSession(opts);
    let embedder: OnnxEmbedder;
    try {
      embedder = new OnnxEmbedder(session, tokenizer, tokenizerConfig, device, opts);
      // A probe run proves the graph works end to end and tells the true output size.
      const [probe] = await embedder.embed(['hearth']);
      embedder.outputDimension = probe.length;
    } catch (err) {
      await session.release();
      throw err;
    }
    if (opts.dimension !== undefined && opts.dimension !== embedder.dimension) {
      await session.release();
      throw new Error(`embedding model ${opts.modelId} outputs ${embedder.dimension} dimensions but its manifest says ${opts.dimension}`);
    }
    return embedder;
  }

  get dimension(): number {
    return this.outputDimension;
  }

  countTokens(text: string): number {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids.length;
  }

  /** On the calling thread, one call at a time: a priority has nothing to overtake. */
  async embed(texts: string[], { signal }: EmbedOptions = {}): Promise<Float32Array[]> {
    const encoded = texts.map((t) => this.encodeTruncated(t));
    // Similar lengths share a batch so padding stays small; results go back in input order.
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a].ids.length - encoded[b].ids.length);
    const out = new Array<Float32Array>(texts.length);
    for (let start = 0; start < order.length; start += this.batchSize) {
      if (signal?.aborted) throw new EmbeddingDropped();
      const slice = order.slice(start, start + this.batchSize);
      const vectors = await this.runBatch(slice.map((i) => encoded[i]));
      slice.forEach((i, k) => (out[i] = vectors[k]));
    }
    return out;
  }

  async close(): Promise<void> {
    await this.session.release();
  }

  private encodeTruncated(text: string): Encoded {
    const budget = this.maxTokens - this.prefix - this.suffix;
    let source = text;
    // Tokenising a whole book to keep 256 tokens is wasted work: try a prefix cut at whitespace first.
    const cutAt = budget * LONG_TEXT_CHARS_PER_TOKEN;
    if (text.length > cutAt) {
      let space = cutAt;
      while (space > 0 && !/\s/.test(text[space])) space--;
      // Only a whitespace cut keeps the leading tokens identical to those of the whole text.
      const candidate = text.slice(0, space);
      if (space > 0 && this.tokenizer.encode(candidate, { add_special_tokens: false }).ids.length > budget) source = candidate;
    }
    const enc = this.tokenizer.encode(source, { return_token_type_ids: true });
    let ids = enc.ids;
    let types = enc.token_type_ids ?? new Array<number>(ids.length).fill(0);
    if (ids.length > this.maxTokens) {
      const keep = this.maxTokens - this.suffix;
      ids = ids.slice(0, keep).concat(ids.slice(ids.length - this.suffix));
      types = types.slice(0, keep).concat(types.slice(types.length - this.suffix));
    }
    return { ids, types };
  }

  private tensor(rows: number[][], seq: number, pad: number): ort.Tensor {
    const batch = rows.length;
    if (this.int32Inputs) {
      const data = new Int32Array(batch * seq).fill(pad);
      rows.forEach((r, b) => data.set(r, b * seq));
      return new ort.Tensor('int32', data, [batch, seq]);
    }
    const data = new BigInt64Array(batch * seq);
    // Ids are small non-negative ints: writing low 32-bit words avoids a BigInt per token.
    const words = new Int32Array(data.buffer);
    const low = LITTLE_ENDIAN ? 0 : 1;
    if (pad) for (let k = 0; k < batch * seq; k++) words[2 * k + low] = pad;
    rows.forEach((r, b) => r.forEach((v, j) => (words[2 * (b * seq + j) + low] = v)));
    return new ort.Tensor('int64', data, [batch, seq]);
  }

  private async runBatch(batch: Encoded[]): Promise<Float32Array[]> {
    const seq = Math.max(...batch.map((e) => e.ids.length));
    const masks = batch.map((e) => new Array<number>(e.ids.length).fill(1));
    const all: Record<string, () => ort.Tensor> = {
      input_ids: () => this.tensor(batch.map((e) => e.ids), seq, this.padId),
      attention_mask: () => this.tensor(masks, seq, 0),
      token_type_ids: () => this.tensor(batch.map((e) => e.types), seq, 0),
    };
    // Feed only what the graph declares: some exports drop token_type_ids.
    const feeds: Record<string, ort.Tensor> = {};
    for (const name of this.session.inputNames) feeds[name] = all[name]();
    const result = await this.session.run(feeds, [this.outputName]);
    const output = result[this.outputName];
    try {
      return this.pool(output, batch);
    } finally {
      for (const t of [...Object.values(feeds), output]) t.dispose();
    }
  }

  /** Attention-mask mean pooling over [batch, seq, hidden]; a [batch, hidden] output is already pooled. */
  private pool(output: ort.Tensor, batch: Encoded[]): Float32Array[] {
    const data = output.data as Float32Array;
    const dims = output.dims;
    if (output.type !== 'float32') throw new Error(`embedding model output ${this.outputName} is ${output.type}, expected float32`);
    const hidden = dims[dims.length - 1];
    const vectors: Float32Array[] = [];
    for (let b = 0; b < batch.length; b++) {
      let v: Float32Array;
      if (dims.length === 2) v = data.slice(b * hidden, (b + 1) * hidden);
      else {
        const seq = dims[1];
        const len = batch[b].ids.length;
        v = new Float32Array(hidden);
        for (let s = 0; s < len; s++) {
          const off = (b * seq + s) * hidden;
          for (let h = 0; h < hidden; h++) v[h] += data[off + h];
        }
        for (let h = 0; h < hidden; h++) v[h] /= len;
      }
      if (this.normalize) {
        let norm = 0;
        for (let h = 0; h < hidden; h++) norm += v[h] * v[h];
        norm = Math.sqrt(norm) || 1;
        for (let h = 0; h < hidden; h++) v[h] /= norm;
      }
      vectors.push(v);
    }
    return vectors;
  }
}
