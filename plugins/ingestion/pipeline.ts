import type { FastifyBaseLogger } from 'fastify';
import { clock } from '../../core/clock.js';
import type { Job } from '../../core/jobs/job.js';
import { type JobContext, JobCancelled, type JobRunner } from '../../core/jobs/runner.js';
import type { SettingsStore } from '../../core/settings/store.js';
import type { Embedder } from '../../native/embeddings/embedder.js';
import type { DocumentRow } from '../documents/repository.js';
import type { DocumentsService } from '../documents/service.js';
import type { SearchIndex } from '../index/search-index.js';
import { type ChunkDraft, chunkDocument, chunkId } from './chunker.js';
import { type ChunksRepository, dropVanished, type NewChunk } from './chunks-repository.js';
import { ExtractionError } from './extracted-document.js';
import type { ExtractionPool } from './extraction-pool.js';
import type { FileType } from './file-type.js';

declare module 'fastify' {
  interface FastifyInstance {
    ingestion: IngestionPipeline;
  }
}

export interface PipelineOptions {
  upsertBatchSize: number;
  tablesEnabled: boolean;
  ocrEnabled: boolean;
}

/** Chunk size when no embedding model bounds it: MiniLM-class models read 256 tokens. */
const DEFAULT_CHUNK_TOKENS = 256;
const OVERLAP_RATIO = 0.12;

/**
 * A vector-index save writes the whole file (and fsyncs it): saving after every document made
 * ingesting many small files quadratic (1,000 notes: two thirds of the time). Saves are spaced out
 * instead, at most one per interval and never more than a tenth of the time, the last one shortly
 * after indexing stops. A crash in between loses only vectors: SQLite keeps the chunks, and the next
 * start re-embeds those whose vector is missing (IndexService.open, then embedPending).
 */
const VECTOR_SAVE_INTERVAL_MS = 5_000;
const VECTOR_SAVE_MAX_SHARE = 0.1;

/** Without a model's tokenizer, WordPiece averages about 1.3 tokens per English word. */
function estimateTokens(text: string): number {
  let words = 0;
  for (const word of text.split(/\s+/)) if (word) words++;
  return Math.ceil(words * 1.3);
}

const WORD_CACHE_LIMIT = 200_000;
const wordCaches = new WeakMap<Embedder, Map<string, number>>();

/**
 * The embedder's token count, with single words cached across documents: the chunker's token meter
 * counts each distinct word of a document once, which for many small files meant a tokenizer call
 * per word per file (93,000 calls for 1,000 short notes; 3,000 with the cache). A word's count never changes.
 */
function wordCachedCounter(embedder: Embedder): (text: string) => number {
  let cache = wordCaches.get(embedder);
  if (!cache) wordCaches.set(embedder, (cache = new Map()));
  const words = cache;
  return (text) => {
    if (text.length > 48 || /\s/.test(text)) return embedder.countTokens(text);
    let tokens = words.get(text);
    if (tokens === undefined) {
      if (words.size >= WORD_CACHE_LIMIT) words.clear();
      tokens = embedder.countTokens(text);
      words.set(text, tokens);
    }
    return tokens;
  };
}

/**
 * Turns stored documents into indexed chunks: extract (worker pool) -> chunk (the embedder's own
 * tokenizer) -> write chunk rows and their vectors in batches. A document either ends indexed
 * or failed with a reason, never half-indexed: on any failure its chunks and vectors are removed.
 */
export class IngestionPipeline {
  private vectorsDirty = false;
  private lastSave = { at: performance.now(), ms: 0 };
  private saveTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly documents: DocumentsService,
    private readonly chunks: ChunksRepository,
    private readonly pool: ExtractionPool,
    private readonly searchIndex: SearchIndex,
    private readonly jobs: JobRunner,
    private readonly settings: SettingsStore,
    private readonly options: PipelineOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** One job that indexes the documents in order. */
  enqueue(documentIds: string[], type = 'ingest'): Promise<Job> {
    return this.jobs.enqueue(type, (context) => this.run(documentIds, context), { document_ids: documentIds });
  }

  /** Indexes documents inside a job another feature already runs (a connector scan), so one job covers the whole sync. */
  ingestWithin(documentIds: string[], context: JobContext): Promise<void> {
    return this.run(documentIds, context);
  }

  /** After a crash: documents caught mid-indexing lose their partial chunks and, with the queued ones, are indexed again. */
  async resumeInterrupted(): Promise<Job | undefined> {
    const stuck = await this.documents.repository.findByStatus(['indexing', 'queued']);
    if (stuck.length === 0) return undefined;
    for (const document of stuck.filter((d) => d.status === 'indexing')) await this.discardChunks(document.id);
    this.log.warn({ documents: stuck.length }, 'resuming documents interrupted by a restart');
    return this.enqueue(stuck.map((document) => document.id), 'ingest.resume');
  }

  async deleteDocuments(ids: string[]): Promise<{ deleted: DocumentRow[] }> {
    const { deleted, chunkRowids } = await this.documents.delete(ids);
    const vectors = this.searchIndex.vectors();
    if (vectors && chunkRowids.length) {
      vectors.remove(chunkRowids);
      this.vectorsDirty = true;
      await this.saveVectors();
    }
    return { deleted };
  }

  /** Writes the vector index now if the pipeline changed it since the last save (shutdown calls it). */
  async saveVectors(): Promise<void> {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    const vectors = this.searchIndex.vectors();
    if (!this.vectorsDirty || !vectors) return;
    this.vectorsDirty = false;
    const started = performance.now();
    await vectors.save();
    this.lastSave = { at: performance.now(), ms: performance.now() - started };
  }

