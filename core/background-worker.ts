import { type ResourceLimits, Worker } from 'node:worker_threads';

/**
 * Starts the worker thread whose entry is `source` (TypeScript, beside `from`) or, in dist/, `built` (the name tsup
 * gives it). From source (vitest, tsx) a JavaScript bootstrap imports the entry once tsx's loader is in place.
 */
export function startWorker(from: string, source: string, built: string, workerData: object, resourceLimits?: ResourceLimits): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(built, from), { workerData, resourceLimits });
  const entry = new URL(source, from).href;
  return new Worker(new URL('./worker-bootstrap.mjs', import.meta.url), { workerData: { ...workerData, entry }, execArgv: [], resourceLimits });
}

export interface BackgroundWork<T> {
  done: Promise<T>;
  /** Stops the work (service shutdown); `done` then rejects. */
  cancel(): Promise<void>;
}

/**
 * Runs a CPU-bound build in a worker thread (startWorker), so that it does not block requests. The worker posts
 * `{ type: 'progress', message }` as it goes and `{ type: 'done', result }` at the end.
 */
export function runInWorker<T>(from: string, source: string, built: string, data: object, what: string, progress: (message: string) => void, resourceLimits?: ResourceLimits): BackgroundWork<T> {
  const worker = startWorker(from, source, built, data, resourceLimits);
  let cancelled = false;
  const done = new Promise<T>((resolve, reject) => {
    worker.on('message', (msg: { type: string; message?: string; result?: T }) => {
      if (msg.type === 'progress' && msg.message) progress(msg.message);
      if (msg.type === 'done' && msg.result !== undefined) resolve(msg.result);
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(cancelled ? `${what} cancelled` : `${what} worker exited with code ${code}`)));
  });
  return {
    done,
    async cancel() {
      cancelled = true;
      await worker.terminate();
    },
  };
}
