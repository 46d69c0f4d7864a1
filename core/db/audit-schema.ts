import type { Generated } from 'kysely';

/** Tables of the audit log (migration 0011). Timestamps are epoch ms. */

export type AuditOutcome = 'success' | 'failure';

export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  event: string;
  actor_id: string | null;
  actor_username: string | null;
  client_address: string | null;
  target: string | null;
  outcome: AuditOutcome;
  /** JSON object; never a secret value, never a query's text while RAG_LOG_REDACT_QUERIES is true. */
  details: string;
  /** The hash of the entry before (the anchor's, or 64 zeros, for the first). */
  prev_hash: string;
  /** HMAC-SHA256 over prev_hash and this entry's fields (plugins/audit/chain.ts). */
  hash: string;
}

/** One row, present only while the retention sweep deletes: entries older than delete_before may go. */
export interface AuditSweepGateTable {
  id: number;
  delete_before: number;
}

/** One row once a sweep removed entries: the last removed entry, where the remaining chain starts. */
export interface AuditChainAnchorTable {
  id: number;
  last_id: number;
  last_hash: string;
  last_at: number;
}
