// Public surface of native/embeddings: the rest of Hearth imports from here, never onnxruntime-node.
export type { EmbedOptions, Embedder } from './embedder.js';
export { EMBED_RUN, EmbeddingDropped } from './batching.js';
export { OnnxEmbedder, cudaRuntimeAvailable, type EmbedDevice, type EmbedLog, type OnnxEmbedderOptions } from './onnx-embedder.js';
export {
  ACTIVE_FILE,
  MANIFEST_FILE,
  embeddingsRoot,
  hashModelFiles,
  modelFolder,
  readManifest,
  setActiveModel,
  sha256File,
  validateManifest,
  writeManifest,
  type ModelManifest,
} from './manifest.js';
export {
  embedderModelId,
  listInstalledModels,
  readActiveModelId,
  resolveActiveModel,
  verifyModelFiles,
  type InstalledModel,
  type LoadEmbedderOptions,
  type ModelProblem,
} from './models.js';
// The service's embedder runs in a worker thread of its own; models.ts's loadEmbedder loads the same model on the calling thread.
export { loadEmbedder } from './worker-embedder.js';
export { findModelFile, importModelFolder, installModel, type ImportOptions, type InstallModelOptions, type ModelSourceFiles } from './install.js';
export { DEFAULT_HUB_URL, DEFAULT_PRESET, MODEL_PRESETS, pullModel, type ModelPreset, type PinnedFile, type PullOptions } from './pull.js';
