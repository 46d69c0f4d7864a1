import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('viewer', 'editor', 'admin')`))
    .addColumn('hashed_password', 'text')
    .addColumn('groups', 'text', (c) => c.notNull().defaultTo('["everyone"]'))
    .addColumn('auth_source', 'text', (c) => c.notNull().defaultTo('local'))
    .addColumn('tokens_valid_after', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Usernames are unique regardless of case: "Admin" and "admin" are one account.
  await db.schema.createIndex('users_username_lower').unique().on('users').expression(sql`lower(username)`).execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('auth_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('refresh_jti', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('auth_sessions_user').on('auth_sessions').column('user_id').execute();

  await db.schema
    .createTable('licences')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('licence_key', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'bigint', (c) => c.notNull())
    .addColumn('applied_by', 'text')
    .execute();

  await db.schema
    .createTable('branding_logo')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('png', 'blob', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
