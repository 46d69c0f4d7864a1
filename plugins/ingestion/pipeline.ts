import type { FastifyBaseLogger } from 'fastify';
import { clock } from '../../core/clock.js';
import type { Job } from '../../core/jobs/job.js';
import { type JobContext, JobCancelled, type JobRunner } from '../../core/jobs/runner.js';
import type { SettingsStore } from '../../core/settings/store.js';
import type { Embedder } from '../../native/embeddings/index.js';
import { type DocumentRow, type DocumentsService, type FileType, type PageWarning, UNEXPECTED_REASON } from '../documents/index.js';
import type { DocumentMetadata, IndexStore, NewChunk } from '../search-index/index.js';
import { type ChunkDraft, chunkDocument, chunkId } from './chunker.js';
import { LOW_CONFIDENCE } from './extract/ocr-pages.js';
import { type ExtractedDocument, type ExtractedSection, ExtractionError, type ExtractOptions } from './extracted-document.js';
import type { ExtractionPool } from './extraction-pool.js';

declare module 'fastify' {
  interface FastifyInstance {
    ingestion: IngestionPipeline;
  }
}

interface PipelineOptions {
  upsertBatchSize: number;
  /** INDEXING_TABLES_ENABLED, INDEXING_OCR_ENABLED and the OCR languages resolved at boot. */
  extract: ExtractOptions;
}

/** A document's metadata rules (the metadata-rules plugin): chunk boundaries, then values per chunk. */
export interface DocumentRules {
  /** Identifies the boundaries `split` applies ('' for none): a document chunked under another key must be chunked again. */
  boundaryKey: string;
  split(sections: ExtractedSection[]): ExtractedSection[];
  label(filename: string, chunks: Array<{ text: string; heading?: string | null }>): Pick<DocumentMetadata, 'values' | 'hits'>;
}

/** The rules in force for a document; null when none apply (no rules, or the plan no longer includes them). */
export type RulesLookup = (document: DocumentRow) => Promise<DocumentRules | null>;

/** Chunk size when no embedding model bounds it: MiniLM-class models read 256 tokens. */
const DEFAULT_CHUNK_TOKENS = 256;
const OVERLAP_RATIO = 0.12;

/**
 * Documents after the one being written that are already extracted, chunked and queued for
 * embedding (those of the same job, then those of the ingest jobs queued after it): the embedder
 * never waits for the next document's extraction, SQLite writes or job bookkeeping.
 */
const LOOKAHEAD_DOCUMENTS = 8;

/** A document extracted and chunked ahead of its turn, its vectors requested; nothing of it is written yet. */
interface Prepared {
  /** What was extracted: the document must still have this content and file when its turn comes. */
  sha256: string;
  file: string;
  pageCount: number | null;
  title?: string;
  pageWarnings: PageWarning[];
  /** OCR confidence of each page read by OCR. */
  ocrConfidence: Map<number, number>;
  drafts: ChunkDraft[];
  ids: string[];
  /** What the metadata rules gave each chunk. */
  metadata: Pick<DocumentMetadata, 'values' | 'hits' | 'boundaryKey'>;
  embedder: Embedder | null;
  /** Vectors of the drafts, one request per batch of rows written; none requested when the stored chunks were already these. */
  batches: Array<Promise<Float32Array[]>>;
}

/** Without a model's tokenizer, WordPiece averages about 1.3 tokens per English word. */
function estimateTokens(text: string): number {
  let words = 0;
  for (const word of text.split(/\s+/)) if (word) words++;
  return Math.ceil(words * 1.3);
}

/**
 * The indexing worker: turns stored documents into indexed chunks: extract (worker pool) -> chunk
 * (the embedder's own tokenizer) -> write chunk rows and their vectors in batches through the index's
 * store, reporting each document's progress to the documents plugin. A document either ends indexed
 * or failed with a reason, never half-indexed: on any failure its chunks and vectors are removed.
 */
export class IngestionPipeline {
  private readonly prepared = new Map<string, Promise<Prepared>>();
  /** Aborts the embedding requests of each document prepared (the embedder drops what it has not run). */
  private readonly embedding = new Map<string, AbortController>();
  /** Token counts of words, one cache per tokenizer, kept across documents. */
  private readonly wordTokens = new WeakMap<Embedder, Map<string, number>>();
  /** The documents of each ingest job enqueued and not started yet, in job order. */
  private readonly upcoming: string[][] = [];
  private rulesFor: RulesLookup = async () => null;
  /** The document whose turn it is and its job: pages read of it show in the job's progress. */
  private current?: { documentId: string; context: JobContext };

