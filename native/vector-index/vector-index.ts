/**
 * Approximate nearest-neighbour index over chunk vectors, keyed by the chunk's integer rowid.
 * SQLite is the source of truth; an index can always be rebuilt from it.
 */
export interface VectorIndex {
  readonly dimension: number;
  /** Model id the vectors came from: an index of another model is never queried. */
  readonly modelId: string;
  size(): number;
  /** Adds or replaces vectors; grows capacity as needed. */
  add(labels: number[], vectors: Float32Array[]): void;
  /** Removes labels; unknown labels are ignored. */
  remove(labels: number[]): void;
  has(label: number): boolean;
  labels(): number[];
  /** The k nearest labels with cosine similarity (1 = same direction), best first. */
  search(vector: Float32Array, k: number): Array<{ label: number; score: number }>;
  /** Writes the index to disk atomically (temp file + rename); a failed save leaves the previous one in force. */
  save(): Promise<void>;
  /** Bytes on disk of the saved index. */
  diskBytes(): number;
}
