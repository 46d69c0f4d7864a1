import type SQLite from 'better-sqlite3';
import extension from '@hearth/sqlite-bm25';

/**
 * Loads the SQLite extension that registers `hearth_chunk_readable(rowid, keys)` (the keyword ranking's access test)
 * and the FTS5 function `hearth_bm25(table, frequencies[, state])` into a connection:
 * FTS5's bm25() given each phrase's document frequency (a blob of float64, one per phrase of the MATCH, in its order)
 * instead of counting it by a pass over every phrase's whole doclist (sqlite-bm25/hearth-bm25.c). Every connection
 * of the service loads it (core/db); compiled by `npm install` with node-gyp, as the vector index's addon.
 */
export function loadBm25Extension(db: SQLite.Database): void {
  // better-sqlite3 takes the entry point as a second argument; its type definitions do not list it yet.
  (db.loadExtension as (file: string, entryPoint: string) => unknown).call(db, extension.file, extension.entryPoint);
}
