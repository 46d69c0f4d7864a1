import { parentPort, workerData } from 'node:worker_threads';
import { EMBED_RUN } from './batching.js';
import type { Embedder } from './embedder.js';
import { loadEmbedder } from './models.js';
import type { ThreadReply, ThreadRequest, ThreadStart } from './worker-embedder.js';

/**
 * Thread entry of WorkerEmbedder: owns the ONNX session and runs the requests of the main thread.
 * Texts of several requests share an ONNX run (small documents arrive a few chunks at a time), in
 * the order they were asked for, and a query runs before the bulk of an ingestion, waiting for one
 * run at most. A dropped request loses the texts not run yet.
 */

interface Request {
  id: number;
  texts: string[];
  /** Indexes of texts, shortest first, so texts of a run have similar lengths (little padding). */
  order: number[];
  next: number;
  left: number;
  vectors: Float32Array | null;
  query: boolean;
  dropped: boolean;
}

const port = parentPort!;
const start = workerData as ThreadStart;
const post = (reply: ThreadReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);

const queue: Request[] = [];
let draining: Promise<void> | null = null;
let closing = false;

async function main(): Promise<void> {
  let embedder: Embedder | null;
  try {
    embedder = await loadEmbedder({
      ...start,
      batchSize: EMBED_RUN.maxTexts,
      log: { info: (message) => post({ type: 'log', level: 'info', message }), warn: (message) => post({ type: 'log', level: 'warn', message }) },
    });
    if (!embedder) throw new Error(`embedding model "${start.id}" is not installed`);
  } catch (error) {
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    return port.close();
  }
  const loadedEmbedder = embedder;
  port.on('message', (request: ThreadRequest) => {
    if (request.type === 'close') return void close(loadedEmbedder);
    if (request.type === 'drop') return drop(request.id);
    const order = request.texts.map((_, i) => i).sort((a, b) => request.texts[a].length - request.texts[b].length);
    queue.push({ id: request.id, texts: request.texts, order, next: 0, left: request.texts.length, vectors: null, query: request.priority === 'query', dropped: false });
    draining ??= drain(loadedEmbedder).finally(() => (draining = null));
  });
  post({ type: 'ready', modelId: embedder.modelId, dimension: embedder.dimension, maxTokens: embedder.maxTokens, device: embedder.device, tokenTable: embedder.tokenTable, lexicalDimensions: embedder.lexicalDimensions });
}

async function drain(embedder: Embedder): Promise<void> {
  while (queue.length > 0 && !closing) {
    // Requests that arrived during the last run are read before the next one is put together.
    await new Promise((resolve) => setImmediate(resolve));
    const run = nextRun(embedder.maxTokens);
    try {
      const vectors = await embedder.embed(run.map(({ request, index }) => request.texts[index]));
      run.forEach(({ request, index }, k) => {
        if (request.dropped) return;
        request.vectors ??= new Float32Array(request.texts.length * embedder.dimension);
        request.vectors.set(vectors[k], index * embedder.dimension);
        if (--request.left === 0) finish(request);
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      for (const request of new Set(run.map((slot) => slot.request))) if (!request.dropped) finish(request, message);
    }
  }
}

/** The next run: queries alone if any are waiting, else texts of the oldest requests, within the run's bounds. */
function nextRun(maxTokens: number): Array<{ request: Request; index: number }> {
  const queries = queue.filter((request) => request.query);
  const run: Array<{ request: Request; index: number }> = [];
  let longest = 0;
  for (const request of queries.length > 0 ? queries : queue) {
    while (request.next < request.texts.length && run.length < EMBED_RUN.maxTexts) {
      const index = request.order[request.next];
      const tokens = Math.min(maxTokens, Math.ceil(request.texts[index].length / EMBED_RUN.charsPerToken) + 2);
      if (run.length > 0 && Math.max(longest, tokens) * (run.length + 1) > EMBED_RUN.maxPaddedTokens) return run;
      longest = Math.max(longest, tokens);
      run.push({ request, index });
      request.next++;
    }
    if (run.length === EMBED_RUN.maxTexts) break;
  }
  return run;
}

/** The caller no longer wants it: out of the queue, and a run in progress discards its texts. */
function drop(id: number): void {
  const at = queue.findIndex((request) => request.id === id);
  if (at < 0) return;
  queue[at].dropped = true;
  queue.splice(at, 1);
}

function finish(request: Request, error?: string): void {
  const at = queue.indexOf(request);
  if (at >= 0) queue.splice(at, 1);
  if (error !== undefined) return post({ type: 'error', id: request.id, message: error });
  const data = request.vectors!;
  post({ type: 'vectors', id: request.id, data }, [data.buffer as ArrayBuffer]);
}

async function close(embedder: Embedder): Promise<void> {
  closing = true;
  await draining;
  for (const request of [...queue]) finish(request, 'the embedder was closed');
  await embedder.close();
  port.close();
}

await main();
