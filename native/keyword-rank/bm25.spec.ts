import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBm25Extension } from './index.js';

/**
 * hearth_bm25 and hearth_chunk_readable (sqlite-bm25/hearth-bm25.c), which every connection of the service loads (core/db): given each
 * phrase's true document frequency it scores every row as FTS5's own bm25() does, on a table shaped like chunks_fts
 * (two columns, the same tokenizer). Through the service, every keyword search ranks with it (test/api/retrieval).
 */

const WORDS = ['kestrel', 'harbour', 'valve', 'lantern', 'quarry', 'signal', 'meadow', 'copper', 'ember', 'glacier', 'the', 'of', 'and'];

let db: Database.Database;

beforeAll(() => {
  db = new Database(':memory:');
  loadBm25Extension(db);
  db.exec("create virtual table chunks_fts using fts5(text, heading, tokenize='porter unicode61 remove_diacritics 2')");
  // Rows of varied length and term counts, some with a heading (the second column).
  let state = 7;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
  const insert = db.prepare('insert into chunks_fts (text, heading) values (?, ?)');
  for (let i = 0; i < 300; i++) insert.run(Array.from({ length: 5 + (next() % 60) }, () => WORDS[next() % WORDS.length]).join(' '), next() % 3 ? null : `${WORDS[next() % 10]} notes`);
});
afterAll(() => db.close());

const frequencies = (values: number[]) => Buffer.from(Float64Array.from(values).buffer);

const documentFrequency = (term: string) => (db.prepare('select count(*) as n from chunks_fts where chunks_fts match ?').get(`"${term}"`) as { n: number }).n;

/** The index's state as the service passes it: FTS5's structure record, read in the same statement. */
const STATE = '(select block from chunks_fts_data where id = 10)';

function both(match: string, phrases: string[], withState = false) {
  const given = frequencies(phrases.map(documentFrequency));
  const ours = withState ? `hearth_bm25(chunks_fts, ?, ${STATE})` : 'hearth_bm25(chunks_fts, ?)';
  return db.prepare(`select rowid, bm25(chunks_fts) as own, ${ours} as ours from chunks_fts where chunks_fts match ? order by own, rowid`).all(given, match) as Array<{ rowid: number; own: number; ours: number }>;
}

