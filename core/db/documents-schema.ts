import type { Generated } from 'kysely';

/** Tables of ingestion and retrieval (migration 0005). Timestamps are epoch ms; JSON columns are text. */

export type DocumentStatus = 'queued' | 'indexing' | 'indexed' | 'failed';
export type SourceType = 'upload' | 'connector' | 'integration';

export interface DocumentsTable {
  id: string;
  filename: string;
  /** Detected from the content, not the name: pdf, docx, txt, md, csv, xlsx, html, png, jpg, tiff. */
  file_type: string;
  mime_type: string;
  size_bytes: number;
  /** sha256 of the file's bytes: duplicate uploads and unchanged connector files are found by it. */
  sha256: string;
  source_type: SourceType;
  /** Connector or integration id; null for uploads. */
  source_id: string | null;
  /** Path inside the connector, or URL of an integration page; null for uploads. */
  source_path: string | null;
  /** Where the original bytes are kept, relative to DATA_DIR. */
  storage_path: string | null;
  status: DocumentStatus;
  /** Why indexing failed, in one sentence for the user. */
  error: string | null;
  page_count: number | null;
  chunk_count: number;
  /** JSON array of PageWarning: pages OCR read with low confidence or could not read, and why. Migration 0013. */
  page_warnings: Generated<string>;
  /** JSON object: document-level metadata (title, author, …). */
  metadata: string;
  /** JSON array of group names allowed to retrieve it (ENTERPRISE ACL); its source's groups, else ["everyone"]. */
  groups: string;
  /** Integer the vector index filters on (set by trigger on insert, migration 0012): HNSW labels are chunk rowids, this is their document. */
  access_key: Generated<number | null>;
  uploaded_by: string | null;
  created_at: number;
  updated_at: number;
  indexed_at: number | null;
}

export interface ChunksTable {
  /** Integer key: the FTS5 rowid and the HNSW label of the chunk's vector. */
  rowid: Generated<number>;
  /** Stable and content-derived (document id and hash, position, text): re-indexing an unchanged document is a no-op; copies of a file do not share ids. */
  id: string;
  document_id: string;
  ordinal: number;
  text: string;
  page: number | null;
  heading: string | null;
  sheet: string | null;
  row: number | null;
  char_count: number;
  token_count: number;
  /** Tesseract's confidence (0-100) on the page the chunk was read from by OCR; null for a text layer. Migration 0013. */
  ocr_confidence?: number | null;
  /** JSON object: chunk-level metadata. */
  metadata: string;
  /** Id of the embedding model whose vector of this chunk is in the index; null until embedded. */
  embedded_with: string | null;
  created_at: number;
}

/** A document's row in documents_fts, the keyword index of whole documents (migration 0018): written once its chunks are, gone with any of them. */
export interface DocumentKeywordsTable {
  /** The documents_fts rowid. */
  id: Generated<number>;
  document_id: string;
}

/** Every distinct content word of the chunks (core/text/words.ts), numbered once (migration 0019). Never renumbered. */
export interface VocabularyTable {
  id: Generated<number>;
  word: string;
}

/**
 * A document's chunks' distinct content words as vocabulary ids (migration 0019): what soft term matching reads instead
 * of the text, a row per 128 chunks of a document. Little-endian int32s (core/db/chunk-words.ts).
 */
export interface DocumentWordsTable {
  document_id: string;
  /** 0, 1, …: the row's place among the document's (CHUNKS_PER_WORDS_ROW chunks each, in reading order). */
  piece: number;
  /** Each chunk's count of ids, in reading order. */
  counts: Buffer;
  /** The chunks' ids one chunk after another, each chunk's in order of first appearance. */
  words: Buffer;
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface ConnectorsTable {
  id: string;
  name: string;
  /** Resolved real path inside CONNECTOR_ALLOWED_PATHS. */
  path: string;
  recursive: number;
  /** JSON array of glob-like extensions to include, e.g. [".pdf", ".md"]; empty = every supported type. */
  include: string;
  enabled: number;
  last_scan_at: number | null;
  /** When a scan was asked for that has not ended yet (an interrupted one runs again at the next start); null when none. Migration 0007. */
  scan_requested_at: number | null;
  /** JSON RunSummary of the last scan that ended (plugins/jobs/run-summary.ts); null before the first. Migration 0007. */
  last_scan: string | null;
  /** JSON array of group names its documents may be retrieved by (migration 0012). */
  groups: Generated<string>;
  created_at: number;
  updated_at: number;
}

export interface IntegrationsTable {
  id: string;
  name: string;
  kind: 'web';
  /** JSON object of the kind's settings (start_url, sitemap_url, max_depth, max_pages, allow_private_network). */
  config: string;
  /** SecretBox-sealed JSON of credentials (context "integration:<id>"); write-only through the API. */
  credentials_sealed: string | null;
  enabled: number;
  last_sync_at: number | null;
  /** When a sync was asked for that has not ended yet (an interrupted one runs again at the next start); null when none. Migration 0007. */
  sync_requested_at: number | null;
  /** JSON RunSummary of the last sync that ended (plugins/jobs/run-summary.ts); null before the first. Migration 0007. */
  last_sync: string | null;
  /** JSON array of group names its documents may be retrieved by (migration 0012). */
  groups: Generated<string>;
  created_at: number;
  updated_at: number;
}

/** What an integration saw of each remote page, for incremental sync (ETag / Last-Modified / hash). */
export interface IntegrationPagesTable {
  integration_id: string;
  url: string;
  etag: string | null;
  last_modified: string | null;
  sha256: string | null;
  document_id: string | null;
  fetched_at: number;
}
