import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { quoteTerm } from './keyword-query.js';

/** A chunk as search returns it, with its document's filename. */
export interface ChunkHit {
  rowid: number;
  chunk_id: string;
  document_id: string;
  filename: string;
  page: number | null;
  heading: string | null;
  text: string;
}

export interface RankedRowid {
  rowid: number;
  /** -bm25: higher is better. */
  score: number;
}

/** Restricts which chunks may be returned; absent fields do not restrict. */
export interface SearchFilters {
  document_ids?: string[];
  /** Documents whose ACL groups (documents.groups) share at least one of these. */
  groups?: string[];
}

/** SQL of retrieval: FTS5 keyword ranking over chunks_fts and chunk lookups by rowid. Texts stay constant so statements are reused. */
export class RetrievalRepository {
  constructor(private readonly db: Db) {}

  /** Chunks containing each term, counted up to `cap` (stops early: cheap even for a common term); one statement for all terms. */
  async termFrequencies(terms: string[], cap: number): Promise<number[]> {
    if (!terms.length) return [];
    const { rows } = await sql<{ df: number }>`
      select (select count(*) from (select rowid from chunks_fts where chunks_fts match term.value limit ${cap})) as df
      from json_each(${JSON.stringify(terms.map(quoteTerm))}) term order by term.key`.execute(this.db);
    return rows.map((row) => Number(row.df));
  }

  /** Rowid of the (offset+1)-th newest match, or 0 when fewer rows match. */
  async newestMatchFloor(match: string, offset: number): Promise<number> {
    const { rows } = await sql<{ rowid: number }>`select rowid from chunks_fts where chunks_fts match ${match} order by rowid desc limit 1 offset ${offset}`.execute(this.db);
    return rows[0]?.rowid ?? 0;
  }

  /**
   * Best bm25 matches first, among rows at or above `minRowid`. Text and heading weigh the same.
   * ORDER BY bm25() rather than rank: FTS5's rank sorter scores every match and ignores the rowid bound.
   */
  async keywordRanked(match: string, limit: number, minRowid = 0): Promise<RankedRowid[]> {
    const { rows } = await sql<{ rowid: number; bm25: number }>`select rowid, bm25(chunks_fts) as bm25 from chunks_fts where chunks_fts match ${match} and rowid >= ${minRowid} order by bm25 limit ${limit}`.execute(this.db);
    return rows.map((row) => ({ rowid: row.rowid, score: -row.bm25 }));
  }

  /** The chunks of these rowids that may be returned: their document is indexed and passes the filters. CROSS JOIN keeps the rowid list as the outer loop (else SQLite scans every indexed document's chunks). */
  async chunksByRowid(rowids: number[], filters: SearchFilters = {}): Promise<ChunkHit[]> {
    if (!rowids.length) return [];
    const documentIds = filters.document_ids ? JSON.stringify(filters.document_ids) : null;
    const groups = filters.groups ? JSON.stringify(filters.groups) : null;
    const { rows } = await sql<ChunkHit>`
      select c.rowid as rowid, c.id as chunk_id, c.document_id, d.filename, c.page, c.heading, c.text
      from json_each(${JSON.stringify(rowids)}) wanted
      cross join chunks c on c.rowid = wanted.value
      cross join documents d on d.id = c.document_id
      where d.status = 'indexed'
        and (${documentIds} is null or d.id in (select value from json_each(${documentIds})))
        and (${groups} is null or exists (select 1 from json_each(d.groups) g where g.value in (select value from json_each(${groups}))))`.execute(this.db);
    return rows;
  }
}
