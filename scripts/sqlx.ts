// Temporary experiment (not committed): which join costs the filtered keyword ranking.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildApp } from '../core/app.js';
import { loadConfig } from '../core/config.js';
import { insertDocuments } from '../test/fixtures/search-data.js';
import { queriesFrom, rng, syntheticDocuments } from '../bench/search.js';
import { RetrievalRepository } from '../plugins/retrieval/repository.sqlite.js';
import { KEYWORD_LIMITS, candidateTerms, planKeywordQuery } from '../plugins/retrieval/keyword-query.js';

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'sqlx-'));
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'WARNING', HEARTH_DEFAULT_EMBEDDER: 'off', JWT_SECRET_KEY: 'bench-secret-that-is-long-enough-for-hs256', MFA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }, { secretDirs: [] });
const app = await buildApp({ config });
await app.ready();
const random = rng(100000);
const docs = syntheticDocuments(100000, random).map((doc, d) => ({ ...doc, id: `d-${d}`, groups: [d % 2 === 0 ? 'half' : 'other'] }));
const seeded = await insertDocuments(app.db, docs);
await app.keywordIndexMerger.compact();
await sql`alter table chunks add column access_key integer`.execute(app.db);
await sql`update chunks set access_key = (select access_key from documents d where d.id = chunks.document_id)`.execute(app.db);
const repo = new RetrievalRepository(app.db);
const { specific } = queriesFrom(seeded.map((c) => c.text), 300, random);
const matches: string[] = [];
for (const q of specific) {
  const terms = candidateTerms(q);
  const f = await repo.termFrequencies(terms, KEYWORD_LIMITS.probeCap);
  const plan = planKeywordQuery(terms.map((term, i) => ({ term, df: f[i] })));
  if (plan && !plan.windowed) matches.push(plan.match);
}
const scope = { groups: ['everyone', 'half'] };
const keys = await repo.readableKeys(scope);
const keysJson = JSON.stringify([...(keys.keys ?? [])]);
const time = async (label: string, fn: (m: string) => Promise<unknown>) => {
  for (const m of matches.slice(0, 20)) await fn(m);
  const t: number[] = [];
  for (const m of matches) { const s = performance.now(); await fn(m); t.push(performance.now() - s); }
  t.sort((a, b) => a - b);
  console.log(label.padEnd(44), 'p50', t[Math.floor(t.length / 2)].toFixed(2), 'p95', t[Math.floor(t.length * 0.95)].toFixed(2));
};
await sql`create table ck (rowid integer primary key, access_key integer)`.execute(app.db);
await sql`insert into ck select rowid, access_key from chunks`.execute(app.db);
const groupsJson = JSON.stringify(['everyone', 'half']);
for (let round = 0; round < 2; round++) {
  await time('narrow ck + documents by key, readableBy', (m) => sql`select chunks_fts.rowid as rowid, bm25(chunks_fts) as bm25 from chunks_fts
        cross join ck on ck.rowid = chunks_fts.rowid
        cross join documents d on d.access_key = ck.access_key
        where chunks_fts match ${m} and d.status = 'indexed' and exists (select 1 from json_each(d.groups) acl where acl.value in (select value from json_each(${groupsJson})))
        order by bm25 limit 20`.execute(app.db));
  await time('narrow ck join, key in keys', (m) => sql`select chunks_fts.rowid as rowid, bm25(chunks_fts) as bm25 from chunks_fts
        cross join ck on ck.rowid = chunks_fts.rowid
        where chunks_fts match ${m} and ck.access_key in (select value from json_each(${keysJson}))
        order by bm25 limit 20`.execute(app.db));
  if (round < 0) await time('fts only', (m) => sql`select rowid, bm25(chunks_fts) as bm25 from chunks_fts where chunks_fts match ${m} order by bm25 limit 20`.execute(app.db));
  await time('ranked today (c + d joins, readableBy)', (m) => repo.keywordRanked(m, 20, scope, 0, false));
  await time('c join only, c.access_key in keys', (m) => sql`select chunks_fts.rowid as rowid, bm25(chunks_fts) as bm25 from chunks_fts
        cross join chunks c on c.rowid = chunks_fts.rowid
        where chunks_fts match ${m} and c.access_key in (select value from json_each(${keysJson}))
        order by bm25 limit 20`.execute(app.db));
  await time('c join only, no test', (m) => sql`select chunks_fts.rowid as rowid, bm25(chunks_fts) as bm25 from chunks_fts
        cross join chunks c on c.rowid = chunks_fts.rowid
        where chunks_fts match ${m}
        order by bm25 limit 20`.execute(app.db));
}
await app.close();
