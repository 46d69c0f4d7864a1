import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { requireTier } from '../../core/auth/guard.js';
import { clock } from '../../core/clock.js';
import { INVISIBLE_CONTROLS } from '../../core/schemas.js';
import { badRequest, conflict, HttpError, notFound, payloadTooLarge, unsupportedMediaType } from '../../core/errors.js';
import { copyFileOwnerOnly } from '../../core/owner-only.js';
import { Serial } from '../../core/serial.js';
import { type Entitlement, type Tier, tierAtLeast } from '../../core/tiers.js';
import type { Updateable } from 'kysely';
import type { DocumentStatus, DocumentsTable, SourceType } from '../../core/db/documents-schema.js';
import type { IndexStore } from '../search-index/index.js';
import { detectFileTypeOfFile, OCR_FILE_TYPES, TIER_FOR_TYPE, type DetectedFileType } from './file-type.js';
import { CANCELLED_REASON, needsIndexing, statesBefore } from './lifecycle.js';
import type { DocumentFilter, DocumentRow, DocumentsRepository } from './repository.js';
import type { PageWarning } from './schemas.js';
import type { SkipReason } from '../jobs/index.js';

/** A file found by a connector scan or fetched by an integration. */
export interface SourceFile {
  sourceType: 'connector' | 'integration';
  sourceId: string;
  /** The file's real path (connector) or page URL (integration): its identity within the source. */
  sourcePath: string;
  filename: string;
  /** Where the bytes are now. */
  filePath: string;
  /** Integrations keep a copy (the remote can change); connectors are read in place. */
  keepCopy: boolean;
}

async function hashFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** Thrown mid-stream when the upload passes a plan limit; the temp file is removed. */
class LimitExceeded extends Error {
  constructor(readonly httpError: HttpError) {
    super(httpError.message);
  }
}

const planLimit = (message: string) => new HttpError(403, 'plan_limit_exceeded', message);
/** An upload over the plan's document count, or past its storage: checked before the bytes, as they arrive, and again before the row. */
const documentsFull = (allowed: number) => planLimit(`The plan allows ${allowed} documents; delete some or upgrade`);
const storageFull = () => planLimit('The plan’s total storage is used up; delete documents or upgrade');

/** A file or page of a source that was not made a document: why, and what would lift it when a licence would. */
interface SourceSkip {
  skipped: SkipReason;
  detail: string;
  remedy?: string;
}

export type SourceUpsert = { document: DocumentRow; changed: boolean } | SourceSkip;

const article = (tier: Tier) => (tier === 'ENTERPRISE' ? 'an' : 'a');

/** What lifts a plan limit: the next plan up, or for ENTERPRISE a licence with higher limits. */
function planRemedy(tier: Tier): string {
  if (tier === 'FREE') return 'apply a PRO licence';
  if (tier === 'PRO') return 'apply an ENTERPRISE licence';
  return 'apply a licence with higher limits';
}

/** What indexing found in a document, recorded when it is indexed. */
export interface IndexedDocument {
  pageCount: number | null;
  chunkCount: number;
  title?: string;
  /** Pages OCR read with low confidence or could not read. */
  pageWarnings?: PageWarning[];
}

/**
 * The owner of documents: stores uploads (streamed to disk under DATA_DIR/documents while hashing and
 * counting, the plan's file-size, storage and count limits enforced as the bytes arrive) and the files
 * of connectors and integrations, moves each document through its states (lifecycle.ts), and removes
 * documents with their chunks and vectors.
 */
export class DocumentsService {
  private readonly storeDir: string;
  private readonly tmpDir: string;
  /** Uploads' last step (the duplicate and plan checks, then the row), one at a time. */
  private readonly storing = new Serial();

  constructor(
    private readonly repository: DocumentsRepository,
    private readonly index: IndexStore,
    private readonly entitlement: Entitlement,
    dataDir: string,
    private readonly ocrEnabled: boolean,
  ) {
    this.storeDir = path.join(dataDir, 'documents');
    this.tmpDir = path.join(dataDir, 'documents', '.incoming');
  }

  /** Where the bytes to index are: Hearth's stored copy, or for a connector the file in place. */
  storagePathOf(document: DocumentRow): string | null {
    if (document.storage_path) return path.join(this.storeDir, path.basename(document.storage_path));
    return document.source_type === 'connector' ? document.source_path : null;
  }

