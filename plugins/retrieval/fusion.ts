/** Fusing the vector and keyword candidate lists, and dropping near-identical texts. */

export type FusionMethod = 'rrf' | 'weighted';

export interface FusionSettings {
  /** rrf: Σ weight / (rrf_k + rank); weighted: Σ weight × score min-max normalised within its list. */
  method: FusionMethod;
  rrfK: number;
  weights: { vector: number; keyword: number };
}

/** Measured on bench/retrieval-harness.ts: see the README's retrieval figures. */
export const DEFAULT_FUSION: FusionSettings = { method: 'rrf', rrfK: 60, weights: { vector: 1, keyword: 1 } };

export interface Scored {
  rowid: number;
  score: number;
}

/** Each list best first; the result is every rowid of either list, best first. */
export function fuse(vector: Scored[], keyword: Scored[], settings: FusionSettings): Scored[] {
  const total = new Map<number, number>();
  const add = (list: Scored[], weight: number) => {
    const contribution = settings.method === 'rrf' ? rrf(settings.rrfK) : minMax(list);
    list.forEach((item, index) => total.set(item.rowid, (total.get(item.rowid) ?? 0) + weight * contribution(item, index)));
  };
  add(vector, settings.weights.vector);
  add(keyword, settings.weights.keyword);
  return [...total].map(([rowid, score]) => ({ rowid, score })).sort((a, b) => b.score - a.score || a.rowid - b.rowid);
}

const rrf = (k: number) => (_item: Scored, index: number) => 1 / (k + index + 1);

function minMax(list: Scored[]): (item: Scored) => number {
  const scores = list.map((item) => item.score);
  const low = Math.min(...scores);
  const span = Math.max(...scores) - low;
  return (item) => (span > 0 ? (item.score - low) / span : 1);
}

/** Word-set Jaccard at or above which two chunks count as the same text (a file uploaded twice, a repeated boilerplate block). */
export const NEAR_DUPLICATE_JACCARD = 0.9;

/**
 * Keeps the first (best) of each group of near-identical texts, up to `limit` items. Only texts of
 * similar length are compared, so the pairwise check stays cheap.
 */
export function dropNearDuplicates<T>(items: T[], textOf: (item: T) => string, limit: number): T[] {
  const kept: Array<{ item: T; normalized: string; words: Set<string> }> = [];
  for (const item of items) {
    if (kept.length >= limit) break;
    const normalized = textOf(item).toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
    const words = new Set(normalized.split(' '));
    const duplicate = kept.some((other) => other.normalized === normalized || jaccardAtLeast(words, other.words, NEAR_DUPLICATE_JACCARD));
    if (!duplicate) kept.push({ item, normalized, words });
  }
  return kept.map(({ item }) => item);
}

function jaccardAtLeast(a: Set<string>, b: Set<string>, threshold: number): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  if (small.size < threshold * large.size) return false; // |A∩B|/|A∪B| ≤ |small|/|large|
  let shared = 0;
  for (const word of small) if (large.has(word)) shared++;
  return shared / (a.size + b.size - shared) >= threshold;
}
