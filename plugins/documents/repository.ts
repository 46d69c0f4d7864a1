import { type Expression, type InsertObject, type Selectable, sql, type Updateable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { Database } from '../../core/db/schema.js';
import { readableBy } from '../groups/index.js';
import type { DocumentStatus, DocumentsTable, SourceType } from '../../core/db/documents-schema.js';

export type DocumentRow = Selectable<DocumentsTable>;

export interface DocumentFilter {
  status?: DocumentStatus;
  file_type?: string;
  source_type?: SourceType;
  source_id?: string;
  sort: 'created_at' | 'filename' | 'size_bytes' | 'updated_at';
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export class DocumentsRepository {
  constructor(private readonly db: Db) {}

  /** The document if the reader's groups may read it. */
  findReadable(id: string, groups: string[]): Promise<DocumentRow | undefined> {
    return this.db.selectFrom('documents').selectAll().where('id', '=', id).where(readableBy('documents.groups', JSON.stringify(groups))).executeTakeFirst();
  }

  /** Which of these ids name documents the reader's groups may read. */
  async readableIds(ids: string[], groups: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.db.selectFrom('documents').select('id').where('id', 'in', ids).where(readableBy('documents.groups', JSON.stringify(groups))).execute();
    return rows.map((row) => row.id);
  }

  /**
   * The groups a connector's or integration's new documents get (migration 0012), read from the source's row by the
   * insert itself: an access change of the source, or a group's delete or rename, that went first is never undone by a
   * copy read before it. No group when the source is gone (deleted while its scan registered this document: readable
   * by no one until the cancelled scan's end removes it; everyone would open a restricted source's document to all).
   */
  sourceGroups(sourceType: SourceType, sourceId: string | null): Expression<string> {
    if (sourceType === 'upload' || !sourceId) return sql<string>`'["everyone"]'`;
    const table = sourceType === 'connector' ? 'connectors' : 'integrations';
    return sql<string>`coalesce((select groups from ${sql.table(table)} where id = ${sourceId}), '[]')`;
  }

  async insert(document: InsertObject<Database, 'documents'>): Promise<void> {
    await this.db.insertInto('documents').values(document).execute();
  }

  findById(id: string): Promise<DocumentRow | undefined> {
    return this.db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** A document of this content the reader's groups may read (copies they may not read are not theirs to know of). */
  findReadableBySha(sha256: string, sourceType: SourceType, groups: string[]): Promise<DocumentRow | undefined> {
    return this.db
      .selectFrom('documents')
      .selectAll()
      .where('sha256', '=', sha256)
      .where('source_type', '=', sourceType)
      .where(readableBy('documents.groups', JSON.stringify(groups)))
      .executeTakeFirst();
  }

  findBySource(sourceType: SourceType, sourceId: string, sourcePath: string): Promise<DocumentRow | undefined> {
    return this.db
      .selectFrom('documents')
      .selectAll()
      .where('source_type', '=', sourceType)
      .where('source_id', '=', sourceId)
      .where('source_path', '=', sourcePath)
      .executeTakeFirst();
  }

  listBySource(sourceType: SourceType, sourceId: string): Promise<DocumentRow[]> {
    return this.db.selectFrom('documents').selectAll().where('source_type', '=', sourceType).where('source_id', '=', sourceId).execute();
  }

  /** Documents per source of one type, for the sources' list views. */
  async countsBySource(sourceType: SourceType, sourceIds: string[], readerGroups?: string[]): Promise<Map<string, number>> {
    if (sourceIds.length === 0) return new Map();
    let query = this.db
      .selectFrom('documents')
      .select((eb) => ['source_id', eb.fn.countAll<number>().as('n')])
      .where('source_type', '=', sourceType)
      .where('source_id', 'in', sourceIds);
    if (readerGroups) query = query.where(readableBy('documents.groups', JSON.stringify(readerGroups)));
    const rows = await query.groupBy('source_id').execute();
    return new Map(rows.map((row) => [row.source_id!, Number(row.n)]));
  }

  /** Ids of a source's documents (uploads: source_id null), oldest first. */
  async idsBySource(sourceType: SourceType, sourceId: string | null): Promise<string[]> {
    const rows = await this.db.selectFrom('documents').select('id').where('source_type', '=', sourceType).where('source_id', 'is', sourceId).orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => row.id);
  }

  findByIds(ids: string[]): Promise<DocumentRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('documents').selectAll().where('id', 'in', ids).execute();
  }

  /** Ids of documents by file name, in any case (a chat question naming "budget.pdf" searches that file). */
  async findIdsByFilenames(filenames: string[]): Promise<string[]> {
    if (filenames.length === 0) return [];
    const rows = await this.db.selectFrom('documents').select('id').where((eb) => eb(eb.fn('lower', ['filename']), 'in', filenames.map((name) => name.toLowerCase()))).execute();
    return rows.map((row) => row.id);
  }

  findByStatus(statuses: DocumentStatus[]): Promise<DocumentRow[]> {
    return this.db.selectFrom('documents').selectAll().where('status', 'in', statuses).orderBy('created_at').execute();
  }

  /** The documents the reader's groups may read, in the filter; the access test is part of the query (and so of `total`). */
  async list(filter: DocumentFilter, groups: string[]): Promise<{ documents: DocumentRow[]; total: number }> {
    let query = this.db.selectFrom('documents').where(readableBy('documents.groups', JSON.stringify(groups)));
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.file_type) query = query.where('file_type', '=', filter.file_type);
    if (filter.source_type) query = query.where('source_type', '=', filter.source_type);
    if (filter.source_id) query = query.where('source_id', '=', filter.source_id);
    const [documents, count] = await Promise.all([
      query.selectAll().orderBy(filter.sort, filter.order).orderBy('id').limit(filter.limit).offset(filter.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { documents, total: Number(count.n) };
  }

  /** Sets `change` (a new status among it) on the documents that are in one of the states `from`; returns how many changed. */
  async move(ids: string[], from: DocumentStatus[], change: Updateable<DocumentsTable>): Promise<number> {
    let moved = 0;
    for (let i = 0; i < ids.length; i += 500) {
      const result = await this.db.updateTable('documents').set(change).where('id', 'in', ids.slice(i, i + 500)).where('status', 'in', from).executeTakeFirst();
      moved += Number(result.numUpdatedRows);
    }
    return moved;
  }

  /** Count and bytes of every stored document: what the plan limits measure. */
  async usage(): Promise<{ documents: number; storage_bytes: number }> {
    const row = await this.db
      .selectFrom('documents')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.coalesce(eb.fn.sum<number>('size_bytes'), eb.lit(0)).as('bytes')])
      .executeTakeFirstOrThrow();
    return { documents: Number(row.n), storage_bytes: Number(row.bytes) };
  }

  /** Deletes documents and returns their rows; `db` is the transaction in which the index deletes their chunks. */
  async delete(ids: string[], db: Db): Promise<DocumentRow[]> {
    if (ids.length === 0) return [];
    const deleted = await db.selectFrom('documents').selectAll().where('id', 'in', ids).execute();
    await db.deleteFrom('documents').where('id', 'in', ids).execute();
    return deleted;
  }
}
