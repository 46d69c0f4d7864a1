import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../core/db/database.js';
import type { Embedder } from '../../native/embeddings/embedder.js';
import type { VectorIndex } from '../../native/vector-index/vector-index.js';
import { clock } from '../../core/clock.js';
import type { ChunkMetadataRepository, DocumentMetadata } from './chunk-metadata-repository.js';
import type { ChunksRepository, NewChunk } from './chunks-repository.js';
import type { ActiveEmbedding } from './active-embedding.js';
import type { DocumentKeywords } from './document-keywords.sqlite.js';

/**
 * A vector-index save writes the whole file (and fsyncs it): saving after every document made
 * ingesting many small files quadratic (1,000 notes: two thirds of the time). Saves are spaced out
 * instead, at most one per interval and never more than a tenth of the time, the last one shortly
 * after indexing stops. A crash in between loses only vectors: SQLite keeps the chunks, and the next
 * start re-embeds those whose vector is missing (IndexAdmin.open, then embedPending).
 */
const VECTOR_SAVE_INTERVAL_MS = 5_000;
const VECTOR_SAVE_MAX_SHARE = 0.1;

/**
 * The search index's writes, in one place: chunk rows (their keyword rows follow them by trigger)
 * and their vectors, added and removed together. The vector file is saved from here only: spaced
 * out while documents are indexed, at once after a removal, and at shutdown.
 */
export class IndexStore {
  private dirty = false;
  private lastSave = { at: performance.now(), ms: 0 };
  private saveTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly chunks: ChunksRepository,
    private readonly activeEmbedding: ActiveEmbedding,
    private readonly log: FastifyBaseLogger,
    private readonly metadata: ChunkMetadataRepository,
    private readonly documentKeywords: DocumentKeywords,
  ) {}

  /** The embedder in force; null without a model (chunks are then written for keyword search alone). */
  embedder(): Embedder | null {
    return this.activeEmbedding.embedder();
  }

  /** The vector index in force: a document's vectors all go to the one in force when its writing started. */
  vectors(): VectorIndex | null {
    return this.activeEmbedding.vectors();
  }

  /** The ids of a document's chunks in order, with the model that embedded each (null: not embedded). */
  chunkIdsOf(documentId: string): Promise<Array<{ rowid: number; id: string; embedded_with: string | null }>> {
    return this.chunks.idsOf(documentId);
  }

  /** The access keys of chunks (their document's), for an index built outside the store (a rebuild). */
  keysOf(rowids: number[]): Promise<number[]> {
    return this.chunks.keysOf(rowids);
  }

  /** Replaces the metadata values of a document's chunks (metadata rules); no vector changes. */
  replaceMetadata(metadata: DocumentMetadata): Promise<void> {
    return this.metadata.replace(metadata, clock.now());
  }

  /** The chunk boundaries a document was last chunked under; undefined when never labelled. */
  boundaryKeyOf(documentId: string): Promise<string | undefined> {
    return this.metadata.boundaryKeyOf(documentId);
  }

  /** A document's chunks in order, as metadata rules read them. */
  chunkTextsOf(documentId: string): Promise<Array<{ rowid: number; text: string; heading: string | null }>> {
    return this.metadata.chunksOf(documentId);
  }

  /** Once all of a document's chunks are written: its row in the keyword index of whole documents (kept if it has one). */
  indexDocumentText(documentId: string): Promise<void> {
    return this.documentKeywords.index(documentId);
  }

  /** Writes a batch of chunk rows (and so their keyword rows); returns their rowids in input order. */
  insertChunks(chunks: NewChunk[]): Promise<number[]> {
    return this.chunks.insertBatch(chunks);
  }

  /**
   * Adds the vectors of chunks already written and records the model on them. A chunk deleted while
   * it was being embedded (the deleter's remove came before this add) loses its vector again.
   */
  async addVectors(target: VectorIndex, rowids: number[], vectors: Float32Array[], modelId: string): Promise<void> {
    target.add(rowids, vectors, await this.chunks.keysOf(rowids));
    this.dirty = true;
    const kept = await this.chunks.markEmbedded(rowids, modelId);
    if (kept.length === rowids.length) return;
    const still = new Set(kept);
    target.remove(rowids.filter((rowid) => !still.has(rowid)));
  }

  /** Removes a document's chunks and their vectors (it failed, or is written again); the next save writes the change. */
  async discardDocument(documentId: string): Promise<void> {
    this.removeVectors(await this.chunks.deleteOf(documentId));
  }

  /**
   * Removes documents from the index and saves it. `removeDocuments` deletes the documents themselves
   * in the same transaction that lists their chunks, so that no chunk of theirs is written in between
   * (the documents' rows take their chunk rows with them).
   */
  async removeDocuments<T>(documentIds: string[], removeDocuments: (db: Db) => Promise<T>): Promise<T> {
    const { result, rowids } = await this.chunks.deleteWithDocuments(documentIds, removeDocuments);
    if (rowids.length && this.removeVectors(rowids)) await this.flush();
    return result;
  }

  /** After a document's vectors changed: save now if the last save is old enough, else once it is. */
  async changed(): Promise<void> {
    this.dirty = true;
    const wait = this.lastSave.at + Math.max(VECTOR_SAVE_INTERVAL_MS, this.lastSave.ms / VECTOR_SAVE_MAX_SHARE) - performance.now();
    if (wait <= 0) return this.flush();
    this.saveTimer ??= setTimeout(() => {
      this.saveTimer = null;
      this.flush().catch((error: unknown) => this.log.error({ err: error }, 'saving the vector index failed; the next start repairs it from the database'));
    }, wait).unref();
  }

  /** Writes the vector index in force now if it changed since the last save (removals and shutdown). */
  async flush(): Promise<void> {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    const vectors = this.activeEmbedding.vectors();
    if (!this.dirty || !vectors) return;
    this.dirty = false;
    const started = performance.now();
    await vectors.save();
    this.lastSave = { at: performance.now(), ms: performance.now() - started };
  }

  /** Writes an index now: one being built or repaired before it is put in force, or the one in force after a background pass. */
  async save(vectors: VectorIndex): Promise<void> {
    if (vectors !== this.activeEmbedding.vectors()) return vectors.save();
    this.dirty = true;
    await this.flush();
  }

  private removeVectors(rowids: number[]): boolean {
    const vectors = this.activeEmbedding.vectors();
    if (!vectors || rowids.length === 0) return false;
    vectors.remove(rowids);
    this.dirty = true;
    return true;
  }
}
