import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { readableBy } from '../groups/index.js';

/**
 * The source analytics read, as one reader sees it: its documents (uploads: source_id null) that the
 * reader's groups may read, and the ids of its rules.
 */
export interface AnalyticsSource {
  type: 'upload' | 'connector' | 'integration';
  id: string;
  documentSourceId: string | null;
  /** The reader's groups (app.groups.readerGroups): only documents allowed to one of them count. */
  readerGroups: string[];
}

/** The histogram bucket a rank falls in, and how many values lie below it. */
export interface RankBucket {
  from: number;
  to: number;
  before: number;
}

export interface Summary {
  count: number;
  min: number | null;
  max: number | null;
  mean: number | null;
}

/** Every query of analytics, in SQL (reads only): aggregates over one source's chunks, documents and rule results. */
export class AnalyticsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Its indexed documents the reader may read, as a subquery: every count reads through it. The per-rule counts
   * seek each of these documents in an index led by (rule_id, origin, document_id) rather than test each row.
   */
  private documents(source: AnalyticsSource): RawBuilder<unknown> {
    return sql`select id from documents where source_type = ${source.type} and source_id is ${source.documentSourceId} and status = 'indexed'
      and ${readableBy('documents.groups', JSON.stringify(source.readerGroups))}`;
  }

  /** Its rules' ids, as a subquery. */
  private rules(source: AnalyticsSource): RawBuilder<unknown> {
    return sql`select id from metadata_rules where source_type = ${source.type} and source_id = ${source.id}`;
  }

  /** A numeric column over the source's chunks or documents: the rows' values, as a subquery named by `values`. */
  private chunkSizes(source: AnalyticsSource): RawBuilder<unknown> {
    return sql`select c.char_count as v from chunks c where c.document_id in (${this.documents(source)})`;
  }

  private chunksPerDocument(source: AnalyticsSource): RawBuilder<unknown> {
    return sql`select d.chunk_count as v from documents d where d.id in (${this.documents(source)})`;
  }

  chunkSizeSummary(source: AnalyticsSource) {
    return this.summary(this.chunkSizes(source));
  }

  documentChunkSummary(source: AnalyticsSource) {
    return this.summary(this.chunksPerDocument(source));
  }

  chunkSizeValueAt(source: AnalyticsSource, rank: number, bucket: RankBucket) {
    return this.valueAt(this.chunkSizes(source), rank, bucket);
  }

  documentChunksValueAt(source: AnalyticsSource, rank: number, bucket: RankBucket) {
    return this.valueAt(this.chunksPerDocument(source), rank, bucket);
  }

  chunkSizeHistogram(source: AnalyticsSource, min: number, width: number, buckets: number) {
    return this.histogram(this.chunkSizes(source), min, width, buckets);
  }

  documentChunksHistogram(source: AnalyticsSource, min: number, width: number, buckets: number) {
    return this.histogram(this.chunksPerDocument(source), min, width, buckets);
  }

  private async summary(values: RawBuilder<unknown>): Promise<Summary> {
    const { rows } = await sql<Summary>`select count(*) as count, min(v) as min, max(v) as max, avg(v) as mean from (${values})`.execute(this.db);
    return rows[0];
  }

  /**
   * The value at a rank (0-based) in ascending order, for medians and percentiles: only the values of
   * [from, to) are sorted (the histogram bucket the rank falls in), `before` being the count below `from`.
   */
  private async valueAt(values: RawBuilder<unknown>, rank: number, bucket: { from: number; to: number; before: number }): Promise<number | null> {
    const { rows } = await sql<{ v: number }>`select v from (${values}) where v >= ${bucket.from} and v < ${bucket.to}
      order by v limit 1 offset ${rank - bucket.before}`.execute(this.db);
    return rows[0]?.v ?? null;
  }

  /** Counts per equal-width bucket (the last one takes the maximum). */
  private async histogram(values: RawBuilder<unknown>, min: number, width: number, buckets: number): Promise<Map<number, number>> {
    const { rows } = await sql<{ bucket: number; n: number }>`select min(cast((v - ${min}) / ${width} as integer), ${buckets - 1}) as bucket, count(*) as n
      from (${values}) group by bucket`.execute(this.db);
    return new Map(rows.map((row) => [row.bucket, row.n]));
  }

  async totals(source: AnalyticsSource): Promise<{ documents: number; chunks: number }> {
    // documents.chunk_count is kept by ingestion: a thousand rows read instead of every chunk.
    const { rows } = await sql<{ documents: number; chunks: number }>`select count(*) as documents, coalesce(sum(chunk_count), 0) as chunks
      from documents where id in (${this.documents(source)})`.execute(this.db);
    return rows[0];
  }

  /** Per rule of the source: chunks and documents its pattern matched. */
  async hitsPerRule(source: AnalyticsSource): Promise<Array<{ rule_id: string; chunks: number; documents: number }>> {
    const { rows } = await sql<{ rule_id: string; chunks: number; documents: number }>`select rule_id, count(*) as chunks, count(distinct document_id) as documents
      from chunk_rule_hits where rule_id in (${this.rules(source)}) and document_id in (${this.documents(source)}) group by rule_id`.execute(this.db);
    return rows;
  }

  /** Per rule of the source and origin: the chunks whose value it gave (each chunk has one rule per field, so these add up per field). */
  async valuesPerRule(source: AnalyticsSource): Promise<Array<{ rule_id: string; origin: 'self' | 'inherited' | 'document'; chunks: number }>> {
    // Every origin named, so that (rule_id, origin, document_id) is one seek per readable document, in group order.
    const { rows } = await sql<{ rule_id: string; origin: 'self' | 'inherited' | 'document'; chunks: number }>`select rule_id, origin, count(*) as chunks
      from chunk_metadata where rule_id in (${this.rules(source)}) and origin in ('self', 'inherited', 'document')
        and document_id in (${this.documents(source)}) group by rule_id, origin`.execute(this.db);
    return rows;
  }

  /** Per field: chunks with a value from the source's rules, their documents and the distinct values. */
  async fieldTotals(source: AnalyticsSource, fields: string[]): Promise<Array<{ field_name: string; chunks: number; documents: number; distinct_values: number }>> {
    if (!fields.length) return [];
    const { rows } = await sql<{ field_name: string; chunks: number; documents: number; distinct_values: number }>`select
        field_name, count(*) as chunks, count(distinct document_id) as documents, count(distinct value) as distinct_values
      from chunk_metadata where field_name in (${sql.join(fields)}) and rule_id in (${this.rules(source)})
        and document_id in (${this.documents(source)}) group by field_name`.execute(this.db);
    return rows;
  }

  /** Chunks of the source without any metadata value, and up to `sample` of their documents. */
  async emptyChunks(source: AnalyticsSource, sample: number): Promise<{ chunks: number; documents: number; sample: string[] }> {
    const empty = sql`select c.document_id from chunks c where c.document_id in (${this.documents(source)})
      and not exists (select 1 from chunk_metadata m where m.chunk_rowid = c.rowid)`;
    const { rows } = await sql<{ chunks: number; documents: number }>`select count(*) as chunks, count(distinct document_id) as documents from (${empty})`.execute(this.db);
    // In scan order (no sort): the query stops at the sample's size.
    const ids = await sql<{ document_id: string }>`select distinct document_id from (${empty}) limit ${sample}`.execute(this.db);
    return { ...rows[0], sample: ids.rows.map((row) => row.document_id) };
  }

  /** Where two or more rules of a field matched: per winning rule, how often it won (inherited values are never contested). */
  async contestedWins(source: AnalyticsSource): Promise<Array<{ rule_id: string; wins: number }>> {
    const { rows } = await sql<{ rule_id: string; wins: number }>`select rule_id, count(*) as wins
      from chunk_metadata where rule_id in (${this.rules(source)}) and origin in ('self', 'document') and contenders >= 2
        and document_id in (${this.documents(source)}) group by rule_id`.execute(this.db);
    return rows;
  }
}
