// Public surface of native/vector-index: the rest of Hearth imports from here, never the hnsw-int8 addon.
export type { VectorIndex } from './vector-index.js';
export { HNSW_PARAMETERS, openVectorIndex } from './hnsw-index.js';
export { softMatchScores } from './soft-match-kernel.js';
