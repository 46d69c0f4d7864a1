import extension from '@hearth/sqlite-bm25';

/**
 * The SQLite extension that registers the FTS5 function `hearth_bm25(table, frequencies)`: FTS5's bm25() given each
 * phrase's document frequency (a blob of float64, one per phrase of the MATCH, in its order) instead of counting it
 * by a pass over every phrase's whole doclist (sqlite-bm25/hearth-bm25.c). Every connection loads it
 * (`loadExtension(file, entryPoint)`, core/db); compiled by `npm install` with node-gyp, as the vector index's addon.
 */
export const BM25_EXTENSION: { file: string; entryPoint: string } = extension;
