import type { VectorIndex } from '../../native/vector-index/index.js';

/** How many times more neighbours each widening asks for. */
const WIDEN = 4;

/**
 * The k nearest vectors among `allowed` labels (all labels when absent), best first, within the documents
 * whose access keys are `keys` (the addon filters those inside its graph walk; absent: every document).
 * The one place a filtered vector search happens: the label set (metadata rules) is not in the addon, so
 * it asks for more neighbours until k allowed ones are found or the whole index was searched.
 */
export function searchVectors(
  vectors: VectorIndex, query: Float32Array, k: number, allowed?: ReadonlySet<number>, keys?: Uint32Array,
): Array<{ label: number; score: number }> {
  if (!allowed) return vectors.search(query, k, keys);
  if (allowed.size === 0) return [];
  const size = vectors.size();
  for (let limit = Math.max(k, WIDEN * k); ; limit *= WIDEN) {
    const found = vectors.search(query, Math.min(limit, size), keys).filter((hit) => allowed.has(hit.label));
    if (found.length >= k || limit >= size) return found.slice(0, k);
  }
}
