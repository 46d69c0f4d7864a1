import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';

/**
 * The keyword index's upkeep on SQLite: chunks_fts is an FTS5 table kept by triggers on chunks, and
 * FTS5 merges its segments when asked to. Another store keeps its keyword index its own way.
 */
export class SqliteKeywordIndex {
  constructor(private readonly db: Db) {}

  /** Writes on this connection so far (SQLite's total_changes): tells whether the keyword index may need merging. */
  async writes(): Promise<number> {
    return (await sql<{ n: number }>`select total_changes() as n`.execute(this.db)).rows[0].n;
  }

  /**
   * One bounded step of merging the keyword index's segments (at most `pages` pages of work).
   * Ingestion leaves many small FTS5 segments; every query term reads each of them, so merging
   * them down cut the keyword side's cost by a quarter at 100k chunks. True while work remains.
   */
  async mergeKeywordIndexStep(pages: number): Promise<boolean> {
    const before = await this.writes();
    await sql`insert into chunks_fts(chunks_fts, rank) values ('merge', ${pages})`.execute(this.db);
    // FTS5's documented signal: fewer than two changes means there was nothing left to merge.
    return (await this.writes()) - before >= 2;
  }

  /** Merges down to one segment per level (usermerge 2), step by step, when asked to merge. */
  async setKeywordMergeWidth(): Promise<void> {
    await sql`insert into chunks_fts(chunks_fts, rank) values ('usermerge', 2)`.execute(this.db);
  }
}
