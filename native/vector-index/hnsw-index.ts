import { readdir, open, readFile, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';
import addon from '@hearth/hnsw-int8';
import type { VectorIndex } from './vector-index.js';

const { Int8HnswIndex } = addon; // CommonJS addon: no named ESM exports at run time
type Hnsw = InstanceType<typeof Int8HnswIndex>;

/**
 * Graph parameters for up to ~100k chunk vectors on a 2-core box. M=16 is hnswlib's standard
 * degree for 256–768-d embeddings (M=12 lost ~4 points of recall@10 in our runs); efConstruction=100
 * builds twice as fast as 200 for the same recall at this size. efSearch=128 (raised to the number of
 * neighbours asked for): on real text, the built-in embedder's vectors of 28,922 chunks (bench/graph-recall.ts), the
 * graph found 0.910 of the exact top 20 at 64 and 0.951 at 128, for 0.04 ms more a search.
 */
export const HNSW_PARAMETERS = { m: 16, efConstruction: 100, efSearch: 128, initialCapacity: 1024, randomSeed: 100 } as const;

/** 2: int8 vectors (hnsw-int8); a format-1 file (hnswlib-node, float32) is discarded and rebuilt from SQLite. */
const SIDECAR_FORMAT = 2;

/** What is written beside the index: identifies it, and is the commit point of a save. */
interface Sidecar {
  format: number;
  model_id: string;
  dimension: number;
  /** Live vectors (deleted ones excluded). */
  count: number;
  /** Labels still in the graph but marked deleted: markDelete leaves them in the file. */
  deleted: number[];
  /** Data file of this save: `<file>.<generation>`; older generations are removed after the commit. */
  generation: number;
  bytes: number;
  m: number;
  ef_construction: number;
  saved_at: string;
}

interface OpenVectorIndexOptions {
  /** Base path beside the SQLite file, e.g. data/vectors.hnsw: `<file>.json` plus `<file>.<generation>`. */
  file: string;
  dimension: number;
  modelId: string;
  /**
   * Where each save reports (null: written). When given, a failed save resolves instead of rejecting:
   * the index is a cache of SQLite (a start re-embeds what the last save lacks), so a full disk must
   * not fail the indexing, deletion or shutdown that asked for the save.
   */
  onSaved?: (error: Error | null) => void;
}

/**
 * hnswlib's graph with int8 vectors (./hnsw-int8: 388 bytes per 384-d vector where hnswlib-node's
 * float32 takes 1,536; recall@10 0.991 against 0.996 on 100k vectors) behind the VectorIndex
 * interface, cosine. Remove uses markDelete and a later add reuses the freed slot
 * (allowReplaceDeleted), so deleting documents does not grow the file.
 */
class HnswVectorIndex implements VectorIndex {
  private readonly live: Set<number>;
  private saving: Promise<void> | null = null;
  /** Mutations made while a save is writing: applied when it finishes, so the writer never sees a moving graph. */
  private pending: Array<() => void> = [];

  private savedBytes: number;
  private generation: number;
  readonly dimension: number;
  readonly modelId: string;
  /** True when loaded from disk; false when created empty (nothing saved, or a file of another model discarded). */
  readonly restored: boolean;
  /** Why a file on disk was not loaded, for the caller's log; it must then rebuild from SQLite. */
  readonly discarded?: string;
  private readonly file: string;
  private readonly onSaved?: (error: Error | null) => void;

  private constructor(
    private readonly index: Hnsw,
    options: OpenVectorIndexOptions,
    state: { generation: number; live: Iterable<number>; savedBytes: number; restored: boolean; discarded?: string },
  ) {
    ({ dimension: this.dimension, modelId: this.modelId, file: this.file, onSaved: this.onSaved } = options);
    ({ generation: this.generation, savedBytes: this.savedBytes, restored: this.restored, discarded: this.discarded } = state);
    this.live = new Set(state.live);
  }

  static empty(options: OpenVectorIndexOptions, discarded?: string, generation = 0): HnswVectorIndex {
    const index = new Int8HnswIndex(options.dimension);
    const { m, efConstruction, initialCapacity, randomSeed } = HNSW_PARAMETERS;
    index.initIndex(initialCapacity, m, efConstruction, randomSeed, true);
    index.setEf(HNSW_PARAMETERS.efSearch);
    return new HnswVectorIndex(index, options, { generation, live: [], savedBytes: 0, restored: false, discarded });
  }

  static async load(options: OpenVectorIndexOptions, sidecar: Sidecar, savedBytes: number): Promise<HnswVectorIndex> {
    const index = new Int8HnswIndex(options.dimension);
    await index.readIndex(dataFile(options.file, sidecar.generation), true);
    const deleted = new Set(sidecar.deleted);
    const live = index.getIdsList().filter((label) => !deleted.has(label));
    if (live.length !== sidecar.count || index.getNumDimensions() !== options.dimension) throw new Error('index content does not match its sidecar');
    index.setEf(HNSW_PARAMETERS.efSearch);
    return new HnswVectorIndex(index, options, { generation: sidecar.generation, live, savedBytes, restored: true });
  }

  size(): number {
    return this.live.size;
  }

  has(label: number): boolean {
    return this.live.has(label);
  }

  labels(): number[] {
    return [...this.live];
  }

  add(labels: number[], vectors: Float32Array[], keys?: number[]): void {
    if (labels.length !== vectors.length || (keys && labels.length !== keys.length)) throw new Error(`add: ${labels.length} labels, ${vectors.length} vectors, ${keys?.length} keys`);
    for (const vector of vectors) this.checkVector(vector); // the whole batch before any of it goes in
    this.mutate(() => {
      this.ensureCapacity(labels.length);
      labels.forEach((label, i) => this.addOne(label, vectors[i]));
      if (keys) this.index.setKeys(labels, keys);
    });
  }

  setKeys(labels: number[], keys: number[]): void {
    this.mutate(() => this.index.setKeys(labels, keys));
  }

  remove(labels: number[]): void {
    this.mutate(() => {
      for (const label of labels) if (this.live.delete(label)) this.index.markDelete(label);
    });
  }

  // hnswlib walks with max(ef, n): efSearch, raised to the number of neighbours asked for.
  search(vector: Float32Array, k: number, allowedKeys?: Uint32Array): Array<{ label: number; score: number }> {
    const n = this.wanted(vector, k);
    return n ? scored(this.index.searchKnn(vector, n, allowedKeys)) : [];
  }

  async searchAsync(vector: Float32Array, k: number, allowedKeys?: Uint32Array): Promise<Array<{ label: number; score: number }>> {
    const n = this.wanted(vector, k);
    return n ? scored(await this.index.searchKnnAsync(vector, n, allowedKeys)) : [];
  }

  /** How many neighbours a search of k can return (0: none); checks the vector. */
  private wanted(vector: Float32Array, k: number): number {
    this.checkVector(vector);
    return Math.max(0, Math.min(Math.floor(k), this.live.size));
  }

  async save(): Promise<void> {
    while (this.saving) await this.saving;
    this.saving = this.writeAndReport().finally(() => {
      this.saving = null;
      const queued = this.pending;
      this.pending = [];
      for (const change of queued) change();
    });
    return this.saving;
  }

  /** The saved data file plus its sidecar. */
  diskBytes(): number {
    return this.savedBytes;
  }

  /** A failed save leaves the previous one in force; with onSaved given, it is reported there instead of thrown. */
  private async writeAndReport(): Promise<void> {
    try {
      await this.write();
    } catch (error) {
      if (!this.onSaved) throw error;
      this.onSaved(error as Error);
      return;
    }
    this.onSaved?.(null);
  }

  private async write(): Promise<void> {
    const generation = this.generation + 1;
    const target = dataFile(this.file, generation);
    const temp = `${sidecarFile(this.file)}.tmp`;
    let bytes: number;
    let text: string;
    try {
      ({ bytes, text } = await this.writeFiles(generation, target, temp));
      await rename(temp, sidecarFile(this.file)); // the commit point: before it the previous save is in force
    } catch (error) {
      throw await abandonSave([target, temp], error);
    }
    await fsync(path.dirname(this.file));
    this.generation = generation;
    this.savedBytes = bytes + Buffer.byteLength(text);
    await removeOtherGenerations(this.file, generation);
  }

  /** The data file of this generation and the sidecar that will commit it, both synced. */
  private async writeFiles(generation: number, target: string, temp: string): Promise<{ bytes: number; text: string }> {
    const deleted = this.index.getIdsList().filter((label) => !this.live.has(label));
    await this.index.writeIndex(target);
    await fsync(target);
    const bytes = (await stat(target)).size;
    const sidecar: Sidecar = {
      format: SIDECAR_FORMAT,
      model_id: this.modelId,
      dimension: this.dimension,
      count: this.live.size,
      deleted,
      generation,
      bytes,
      m: HNSW_PARAMETERS.m,
      ef_construction: HNSW_PARAMETERS.efConstruction,
      saved_at: new Date().toISOString(),
    };
    const text = JSON.stringify(sidecar);
    await writeFile(temp, text);
    await fsync(temp);
    return { bytes, text };
  }

  private mutate(change: () => void): void {
    if (this.saving) this.pending.push(change);
    else change();
  }

  private addOne(label: number, point: Float32Array): void {
    if (this.live.has(label)) {
      this.index.addPoint(point, label); // replaces the vector in place
    } else if (this.index.getCurrentCount() > this.live.size) {
      // Some slots are marked deleted: revive this label's own slot if it has one, else take a free one.
      try {
        this.index.unmarkDelete(label);
        this.index.addPoint(point, label);
      } catch {
        this.index.addPoint(point, label, true);
      }
    } else {
      this.index.addPoint(point, label, true);
    }
    this.live.add(label);
  }

  private ensureCapacity(extra: number): void {
    const needed = this.index.getCurrentCount() + extra;
    const capacity = this.index.getMaxElements();
    if (needed > capacity) this.index.resizeIndex(Math.max(needed, capacity * 2));
  }

  private checkVector(vector: Float32Array): void {
    if (vector.length !== this.dimension) throw new Error(`vector has ${vector.length} dimensions, the index ${this.dimension}`);
    if (!vector.every(Number.isFinite)) throw new Error('vector has a non-finite component');
  }
}

const sidecarFile = (file: string) => `${file}.json`;
const dataFile = (file: string, generation: number) => `${file}.${generation}`;

async function fsync(target: string): Promise<void> {
  const handle = await open(target, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * A save that failed before its commit: its partial files are removed (on a full disk they hold the
 * space) and the error says why in words. The addon's write error names no cause; a filesystem with
 * no block left is the usual one, so that is checked before the partial files free some.
 */
async function abandonSave(files: string[], cause: unknown): Promise<Error> {
  const space = await statfs(path.dirname(files[0])).catch(() => null);
  await Promise.all(files.map((file) => rm(file, { force: true })));
  const full = (cause as NodeJS.ErrnoException).code === 'ENOSPC' || space?.bavail === 0;
  const error = new Error(`the vector index could not be saved to ${files[0]}: ${full ? 'the disk is full' : (cause as Error).message}`, { cause });
  return full ? Object.assign(error, { code: 'ENOSPC' }) : error;
}

const scored = ({ neighbors, distances }: { neighbors: number[]; distances: number[] }) => neighbors.map((label, i) => ({ label, score: 1 - distances[i] }));

/** Data files of earlier saves, or of a save that crashed before its commit. */
async function removeOtherGenerations(file: string, keep: number): Promise<void> {
  const base = path.basename(file);
  const names = await readdir(path.dirname(file)).catch(() => [] as string[]);
  for (const name of names) {
    const suffix = name.startsWith(`${base}.`) ? name.slice(base.length + 1) : '';
    if (/^\d+$/.test(suffix) && Number(suffix) !== keep) await rm(path.join(path.dirname(file), name), { force: true });
  }
}

/** The sidecar and its size in bytes; a sidecar that cannot be parsed comes back with format -1. */
async function readSidecar(file: string): Promise<{ sidecar: Sidecar; bytes: number } | null> {
  let text: string;
  try {
    text = await readFile(sidecarFile(file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    return { sidecar: JSON.parse(text) as Sidecar, bytes: Buffer.byteLength(text) };
  } catch {
    return { sidecar: { format: -1 } as Sidecar, bytes: 0 };
  }
}

/**
 * Loads the saved index of this model and dimension, or starts an empty one. A file of another
 * model or dimension, or one that does not match its sidecar, is never loaded as this one: the
 * result is empty with `discarded` saying why, and the caller rebuilds from SQLite.
 */
export async function openVectorIndex(options: OpenVectorIndexOptions): Promise<HnswVectorIndex> {
  const saved = await readSidecar(options.file);
  if (!saved) return HnswVectorIndex.empty(options);
  const { sidecar } = saved;
  const next = Number.isInteger(sidecar.generation) ? sidecar.generation : 0;
  let problem: string | null = null;
  if (sidecar.format !== SIDECAR_FORMAT) problem = 'unreadable or unknown sidecar';
  else if (sidecar.model_id !== options.modelId) problem = `saved for model ${sidecar.model_id}, not ${options.modelId}`;
  else if (sidecar.dimension !== options.dimension) problem = `saved with dimension ${sidecar.dimension}, not ${options.dimension}`;
  else {
    const bytes = await stat(dataFile(options.file, sidecar.generation)).then((s) => s.size, () => -1);
    if (bytes !== sidecar.bytes) problem = bytes < 0 ? 'data file missing' : 'data file size does not match its sidecar';
  }
  if (problem) return HnswVectorIndex.empty(options, problem, next);
  try {
    return await HnswVectorIndex.load(options, sidecar, sidecar.bytes + saved.bytes);
  } catch (error) {
    return HnswVectorIndex.empty(options, `unreadable: ${(error as Error).message}`, next);
  }
}