describe('hearth_bm25', () => {
  it("scores every row as FTS5's bm25() does when given each phrase's document frequency", () => {
    const cases: Array<[string, string[]]> = [
      ['"kestrel"', ['kestrel']],
      ['"kestrel" OR "glacier"', ['kestrel', 'glacier']],
      // The plan's shape: rare terms, then the same again ANDed with common ones (a term twice, two phrases).
      ['("kestrel" OR "glacier") OR (("kestrel" OR "glacier") AND ("the" OR "of"))', ['kestrel', 'glacier', 'kestrel', 'glacier', 'the', 'of']],
      ['"the" AND "signal"', ['the', 'signal']],
      ['"notes"', ['notes']], // heading words
    ];
    // Without the index's state, and with it twice (the second time every row's length comes from the cache).
    for (const withState of [false, true, true]) {
      for (const [match, phrases] of cases) {
        const rows = both(match, phrases, withState);
        expect(rows.length, match).toBeGreaterThan(5);
        for (const row of rows) expect(Math.abs(row.own - row.ours), match).toBeLessThan(1e-9);
        expect(rows.some((row) => row.own !== rows[0].own), match).toBe(true); // not all alike: the test can tell orders apart
      }
    }
  });

  it("keeps row lengths while the index's state is the same, and reads them again once it changes", () => {
    const table = new Database(':memory:');
    try {
      loadBm25Extension(table);
      table.exec("create virtual table chunks_fts using fts5(text, heading, tokenize='porter unicode61 remove_diacritics 2')");
      const insert = table.prepare('insert into chunks_fts (rowid, text, heading) values (?, ?, null)');
      for (let i = 1; i <= 20; i++) insert.run(i, `kestrel ${'meadow '.repeat(i)}`);
      const state = () => (table.prepare('select block from chunks_fts_data where id = 10').get() as { block: Buffer }).block;
      const given = frequencies([1]); // weighed as a rare word: a row's length then moves its score clearly
      const scores = (stateValue: Buffer | string) =>
        new Map((table.prepare(`select rowid, bm25(chunks_fts) as own, hearth_bm25(chunks_fts, ?, ${typeof stateValue === 'string' ? stateValue : '?'}) as ours from chunks_fts where chunks_fts match '"kestrel"'`).all(...(typeof stateValue === 'string' ? [given] : [given, stateValue])) as Array<{ rowid: number; own: number; ours: number }>).map((row) => [row.rowid, row]));
      const before = state();
      scores(before); // every row's length kept
      // Row 1 written again, much longer: the index's state moves with it.
      table.prepare('update chunks_fts set text = ? where rowid = 1').run(`kestrel ${'meadow '.repeat(60)}`);
      expect(state().equals(before)).toBe(false);
      // Told the old state, the function scores row 1 with the short length it kept (a shorter row scores better,
      // lower): the cache is in use. The other rows' lengths did not change, so their scores do not either.
      const stale = scores(before);
      // Given the state as it is now, the cache is emptied and every row is scored with its length as it is now, as
      // without a state.
      const now = scores(STATE);
      const uncached = scores('null');
      expect(stale.get(1)!.ours).toBeLessThan(now.get(1)!.ours - 0.1);
      for (let rowid = 2; rowid <= 20; rowid++) expect(stale.get(rowid)!.ours).toBeCloseTo(now.get(rowid)!.ours, 12);
      for (const row of now.values()) expect(row.ours).toBeCloseTo(uncached.get(row.rowid)!.ours, 12);
      expect(now.get(1)!.ours).toBeGreaterThan(now.get(2)!.ours); // row 1 is now the longest: it scores worst
    } finally {
      table.close();
    }
  });

  it("counts the frequencies itself when given none, as bm25() does, with and without the index's state", () => {
    for (const state of ['', `, ${STATE}`, `, ${STATE}`]) {
      const rows = db.prepare(`select rowid, bm25(chunks_fts) as own, hearth_bm25(chunks_fts, null${state}) as ours from chunks_fts where chunks_fts match ? order by own, rowid`).all('("kestrel" OR "glacier") OR (("kestrel" OR "glacier") AND ("the" OR "of"))') as Array<{ own: number; ours: number }>;
      expect(rows.length).toBeGreaterThan(5);
      for (const row of rows) expect(Math.abs(row.own - row.ours)).toBeLessThan(1e-12);
    }
  });

  it('weighs each phrase by the frequency it is given: a rarer one counts more', () => {
    const match = '"kestrel" OR "glacier"';
    const score = (values: number[]) =>
      new Map((db.prepare('select rowid, hearth_bm25(chunks_fts, ?) as score from chunks_fts where chunks_fts match ?').all(frequencies(values), match) as Array<{ rowid: number; score: number }>).map((row) => [row.rowid, row.score]));
    const firstOf = (only: string) => (db.prepare('select rowid from chunks_fts where chunks_fts match ? limit 1').get(only) as { rowid: number }).rowid;
    const [kestrelOnly, glacierOnly] = [firstOf('"kestrel" NOT "glacier"'), firstOf('"glacier" NOT "kestrel"')];
    const asCounted = score([documentFrequency('kestrel'), documentFrequency('glacier')]);
    const kestrelRare = score([1, documentFrequency('glacier')]);
    expect(kestrelRare.get(kestrelOnly)!).toBeLessThan(asCounted.get(kestrelOnly)!); // lower is better, as bm25()
    expect(kestrelRare.get(glacierOnly)).toBe(asCounted.get(glacierOnly));
  });

  it('refuses frequencies that are not one float64 per phrase (null: counted), and a call without them', () => {
    const run = (given: unknown) => () => db.prepare(`select hearth_bm25(chunks_fts, ?) from chunks_fts where chunks_fts match '"kestrel" OR "glacier"'`).all(given);
    for (const given of [frequencies([3]), Buffer.from('twelve'), 'text', 12]) expect(run(given)).toThrow(/one float64 document frequency per phrase/);
    expect(() => db.prepare(`select hearth_bm25(chunks_fts) from chunks_fts where chunks_fts match '"kestrel"'`).all()).toThrow(/expects the table, one blob/);
    expect(() => db.prepare(`select hearth_bm25(chunks_fts, ?, 1, 2) from chunks_fts where chunks_fts match '"kestrel"'`).all(frequencies([3]))).toThrow(/expects the table, one blob/);
  });
});

