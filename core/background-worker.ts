import { type ResourceLimits, Worker } from 'node:worker_threads';

export interface BackgroundWork<T> {
  done: Promise<T>;
  /** Stops the work (service shutdown); `done` then rejects. */
  cancel(): Promise<void>;
}

/**
 * Runs a CPU-bound build in a worker thread, so that it does not block requests. The worker posts
 * `{ type: 'progress', message }` as it goes and `{ type: 'done', result }` at the end. From source (vitest, tsx)
 * the worker is TypeScript, imported by a JavaScript bootstrap once tsx's loader is in place; in dist/ tsup builds
 * it as `built`.
 */
export function runInWorker<T>(from: string, source: string, built: string, data: object, what: string, progress: (message: string) => void, resourceLimits?: ResourceLimits): BackgroundWork<T> {
  const fromSource = from.endsWith('.ts');
  const url = new URL(fromSource ? source : built, from);
  const worker = fromSource
    ? new Worker(new URL('./worker-bootstrap.mjs', import.meta.url), { workerData: { ...data, entry: url.href }, execArgv: [], resourceLimits })
    : new Worker(url, { workerData: data, resourceLimits });
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
