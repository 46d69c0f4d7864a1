import type { DocumentStatus } from '../../core/db/documents-schema.js';
import type { DocumentRow } from './repository.js';

/**
 * A document's states and the moves between them, in one place. A document is queued when it is
 * stored or its content changed, indexing while a job writes its chunks, then indexed, or failed with
 * a reason for the user. Any state may be queued again (new content, a stop of the service, a retry)
 * and indexed again (a job that meets an unchanged document rewrites nothing); only indexing ends
 * indexed, and a document fails only on its way to the index (a fault of its own, or its job cancelled).
 */
const MOVES: Record<DocumentStatus, readonly DocumentStatus[]> = {
  queued: ['queued', 'indexing', 'failed'],
  // indexing -> indexing: a document caught mid-indexing by a crash is indexed again at the next start.
  indexing: ['indexing', 'indexed', 'failed', 'queued'],
  indexed: ['queued', 'indexing'],
  failed: ['queued', 'indexing'],
};

/** The states a document may be in to move to `to`. */
export function statesBefore(to: DocumentStatus): DocumentStatus[] {
  return (Object.keys(MOVES) as DocumentStatus[]).filter((from) => MOVES[from].includes(to));
}

/** Failure reasons that say nothing about the file: its next scan or sync tries it again. */
export const CANCELLED_REASON = 'Indexing was cancelled';
export const UNEXPECTED_REASON = 'Indexing failed unexpectedly; see the service log';

/**
 * Whether a source's unchanged document still needs indexing: left queued by an interrupted scan, or
 * failed for a reason outside the file (cancelled, an internal error). A file that failed on its own
 * content (corrupt, encrypted, too large) is not extracted again until it changes.
 */
export function needsIndexing(document: Pick<DocumentRow, 'status' | 'error'>): boolean {
  if (document.status === 'failed') return document.error === CANCELLED_REASON || document.error === UNEXPECTED_REASON;
  return document.status !== 'indexed';
}
