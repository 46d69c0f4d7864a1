import { type Kysely, sql } from 'kysely';

/**
 * Metadata rules (PRO): the rules per source, the value of each field on each chunk (indexed by field
 * and value: retrieval filters on it), which rules matched each chunk (the analytics' hit rates), and
 * the chunk boundaries each document was chunked under (the refresh job re-chunks only when they changed).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('metadata_rules')
    // Integer key: creation order, which breaks priority ties (the oldest rule wins).
    .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('source_type', 'text', (c) => c.notNull().check(sql`source_type in ('upload', 'connector', 'integration')`))
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('field_name', 'text', (c) => c.notNull())
    .addColumn('pattern', 'text', (c) => c.notNull())
    .addColumn('query_pattern', 'text')
    .addColumn('scope', 'text', (c) => c.notNull().check(sql`scope in ('full', 'header', 'filename')`))
    .addColumn('level', 'text', (c) => c.notNull().check(sql`level in ('document', 'chunk')`))
    .addColumn('chunk_boundary', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('metadata_rules_source').on('metadata_rules').columns(['source_type', 'source_id']).execute();

  await sql`create table chunk_metadata (
    chunk_rowid integer not null references chunks(rowid) on delete cascade,
    document_id text not null,
    field_name text not null,
    value text not null,
    origin text not null check (origin in ('self', 'inherited', 'document')),
    rule_id text not null,
    contenders integer not null,
    primary key (chunk_rowid, field_name)
  ) without rowid`.execute(db);
  // Covering indexes: retrieval's filter reads (field_name, value) -> chunk_rowid; analytics count per field and per rule without reading rows.
  await sql`create index chunk_metadata_value on chunk_metadata(field_name, value, rule_id, document_id, chunk_rowid)`.execute(db);
  await sql`create index chunk_metadata_rule on chunk_metadata(rule_id, contenders, origin)`.execute(db);
  // Inheritance ratios count per (rule, origin) in index order, without a sort.
  await sql`create index chunk_metadata_origin on chunk_metadata(rule_id, origin)`.execute(db);

  await sql`create table chunk_rule_hits (
    rule_id text not null,
    chunk_rowid integer not null references chunks(rowid) on delete cascade,
    document_id text not null,
    primary key (rule_id, chunk_rowid)
  ) without rowid`.execute(db);
  await sql`create index chunk_rule_hits_chunk on chunk_rule_hits(chunk_rowid)`.execute(db);
  // Hit rates count distinct documents per rule in index order, without a sort.
  await sql`create index chunk_rule_hits_document on chunk_rule_hits(rule_id, document_id)`.execute(db);
  // Chunk-size analytics read lengths per document from the index alone (the rows hold the text).
  await sql`create index chunks_document_size on chunks(document_id, char_count)`.execute(db);

  await sql`create table document_rule_state (
    document_id text primary key references documents(id) on delete cascade,
    boundary_key text not null,
    labelled_at bigint not null
  )`.execute(db);
}
