/** Migration 0016: chunk_access follows the chunks (insert, delete, a document's deletion by cascade) and is filled on upgrade. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertDocuments } from '../../../test/fixtures/search-data.js';
import { type Db, openDatabase } from '../database.js';

let dir: string;
let db: Db;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-chunk-access-'));
  db = await openDatabase(path.join(dir, 'hearth.db'));
});
afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** Every chunk with its document's access key, against what chunk_access holds. */
async function pairs(): Promise<{ expected: unknown[]; actual: unknown[] }> {
  const expected = (await sql<{ r: number; k: number }>`select c.rowid as r, d.access_key as k from chunks c join documents d on d.id = c.document_id order by 1`.execute(db)).rows;
  const actual = (await sql<{ r: number; k: number }>`select chunk_rowid as r, access_key as k from chunk_access order by 1`.execute(db)).rows;
  return { expected, actual };
}

const docs = (n: number) => Array.from({ length: n }, (_, d) => ({ id: `doc-${d}`, filename: `d${d}.txt`, chunks: [{ text: `alpha ${d}` }, { text: `beta ${d}` }] }));

describe('chunk_access (migration 0016)', () => {
  it('gets a row per chunk with its document key, and loses it when the chunk or its document goes', async () => {
    await insertDocuments(db, docs(3));
    let { expected, actual } = await pairs();
    expect(actual).toHaveLength(6);
    expect(actual).toEqual(expected);
    expect(new Set(actual.map((row) => (row as { k: number }).k)).size).toBe(3);

    await db.deleteFrom('documents').where('id', '=', 'doc-1').execute(); // chunks go by cascade
    await sql`delete from chunks where rowid = (select min(rowid) from chunks)`.execute(db);
    ({ expected, actual } = await pairs());
    expect(actual).toHaveLength(3);
    expect(actual).toEqual(expected);
  });

  it('is filled from the chunks already there when a database is upgraded', async () => {
    await insertDocuments(db, docs(2));
    await sql`drop table chunk_access`.execute(db);
    for (const trigger of ['insert', 'delete', 'move', 'rekey']) await sql`drop trigger ${sql.raw(`chunk_access_${trigger}`)}`.execute(db);
    await sql`delete from kysely_migration where name = '0016-chunk-access'`.execute(db);
    await db.destroy();
    db = await openDatabase(path.join(dir, 'hearth.db'));
    const { expected, actual } = await pairs();
    expect(actual).toHaveLength(4);
    expect(actual).toEqual(expected);
  });
});
