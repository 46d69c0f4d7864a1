import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';

export interface CrossEncoderOptions {
  modelPath: string;
  tokenizerPath: string;
  tokenizerConfigPath?: string;
  /** Reported as Reranker.modelId. */
  modelId: string;
  /** Longest query + passage pair in tokens (special tokens included). */
  maxTokens: number;
  threads?: number;
}

/** The query keeps this many tokens at most, so that a long question still leaves room for the passage. */
const MAX_QUERY_TOKENS = 64;
/** Pairs per ONNX run: small, so that a latency budget can stop between runs (CPU per pair is about the same at 1, 4 or 16). */
export const RERANK_BATCH = 2;
const INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);

interface Pair {
  ids: number[];
  types: number[];
}

/**
 * A BERT-style cross-encoder (the ms-marco-MiniLM-L-6-v2 export: inputs input_ids, attention_mask,
 * token_type_ids int64 [batch, seq]; output logits [batch, 1]) scoring how well a passage answers a
 * query: `[CLS] query [SEP] passage [SEP]`, segment 0 then 1, the passage cut to fit max_tokens.
 * session.run computes on the calling thread: callers bound the work (RERANK_TOP_N, RERANK_BUDGET_MS).
 */
export class CrossEncoder {
  readonly modelId: string;
  readonly maxTokens: number;
  private readonly outputName: string;
  private readonly cls: number;
  private readonly sep: number;
  private readonly pad: number;

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: Tokenizer,
    config: Record<string, unknown>,
    opts: CrossEncoderOptions,
  ) {
    this.modelId = opts.modelId;
    this.maxTokens = opts.maxTokens;
    const unknown = session.inputNames.filter((n) => !INPUTS.has(n));
    if (unknown.length || !session.inputNames.includes('input_ids')) {
      throw new Error(`reranker inputs [${session.inputNames.join(', ')}] are not a cross-encoder export (input_ids, attention_mask, token_type_ids)`);
    }
    this.outputName = session.outputNames.includes('logits') ? 'logits' : session.outputNames[0];
    const special = (key: string, fallback: string) => {
      const token = typeof config[key] === 'string' ? (config[key] as string) : fallback;
      const id = tokenizer.token_to_id(token);
      if (id === undefined) throw new Error(`the reranker's tokenizer has no ${token} token`);
      return id;
    };
    this.cls = special('cls_token', '[CLS]');
    this.sep = special('sep_token', '[SEP]');
    this.pad = special('pad_token', '[PAD]');
  }

  static async create(opts: CrossEncoderOptions): Promise<CrossEncoder> {
    const tokenizerJson = JSON.parse(await readFile(opts.tokenizerPath, 'utf8'));
    const config = opts.tokenizerConfigPath ? JSON.parse(await readFile(opts.tokenizerConfigPath, 'utf8')) : {};
    const cores = os.availableParallelism();
    const session = await ort.InferenceSession.create(opts.modelPath, {
      executionProviders: ['cpu'],
      intraOpNumThreads: Math.max(1, Math.min(opts.threads ?? cores, cores)),
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    });
    try {
      const encoder = new CrossEncoder(session, new Tokenizer(tokenizerJson, config), config, opts);
      // A probe proves the graph runs end to end and gives one logit per pair.
      await encoder.score('hearth', ['hearth']);
      return encoder;
    } catch (error) {
      await session.release();
      throw error;
    }
  }

  /** One relevance logit per passage (higher: more relevant), in input order. */
  async score(query: string, passages: string[]): Promise<number[]> {
    const queryIds = this.tokenizer.encode(query, { add_special_tokens: false }).ids.slice(0, MAX_QUERY_TOKENS);
    const pairs = passages.map((passage) => this.pair(queryIds, passage));
    const seq = Math.max(...pairs.map((p) => p.ids.length));
    const tensor = (rows: number[][], pad: number) => {
      const data = new BigInt64Array(pairs.length * seq).fill(BigInt(pad));
      rows.forEach((row, b) => row.forEach((v, j) => (data[b * seq + j] = BigInt(v))));
      return new ort.Tensor('int64', data, [pairs.length, seq]);
    };
    const all: Record<string, () => ort.Tensor> = {
      input_ids: () => tensor(pairs.map((p) => p.ids), this.pad),
      attention_mask: () => tensor(pairs.map((p) => p.ids.map(() => 1)), 0),
      token_type_ids: () => tensor(pairs.map((p) => p.types), 0),
    };
    const feeds = Object.fromEntries(this.session.inputNames.map((name) => [name, all[name]()]));
    const output = (await this.session.run(feeds, [this.outputName]))[this.outputName];
    try {
      if (output.type !== 'float32' || output.data.length !== pairs.length) {
        throw new Error(`reranker output ${this.outputName} is ${output.type} [${output.dims}], expected float32 [batch, 1]`);
      }
      return Array.from(output.data as Float32Array);
    } finally {
      for (const t of [...Object.values(feeds), output]) t.dispose();
    }
  }

  async close(): Promise<void> {
    await this.session.release();
  }

  private pair(queryIds: number[], passage: string): Pair {
    const room = Math.max(1, this.maxTokens - queryIds.length - 3);
    // A passage far longer than the room is cut by characters first: tokenising a whole chunk to keep 200 tokens is wasted.
    const passageIds = this.tokenizer.encode(passage.slice(0, room * 12), { add_special_tokens: false }).ids.slice(0, room);
    const first = [this.cls, ...queryIds, this.sep];
    return { ids: [...first, ...passageIds, this.sep], types: [...first.map(() => 0), ...passageIds.map(() => 1), 1] };
  }
}
