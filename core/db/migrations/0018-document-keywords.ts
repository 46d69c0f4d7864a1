import { type Kysely, sql } from 'kysely';

/**
 * A keyword index of whole documents beside the chunks' (issue 16): a document's bm25 weighs its words over its
 * whole text, so a question whose words are spread over several chunks (or sit in chunks other than the one that
 * answers) still finds it. On the evaluation's second question set, ranking documents this way found the right
 * one in the first five for 0.508 of dev questions against 0.475 for the chunks' keyword search
 * (docs/retrieval-quality.md).
 *
 * documents_fts is contentless (the text is the chunks', stored once, in chunks) with contentless_delete, so a row
 * can be deleted by rowid alone. Its rowid is document_keywords.id, an INTEGER PRIMARY KEY, which no VACUUM renumbers
 * (a document's own rowid could be). A document's row is written once its chunks are (ingestion), and goes with any
 * of its chunks: deleting a chunk deletes the document's keyword row, which deletes its index row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table document_keywords (
    id integer primary key,
    document_id text not null unique references documents(id) on delete cascade
  )`.execute(db);
  await sql`create virtual table documents_fts using fts5(body, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')`.execute(db);
  await sql`create trigger document_keywords_delete after delete on document_keywords begin
    delete from documents_fts where rowid = old.id;
  end`.execute(db);
  await sql`create trigger chunks_document_keywords_delete after delete on chunks begin
    delete from document_keywords where document_id = old.document_id;
  end`.execute(db);
  await sql`insert into document_keywords (document_id) select distinct document_id from chunks order by document_id`.execute(db);
  await sql`insert into documents_fts (rowid, body)
    select k.id, (select group_concat(text, char(10)) from (select text from chunks c where c.document_id = k.document_id order by c.ordinal))
    from document_keywords k`.execute(db);
}
