import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('turn_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Listing is per user, newest activity first; the purge scans by age.
  await db.schema.createIndex('conversations_user').on('conversations').columns(['user_id', 'updated_at']).execute();
  await db.schema.createIndex('conversations_updated').on('conversations').column('updated_at').execute();

  await db.schema
    .createTable('conversation_turns')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('answer', 'text', (c) => c.notNull())
    .addColumn('sources', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('generative', 'extractive')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('conversation_turns_conversation').on('conversation_turns').columns(['conversation_id', 'id']).execute();
}
