import { type Insertable, type Selectable, sql } from 'kysely';
import type { AuditLogTable } from '../../core/db/audit-schema.js';
import type { Db } from '../../core/db/database.js';
import { GENESIS_HASH } from './chain.js';

export type AuditRow = Selectable<AuditLogTable>;
type NewEntry = Omit<Insertable<AuditLogTable>, 'id' | 'prev_hash' | 'hash'>;

export interface AuditFilters {
  event?: string;
  /** A user id or a username. */
  user?: string;
  from?: number;
  to?: number;
}

/** Where verification starts: after the last entry a sweep removed, or at the very beginning. */
export interface ChainStart {
  id: number;
  hash: string;
  at: number | null;
}

const VERIFY_BATCH = 1000;

export class AuditRepository {
  constructor(private readonly db: Db) {}

  /**
   * Appends one entry after the current last one, in one IMMEDIATE transaction: another process
   * appending at the same moment waits, so no two entries ever chain to the same predecessor.
   */
  async append(entry: NewEntry, hashOf: (prevHash: string) => string): Promise<void> {
    await this.db.connection().execute(async (connection) => {
      await sql`begin immediate`.execute(connection);
      try {
        const last = await connection.selectFrom('audit_log').select('hash').orderBy('id', 'desc').limit(1).executeTakeFirst();
        const prevHash = last?.hash ?? (await this.start(connection)).hash;
        await connection.insertInto('audit_log').values({ ...entry, prev_hash: prevHash, hash: hashOf(prevHash) }).execute();
        await sql`commit`.execute(connection);
      } catch (error) {
        await sql`rollback`.execute(connection);
        throw error;
      }
    });
  }

  /** Newest first. */
  async list(filters: AuditFilters, limit: number, offset: number): Promise<{ entries: AuditRow[]; total: number }> {
    let query = this.db.selectFrom('audit_log');
    if (filters.event) query = query.where('event', '=', filters.event);
    if (filters.user) query = query.where((eb) => eb.or([eb('actor_id', '=', filters.user!), eb('actor_username', '=', filters.user!)]));
    if (filters.from !== undefined) query = query.where('at', '>=', filters.from);
    if (filters.to !== undefined) query = query.where('at', '<=', filters.to);
    const [entries, count] = await Promise.all([
      query.selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { entries, total: Number(count.n) };
  }

  find(id: number): Promise<AuditRow | undefined> {
    return this.db.selectFrom('audit_log').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async start(db: Pick<Db, 'selectFrom'> = this.db): Promise<ChainStart> {
    const anchor = await db.selectFrom('audit_chain_anchor').selectAll().where('id', '=', 1).executeTakeFirst();
    return anchor ? { id: anchor.last_id, hash: anchor.last_hash, at: anchor.last_at } : { id: 0, hash: GENESIS_HASH, at: null };
  }

  /** Every entry in chain order, a batch at a time. */
  async *walk(): AsyncGenerator<AuditRow> {
    let after = 0;
    for (;;) {
      const batch = await this.db.selectFrom('audit_log').selectAll().where('id', '>', after).orderBy('id').limit(VERIFY_BATCH).execute();
      yield* batch;
      if (batch.length < VERIFY_BATCH) return;
      after = batch[batch.length - 1].id;
    }
  }

  /**
   * The retention sweep: removes the oldest entries, up to the first one not older than `before`, so
   * that what remains is one unbroken chain; the gate row lets the delete trigger pass inside this
   * transaction only. The last removed entry becomes the anchor. Answers how many were removed.
   */
  async sweep(before: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const firstKept = await trx.selectFrom('audit_log').select('id').where('at', '>=', before).orderBy('id').limit(1).executeTakeFirst();
      let doomed = trx.selectFrom('audit_log').selectAll();
      if (firstKept) doomed = doomed.where('id', '<', firstKept.id);
      const last = await doomed.orderBy('id', 'desc').limit(1).executeTakeFirst();
      if (!last) return 0;
      await trx.insertInto('audit_sweep_gate').values({ id: 1, delete_before: before }).execute();
      const deleted = await trx.deleteFrom('audit_log').where('id', '<=', last.id).executeTakeFirst();
      await trx.deleteFrom('audit_sweep_gate').where('id', '=', 1).execute();
      await trx
        .insertInto('audit_chain_anchor')
        .values({ id: 1, last_id: last.id, last_hash: last.hash, last_at: last.at })
        .onConflict((conflict) => conflict.column('id').doUpdateSet({ last_id: last.id, last_hash: last.hash, last_at: last.at }))
        .execute();
      return Number(deleted.numDeletedRows);
    });
  }
}
