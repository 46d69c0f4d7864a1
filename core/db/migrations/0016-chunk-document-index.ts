import { type Kysely, sql } from 'kysely';

/**
 * A filtered keyword ranking (issue 18) reaches each match's document through its chunk: by rowid, only for
 * document_id. Through the table that read the chunk's whole row, text inline; this narrow index holds just the
 * two (about 50 bytes a chunk), and the ranking names it (INDEXED BY: the planner prefers the rowid table).
 * Measured on 100k chunks: the join's cost fell by 60-75% (docs/groups.md). SQLite keeps it with the table, so a
 * backup or restore carries it as it carries the rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index chunks_document_by_rowid on chunks(rowid, document_id)`.execute(db);
}