  constructor(
    private readonly documents: DocumentsService,
    private readonly store: IndexStore,
    private readonly pool: ExtractionPool,
    private readonly jobs: JobRunner,
    private readonly settings: SettingsStore,
    private readonly options: PipelineOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Metadata rules plug in here: they split documents before chunking and label the chunks. */
  useRules(lookup: RulesLookup): void {
    this.rulesFor = lookup;
  }

  /** One job that indexes the documents in order. */
  enqueue(documentIds: string[], type = 'ingest'): Promise<Job> {
    this.upcoming.push(documentIds);
    return this.jobs.enqueue(type, (context) => this.run(documentIds, context, true), { document_ids: documentIds }, () => this.cancelledUnstarted(documentIds));
  }

  /** A job cancelled before its turn: nothing is prepared for it any more, and its documents say why they are not indexed. */
  private async cancelledUnstarted(documentIds: string[]): Promise<void> {
    const at = this.upcoming.indexOf(documentIds);
    if (at >= 0) this.upcoming.splice(at, 1);
    this.forget(documentIds);
    await this.documents.cancelled(documentIds);
  }

  /** Indexes documents inside a job another feature already runs (a connector scan), so one job covers the whole sync. */
  ingestWithin(documentIds: string[], context: JobContext): Promise<void> {
    return this.run(documentIds, context);
  }

  /** After a crash: documents caught mid-indexing lose their partial chunks and, with the queued ones, are indexed again. */
  async resumeInterrupted(): Promise<Job | undefined> {
    const stuck = await this.documents.unfinished();
    if (stuck.length === 0) return undefined;
    for (const document of stuck.filter((d) => d.status === 'indexing')) await this.discardChunks(document.id);
    this.log.warn({ documents: stuck.length }, 'resuming documents interrupted by a restart');
    return this.enqueue(stuck.map((document) => document.id), 'ingest.resume');
  }

  private async run(documentIds: string[], context: JobContext, queued = false): Promise<void> {
    if (queued) this.upcoming.splice(0, this.upcoming.indexOf(documentIds) + 1);
    let done = 0;
    try {
      for (const id of documentIds) {
        await context.progress(done, documentIds.length, id);
        const document = await this.documents.find(id);
        const prepared = document ? this.take(document) : null;
        this.lookAhead(documentIds.slice(done + 1));
        if (document && prepared) {
          try {
            await this.ingestDocument(document, prepared, context);
          } catch (error) {
            if (!(error instanceof JobCancelled)) throw error;
            // A stop of the service leaves them queued: the next start resumes them (resumeInterrupted).
            if (!context.interrupted()) await this.documents.cancelled(documentIds.slice(done));
            throw error;
          }
        }
        done++;
      }
      await context.progress(done, documentIds.length);
    } finally {
      this.forget(documentIds.slice(done));
    }
  }

  /** The document's preparation started ahead of its turn, or a new one (awaited after the status write: never unhandled meanwhile). */
  private take(document: DocumentRow): Promise<Prepared> {
    const ahead = this.prepared.get(document.id);
    this.prepared.delete(document.id);
    if (ahead) return ahead;
    const prepared = this.prepare(document);
    prepared.catch(() => undefined);
    return prepared;
  }

  /** Prepares the next documents (the rest of this job, then the queued jobs'), and forgets any prepared before that fell out of sight. */
  private lookAhead(rest: string[]): void {
    const next = rest.slice(0, LOOKAHEAD_DOCUMENTS);
    for (const ids of this.upcoming) {
      if (next.length === LOOKAHEAD_DOCUMENTS) break;
      next.push(...ids.slice(0, LOOKAHEAD_DOCUMENTS - next.length));
    }
    const wanted = new Set(next);
    this.forget([...this.prepared.keys()].filter((id) => !wanted.has(id)));
    for (const id of next) {
      if (this.prepared.has(id)) continue;
      const prepared = this.documents.find(id).then((document) => (document ? this.prepare(document) : Promise.reject(new Error('document deleted'))));
      prepared.catch(() => undefined); // its turn reports the failure (or it is forgotten)
      this.prepared.set(id, prepared);
    }
  }

  /** Drops what was prepared for these documents, and the texts of theirs the embedder has not run yet. */
  private forget(documentIds: string[]): void {
    for (const id of documentIds) {
      this.prepared.delete(id);
      this.embedding.get(id)?.abort();
      this.embedding.delete(id);
    }
  }

  /** Extracts and chunks the document, and requests its vectors unless it is unchanged. */
  private async prepare(document: DocumentRow): Promise<Prepared> {
    const file = this.documents.storagePathOf(document);
    if (!file) throw new ExtractionError('unsupported', 'The original file of this document is not stored');
    const onPage = (done: number, total: number) => {
      if (this.current?.documentId === document.id) void this.current.context.pages(done, total).catch(() => undefined);
    };
    const extracted = await this.pool.extract(file, document.file_type as FileType, this.options.extract, onPage);
    const embedder = this.store.embedder();
    const rules = await this.rulesFor(document);
    const sections = rules ? rules.split(extracted.sections) : extracted.sections;
    const drafts = chunkDocument({ ...extracted, sections }, this.chunkOptions(embedder));
    if (drafts.length === 0) throw new ExtractionError('empty', 'No text long enough to index was found in this document');
    const labels = rules ? rules.label(document.filename, drafts) : { values: drafts.map(() => []), hits: drafts.map(() => []) };
    const metadata = { ...labels, boundaryKey: rules?.boundaryKey ?? '' };
    const ids = drafts.map((draft) => chunkId(document, draft.ordinal, draft.text));
    const unchanged = sameChunks(await this.store.chunkIdsOf(document.id), ids, embedder);
    const batches = embedder && !unchanged ? this.requestVectors(document.id, embedder, drafts) : [];
    const ocrConfidence = new Map((extracted.ocrPages ?? []).map((page) => [page.page, page.confidence]));
    const pageWarnings = pageWarningsOf(extracted);
    return { sha256: document.sha256, file, pageCount: extracted.pageCount ?? null, title: extracted.title, pageWarnings, ocrConfidence, drafts, ids, metadata, embedder, batches };
  }

  /**
   * Asks the embedder for the vectors of each batch of rows writeChunks will write, all at once: it
   * batches them with other documents' in the order asked, and answers a search query first.
   */
  private requestVectors(documentId: string, embedder: Embedder, drafts: ChunkDraft[]): Array<Promise<Float32Array[]>> {
    this.embedding.get(documentId)?.abort();
    const abort = new AbortController();
    this.embedding.set(documentId, abort);
    const batches: Array<Promise<Float32Array[]>> = [];
    for (let start = 0; start < drafts.length; start += this.options.upsertBatchSize) {
      const vectors = embedder.embed(drafts.slice(start, start + this.options.upsertBatchSize).map((draft) => draft.text), { signal: abort.signal });
      vectors.catch(() => undefined); // awaited in its turn, or never (its document forgotten)
      batches.push(vectors);
    }
    return batches;
  }

  private async ingestDocument(document: DocumentRow, ahead: Promise<Prepared>, context: JobContext): Promise<void> {
    await this.documents.startIndexing(document.id);
    this.current = { documentId: document.id, context };
    try {
      let prepared = await ahead;
      // Changed since it was prepared (new content, another model in force): prepared again.
      const current = { sha256: document.sha256, file: this.documents.storagePathOf(document), embedder: this.store.embedder() };
      if (prepared.sha256 !== current.sha256 || prepared.file !== current.file || prepared.embedder !== current.embedder) {
        this.forget([document.id]);
        prepared = await this.prepare(document);
      }
      context.checkpoint();
      const chunkCount = await this.writeChunks(document, prepared, context);
      this.embedding.delete(document.id);
      await this.documents.indexed(document.id, { pageCount: prepared.pageCount, chunkCount, title: prepared.title, pageWarnings: prepared.pageWarnings });
    } catch (error) {
      this.forget([document.id]);
      await this.discardChunks(document.id);
      // A stop of the service is no fault of the document: it is queued again for the next start.
      if (context.interrupted()) await this.documents.interrupted(document.id);
      if (error instanceof JobCancelled || context.interrupted()) throw error;
      const reason = error instanceof ExtractionError ? error.message : UNEXPECTED_REASON;
      if (!(error instanceof ExtractionError)) this.log.error({ err: error, document: document.id }, 'indexing failed');
      await this.documents.failed(document.id, reason);
    } finally {
      this.current = undefined;
    }
  }

  private chunkOptions(embedder: Embedder | null) {
    const maxTokens = embedder ? Math.min(DEFAULT_CHUNK_TOKENS, embedder.maxTokens - 2) : DEFAULT_CHUNK_TOKENS;
    return {
      maxTokens,
      overlapTokens: Math.round(maxTokens * OVERLAP_RATIO),
      minChars: this.settings.current('RAG_MIN_CHUNK_LENGTH'),
      countTokens: embedder ? (text: string) => embedder.countTokens(text) : estimateTokens,
      ...(embedder ? { wordTokens: this.wordTokensOf(embedder) } : {}),
    };
  }

  private wordTokensOf(embedder: Embedder): Map<string, number> {
    let cache = this.wordTokens.get(embedder);
    if (!cache) this.wordTokens.set(embedder, (cache = new Map()));
    return cache;
  }

  /**
   * Writes the chunk rows a batch at a time, each batch's vectors once they come (the embedder works
   * on the next batches meanwhile). Unchanged content (same chunk ids, already embedded with the
   * model in force) is a no-op.
   */
  private async writeChunks(document: DocumentRow, prepared: Prepared, context: JobContext): Promise<number> {
    const { drafts, ids, embedder } = prepared;
    const existing = await this.store.chunkIdsOf(document.id);
    if (sameChunks(existing, ids, embedder)) {
      await this.store.replaceMetadata({ documentId: document.id, rowids: existing.map((row) => row.rowid), ...prepared.metadata });
      await this.store.indexDocumentText(document.id);
      return ids.length;
    }

    // Stored chunks changed since the document was prepared as unchanged: its vectors were not requested.
    if (embedder && prepared.batches.length === 0) prepared.batches = this.requestVectors(document.id, embedder, drafts);
    if (existing.length > 0) await this.discardChunks(document.id);
    const vectors = this.store.vectors();
    const now = clock.now();
    const written: number[] = [];
    for (let start = 0; start < drafts.length; start += this.options.upsertBatchSize) {
      context.checkpoint();
      const batch = drafts.slice(start, start + this.options.upsertBatchSize);
      const rowids = await this.store.insertChunks(batch.map((draft, i): NewChunk => ({
        id: ids[start + i],
        document_id: document.id,
        ordinal: draft.ordinal,
        text: draft.text,
        page: draft.page ?? null,
        heading: draft.heading ?? null,
        sheet: draft.sheet ?? null,
        row: draft.row ?? null,
        ocr_confidence: draft.page === undefined ? null : prepared.ocrConfidence.get(draft.page) ?? null,
        char_count: draft.text.length,
        token_count: draft.tokenCount,
        metadata: '{}',
        embedded_with: null,
        created_at: now,
      })));
      written.push(...rowids);
      if (embedder && vectors) await this.store.addVectors(vectors, rowids, await prepared.batches[start / this.options.upsertBatchSize], embedder.modelId);
    }
    await this.store.replaceMetadata({ documentId: document.id, rowids: written, ...prepared.metadata });
    await this.store.indexDocumentText(document.id);
    if (vectors) await this.store.changed();
    return drafts.length;
  }

  private async discardChunks(documentId: string): Promise<void> {
    await this.store.discardDocument(documentId);
  }
}

/** Pages that read badly (indexed, worth a look) or not at all (not indexed), in page order. */
function pageWarningsOf(extracted: ExtractedDocument): PageWarning[] {
  const low = (extracted.ocrPages ?? [])
    .filter((page) => page.confidence < LOW_CONFIDENCE)
    .map((page): PageWarning => ({ page: page.page, reason: 'low_confidence', message: `OCR read this page with ${Math.round(page.confidence)}% confidence`, confidence: page.confidence }));
  const failed = (extracted.pageFailures ?? []).map((failure): PageWarning => ({ page: failure.page, reason: failure.reason, message: failure.message }));
  return [...low, ...failed].sort((a, b) => a.page - b.page);
}

/** Same chunk ids as stored, already embedded with the model in force: indexing the document again is a no-op. */
function sameChunks(existing: Array<{ id: string; embedded_with: string | null }>, ids: string[], embedder: Embedder | null): boolean {
  const modelId = embedder?.modelId ?? null;
  return existing.length === ids.length && existing.every((row, i) => row.id === ids[i] && (modelId === null || row.embedded_with === modelId));
}
