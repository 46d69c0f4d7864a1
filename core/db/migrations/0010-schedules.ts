import { type Kysely, sql } from 'kysely';

/**
 * Schedules fire a connector's scan or an integration's sync on a cron (issue 17). A schedule points at
 * exactly one source through a foreign key, so deleting the source deletes its schedules with it.
 * The leader lock row lets one of several processes sharing the database fire each tick.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('connector_id', 'text', (c) => c.references('connectors.id').onDelete('cascade'))
    .addColumn('integration_id', 'text', (c) => c.references('integrations.id').onDelete('cascade'))
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('last_run', 'bigint')
    .addColumn('next_run', 'bigint')
    .addColumn('last_outcome', 'text')
    .addColumn('last_job_id', 'text')
    .addColumn('skipped_runs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('schedules_one_source', sql`(connector_id is null) <> (integration_id is null)`)
    .execute();
  await db.schema.createIndex('schedules_connector').on('schedules').column('connector_id').execute();
  await db.schema.createIndex('schedules_integration').on('schedules').column('integration_id').execute();
  await db.schema.createIndex('schedules_due').on('schedules').columns(['enabled', 'next_run']).execute();

  await db.schema
    .createTable('scheduler_leader_lock')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}
