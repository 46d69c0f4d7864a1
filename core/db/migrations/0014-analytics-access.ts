import { type Kysely, sql } from 'kysely';

/**
 * Analytics count only the documents their caller may read (issue 18), so their per-rule counts filter
 * chunk_metadata on document_id. The two per-rule indexes of 0009 did not hold it (every row was then read
 * from the table, and tested): one index replaces both, in which each readable document is one seek.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index chunk_metadata_rule`.execute(db);
  await sql`drop index chunk_metadata_origin`.execute(db);
  // Inheritance ratios seek (rule, origin, document) and group by (rule, origin) in index order; contested wins
  // seek (rule, origin, document, contenders >= 2).
  await sql`create index chunk_metadata_rule_document on chunk_metadata(rule_id, origin, document_id, contenders)`.execute(db);
}
