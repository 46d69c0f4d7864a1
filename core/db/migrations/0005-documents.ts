import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('file_type', 'text', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('source_type', 'text', (c) => c.notNull().check(sql`source_type in ('upload', 'connector', 'integration')`))
    .addColumn('source_id', 'text')
    .addColumn('source_path', 'text')
    .addColumn('storage_path', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'indexing', 'indexed', 'failed')`))
    .addColumn('error', 'text')
    .addColumn('page_count', 'integer')
    .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('groups', 'text', (c) => c.notNull().defaultTo('["everyone"]'))
    .addColumn('uploaded_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('indexed_at', 'bigint')
    .execute();
  await db.schema.createIndex('documents_sha256').on('documents').column('sha256').execute();
  await db.schema.createIndex('documents_source').on('documents').columns(['source_type', 'source_id', 'source_path']).execute();
  await db.schema.createIndex('documents_status').on('documents').column('status').execute();

  await db.schema
    .createTable('chunks')
    .addColumn('rowid', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('page', 'integer')
    .addColumn('heading', 'text')
    .addColumn('sheet', 'text')
    .addColumn('row', 'integer')
    .addColumn('char_count', 'integer', (c) => c.notNull())
    .addColumn('token_count', 'integer', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('embedded_with', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chunks_document').on('chunks').columns(['document_id', 'ordinal']).execute();

  // Keyword index over the same chunks (external content: the text is stored once, in chunks).
  await sql`create virtual table chunks_fts using fts5(text, heading, content='chunks', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2')`.execute(db);
  await sql`create trigger chunks_fts_insert after insert on chunks begin
    insert into chunks_fts(rowid, text, heading) values (new.rowid, new.text, coalesce(new.heading, ''));
  end`.execute(db);
  await sql`create trigger chunks_fts_delete after delete on chunks begin
    insert into chunks_fts(chunks_fts, rowid, text, heading) values ('delete', old.rowid, old.text, coalesce(old.heading, ''));
  end`.execute(db);
  await sql`create trigger chunks_fts_update after update of text, heading on chunks begin
    insert into chunks_fts(chunks_fts, rowid, text, heading) values ('delete', old.rowid, old.text, coalesce(old.heading, ''));
    insert into chunks_fts(rowid, text, heading) values (new.rowid, new.text, coalesce(new.heading, ''));
  end`.execute(db);

  await db.schema
    .createTable('connectors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('recursive', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('include', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('last_scan_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('credentials_sealed', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('last_sync_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('integration_pages')
    .addColumn('integration_id', 'text', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('etag', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('sha256', 'text')
    .addColumn('document_id', 'text', (c) => c.references('documents.id').onDelete('set null'))
    .addColumn('fetched_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('integration_pages_pk', ['integration_id', 'url'])
    .execute();
}
