import { type Kysely, sql } from 'kysely';
import { writeChunkWords } from '../chunk-words.js';
import type { Database } from '../schema.js';

/** Chunks cut into words a batch while the migration fills the table for chunks indexed before it. */
const BACKFILL_CHUNKS = 1000;

/**
 * Each chunk's distinct content words as ids into one vocabulary (issue 16, session 22): soft term matching
 * (plugins/retrieval/soft-match.ts) compares the question's words with the words of ~1,000 candidate chunks a search,
 * and cutting their text into words took ~30 ms of it; the ids are cut once, when the chunk is written
 * (ChunksRepository.insertBatch), and read as one small blob. A chunk's row goes with the chunk (trigger), and with
 * any change of its text. Chunks indexed before are cut here, a thousand at a time (about 10 s at 100k chunks).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table vocabulary (id integer primary key, word text not null unique)`.execute(db);
  await sql`create table chunk_words (chunk_rowid integer primary key, words blob not null)`.execute(db);
  await sql`create trigger chunk_words_delete after delete on chunks begin
    delete from chunk_words where chunk_rowid = old.rowid;
  end`.execute(db);
  await sql`create trigger chunk_words_text_update after update of text on chunks begin
    delete from chunk_words where chunk_rowid = old.rowid;
  end`.execute(db);
  for (let after = 0; ; ) {
    const { rows } = await sql<{ rowid: number; text: string }>`select rowid, text from chunks where rowid > ${after} order by rowid limit ${BACKFILL_CHUNKS}`.execute(db);
    if (!rows.length) break;
    await writeChunkWords(
      db as Kysely<Database>,
      rows.map((row) => row.rowid),
      rows.map((row) => row.text),
    );
    after = rows[rows.length - 1].rowid;
  }
}
