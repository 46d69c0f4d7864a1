/**
 * Approximate nearest-neighbour index over chunk vectors, keyed by the chunk's integer rowid.
 * SQLite is the source of truth; an index can always be rebuilt from it.
 */
export interface VectorIndex {
  readonly dimension: number;
  /** Model id the vectors came from: an index of another model is never queried. */
  readonly modelId: string;
  size(): number;
  /**
   * Adds or replaces vectors; grows capacity as needed. `keys` are the labels' access keys (Hearth: the
   * chunk's document key) that a filtered search admits or not; they live in memory, not in the file.
   * A label without a key is never admitted by a filtered search (fail closed).
   */
  add(labels: number[], vectors: Float32Array[], keys?: number[]): void;
  /** Sets the access keys of labels already in the index (after a load from disk). */
  setKeys(labels: number[], keys: number[]): void;
  /** Removes labels; unknown labels are ignored. */
  remove(labels: number[]): void;
  has(label: number): boolean;
  labels(): number[];
  /**
   * The k nearest labels with cosine similarity (1 = same direction), best first. With `allowedKeys`, only
   * labels whose access key is in it: the filter runs inside the search (never a trim of its results).
   */
  search(vector: Float32Array, k: number, allowedKeys?: Uint32Array): Array<{ label: number; score: number }>;
  /**
   * The same search on libuv's thread pool: the caller's thread goes on meanwhile. Changes made while it runs wait
   * for it (in the addon) rather than move the graph under it.
   */
  searchAsync(vector: Float32Array, k: number, allowedKeys?: Uint32Array): Promise<Array<{ label: number; score: number }>>;
  /** Writes the index to disk atomically (temp file + rename); a failed save leaves the previous one in force. */
  save(): Promise<void>;
  /** Bytes on disk of the saved index. */
  diskBytes(): number;
}
