import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';

export class HealthRepository {
  constructor(private readonly db: Db) {}

  /** A real round trip through the driver, so a closed or locked database shows. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
