import type { Generated } from 'kysely';

/** Tables of metadata rules (migration 0009). Timestamps are epoch ms. */

export interface MetadataRulesTable {
  /** Creation order: breaks priority ties (the oldest rule wins). */
  seq: Generated<number>;
  id: string;
  /** 'upload' with source_id 'uploads': the rules of uploaded documents. */
  source_type: 'upload' | 'connector' | 'integration';
  source_id: string;
  field_name: string;
  pattern: string;
  query_pattern: string | null;
  scope: 'full' | 'header' | 'filename';
  level: 'document' | 'chunk';
  chunk_boundary: number;
  priority: number;
  created_at: number;
  updated_at: number;
}

/** One field's value on one chunk. */
export interface ChunkMetadataTable {
  chunk_rowid: number;
  /** The chunk's document (analytics count documents without reading chunks). */
  document_id: string;
  field_name: string;
  value: string;
  origin: 'self' | 'inherited' | 'document';
  rule_id: string;
  /** Rules of the field that matched here; 2 or more: the priority decided. */
  contenders: number;
}

/** A rule's pattern matched this chunk (or, for a document-level rule, its document). */
export interface ChunkRuleHitsTable {
  rule_id: string;
  chunk_rowid: number;
  document_id: string;
}

/** The chunk boundaries a document was last chunked under (RuleSet.boundaryKey; '' for none). */
export interface DocumentRuleStateTable {
  document_id: string;
  boundary_key: string;
  labelled_at: number;
}
