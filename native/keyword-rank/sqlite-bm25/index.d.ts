/** The SQLite extension that registers the FTS5 function hearth_bm25(table, frequencies): `db.loadExtension(file, entryPoint)`. */
declare const extension: { file: string; entryPoint: string };
export = extension;
