import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from './database.js';
import { prepared } from './prepared.js';

describe('prepared queries on SQLite', () => {
  let dir: string;
  let db: Db;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-db-'));
    db = await openDatabase(path.join(dir, 'hearth.db'));
  });
  afterEach(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const setting = (key: string, value: string) => ({ key, value: JSON.stringify(value), updated_at: 1 });
  const countQuery = () =>
    prepared<{ n: number }, { key: string }>(db as never, db.selectFrom('settings').select((eb) => eb.fn.countAll<number>().as('n')).where('key', '=', '$key').compile());

  it('substitute named parameters and keep the compiled constants', async () => {
    await db.insertInto('settings').values([setting('a', 'x'), setting('b', 'y')]).execute();
    const count = countQuery();
    expect(await count({ key: 'a' })).toEqual([{ n: 1 }]);
    expect(await count({ key: 'zzz' })).toEqual([{ n: 0 }]);
  });

  it('never read the uncommitted rows of an open transaction: they wait their turn, then see what was committed', async () => {
    const count = countQuery();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const afterInsert = new Promise<void>((resolve) => (inserted = resolve));
    const transaction = db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('settings').values(setting('t', 'uncommitted')).execute();
        inserted();
        await held;
        throw new Error('roll back');
      })
      .catch((error: Error) => error.message);
    await afterInsert;
    let answered = false;
    const during = count({ key: 't' }).then((rows) => ((answered = true), rows));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    release();
    expect(await transaction).toBe('roll back');
    expect(await during).toEqual([{ n: 0 }]);
  });
});
