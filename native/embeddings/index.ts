// Public surface of native/embeddings: the rest of Hearth imports from here, never onnxruntime-node.
export type { Embedder } from './embedder.js';
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
  loadEmbedder,
  readActiveModelId,
  resolveActiveModel,
  verifyModelFiles,
  type InstalledModel,
  type LoadEmbedderOptions,
  type ModelProblem,
} from './models.js';
export { findModelFile, importModelFolder, installModel, type ImportOptions, type InstallModelOptions, type ModelSourceFiles } from './install.js';
export { DEFAULT_HUB_URL, DEFAULT_PRESET, MODEL_PRESETS, pullModel, type ModelPreset, type PinnedFile, type PullOptions } from './pull.js';
