import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { loadBm25Extension } from '../../native/keyword-rank/index.js';
import { BoundedMap } from '../bounded-map.js';
import type { Database } from './schema.js';

/** Opens the SQLite file (WAL, foreign keys on, a page cache of `cacheMiB`), its statements cached and its direct runners registered. */
export function openSqliteDatabase(file: string, cacheMiB: number): Kysely<Database> {
  mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  // No memory map: its pages count in the service's RSS (126 MiB at 100k chunks, the boot's consistency
  // check reads every chunk row), and /api/search at 100k chunks measured no slower through read().
  sqlite.pragma('mmap_size = 0');
  sqlite.pragma(`cache_size = -${Math.round(cacheMiB * 1024)}`); // negative: KiB
  // hearth_bm25(): FTS5's bm25 with the document frequencies the keyword plan already probed (native/keyword-rank).
  loadBm25Extension(sqlite);
  const statements = withStatementCache(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }) });
  directRunners.set(db, (sql, parameters) => {
    // Inside an open kysely transaction the one connection is not ours to use: the caller waits its turn.
    if (sqlite.inTransaction) return undefined;
    const statement = statements.prepare(sql);
    if (!statement.reader) {
      statement.run(parameters);
      return [];
    }
    return statement.all(parameters);
  });
  directReaders.set(db, (sql, parameters) => statements.prepare(sql).all(parameters));
  return db;
}

/** Runs compiled SQL at once on the connection, or answers undefined when it must go through kysely. */
type DirectRunner = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

const directRunners = new WeakMap<object, DirectRunner>();

/** The synchronous runner of a database opened here (SQLite); undefined for any other dialect. */
export function directRunner(db: object): DirectRunner | undefined {
  return directRunners.get(db);
}

/** Runs a compiled read at once on the connection; inside another caller's open transaction it sees what that one wrote so far. */
type DirectReader = (sql: string, parameters: readonly unknown[]) => unknown[];

const directReaders = new WeakMap<object, DirectReader>();

/** The synchronous reader of a database opened here (SQLite), for callers that cannot wait; undefined for any other dialect. */
export function directReader(db: object): DirectReader | undefined {
  return directReaders.get(db);
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * kysely's SQLite driver prepares every query anew, which is a fifth of the CPU of a simple
 * authenticated request. Statements are reused by SQL text instead: the driver runs one query at
 * a time on its one connection, and SQLite re-prepares a statement itself after a schema change.
 */
function withStatementCache(sqlite: SQLite.Database) {
  const statements = new BoundedMap<string, SQLite.Statement>(STATEMENT_CACHE_SIZE);
  return {
    close: () => sqlite.close(),
    prepare(sql: string): SQLite.Statement {
      let statement = statements.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
