import { Worker } from 'node:worker_threads';
import type { EmbeddingManifest } from '../../../native/model-files/index.js';
import type { InstallDefaultOptions } from './build.js';

// Hearth's built-in default embedder (WordNet 3.1 static token vectors): built in a worker thread when
// MODEL_DIR has no embedding model, or by `npm run models -- build-default`.
export { DEFAULT_EMBEDDER_DIMENSION, DEFAULT_EMBEDDER_ID, DEFAULT_EMBEDDER_SOURCE, installDefaultModel, type InstallDefaultOptions } from './build.js';
// The benchmarks and test fixtures reuse the build's seeded PRNG and its WordNet reader.
export { mulberry32 } from './linalg.js';
export { readSynsets, wordnetVersion } from './wordnet.js';

/** From source (vitest, tsx) the worker is TypeScript; in dist/ tsup builds it as default-embedder-worker.js. */
function workerEntry(): { url: URL; execArgv?: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const url = new URL(fromSource ? './worker.ts' : './default-embedder-worker.js', import.meta.url);
  return fromSource ? { url, execArgv: [] } : { url };
}

export interface BackgroundBuild {
  done: Promise<EmbeddingManifest>;
  /** Stops the build (service shutdown); `done` then rejects. */
  cancel(): Promise<void>;
}

/** Builds and installs the default embedder in a worker thread (a ~45 s CPU-bound job must not block requests). */
export function installDefaultModelInBackground(options: Omit<InstallDefaultOptions, 'progress'>, progress: (message: string) => void): BackgroundBuild {
  const { url, execArgv } = workerEntry();
  // From source a JavaScript bootstrap imports worker.ts once tsx's loader is in place.
  const worker = execArgv
    ? new Worker(new URL('../../../core/worker-bootstrap.mjs', import.meta.url), { workerData: { ...options, entry: url.href }, execArgv })
    : new Worker(url, { workerData: options });
  let cancelled = false;
  const done = new Promise<EmbeddingManifest>((resolve, reject) => {
    worker.on('message', (msg: { type: string; message?: string; manifest?: EmbeddingManifest }) => {
      if (msg.type === 'progress' && msg.message) progress(msg.message);
      if (msg.type === 'done' && msg.manifest) resolve(msg.manifest);
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(cancelled ? 'default embedder build cancelled' : `default embedder build worker exited with code ${code}`)));
  });
  return {
    done,
    async cancel() {
      cancelled = true;
      await worker.terminate();
    },
  };
}
