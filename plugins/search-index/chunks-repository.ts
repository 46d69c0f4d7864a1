import { type Insertable, sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { ChunksTable } from '../../core/db/documents-schema.js';
import { readableBy } from '../groups/index.js';

export type NewChunk = Omit<Insertable<ChunksTable>, 'rowid'>;

/** 13 columns a row: 500 rows bind 6,500 parameters (SQLite allows 32,766). */
const INSERT_ROWS_PER_STATEMENT = 500;

/** Chunk rows (the source of truth the vector index is rebuilt from) and, by trigger, their keyword rows in chunks_fts. */
export class ChunksRepository {
  constructor(private readonly db: Db) {}

  async idsOf(documentId: string): Promise<Array<{ rowid: number; id: string; embedded_with: string | null }>> {
    return this.db.selectFrom('chunks').select(['rowid', 'id', 'embedded_with']).where('document_id', '=', documentId).orderBy('ordinal').execute();
  }

  /** Deletes a document's chunks and returns their rowids (the vector labels to remove). */
  async deleteOf(documentId: string): Promise<number[]> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx.selectFrom('chunks').select('rowid').where('document_id', '=', documentId).execute();
      await trx.deleteFrom('chunks').where('document_id', '=', documentId).execute();
      return rows.map((row) => row.rowid);
    });
  }

  /**
   * Deletes documents' chunks and, in the same transaction, the documents themselves (`removeDocuments`);
   * returns what that returned and the chunks' rowids (the vector labels to remove).
   */
  async deleteWithDocuments<T>(documentIds: string[], removeDocuments: (db: Db) => Promise<T>): Promise<{ result: T; rowids: number[] }> {
    if (documentIds.length === 0) return { result: await removeDocuments(this.db), rowids: [] };
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx.selectFrom('chunks').select('rowid').where('document_id', 'in', documentIds).execute();
      await trx.deleteFrom('chunks').where('document_id', 'in', documentIds).execute();
      return { result: await removeDocuments(trx), rowids: rows.map((row) => row.rowid) };
    });
  }

  /**
   * Inserts one batch in one transaction, a multi-row INSERT per 500 rows (well under SQLite's
   * bound-parameter limit); returns the rowids in input order (RETURNING's order is unspecified,
   * so they are matched by chunk id).
   */
  async insertBatch(chunks: NewChunk[]): Promise<number[]> {
    if (chunks.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      const rowidOf = new Map<string, number>();
      for (let i = 0; i < chunks.length; i += INSERT_ROWS_PER_STATEMENT) {
        const rows = await trx.insertInto('chunks').values(chunks.slice(i, i + INSERT_ROWS_PER_STATEMENT)).returning(['rowid', 'id']).execute();
        for (const row of rows) rowidOf.set(row.id, row.rowid);
      }
      return chunks.map((chunk) => rowidOf.get(chunk.id)!);
    });
  }

  /**
   * Records the model on chunks whose vectors were just added, and returns the rowids that still
   * exist. Call it after VectorIndex.add: a chunk deleted meanwhile (its document deleted, or an
   * interrupted document discarded at boot) is missing from the result, and its vector must go.
   */
  async markEmbedded(rowids: number[], modelId: string): Promise<number[]> {
    const kept: number[] = [];
    for (let i = 0; i < rowids.length; i += 500) {
      const rows = await this.db.updateTable('chunks').set({ embedded_with: modelId }).where('rowid', 'in', rowids.slice(i, i + 500)).returning('rowid').execute();
      for (const row of rows) kept.push(row.rowid);
    }
    return kept;
  }

  /** After a full rebuild: every chunk up to the last one walked has a vector of this model. */
  async markEmbeddedUpTo(lastRowid: number, modelId: string): Promise<void> {
    await this.db.updateTable('chunks').set({ embedded_with: modelId }).where('rowid', '<=', lastRowid).execute();
  }

  /** The access keys of these chunks (their document's): what a filtered vector search admits them by. */
  async keysOf(rowids: number[]): Promise<number[]> {
    const keyOf = new Map<number, number>();
    for (let i = 0; i < rowids.length; i += 500) {
      const rows = await this.db
        .selectFrom('chunks')
        .innerJoin('documents', 'documents.id', 'chunks.document_id')
        .select(['chunks.rowid as rowid', 'documents.access_key as key'])
        .where('chunks.rowid', 'in', rowids.slice(i, i + 500))
        .execute();
      for (const row of rows) keyOf.set(row.rowid, row.key ?? 0);
    }
    return rowids.map((rowid) => keyOf.get(rowid) ?? 0); // 0: no document (deleted meanwhile), admitted by no filter
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

  /** Chunks of the documents the reader's groups may read: all of them, and those without a vector of `modelId` (all without one). */
  async countReadable(groups: string[], modelId: string | null): Promise<{ chunks: number; pending: number }> {
    const pending = modelId === null ? sql<number>`count(*)` : sql<number>`count(*) filter (where c.embedded_with is null or c.embedded_with <> ${modelId})`;
    const row = await this.db
      .selectFrom('chunks as c')
      .select([sql<number>`count(*)`.as('chunks'), pending.as('pending')])
      .where('c.document_id', 'in', this.readableDocuments(groups))
      .executeTakeFirstOrThrow();
    return { chunks: Number(row.chunks), pending: Number(row.pending) };
  }

  private readableDocuments(groups: string[]) {
    return this.db.selectFrom('documents').select('id').where(readableBy('documents.groups', JSON.stringify(groups)));
  }

  /** Chunks with a vector of this model, and their access keys (a loaded index gets its keys from here). */
  async embeddedWith(modelId: string): Promise<Array<{ rowid: number; key: number }>> {
    const rows = await this.db
      .selectFrom('chunks')
      .innerJoin('documents', 'documents.id', 'chunks.document_id')
      .select(['chunks.rowid as rowid', 'documents.access_key as key'])
      .where('chunks.embedded_with', '=', modelId)
      .execute();
    return rows.map((row) => ({ rowid: row.rowid, key: row.key ?? 0 }));
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
