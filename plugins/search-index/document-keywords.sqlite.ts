import { sql } from 'kysely';
import { writeDocumentWords } from '../../core/db/chunk-words.js';
import type { Db } from '../../core/db/database.js';

/**
 * The keyword index of whole documents (documents_fts, migration 0018) on SQLite: a document's row holds the text
 * of all its chunks, written once they are all written. Its rows leave by trigger with any of the document's
 * chunks, so a document being written again, discarded or deleted is never found there with old words.
 */
export class DocumentKeywords {
  constructor(private readonly db: Db) {}

  /**
   * Indexes a document's whole text from its chunks, unless it already is; nothing for a document without chunks. Its
   * chunks' word ids for soft term matching are written with it (core/db/chunk-words.ts: the same lifecycle).
   */
  async index(documentId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await writeDocumentKeywords(trx, documentId);
      await writeDocumentWords(trx, documentId);
    });
  }
}

/** DocumentKeywords.index inside a transaction the caller holds (a writer of chunks that bypasses ingestion: the test fixtures). */
export async function writeDocumentKeywords(db: Db, documentId: string): Promise<void> {
  const { rows } = await sql<{ id: number }>`insert into document_keywords (document_id)
    select ${documentId} where exists (select 1 from chunks where document_id = ${documentId})
      and not exists (select 1 from document_keywords where document_id = ${documentId})
    returning id`.execute(db);
  if (!rows.length) return;
  await sql`insert into documents_fts (rowid, body)
    select ${rows[0].id}, group_concat(text, char(10)) from (select text from chunks where document_id = ${documentId} order by ordinal)`.execute(db);
}
