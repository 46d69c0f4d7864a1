import type { VectorIndex } from '../../native/vector-index/index.js';

/** How many times more neighbours each widening asks for. */
const WIDEN = 4;

/**
 * The k nearest vectors among `allowed` labels (all labels when absent), best first, within the documents
 * whose access keys are `keys` (the addon filters those inside its graph walk; absent: every document).
 * The one place a filtered vector search happens: the label set (metadata rules) is not in the addon, so
 * it asks for more neighbours until k allowed ones are found or the whole index was searched. The walk runs on
 * libuv's pool (searchAsync): the caller's thread goes on with other work until it resolves.
 * Access keys need no wider walk: hnswlib's filtered walk goes on until it holds ef (efSearch, 128) admitted
 * candidates, so it passes about ef / share nodes by itself, and below about 18% of 100k vectors admitted the
 * addon compares exactly instead. (Until session 19, with efSearch 64, a filter asked for up to twice as many
 * neighbours: ef 128 for any share up to half. Before session 11 up to 20 times: a filter admitting 10% of 100k
 * vectors walked for 15 ms.)
 */
export async function searchVectors(
  vectors: VectorIndex, query: Float32Array, k: number, allowed?: ReadonlySet<number>, keys?: Uint32Array,
): Promise<Array<{ label: number; score: number }>> {
  if (!allowed) return vectors.searchAsync(query, k, keys);
  if (allowed.size === 0) return [];
  const size = vectors.size();
  for (let limit = Math.max(k, WIDEN * k); ; limit *= WIDEN) {
    const found = (await vectors.searchAsync(query, Math.min(limit, size), keys)).filter((hit) => allowed.has(hit.label));
    if (found.length >= k || limit >= size) return found.slice(0, k);
  }
}