  /** After a document's vectors changed: save now if the last save is old enough, else once it is. */
  private async vectorsChanged(): Promise<void> {
    this.vectorsDirty = true;
    const wait = this.lastSave.at + Math.max(VECTOR_SAVE_INTERVAL_MS, this.lastSave.ms / VECTOR_SAVE_MAX_SHARE) - performance.now();
    if (wait <= 0) return this.saveVectors();
    this.saveTimer ??= setTimeout(() => {
      this.saveTimer = null;
      this.saveVectors().catch((error: unknown) => this.log.error({ err: error }, 'saving the vector index failed; the next start repairs it from the database'));
    }, wait).unref();
  }

  private async run(documentIds: string[], context: JobContext): Promise<void> {
    let done = 0;
    for (const id of documentIds) {
      await context.progress(done, documentIds.length, id);
      const document = await this.documents.repository.findById(id);
      if (document) {
        try {
          await this.ingestDocument(document, context);
        } catch (error) {
          if (!(error instanceof JobCancelled)) throw error;
          await this.markCancelled(documentIds.slice(done));
          throw error;
        }
      }
      done++;
    }
    await context.progress(done, documentIds.length);
  }

  private async ingestDocument(document: DocumentRow, context: JobContext): Promise<void> {
    const file = this.documents.storagePathOf(document);
    await this.documents.repository.update(document.id, { status: 'indexing', error: null, updated_at: clock.now() });
    try {
      if (!file) throw new ExtractionError('unsupported', 'The original file of this document is not stored');
      const extracted = await this.pool.extract(file, document.file_type as FileType, { tablesEnabled: this.options.tablesEnabled, ocrEnabled: this.options.ocrEnabled });
      context.checkpoint();
      const embedder = this.searchIndex.embedder();
      const drafts = chunkDocument(extracted, this.chunkOptions(embedder));
      if (drafts.length === 0) throw new ExtractionError('empty', 'No text long enough to index was found in this document');
      const chunkCount = await this.writeChunks(document, drafts, embedder, context);
      await this.documents.repository.update(document.id, {
        status: 'indexed',
        page_count: extracted.pageCount ?? null,
        chunk_count: chunkCount,
        indexed_at: clock.now(),
        updated_at: clock.now(),
        ...(extracted.title ? { metadata: JSON.stringify({ title: extracted.title }) } : {}),
      });
    } catch (error) {
      await this.discardChunks(document.id);
      if (error instanceof JobCancelled) throw error;
      const reason = error instanceof ExtractionError ? error.message : 'Indexing failed unexpectedly; see the service log';
      if (!(error instanceof ExtractionError)) this.log.error({ err: error, document: document.id }, 'indexing failed');
      await this.documents.repository.update(document.id, { status: 'failed', error: reason, updated_at: clock.now() });
    }
  }

  private chunkOptions(embedder: Embedder | null) {
    const maxTokens = embedder ? Math.min(DEFAULT_CHUNK_TOKENS, embedder.maxTokens - 2) : DEFAULT_CHUNK_TOKENS;
    return {
      maxTokens,
      overlapTokens: Math.round(maxTokens * OVERLAP_RATIO),
      minChars: this.settings.seed('RAG_MIN_CHUNK_LENGTH'),
      countTokens: embedder ? wordCachedCounter(embedder) : estimateTokens,
    };
  }

  /** Unchanged content (same chunk ids, already embedded with the model in force) is a no-op. */
  private async writeChunks(document: DocumentRow, drafts: ChunkDraft[], embedder: Embedder | null, context: JobContext): Promise<number> {
    const ids = drafts.map((draft) => chunkId(document.sha256, draft.ordinal, draft.text));
    const existing = await this.chunks.idsOf(document.id);
    const modelId = embedder?.modelId ?? null;
    const unchanged = existing.length === ids.length && existing.every((row, i) => row.id === ids[i] && (modelId === null || row.embedded_with === modelId));
    if (unchanged) return ids.length;

    if (existing.length > 0) await this.discardChunks(document.id);
    const vectors = this.searchIndex.vectors();
    const now = clock.now();
    for (let start = 0; start < drafts.length; start += this.options.upsertBatchSize) {
      context.checkpoint();
      const batch = drafts.slice(start, start + this.options.upsertBatchSize);
      const rowids = await this.chunks.insertBatch(batch.map((draft, i): NewChunk => ({
        id: ids[start + i],
        document_id: document.id,
        ordinal: draft.ordinal,
        text: draft.text,
        page: draft.page ?? null,
        heading: draft.heading ?? null,
        sheet: draft.sheet ?? null,
        row: draft.row ?? null,
        char_count: draft.text.length,
        token_count: draft.tokenCount,
        metadata: '{}',
        embedded_with: null,
        created_at: now,
      })));
      if (embedder && vectors) {
        vectors.add(rowids, await embedder.embed(batch.map((draft) => draft.text)));
        dropVanished(vectors, rowids, await this.chunks.markEmbedded(rowids, embedder.modelId));
      }
    }
    if (vectors) await this.vectorsChanged();
    return drafts.length;
  }

  private async discardChunks(documentId: string): Promise<void> {
    const rowids = await this.chunks.deleteOf(documentId);
    const vectors = this.searchIndex.vectors();
    if (vectors && rowids.length) {
      vectors.remove(rowids);
      this.vectorsDirty = true;
    }
  }

  private async markCancelled(documentIds: string[]): Promise<void> {
    for (const id of documentIds) {
      const document = await this.documents.repository.findById(id);
      if (document && document.status !== 'indexed' && document.status !== 'failed') {
        await this.documents.repository.update(id, { status: 'failed', error: 'Indexing was cancelled', updated_at: clock.now() });
      }
    }
  }
}
