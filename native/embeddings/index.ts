// Public surface of native/embeddings: the rest of Hearth imports from here, never onnxruntime-node.
// Where models live on disk (manifest, ACTIVE, checksums) is native/model-files' business.
export type { EmbedOptions, Embedder } from './embedder.js';
export { lexicalView } from './lexical-view.js';
export { EMBED_RUN, EmbeddingDropped } from './batching.js';
export type { EmbedDevice } from './onnx-embedder.js';
export { embedderModelId, loadEmbedder as loadEmbedderOnThisThread } from './models.js';
// The service's embedder runs in a worker thread of its own; loadEmbedderOnThisThread loads the same model on the calling thread.
export { loadEmbedder } from './worker-embedder.js';
export { importModelFolder, installModel, pullModel } from './install.js';
export { SHIPPED_EMBEDDER, installShippedEmbedder, shippedEmbedderFolder } from './default-model.js';
