import { Kysely, Migrator, type MigrationProvider } from 'kysely';
import { DEFAULT_SQLITE_CACHE_MIB } from '../config.js';
import { openSqliteDatabase } from './database.sqlite.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

/** Opens the database (the SQLite file; its page cache `cacheMiB`) and runs pending migrations. */
export async function openDatabase(file: string, cacheMiB = DEFAULT_SQLITE_CACHE_MIB): Promise<Db> {
  const db = openSqliteDatabase(file, cacheMiB);
  await migrate(db);
  return db;
}

const provider: MigrationProvider = { getMigrations: async () => migrations };

async function migrate(db: Db): Promise<void> {
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error) throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
}
