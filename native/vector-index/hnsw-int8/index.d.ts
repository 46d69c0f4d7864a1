/** hnswlib's HNSW graph over int8-quantised cosine vectors; the method names follow hnswlib-node's. */
declare namespace addon {
  class Int8HnswIndex {
    constructor(dimension: number);
    initIndex(maxElements: number, m: number, efConstruction: number, randomSeed: number, allowReplaceDeleted: boolean): void;
    /** Loads on libuv's pool; the index refuses changes until it settles. */
    readIndex(path: string, allowReplaceDeleted: boolean): Promise<void>;
    /** Saves on libuv's pool; searches may run meanwhile, changes are refused until it settles. */
    writeIndex(path: string): Promise<void>;
    resizeIndex(maxElements: number): void;
    addPoint(vector: Float32Array, label: number, replaceDeleted?: boolean): void;
    markDelete(label: number): void;
    unmarkDelete(label: number): void;
    /**
     * Nearest first; distance = 1 - cosine of the quantised vectors. With allowedKeys, only labels whose
     * access key (setKeys) is among them: filtered inside the graph walk, or exactly when few are admitted.
     */
    searchKnn(vector: Float32Array, k: number, allowedKeys?: Uint32Array): { neighbors: number[]; distances: number[] };
    /**
     * searchKnn on libuv's pool, under a shared lock: changes (addPoint, markDelete, setKeys, ...) made meanwhile
     * wait for the searches in flight. Bad arguments throw at once, as searchKnn's do.
     */
    searchKnnAsync(vector: Float32Array, k: number, allowedKeys?: Uint32Array): Promise<{ neighbors: number[]; distances: number[] }>;
    /**
     * Access keys (0 to 2^32 - 2) of labels, for filtered searches; kept in memory only (set again after readIndex),
     * 4 bytes per label up to the largest below 2^24, a map entry above. markDelete drops a label's key.
     */
    setKeys(labels: number[], keys: number[]): void;
    setEf(ef: number): void;
    /** Every label in the graph, including those marked deleted. */
    getIdsList(): number[];
    getCurrentCount(): number;
    getMaxElements(): number;
    getNumDimensions(): number;
  }
  /**
   * Soft term matching's scores (plugins/retrieval/soft-match.ts): for each chunk, Σ weight × best / Σ weight, best
   * being a term's largest similarity (dot product, at least 0) with one of the chunk's words, and 1 with its own word
   * (termWords: its index among the words, or -1). terms: t rows of `dimension` floats; rows: a table of word vectors
   * as int8, row r's components times scales[r]; wordRows: each word's row in it (-1: none, it matches only itself);
   * chunkWords: the chunks' word indexes one after another, chunkEnds: where each chunk's end. Throws on lengths, rows
   * or indexes out of range.
   */
  function softMatchScores(terms: Float32Array, rows: Int8Array, scales: Float32Array, dimension: number, wordRows: Int32Array, weights: Float64Array, termWords: Int32Array, chunkWords: Int32Array, chunkEnds: Int32Array): Float64Array;
}
export = addon;
