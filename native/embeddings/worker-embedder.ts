import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { Tokenizer } from '@huggingface/tokenizers';
import { startWorker } from '../../core/background-worker.js';
import { EmbeddingDropped } from './batching.js';
import type { EmbedOptions, Embedder } from './embedder.js';
import { modelFolder, readManifest, resolveActiveModel } from '../model-files/index.js';
import type { LoadEmbedderOptions } from './models.js';
import { readTokenizer } from './onnx-embedder.js';

/** What the thread is started with: loadEmbedder's options for one installed model, less the logger. */
export interface ThreadStart extends Omit<LoadEmbedderOptions, 'log' | 'id'> {
  id: string;
}

export type ThreadRequest =
  | { type: 'embed'; id: number; texts: string[]; priority: 'query' | 'bulk' }
  | { type: 'drop'; id: number }
  | { type: 'close' };

export type ThreadReply =
  | { type: 'ready'; modelId: string; dimension: number; maxTokens: number; device: 'cpu' | 'cuda'; tokenTable: boolean; lexicalDimensions?: number }
  | { type: 'failed'; message: string }
  | { type: 'log'; level: 'info' | 'warn'; message: string }
  /** One request's vectors, end to end in input order. */
  | { type: 'vectors'; id: number; data: Float32Array }
  | { type: 'error'; id: number; message: string };

/**
 * The thread's JS allocates little (tensors are native memory), but V8 sizes its young generation for
 * big heaps: 4 MB cut the service's peak RSS by 12-18 MB in the 100k-chunk bench, at no CPU cost measured.
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 4 };

/** In dist/ tsup builds the thread as embedder-thread.js beside this chunk. */
const startThread = (start: ThreadStart): Worker => startWorker(import.meta.url, './embedder-thread.ts', './embedder-thread.js', start, THREAD_LIMITS);

interface Pending {
  count: number;
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

type Ready = Extract<ThreadReply, { type: 'ready' }>;

/**
 * The embedding model in a worker thread of its own (embedder-thread.ts owns the ONNX session).
 * onnxruntime-node's session.run computes on the calling thread: on the main thread one batch of a
 * real model (hundreds of ms) stalled every request, and the main thread's share of ingestion
 * (chunking, SQLite, HNSW) could not overlap the model's. The tokenizer is loaded on this side too,
 * because the chunker counts tokens synchronously.
 */
export class WorkerEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimension: number;
  readonly maxTokens: number;
  readonly device: 'cpu' | 'cuda';
  readonly tokenTable: boolean;
  readonly lexicalDimensions?: number;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private stopped: Error | null = null;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly worker: Worker,
    private readonly tokenizer: Tokenizer,
    ready: Ready,
  ) {
    ({ modelId: this.modelId, dimension: this.dimension, maxTokens: this.maxTokens, device: this.device, tokenTable: this.tokenTable, lexicalDimensions: this.lexicalDimensions } = ready);
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: ThreadReply) => this.settle(reply));
    worker.on('error', (error) => this.stop(error));
    worker.on('exit', (code) => this.stop(new Error(`the embedding thread exited (code ${code})`)));
    // An idle embedder does not keep the process alive; one with work in flight does.
    worker.unref();
  }

  static async start(options: LoadEmbedderOptions & { id: string }): Promise<WorkerEmbedder> {
    const { log, ...start } = options;
    const worker = startThread(start);
    const tokenizer = loadTokenizer(options.modelDir, options.id);
    tokenizer.catch(() => undefined); // awaited below, once the thread answered
    const ready = await loaded(worker, log).catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });
    try {
      return new WorkerEmbedder(worker, await tokenizer, ready);
    } catch (error) {
      worker.postMessage({ type: 'close' } satisfies ThreadRequest);
      throw error;
    }
  }

  countTokens(text: string): number {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids.length;
  }

  embed(texts: string[], { priority = 'bulk', signal }: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.stopped) return Promise.reject(this.stopped);
    if (signal?.aborted) return Promise.reject(new EmbeddingDropped());
    if (texts.length === 0) return Promise.resolve([]);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const dropped = () => {
        if (!this.pending.has(id)) return;
        this.forget(id);
        this.worker.postMessage({ type: 'drop', id } satisfies ThreadRequest);
        reject(new EmbeddingDropped());
      };
      signal?.addEventListener('abort', dropped, { once: true });
      const settled = () => signal?.removeEventListener('abort', dropped);
      this.pending.set(id, {
        count: texts.length,
        resolve: (vectors) => (settled(), resolve(vectors)),
        reject: (error) => (settled(), reject(error)),
      });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage({ type: 'embed', id, texts, priority } satisfies ThreadRequest);
    });
  }

  /** Releases the ONNX session in its thread, then the thread ends; requests still queued are refused. */
  async close(): Promise<void> {
    if (!this.stopped) {
      this.worker.ref();
      this.worker.postMessage({ type: 'close' } satisfies ThreadRequest);
    }
    await this.exited;
  }

  private settle(reply: ThreadReply): void {
    if (reply.type !== 'vectors' && reply.type !== 'error') return;
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.forget(reply.id);
    if (reply.type === 'error') return pending.reject(new Error(reply.message));
    const size = this.dimension;
    pending.resolve(Array.from({ length: pending.count }, (_, i) => reply.data.subarray(i * size, (i + 1) * size)));
  }

  /** An idle embedder does not keep the process alive. */
  private forget(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }

  private stop(error: Error): void {
    this.stopped ??= error;
    for (const pending of this.pending.values()) pending.reject(this.stopped);
    this.pending.clear();
  }
}

/** Waits for the thread's model load, passing its log lines on. */
function loaded(worker: Worker, log: LoadEmbedderOptions['log']): Promise<Ready> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: ThreadReply) => {
      if (reply.type === 'log') log?.[reply.level](reply.message);
      else if (reply.type === 'ready') settle(() => resolve(reply));
      else if (reply.type === 'failed') settle(() => reject(new Error(reply.message)));
    };
    const onError = (error: Error) => settle(() => reject(error));
    const onExit = (code: number) => settle(() => reject(new Error(`the embedding thread exited (code ${code}) while loading the model`)));
    const settle = (then: () => void) => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      then();
    };
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

async function loadTokenizer(modelDir: string, id: string): Promise<Tokenizer> {
  const folder = modelFolder(modelDir, 'embedding', id);
  const { files } = await readManifest(folder, 'embedding');
  const { tokenizer } = await readTokenizer(path.join(folder, files.tokenizer), files.tokenizer_config && path.join(folder, files.tokenizer_config));
  return tokenizer;
}

/** The active embedder (or options.id), in a worker thread; null when no embedding model is installed. */
export async function loadEmbedder(options: LoadEmbedderOptions): Promise<Embedder | null> {
  const id = options.id ?? (await resolveActiveModel(options.modelDir, 'embedding'))?.id;
  if (!id) return null;
  return WorkerEmbedder.start({ ...options, id });
}
