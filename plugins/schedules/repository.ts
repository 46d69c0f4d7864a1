import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { SchedulesTable } from '../../core/db/schedules-schema.js';

export type ScheduleRow = Selectable<SchedulesTable>;

export class SchedulesRepository {
  constructor(private readonly db: Db) {}

  list(): Promise<ScheduleRow[]> {
    return this.db.selectFrom('schedules').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  findById(id: string): Promise<ScheduleRow | undefined> {
    return this.db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('schedules').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Enabled schedules whose next run is at or before `now`. */
  listDue(now: number): Promise<ScheduleRow[]> {
    return this.db.selectFrom('schedules').selectAll().where('enabled', '=', 1).where('next_run', '<=', now).orderBy('next_run').execute();
  }

  listEnabled(): Promise<ScheduleRow[]> {
    return this.db.selectFrom('schedules').selectAll().where('enabled', '=', 1).execute();
  }

  async insert(row: Insertable<SchedulesTable>): Promise<void> {
    await this.db.insertInto('schedules').values(row).execute();
  }

  async update(id: string, change: Updateable<SchedulesTable>): Promise<void> {
    await this.db.updateTable('schedules').set(change).where('id', '=', id).execute();
  }

  /** A tick's outcome; a skip only counts, it leaves last_run alone. */
  async recordFiring(id: string, change: Updateable<SchedulesTable>, skipped: boolean): Promise<void> {
    await this.db
      .updateTable('schedules')
      .set((eb) => ({ ...change, ...(skipped ? { skipped_runs: eb('skipped_runs', '+', 1) } : {}) }))
      .where('id', '=', id)
      .execute();
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
