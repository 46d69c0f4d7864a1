import { createHmac, hkdfSync } from 'node:crypto';
import type { AuditLogTable } from '../../core/db/audit-schema.js';

/** The previous hash of the very first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** What an entry's hash covers, besides the previous entry's hash: every field but the id and the hashes. */
export type ChainedFields = Omit<AuditLogTable, 'id' | 'prev_hash' | 'hash'>;

/**
 * The hash chain: each entry's hash is an HMAC-SHA256 over the previous entry's hash and its own fields.
 * Keyed with a key derived from MFA_ENCRYPTION_KEY (never in the database), so whoever edits the SQLite
 * file cannot recompute the hashes after the entry they changed.
 */
export class AuditChain {
  private readonly key: Buffer;

  constructor(secret: string | Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'hearth', 'audit-chain', 32));
  }

  hash(prevHash: string, fields: ChainedFields): string {
    const canonical = JSON.stringify([prevHash, fields.at, fields.event, fields.actor_id, fields.actor_username, fields.client_address, fields.target, fields.outcome, fields.details]);
    return createHmac('sha256', this.key).update(canonical).digest('hex');
  }

  /** A keyed digest of a chat query: equal queries compare equal, the text cannot be read back or guessed offline. */
  digest(text: string): string {
    return createHmac('sha256', this.key).update(`query:${text}`).digest('hex');
  }
}
