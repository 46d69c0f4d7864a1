import { type Kysely, sql } from 'kysely';

/** TOTP second factor: the sealed secret, recovery codes (hashed) and MFA tokens (hashed), all surviving a restart. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('totp')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'enrolled')`))
    .addColumn('last_used_step', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('enrolled_at', 'bigint')
    .execute();

  await db.schema
    .createTable('recovery_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('recovery_codes_user').on('recovery_codes').column('user_id').execute();

  await db.schema
    .createTable('mfa_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('valid', 'consumed', 'invalidated')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mfa_tokens_user').on('mfa_tokens').column('user_id').execute();
}
