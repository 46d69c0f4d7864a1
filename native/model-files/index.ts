// Public surface of native/model-files: models as files under MODEL_DIR, one layout for every kind
// (manifest.json with sha256 pins, an ACTIVE pointer, staged installs, pinned pulls). Nothing here
// loads a model: each kind's folder (native/embeddings, native/llm) checks and loads its own.
export { MANIFEST_FILE, MODEL_ID_PATTERN, MODEL_KINDS, readManifest, validateManifest, writeManifest, type EmbeddingManifest, type LlmManifest, type ModelKind, type ModelManifest } from './manifest.js';
export { hashModelFiles, sha256File, verifyModelFiles } from './checksums.js';
export { ACTIVE_FILE, listInstalledModels, modelFolder, modelsRoot, readActiveModelId, resolveActiveModel, setActiveModel, type InstalledModel, type ModelProblem } from './installed.js';
export { installModelFiles, type InstallFilesOptions, type SourceFile } from './install.js';
export { DEFAULT_HUB_URL, pullPinnedFiles, type PinnedFile, type PinnedModel, type PullOptions } from './pull.js';
export { DEFAULT_EMBEDDING_PRESET, EMBEDDING_PRESETS, LLM_PRESETS, type EmbeddingPreset, type LlmPreset } from './presets.js';
