import type { VectorIndex } from '../../native/vector-index/index.js';

/** How many times more neighbours each widening asks for. */
const WIDEN = 4;

/**
 * The k nearest vectors among `allowed` labels (all labels when absent), best first. The one place a
 * filtered vector search happens: the HNSW addon has no filter yet, so it asks for more neighbours
 * until k allowed ones are found or the whole index was searched; a filter in the addon can replace
 * the loop here without any caller changing.
 */
export function searchVectors(vectors: VectorIndex, query: Float32Array, k: number, allowed?: ReadonlySet<number>): Array<{ label: number; score: number }> {
  if (!allowed) return vectors.search(query, k);
  if (allowed.size === 0) return [];
  const size = vectors.size();
  for (let limit = Math.max(k, WIDEN * k); ; limit *= WIDEN) {
    const found = vectors.search(query, Math.min(limit, size)).filter((hit) => allowed.has(hit.label));
    if (found.length >= k || limit >= size) return found.slice(0, k);
  }
}
