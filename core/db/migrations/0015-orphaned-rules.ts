import { type Kysely, sql } from 'kysely';

/**
 * Deleting a connector or integration now deletes its metadata rules (issue 17). Rules left by sources deleted
 * before go now: the API could no longer reach them, yet their query patterns still turned chat questions into
 * metadata filters. Their values went with the source's documents (chunk_metadata and chunk_rule_hits follow chunks).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`delete from metadata_rules where (source_type = 'connector' and source_id not in (select id from connectors))
    or (source_type = 'integration' and source_id not in (select id from integrations))`.execute(db);
}
