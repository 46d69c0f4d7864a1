import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { LicensesTable } from '../../core/db/schema.js';

type LicenseRow = Selectable<LicensesTable>;

export class LicensesRepository {
  constructor(private readonly db: Db) {}

  /** The license in force is the one applied last; earlier rows stay as history. */
  latest(): Promise<LicenseRow | undefined> {
    return this.db.selectFrom('licences').selectAll().orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  async insert(row: Insertable<LicensesTable>): Promise<void> {
    await this.db.insertInto('licences').values(row).execute();
  }
}
