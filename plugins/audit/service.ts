import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { clock } from '../../core/clock.js';
import type { AuditOutcome } from '../../core/db/audit-schema.js';
import { notFound } from '../../core/errors.js';
import type { SettingsStore } from '../../core/settings/store.js';
import { type Entitlement, tierAtLeast } from '../../core/tiers.js';
import type { AuditChain } from './chain.js';
import type { AuditFilters, AuditRepository, AuditRow } from './repository.js';
import type { AuditEntryView, AuditVerification, BrokenReason } from './schemas.js';

const DAY_MS = 24 * 60 * 60 * 1000;
export const RETENTION_KEY = 'audit.retention_days';

/** One auditable action, as a plugin reports it through app.audit.record. */
export interface AuditRecord {
  /** e.g. `user.create`, `auth.login`; the spec's six and the ones docs/audit.md lists. */
  event: string;
  /** Default success. */
  outcome?: AuditOutcome;
  /** What the action was about: a user id, a conversation id, a provider name… */
  target?: string | null;
  /** Field names, counts, ids: never a secret value. */
  details?: Record<string, unknown>;
  /** Who acted, when it is not the request's signed-in user (a sign-in, a failed one). */
  actor?: { id: string | null; username: string | null };
}

export function toAuditEntryView(row: AuditRow): AuditEntryView {
  return {
    id: row.id,
    time: clock.iso(row.at),
    event: row.event,
    actor: { user_id: row.actor_id, username: row.actor_username },
    client_address: row.client_address,
    target: row.target,
    outcome: row.outcome,
    details: JSON.parse(row.details) as Record<string, unknown>,
    hash: row.hash,
    prev_hash: row.prev_hash,
  };
}

/**
 * The audit log (ENTERPRISE): append-only, hash-chained entries; below ENTERPRISE nothing is
 * recorded. Recording never fails the action it records: a failure to write is logged.
 */
export class AuditService {
  constructor(
    private readonly repository: AuditRepository,
    private readonly chain: AuditChain,
    private readonly entitlement: Entitlement,
    private readonly settings: SettingsStore,
    private readonly log: FastifyBaseLogger,
  ) {}

  enabled(): boolean {
    return tierAtLeast(this.entitlement.tier(), 'ENTERPRISE');
  }

  async record(request: FastifyRequest | null, entry: AuditRecord): Promise<void> {
    if (!this.enabled()) return;
    const actor = entry.actor ?? (request?.principal ? { id: request.principal.id, username: request.principal.username } : { id: null, username: null });
    const fields = {
      at: clock.now(),
      event: entry.event,
      actor_id: actor.id,
      actor_username: actor.username,
      client_address: request?.ip ?? null,
      target: entry.target ?? null,
      outcome: entry.outcome ?? 'success',
      details: JSON.stringify(entry.details ?? {}),
    } as const;
    try {
      await this.repository.append(fields, (prevHash) => this.chain.hash(prevHash, fields));
    } catch (err) {
      this.log.error({ err, event: entry.event }, 'writing an audit entry failed');
    }
  }

  /** chat.query details: the query's length and keyed hash while RAG_LOG_REDACT_QUERIES is true, else its text too. */
  queryDetails(query: string): Record<string, unknown> {
    const base = { query_length: query.length, query_hash: this.chain.digest(query) };
    return this.settings.current('RAG_LOG_REDACT_QUERIES') ? base : { ...base, query };
  }

  list(filters: AuditFilters, limit: number, offset: number) {
    return this.repository.list(filters, limit, offset);
  }

  async get(id: number): Promise<AuditRow> {
    const row = await this.repository.find(id);
    if (!row) throw notFound('Audit entry');
    return row;
  }

  retentionDays(): number {
    return this.settings.get<number>(RETENTION_KEY, this.settings.current('RAG_AUDIT_RETENTION_DAYS'));
  }

  async setRetentionDays(days: number): Promise<void> {
    await this.settings.set({ [RETENTION_KEY]: days });
  }

  /** Removes the entries older than the retention (the oldest first, as one range). */
  async sweep(now = clock.now()): Promise<number> {
    const removed = await this.repository.sweep(now - this.retentionDays() * DAY_MS);
    if (removed) this.log.info({ event: 'audit.sweep', removed }, 'audit entries past their retention removed');
    return removed;
  }

  /** Walks the chain from its start (the anchor a sweep left, or the beginning) and reports the first broken link. */
  async verify(): Promise<AuditVerification> {
    const start = await this.repository.start();
    let expected = { id: start.id + 1, prevHash: start.hash };
    let checked = 0;
    for await (const row of this.repository.walk()) {
      const broken = this.brokenLink(row, expected);
      if (broken) return { ok: false, entries_checked: checked, first_broken: { id: row.id, reason: broken } };
      checked++;
      expected = { id: row.id + 1, prevHash: row.hash };
    }
    return { ok: true, entries_checked: checked, first_broken: null };
  }

  private brokenLink(row: AuditRow, expected: { id: number; prevHash: string }): BrokenReason | null {
    if (row.id !== expected.id) return 'entry_missing';
    if (row.prev_hash !== expected.prevHash) return 'previous_hash_mismatch';
    const { id: _id, hash, prev_hash: _prev, ...fields } = row;
    if (this.chain.hash(expected.prevHash, fields) !== hash) return 'hash_mismatch';
    return null;
  }
}
