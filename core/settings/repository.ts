import type { Db } from '../db/database.js';

export class SettingsRepository {
  constructor(private readonly db: Db) {}

  async all(): Promise<Array<{ key: string; value: string }>> {
    return this.db.selectFrom('settings').select(['key', 'value']).execute();
  }

  /** Inserts only keys not yet present: how seed variables reach the table on first boot. */
  async insertMissing(entries: Array<{ key: string; value: string }>, now: number): Promise<void> {
    if (entries.length === 0) return;
    await this.db
      .insertInto('settings')
      .values(entries.map((entry) => ({ ...entry, updated_at: now })))
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
  }

  async upsert(entries: Array<{ key: string; value: string }>, now: number): Promise<void> {
    if (entries.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const entry of entries) {
        await trx
          .insertInto('settings')
          .values({ ...entry, updated_at: now })
          .onConflict((oc) => oc.column('key').doUpdateSet({ value: entry.value, updated_at: now }))
          .execute();
      }
    });
  }
}
