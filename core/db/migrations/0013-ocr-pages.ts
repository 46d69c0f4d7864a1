import type { Kysely } from 'kysely';

/** OCR (issue 19): the confidence of the page a chunk was read from, and the pages of a document that read badly or not at all. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chunks').addColumn('ocr_confidence', 'real').execute();
  await db.schema.alterTable('documents').addColumn('page_warnings', 'text', (c) => c.notNull().defaultTo('[]')).execute();
}
