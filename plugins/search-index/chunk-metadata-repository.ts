import type { Insertable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { ChunkMetadataTable, ChunkRuleHitsTable } from '../../core/db/metadata-schema.js';

/** A document's metadata as the rules gave it: per chunk (by rowid, in order), its field values and the rules that matched it. */
export interface DocumentMetadata {
  documentId: string;
  rowids: number[];
  values: Array<Array<Omit<Insertable<ChunkMetadataTable>, 'chunk_rowid' | 'document_id'>>>;
  hits: string[][];
  /** The chunk boundaries it was chunked under ('' for none). */
  boundaryKey: string;
}

/** 7 columns a row: 500 rows bind 3,500 parameters. */
const ROWS_PER_STATEMENT = 500;

/** The metadata values of chunks (filtered on by retrieval) and the rule hits behind them, replaced a document at a time. */
export class ChunkMetadataRepository {
  constructor(private readonly db: Db) {}

  /** Replaces a document's chunk metadata in one transaction. */
  async replace(metadata: DocumentMetadata, now: number): Promise<void> {
    const { documentId, rowids } = metadata;
    const values = metadata.values.flatMap((fields, i) => fields.map((field) => ({ ...field, chunk_rowid: rowids[i], document_id: documentId })));
    const hits: Array<Insertable<ChunkRuleHitsTable>> = metadata.hits.flatMap((rules, i) => rules.map((rule_id) => ({ rule_id, chunk_rowid: rowids[i], document_id: documentId })));
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rowids.length; i += ROWS_PER_STATEMENT) {
        const part = rowids.slice(i, i + ROWS_PER_STATEMENT);
        await trx.deleteFrom('chunk_metadata').where('chunk_rowid', 'in', part).execute();
        await trx.deleteFrom('chunk_rule_hits').where('chunk_rowid', 'in', part).execute();
      }
      for (let i = 0; i < values.length; i += ROWS_PER_STATEMENT) await trx.insertInto('chunk_metadata').values(values.slice(i, i + ROWS_PER_STATEMENT)).execute();
      for (let i = 0; i < hits.length; i += ROWS_PER_STATEMENT) await trx.insertInto('chunk_rule_hits').values(hits.slice(i, i + ROWS_PER_STATEMENT)).execute();
      await trx
        .insertInto('document_rule_state')
        .values({ document_id: documentId, boundary_key: metadata.boundaryKey, labelled_at: now })
        .onConflict((oc) => oc.column('document_id').doUpdateSet({ boundary_key: metadata.boundaryKey, labelled_at: now }))
        .execute();
    });
  }

  /** The chunk boundaries the document was last chunked under; undefined when it never was labelled. */
  async boundaryKeyOf(documentId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('document_rule_state').select('boundary_key').where('document_id', '=', documentId).executeTakeFirst();
    return row?.boundary_key;
  }

  /** A document's chunks in order, what the rules read. */
  chunksOf(documentId: string): Promise<Array<{ rowid: number; text: string; heading: string | null }>> {
    return this.db.selectFrom('chunks').select(['rowid', 'text', 'heading']).where('document_id', '=', documentId).orderBy('ordinal').execute();
  }
}
