import { parentPort, workerData } from 'node:worker_threads';
import type { Embedder } from './embedder.js';
import { loadEmbedder } from './models.js';
import type { ThreadReply, ThreadRequest, ThreadStart } from './worker-embedder.js';

/**
 * Thread entry of WorkerEmbedder: owns the ONNX session and runs the requests of the main thread.
 * Texts of several requests share an ONNX run (small documents arrive a few chunks at a time), and
 * a short request (a search query) runs before the bulk of an ingestion, waiting for one run at most.
 */

/** Texts per ONNX run at most: the embedder's own batch. */
const MAX_BATCH = 16;
/**
 * Padded tokens per ONNX run at most: one chunk of 256 tokens, or several shorter ones. A run's
 * activations grow with batch × longest text (and its attention with the square of that text): a
 * MiniLM-class model needs about 15 MB for 2 texts of 256 tokens, 30 MB for 4 and 180 MB for 16, for
 * the same CPU per text (60-70 ms here at batch 1, 4 or 16). ONNX Runtime's arena keeps the largest
 * run's memory for the life of the service: 256 rather than 512 cut its peak RSS by 13-25 MB.
 */
const MAX_BATCH_TOKENS = 256;
/** A request this short is a search query, not a document's chunks: it goes first. */
const URGENT_CHARS = 1000;
/** Rough WordPiece characters per token, to size runs without tokenising twice. */
const CHARS_PER_TOKEN = 4;

interface Request {
  id: number;
  texts: string[];
  /** Indexes of texts, shortest first, so texts of a run have similar lengths (little padding). */
  order: number[];
  next: number;
  left: number;
  vectors: Float32Array | null;
  urgent: boolean;
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
      batchSize: MAX_BATCH,
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
    const order = request.texts.map((_, i) => i).sort((a, b) => request.texts[a].length - request.texts[b].length);
    const urgent = request.texts.reduce((chars, text) => chars + text.length, 0) <= URGENT_CHARS;
    queue.push({ ...request, order, next: 0, left: request.texts.length, vectors: null, urgent });
    draining ??= drain(loadedEmbedder).finally(() => (draining = null));
  });
  post({ type: 'ready', modelId: embedder.modelId, dimension: embedder.dimension, maxTokens: embedder.maxTokens, device: embedder.device });
}

async function drain(embedder: Embedder): Promise<void> {
  while (queue.length > 0 && !closing) {
    // Requests that arrived during the last run are read before the next one is put together.
    await new Promise((resolve) => setImmediate(resolve));
    const run = nextRun(embedder.maxTokens);
    try {
      const vectors = await embedder.embed(run.map(({ request, index }) => request.texts[index]));
      run.forEach(({ request, index }, k) => {
        request.vectors ??= new Float32Array(request.texts.length * embedder.dimension);
        request.vectors.set(vectors[k], index * embedder.dimension);
        if (--request.left === 0) finish(request);
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      for (const request of new Set(run.map((slot) => slot.request))) finish(request, message);
    }
  }
}

/** The next run: urgent requests alone if any are waiting, else texts of the oldest requests, within the run's bounds. */
function nextRun(maxTokens: number): Array<{ request: Request; index: number }> {
  const urgent = queue.filter((request) => request.urgent);
  const run: Array<{ request: Request; index: number }> = [];
  let longest = 0;
  for (const request of urgent.length > 0 ? urgent : queue) {
    while (request.next < request.texts.length && run.length < MAX_BATCH) {
      const index = request.order[request.next];
      const tokens = Math.min(maxTokens, Math.ceil(request.texts[index].length / CHARS_PER_TOKEN) + 2);
      if (run.length > 0 && Math.max(longest, tokens) * (run.length + 1) > MAX_BATCH_TOKENS) return run;
      longest = Math.max(longest, tokens);
      run.push({ request, index });
      request.next++;
    }
    if (run.length === MAX_BATCH) break;
  }
  return run;
}

function finish(request: Request, error?: string): void {
  queue.splice(queue.indexOf(request), 1);
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
