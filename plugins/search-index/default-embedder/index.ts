import type { EmbeddingManifest } from '../../../native/model-files/index.js';
import type { InstallDefaultOptions } from './build.js';
import { runInWorker, type BackgroundWork } from '../../../core/background-worker.js';

// Hearth's built-in default embedder (WordNet 3.1 static token vectors): built in a worker thread when
// MODEL_DIR has no embedding model, or by `npm run models -- build-default`.
export { DEFAULT_EMBEDDER_DIMENSION, DEFAULT_EMBEDDER_ID, DEFAULT_EMBEDDER_SOURCE, installDefaultModel, type InstallDefaultOptions } from './build.js';
// The benchmarks and test fixtures reuse the build's seeded PRNG and its WordNet reader.
export { mulberry32 } from './linalg.js';
export { readSynsets, wordnetVersion } from './wordnet.js';

export type BackgroundBuild = BackgroundWork<EmbeddingManifest>;

/** Builds and installs the default embedder in a worker thread (a ~45 s CPU-bound job must not block requests). */
export function installDefaultModelInBackground(options: Omit<InstallDefaultOptions, 'progress'>, progress: (message: string) => void): BackgroundBuild {
  return runInWorker<EmbeddingManifest>(import.meta.url, './worker.ts', './default-embedder-worker.js', options, 'default embedder build', progress);
}