describe('hearth_chunk_readable', () => {
  /** Hearth's tables as far as the function reads them: chunks (AUTOINCREMENT rowids, the narrow index) and documents' access keys. */
  function schema(): Database.Database {
    const conn = new Database(':memory:');
    loadBm25Extension(conn);
    conn.exec(`create table documents (id text primary key, access_key integer);
      create table chunks (rowid integer primary key autoincrement, document_id text not null, text text);
      create index chunks_document_by_rowid on chunks(rowid, document_id);
      insert into documents values ('a', 3), ('b', 7), ('c', 11);
      insert into chunks (document_id, text) values ('a', 'one'), ('b', 'two'), ('c', 'three'), ('a', 'four');`);
    return conn;
  }
  const keys = (...values: number[]) => Buffer.from(Uint32Array.from(values).sort().buffer);
  const admitted = (conn: Database.Database, given: Buffer | null) =>
    (conn.prepare('select rowid from chunks where hearth_chunk_readable(rowid, ?) order by rowid').all(given) as Array<{ rowid: number }>).map((row) => row.rowid);

  it("admits a chunk when its document's access key is among the keys given (ascending uint32)", () => {
    const conn = schema();
    try {
      expect(admitted(conn, keys(3))).toEqual([1, 4]);
      expect(admitted(conn, keys(7, 11))).toEqual([2, 3]);
      expect(admitted(conn, keys(3, 7, 11, 40))).toEqual([1, 2, 3, 4]);
      expect(admitted(conn, keys(4, 8))).toEqual([]);
      expect(admitted(conn, Buffer.alloc(0))).toEqual([]); // a reader who may read nothing
      expect(admitted(conn, null)).toEqual([]);
      // A rowid with no chunk behind it (deleted, or never written) is admitted by no keys.
      expect(conn.prepare('select hearth_chunk_readable(99, ?) as ok').get(keys(3, 7, 11))).toEqual({ ok: 0 });
    } finally {
      conn.close();
    }
  });

  it("reads every chunk's key on the connection's first call and keeps them for its life: a chunk's document and key never change in Hearth", () => {
    const conn = schema();
    try {
      expect(admitted(conn, keys(3))).toEqual([1, 4]);
      // Never done by Hearth (access keys are fixed at insert); here it shows the keys read before are kept, those
      // of chunks the first call did not admit too (the whole table was read then).
      conn.exec("update documents set access_key = 5 where id = 'a'; update documents set access_key = 9 where id = 'b'");
      expect(admitted(conn, keys(3))).toEqual([1, 4]);
      expect(admitted(conn, keys(5))).toEqual([]);
      expect(admitted(conn, keys(7))).toEqual([2]);
      expect(admitted(conn, keys(9))).toEqual([]);
      // A chunk not read before is read as the tables are now.
      conn.exec("insert into chunks (document_id, text) values ('a', 'five')");
      expect(admitted(conn, keys(5))).toEqual([5]);
    } finally {
      conn.close();
    }
  });

  it('refuses keys that are not a blob of uint32', () => {
    const conn = schema();
    try {
      for (const given of [Buffer.alloc(3), 'text', 12]) expect(() => admitted(conn, given as Buffer)).toThrow(/blob of uint32/);
    } finally {
      conn.close();
    }
  });
});
