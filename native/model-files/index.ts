// Public surface of native/model-files: models as files under MODEL_DIR, one layout for every kind
// (manifest.json with sha256 pins, an ACTIVE pointer, staged installs, pinned pulls). Nothing here
// loads a model: each kind's folder (native/embeddings, native/llm) checks and loads its own.
export { EMBEDDING_FORMATS, MODEL2VEC_MAX_TOKENS, readManifest, writeManifest, type EmbeddingFormat, type EmbeddingManifest, type LlmManifest, type RerankerManifest } from './manifest.js';
export { hashModelFiles, sha256File, verifyModelFiles } from './checksums.js';
export { listInstalledModels, modelFolder, modelsRoot, readActiveModelId, resolveActiveModel, setActiveModel } from './installed.js';
export { installModelFiles } from './install.js';
export { DEFAULT_HUB_URL, pullPinnedFiles, type PullOptions } from './pull.js';
export { DEFAULT_EMBEDDING_PRESET, EMBEDDING_PRESETS, LLM_PRESETS, type EmbeddingPreset, type LlmPreset } from './presets.js';
