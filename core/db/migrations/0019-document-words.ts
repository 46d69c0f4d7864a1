import { type Kysely, sql } from 'kysely';
import { writeDocumentWords } from '../chunk-words.js';
import type { Database } from '../schema.js';

/**
 * Each chunk's distinct content words as ids into one vocabulary (issue 16, session 22): soft term matching
 * (plugins/retrieval/soft-match.ts) compares the question's words with the words of ~1,000 candidate chunks a search,
 * and cutting their text into words took ~30 ms of it. The ids are cut once, when a document's chunks are all written
 * (with its keyword row: plugins/search-index/document-keywords.sqlite.ts), and stored a row per 128 chunks of a
 * document: a search reads its ~30 candidate documents' first rows, as far as its chunk budget goes, where a row a chunk
 * cost ~2.5 ms to read (a few µs a row). A document's rows go with any of its chunks (trigger), as its keyword row
 * does, so a document written again, discarded or deleted is never read with old words. The documents indexed before
 * are cut here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table vocabulary (id integer primary key, word text not null unique)`.execute(db);
  await sql`create table document_words (
    document_id text not null,
    piece integer not null,
    counts blob not null,
    words blob not null,
    primary key (document_id, piece)
  ) without rowid`.execute(db);
  await sql`create trigger document_words_delete after delete on chunks begin
    delete from document_words where document_id = old.document_id;
  end`.execute(db);
  await sql`create trigger document_words_text_update after update of text on chunks begin
    delete from document_words where document_id = old.document_id;
  end`.execute(db);
  const { rows } = await sql<{ document_id: string }>`select distinct document_id from chunks order by document_id`.execute(db);
  for (const { document_id } of rows) await writeDocumentWords(db as Kysely<Database>, document_id);
}
