import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { LicencesTable } from '../../core/db/schema.js';

type LicenceRow = Selectable<LicencesTable>;

export class LicencesRepository {
  constructor(private readonly db: Db) {}

  /** The licence in force is the one applied last; earlier rows stay as history. */
  latest(): Promise<LicenceRow | undefined> {
    return this.db.selectFrom('licences').selectAll().orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  async insert(row: Insertable<LicencesTable>): Promise<void> {
    await this.db.insertInto('licences').values(row).execute();
  }
}
