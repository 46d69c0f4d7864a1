import type { Insertable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { ChunksTable } from '../../core/db/documents-schema.js';

export type NewChunk = Omit<Insertable<ChunksTable>, 'rowid'>;

/** Chunk rows of the ingestion pipeline: the source of truth the vector index is rebuilt from. */
export class ChunksRepository {
  constructor(private readonly db: Db) {}

  async idsOf(documentId: string): Promise<Array<{ id: string; embedded_with: string | null }>> {
    return this.db.selectFrom('chunks').select(['id', 'embedded_with']).where('document_id', '=', documentId).orderBy('ordinal').execute();
  }

  /** Deletes a document's chunks and returns their rowids (the vector labels to remove). */
  async deleteOf(documentId: string): Promise<number[]> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx.selectFrom('chunks').select('rowid').where('document_id', '=', documentId).execute();
      await trx.deleteFrom('chunks').where('document_id', '=', documentId).execute();
      return rows.map((row) => row.rowid);
    });
  }

  /** Inserts one batch in one transaction; returns the rowids in input order. */
  async insertBatch(chunks: NewChunk[]): Promise<number[]> {
    if (chunks.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      const rowids: number[] = [];
      for (const chunk of chunks) {
        const row = await trx.insertInto('chunks').values(chunk).returning('rowid').executeTakeFirstOrThrow();
        rowids.push(row.rowid);
      }
      return rowids;
    });
  }

  async markEmbedded(rowids: number[], modelId: string): Promise<void> {
    if (rowids.length === 0) return;
    await this.db.updateTable('chunks').set({ embedded_with: modelId }).where('rowid', 'in', rowids).execute();
  }

  /** After a full rebuild: every chunk up to the last one walked has a vector of this model. */
  async markEmbeddedUpTo(lastRowid: number, modelId: string): Promise<void> {
    await this.db.updateTable('chunks').set({ embedded_with: modelId }).where('rowid', '<=', lastRowid).execute();
  }

  /** Chunks not yet embedded with this model, oldest first, in pages (rebuilds and repairs walk them). */
  async pendingFor(modelId: string, afterRowid: number, limit: number): Promise<Array<{ rowid: number; text: string }>> {
    return this.db
      .selectFrom('chunks')
      .select(['rowid', 'text'])
      .where('rowid', '>', afterRowid)
      .where((eb) => eb.or([eb('embedded_with', 'is', null), eb('embedded_with', '!=', modelId)]))
      .orderBy('rowid')
      .limit(limit)
      .execute();
  }

  /** Every chunk in rowid order, a page at a time (a full rebuild walks them). */
  async page(afterRowid: number, limit: number): Promise<Array<{ rowid: number; text: string }>> {
    return this.db.selectFrom('chunks').select(['rowid', 'text']).where('rowid', '>', afterRowid).orderBy('rowid').limit(limit).execute();
  }

  async countPending(modelId: string): Promise<number> {
    const row = await this.db
      .selectFrom('chunks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => eb.or([eb('embedded_with', 'is', null), eb('embedded_with', '!=', modelId)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async rowidsEmbeddedWith(modelId: string): Promise<number[]> {
    const rows = await this.db.selectFrom('chunks').select('rowid').where('embedded_with', '=', modelId).execute();
    return rows.map((row) => row.rowid);
  }

  /** Forgets that these chunks have a vector (their vectors were lost): they are embedded again. */
  async clearEmbedded(rowids: number[]): Promise<void> {
    for (let i = 0; i < rowids.length; i += 500) {
      await this.db.updateTable('chunks').set({ embedded_with: null }).where('rowid', 'in', rowids.slice(i, i + 500)).execute();
    }
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('chunks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
