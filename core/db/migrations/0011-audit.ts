import { type Kysely, sql } from 'kysely';

/** Epoch milliseconds of now, inside SQLite. */
const NOW_MS = sql.raw(`cast((julianday('now') - 2440587.5) * 86400000 as integer)`);
/** The shortest retention the API accepts: no entry younger than this can ever be deleted, even by the sweep. */
const MIN_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * The audit log (issue 18): append-only, each entry's hash covering the previous one's. Triggers refuse
 * every UPDATE, and every DELETE except the retention sweep's: it opens the gate to a cut-off inside its
 * own transaction, deletes the range older than it, and closes the gate. The anchor keeps the hash of the
 * last entry a sweep removed, where verification of the remaining chain starts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_username', 'text')
    .addColumn('client_address', 'text')
    .addColumn('target', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('success', 'failure')`))
    .addColumn('details', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
  await db.schema.createIndex('audit_log_event').on('audit_log').columns(['event', 'id']).execute();
  await db.schema.createIndex('audit_log_actor').on('audit_log').columns(['actor_id', 'id']).execute();

  await db.schema
    .createTable('audit_sweep_gate')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('delete_before', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('audit_chain_anchor')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('last_id', 'integer', (c) => c.notNull())
    .addColumn('last_hash', 'text', (c) => c.notNull())
    .addColumn('last_at', 'bigint', (c) => c.notNull())
    .execute();

  await sql`create trigger audit_log_no_update before update on audit_log
    begin select raise(abort, 'audit entries are append-only'); end`.execute(db);
  await sql`create trigger audit_log_no_delete before delete on audit_log
    when old.at >= coalesce((select delete_before from audit_sweep_gate where id = 1), 0)
      or old.at >= ${NOW_MS} - ${sql.lit(MIN_RETENTION_MS)}
    begin select raise(abort, 'audit entries are removed only by the retention sweep'); end`.execute(db);
}
