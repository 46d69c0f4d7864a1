import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { prepared } from '../../core/db/prepared.js';
import { probedFrequency, quoteTerm } from './keyword-query.js';

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

/** SQL of retrieval, reads only: FTS5 keyword ranking over chunks_fts and chunk lookups by rowid, each compiled once. */
export class RetrievalRepository {
  private readonly span;
  private readonly probe;
  private readonly floor;
  private readonly ranked;
  private readonly chunks;

  constructor(private readonly db: Db) {
    const run = db as never;
    // Two subqueries: SQLite reads min() and max() off the rowid b-tree only when each stands alone.
    this.span = prepared<{ first: number | null; last: number | null }, Record<string, never>>(
      run,
      sql<{ first: number | null; last: number | null }>`select (select min(rowid) from chunks) as first, (select max(rowid) from chunks) as last`.compile(db),
    );
    this.probe = prepared<{ n: number; last: number | null }, { match: string; cap: number }>(
      run,
      sql<{ n: number; last: number | null }>`select count(*) as n, max(rowid) as last from (select rowid from chunks_fts where chunks_fts match ${'$match'} limit ${'$cap'})`.compile(db),
    );
    this.floor = prepared<{ rowid: number }, { match: string; offset: number }>(
      run,
      sql<{ rowid: number }>`select rowid from chunks_fts where chunks_fts match ${'$match'} order by rowid desc limit 1 offset ${'$offset'}`.compile(db),
    );
    // ORDER BY bm25() rather than rank: FTS5's rank sorter scores every match and ignores the rowid bound.
    this.ranked = prepared<{ rowid: number; bm25: number }, { match: string; minRowid: number; limit: number }>(
      run,
      sql<{ rowid: number; bm25: number }>`select rowid, bm25(chunks_fts) as bm25 from chunks_fts
        where chunks_fts match ${'$match'} and rowid >= ${'$minRowid'} order by bm25 limit ${'$limit'}`.compile(db),
    );
    // CROSS JOIN keeps the rowid list as the outer loop (else SQLite scans every indexed document's chunks).
    this.chunks = prepared<ChunkHit, { rowids: string; documentIds: string | null; groups: string | null }>(
      run,
      sql<ChunkHit>`select c.rowid as rowid, c.id as chunk_id, c.document_id, d.filename, c.page, c.heading, c.text
        from json_each(${'$rowids'}) wanted
        cross join chunks c on c.rowid = wanted.value
        cross join documents d on d.id = c.document_id
        where d.status = 'indexed'
          and (${'$documentIds'} is null or d.id in (select value from json_each(${'$documentIds'})))
          and (${'$groups'} is null or exists (select 1 from json_each(d.groups) g where g.value in (select value from json_each(${'$groups'}))))`.compile(db),
    );
  }

  /** Chunks containing each term, counted up to `cap` and estimated beyond it (see probedFrequency): a common term costs no more than a rare one. */
  async termFrequencies(terms: string[], cap: number): Promise<number[]> {
    if (!terms.length) return [];
    const [rowids] = await this.span({});
    const frequencies: number[] = [];
    for (const term of terms) frequencies.push(probedFrequency((await this.probe({ match: quoteTerm(term), cap }))[0], cap, rowids));
    return frequencies;
  }

  /** Rowid of the (offset+1)-th newest match, or 0 when fewer rows match. */
  async newestMatchFloor(match: string, offset: number): Promise<number> {
    return (await this.floor({ match, offset }))[0]?.rowid ?? 0;
  }

  /** Best bm25 matches first, among rows at or above `minRowid`. Text and heading weigh the same. */
  async keywordRanked(match: string, limit: number, minRowid = 0): Promise<RankedRowid[]> {
    const rows = await this.ranked({ match, minRowid, limit });
    return rows.map((row) => ({ rowid: row.rowid, score: -row.bm25 }));
  }

  /** The chunks of these rowids that may be returned: their document is indexed and passes the filters. */
  async chunksByRowid(rowids: number[], filters: SearchFilters = {}): Promise<ChunkHit[]> {
    if (!rowids.length) return [];
    return this.chunks({
      rowids: JSON.stringify(rowids),
      documentIds: filters.document_ids ? JSON.stringify(filters.document_ids) : null,
      groups: filters.groups ? JSON.stringify(filters.groups) : null,
    });
  }
}
