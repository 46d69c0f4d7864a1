/**
 * SQLite's page cache size against hybrid POST /api/search latency at 100k chunks (docs/performance.md, "SQLite's
 * page cache"): one process, the filtered bench's corpus and groups (bench/filtered-search.ts), the built-in
 * embedder, a reader of 1%, of 50% and of every document. The sizes take turns in blocks of PER distinct queries
 * per reader (10 more warm each block), switched by PRAGMA cache_size, so that the box's drift falls on all alike.
 * `npx tsx bench/sqlite-cache.ts`; SIZES (KiB as PRAGMA cache_size takes them, negative; default -2000,-8192,-16384),
 * BLOCKS (12), PER (40), BENCH_FILTERED_CHUNKS (100000).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildApp } from '../core/app.js';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD, loadConfig } from '../core/config.js';
import { loadEmbedder } from '../native/embeddings/index.js';
import { openVectorIndex } from '../native/vector-index/index.js';
import { insertDocuments } from '../test/fixtures/search-data.js';
import { addSyntheticVectors, lowRankVectors, queriesFrom, rng, searchModel, syntheticDocuments } from '../bench/search.js';
import { groupsOf, userIn } from '../bench/filtered-search.js';

const temporary = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-cache-model-'));
const { modelDir } = await searchModel(temporary, 'builtin');
const embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-cache-'));
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'WARNING', HEARTH_DEFAULT_EMBEDDER: 'off', JWT_SECRET_KEY: 'bench-secret-that-is-long-enough-for-hs256', MFA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }, { secretDirs: [] });
const app = await buildApp({ config });
await app.ready();
const chunks = Number(process.env.BENCH_FILTERED_CHUNKS ?? 100_000);
const random = rng(chunks);
const documents = syntheticDocuments(chunks, random).map((doc, d) => ({ ...doc, id: `bench-doc-${d}`, groups: groupsOf(d) }));
const seeded = await insertDocuments(app.db, documents);
const vectors = await openVectorIndex({ file: path.join(dataDir, 'vectors.hnsw'), dimension: embedder.dimension, modelId: embedder.modelId });
addSyntheticVectors(vectors, seeded, lowRankVectors(seeded.length, embedder.dimension, random));
app.activeEmbedding.swap({ embedder, vectors });
await app.keywordIndexMerger.compact();
const admin = (await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD } })).json().access_token;
const tokens = { p1: await userIn(app, admin, 'p1', ['p1']), half: await userIn(app, admin, 'half', ['half']), all: await userIn(app, admin, 'all', ['p1', 'p10', 'half', 'other']) };
const sizes = (process.env.SIZES ?? '-2000,-8192,-16384').split(',').map(Number);
const BLOCKS = Number(process.env.BLOCKS ?? 12);
const PER = Number(process.env.PER ?? 40);
const { specific } = queriesFrom(seeded.map((c) => c.text), BLOCKS * (PER + 10) * 3 + 100, random);
let q = 0;
const wall: Record<string, Record<string, number[]>> = {};
for (let b = 0; b < BLOCKS; b++) {
  const size = sizes[b % sizes.length];
  await sql.raw(`pragma cache_size = ${size}`).execute(app.db);
  for (let i = 0; i < PER + 10; i++) {
    for (const who of ['p1', 'half', 'all'] as const) {
      const start = performance.now();
      const res = await app.inject({ method: 'POST', url: '/api/search', headers: { authorization: `Bearer ${tokens[who]}` }, payload: { query: specific[q++], k: 5, mode: 'hybrid' } });
      if (res.statusCode !== 200) throw new Error(res.body);
      if (i >= 10) ((wall[size] ??= {})[who] ??= []).push(performance.now() - start);
    }
  }
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(p * xs.length)];
for (const size of sizes.filter((s) => wall[s])) console.log(`cache ${-size / 1024} MiB (p50/p95 ms):`, Object.entries(wall[size]).map(([who, xs]) => `${who} ${pct(xs, 0.5).toFixed(2)}/${pct(xs, 0.95).toFixed(2)}`).join('  '));
await app.close();
await embedder.close();
await rm(dataDir, { recursive: true, force: true });
await rm(temporary, { recursive: true, force: true });
