import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { prepared } from '../../core/db/prepared.js';

export class HealthRepository {
  /** Polled by load balancers and monitors: compiled once. */
  private readonly selectOne;

  constructor(db: Db) {
    this.selectOne = prepared<{ one: number }, Record<string, never>>(db as never, sql<{ one: number }>`select 1 as one`.compile(db));
  }

  /** A real round trip to SQLite, so a closed or locked database shows. */
  async ping(): Promise<void> {
    await this.selectOne({});
  }
}