  /** A document's stored bytes to send to a reader; 404 when the document or its file (a connector's, moved away) is gone, or the reader's groups may not read it. */
  async openFile(id: string, groups: string[]): Promise<{ document: DocumentRow; stream: Readable; size: number }> {
    const document = await this.repository.findReadable(id, groups);
    const file = document && this.storagePathOf(document);
    if (!document || !file) throw notFound('Document');
    const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'EISDIR') throw notFound('Document file');
      throw error;
    });
    const { size } = await handle.stat();
    return { document, stream: handle.createReadStream(), size };
  }

  /** Which of these ids the reader's groups may read (an editor removes only those). */
  readableIds(ids: string[], groups: string[]): Promise<string[]> {
    return this.repository.readableIds(ids, groups);
  }

  find(id: string): Promise<DocumentRow | undefined> {
    return this.repository.findById(id);
  }

  findMany(ids: string[]): Promise<DocumentRow[]> {
    return this.repository.findByIds(ids);
  }

  /** The documents the reader's groups may read. */
  list(filter: DocumentFilter, groups: string[]): Promise<{ documents: DocumentRow[]; total: number }> {
    return this.repository.list(filter, groups);
  }

  /** The documents of one connector or integration. */
  ofSource(sourceType: SourceType, sourceId: string): Promise<DocumentRow[]> {
    return this.repository.listBySource(sourceType, sourceId);
  }

  /** How many documents each of these connectors or integrations has (absent: none); with `readerGroups`, only those a reader of these groups may read. */
  countsBySource(sourceType: SourceType, sourceIds: string[], readerGroups?: string[]): Promise<Map<string, number>> {
    return this.repository.countsBySource(sourceType, sourceIds, readerGroups);
  }

  /** Ids of a source's documents, oldest first; uploads are the source ('upload', null). */
  idsOfSource(sourceType: SourceType, sourceId: string | null): Promise<string[]> {
    return this.repository.idsBySource(sourceType, sourceId);
  }

  /** Ids of documents by file name, in any case (a chat question naming "budget.pdf" searches that file). */
  idsByFilenames(filenames: string[]): Promise<string[]> {
    return this.repository.findIdsByFilenames(filenames);
  }

  /** Documents a stop or a crash left queued or mid-indexing, oldest first. */
  unfinished(): Promise<DocumentRow[]> {
    return this.repository.findByStatus(['indexing', 'queued']);
  }

  /** Count and bytes of every stored document: what the plan limits measure. */
  usage(): Promise<{ documents: number; storage_bytes: number }> {
    return this.repository.usage();
  }

  /** A job starts writing the document's chunks. */
  async startIndexing(id: string): Promise<void> {
    await this.move([id], 'indexing', { error: null });
  }

  /** The document is searchable; false when it was no longer indexing (re-queued or deleted meanwhile). */
  async indexed(id: string, found: IndexedDocument): Promise<boolean> {
    return this.move([id], 'indexed', {
      page_count: found.pageCount,
      chunk_count: found.chunkCount,
      page_warnings: JSON.stringify(found.pageWarnings ?? []),
      indexed_at: clock.now(),
      ...(found.title ? { metadata: JSON.stringify({ title: found.title }) } : {}),
    });
  }

  /** Indexing failed; the reason is shown to users (lifecycle.ts names the reasons that are no fault of the file). */
  async failed(id: string, reason: string): Promise<void> {
    await this.move([id], 'failed', { error: reason, page_warnings: '[]' });
  }

  /** A stop of the service interrupted the document's indexing: it is indexed at the next start. */
  async interrupted(id: string): Promise<void> {
    await this.move([id], 'queued');
  }

  /** Their job was cancelled: those not indexed or failed yet say so, and their source's next run indexes them. */
  async cancelled(ids: string[]): Promise<void> {
    await this.move(ids, 'failed', { error: CANCELLED_REASON });
  }

  /** The one way a status changes: only from the states lifecycle.ts allows. */
  private async move(ids: string[], to: DocumentStatus, change: Updateable<DocumentsTable> = {}): Promise<boolean> {
    return (await this.repository.move(ids, statesBefore(to), { updated_at: clock.now(), ...change, status: to })) > 0;
  }

  /**
   * Stores an upload as a new document. The same content already uploaded is a 409 naming that document only when
   * the uploader's groups (`readerGroups`) may read it; a copy they may not read is not theirs to know of, so the
   * upload is taken as a document of its own (its chunks and vectors are its own: chunk ids carry the document id).
   * `complete` runs once the file's bytes are read and before anything is stored: the caller's last check of the
   * request (it may throw; then nothing is kept).
   */
  async upload(file: Readable, filename: string, uploadedBy: string, readerGroups: string[], complete: () => Promise<void> = async () => undefined): Promise<DocumentRow> {
    const limits = this.entitlement.limits();
    const usage = await this.usage();
    if (usage.documents >= limits.documents) throw documentsFull(limits.documents);

    await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const tmpFile = path.join(this.tmpDir, randomUUID());
    const hash = createHash('sha256');
    let size = 0;
    const storageLeft = limits.storage_bytes - usage.storage_bytes;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > limits.file_size_bytes) return done(new LimitExceeded(payloadTooLarge(`Files may be at most ${limits.file_size_bytes} bytes on this plan`)));
        if (size > storageLeft) return done(new LimitExceeded(storageFull()));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(file, meter, createWriteStream(tmpFile, { mode: 0o600 }));
      await complete();
      if (size === 0) throw badRequest('empty_file', 'The file is empty: there is nothing to index', 'body.file');
      const detected = await this.acceptType(tmpFile, filename);
      const sha256 = hash.digest('hex');
      // One upload at a time from here: the duplicate check and the plan's limits hold against uploads that arrived
      // together (five copies of one file sent at once were five documents).
      return await this.storing.run(async () => {
        const used = await this.usage();
        if (used.documents >= limits.documents) throw documentsFull(limits.documents);
        if (used.storage_bytes + size > limits.storage_bytes) throw storageFull();
        return this.store(tmpFile, filename, detected, size, sha256, uploadedBy, readerGroups);
      });
    } catch (error) {
      await rm(tmpFile, { force: true });
      throw error instanceof LimitExceeded ? error.httpError : error;
    }
  }

  /** The type comes from the content; the name only breaks ties between text formats. */
  private async acceptType(file: string, filename: string): Promise<DetectedFileType> {
    const detected = await detectFileTypeOfFile(file, filename);
    if (!detected) throw unsupportedMediaType('This file type is not supported: PDF, DOCX, TXT and MD (CSV, XLSX and HTML on PRO)');
    if (OCR_FILE_TYPES.has(detected.fileType) && !this.ocrEnabled) {
      throw unsupportedMediaType(`Images (${detected.fileType}) are indexed only with OCR enabled (INDEXING_OCR_ENABLED)`);
    }
    requireTier(this.entitlement, TIER_FOR_TYPE[detected.fileType]);
    return detected;
  }

  private async store(tmpFile: string, filename: string, detected: DetectedFileType, size: number, sha256: string, uploadedBy: string, readerGroups: string[]): Promise<DocumentRow> {
    const duplicate = await this.repository.findReadableBySha(sha256, 'upload', readerGroups);
    if (duplicate) throw conflict('duplicate_document', `This file was already uploaded as document ${duplicate.id} (${duplicate.filename})`);
    const id = randomUUID();
    const storedName = `${id}.${detected.fileType}`;
    await mkdir(this.storeDir, { recursive: true, mode: 0o700 });
    await rename(tmpFile, path.join(this.storeDir, storedName));
    const now = clock.now();
    await this.repository.insert({
      id,
      filename: sanitiseFilename(filename),
      file_type: detected.fileType,
      mime_type: detected.mime,
      size_bytes: size,
      sha256,
      source_type: 'upload',
      source_id: null,
      source_path: null,
      storage_path: path.join('documents', storedName),
      status: 'queued',
      error: null,
      page_count: null,
      chunk_count: 0,
      metadata: '{}',
      groups: '["everyone"]',
      uploaded_by: uploadedBy,
      created_at: now,
      updated_at: now,
      indexed_at: null,
    });
    return (await this.repository.findById(id))!;
  }

  /**
   * Registers a file of a connector or integration. Unchanged content (same sha256 at the same source
   * path) is a no-op; new or changed content is stored (a copy for integrations; connectors are read
   * in place) and queued. A type Hearth does not index or the plan does not allow is skipped, with the reason.
   */
  async upsertFromSource(input: SourceFile): Promise<SourceUpsert> {
    const detected = await detectFileTypeOfFile(input.filePath, input.filename);
    if (!detected) return { skipped: 'unsupported_type', detail: 'unsupported file type' };
    if (OCR_FILE_TYPES.has(detected.fileType) && !this.ocrEnabled) return { skipped: 'unsupported_type', detail: `${detected.fileType} images are indexed only with INDEXING_OCR_ENABLED` };
    const tier = this.entitlement.tier();
    const required = TIER_FOR_TYPE[detected.fileType];
    if (!tierAtLeast(tier, required)) return { skipped: 'tier_required', detail: `${detected.fileType} needs the ${required} plan`, remedy: `apply ${article(required)} ${required} licence` };
    const { sha256, size } = await hashFile(input.filePath);
    const existing = await this.repository.findBySource(input.sourceType, input.sourceId, input.sourcePath);
    // A document that failed for a reason outside the file is queued again; one that failed on this content is not.
    if (existing && existing.sha256 === sha256 && !(existing.status === 'failed' && needsIndexing(existing))) return { document: existing, changed: false };

    const limits = this.entitlement.limits();
    if (size > limits.file_size_bytes) return { skipped: 'too_large', detail: `larger than the plan's ${limits.file_size_bytes} bytes per file`, remedy: planRemedy(tier) };
    const usage = await this.repository.usage();
    if (!existing && usage.documents >= limits.documents) {
      return { skipped: 'plan_document_limit', detail: `the plan's ${limits.documents} documents are reached`, remedy: `delete documents or ${planRemedy(tier)}` };
    }
    if (usage.storage_bytes - (existing?.size_bytes ?? 0) + size > limits.storage_bytes) {
      return { skipped: 'plan_storage_limit', detail: "the plan's storage is used up", remedy: `delete documents or ${planRemedy(tier)}` };
    }

    const id = existing?.id ?? randomUUID();
    let storagePath: string | null = null;
    if (input.keepCopy) {
      const storedName = `${id}.${detected.fileType}`;
      await mkdir(this.storeDir, { recursive: true, mode: 0o700 });
      await copyFileOwnerOnly(input.filePath, path.join(this.storeDir, storedName));
      storagePath = path.join('documents', storedName);
    }
    const now = clock.now();
    const fields = {
      filename: sanitiseFilename(input.filename),
      file_type: detected.fileType,
      mime_type: detected.mime,
      size_bytes: size,
      sha256,
      storage_path: storagePath,
      status: 'queued' as const,
      error: null,
      updated_at: now,
    };
    if (existing) await this.move([id], 'queued', fields);
    else {
      await this.repository.insert({
        id, ...fields, source_type: input.sourceType, source_id: input.sourceId, source_path: input.sourcePath,
        page_count: null, chunk_count: 0, metadata: '{}', groups: this.repository.sourceGroups(input.sourceType, input.sourceId), uploaded_by: null, created_at: now, indexed_at: null,
      });
    }
    return { document: (await this.repository.findById(id))!, changed: true };
  }

  /** Removes documents: their chunks and vectors with their rows, then Hearth's stored copies; returns the rows deleted. */
  async remove(ids: string[]): Promise<DocumentRow[]> {
    const deleted = await this.index.removeDocuments(ids, (db) => this.repository.delete(ids, db));
    await Promise.all(deleted.map((document) => {
      // Only Hearth's own copy: a connector's file is the user's original, read in place, never deleted.
      const file = document.storage_path ? this.storagePathOf(document) : null;
      return file ? rm(file, { force: true }) : undefined;
    }));
    return deleted;
  }
}

const INVISIBLE_CONTROL = new RegExp(`[${INVISIBLE_CONTROLS}]`, 'gu');

/** The name as shown to users: no directories, no control or bidirectional-override characters, at most 255 characters. */
export function sanitiseFilename(filename: string): string {
  const base = path.basename(filename.replace(/\\/g, '/')).replace(INVISIBLE_CONTROL, '').trim();
  return (base || 'unnamed').slice(0, 255);
}

/**
 * Content-Disposition for a stored file: always an attachment (never rendered as a page of this origin), with an
 * ASCII fallback name and the exact name in RFC 5987 form.
 */
export function attachmentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
