import type { Kysely } from 'kysely';

/**
 * Scans and syncs survive a restart: a requested one is remembered until it ends (the next start runs
 * an interrupted one again), and the last one's summary (counts, what it skipped and why) is kept.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('connectors').addColumn('scan_requested_at', 'bigint').execute();
  await db.schema.alterTable('connectors').addColumn('last_scan', 'text').execute();
  await db.schema.alterTable('integrations').addColumn('sync_requested_at', 'bigint').execute();
  await db.schema.alterTable('integrations').addColumn('last_sync', 'text').execute();
}
