// Public surface of native/reranker: an optional cross-encoder stage after fusion (plugins/retrieval).
export { CrossEncoder, RERANK_BATCH } from './cross-encoder.js';
export { importReranker, loadReranker } from './install.js';
