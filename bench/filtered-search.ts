/**
 * Filtered search (issue 18): hybrid POST /api/search latency when the caller's groups admit 1%, 10% and 50%
 * of the chunks (and all of them, the unfiltered path), and the filtered vector search's recall@10
 * against exact filtered search over the same vectors. Documents of 50 chunks; document d belongs to
 * `p1` when d % 100 == 0, to `p10` when d % 10 == 0, and to `half` when d is even, else to `other`.
 * BENCH_FILTERED_ONLY=50% (a comma list) measures only those filters; BENCH_FILTERED_STAGES=1 adds each retrieval
 * stage's mean wall time and the main thread's CPU time per request (docs/performance.md, session 17).
 * SEARCH_SOFT_MATCH_CHUNKS turns soft term matching on (session 22; it runs with BENCH_SEARCH_MODEL=shipped).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../core/app.js';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD, loadConfig } from '../core/config.js';
import { loadEmbedder, type Embedder } from '../native/embeddings/index.js';
import { openVectorIndex } from '../native/vector-index/index.js';
import { searchVectors } from '../plugins/search-index/index.js';
import { insertDocuments } from '../test/fixtures/search-data.js';
import { stats } from './harness.js';
import { addSyntheticVectors, lowRankVectors, queriesFrom, rng, searchModel, syntheticDocuments } from './search.js';

export interface FilteredSearchResult {
  chunks: number;
  rows: Array<{ filter: string; admitted: number; p50: number; p95: number; recall10: number | null; stages?: Record<string, number> }>;
}

/** The retrieval stages BENCH_FILTERED_STAGES=1 times (the repository's statements, the query's embedding, the graph walk, soft term matching, its read of the stored words and the look-up of its best chunks). */
const STAGES = { repository: ['termFrequencies', 'keywordRanked', 'documentsRanked', 'chunksByRowid', 'readableKeys', 'documentWordsOf', 'chunksAt'], service: ['queryVector', 'vectorCandidates', 'withSoftMatch', 'softPassages'] } as const;

/** This thread's CPU time in ms (Linux: /proc/thread-self/schedstat), or null where it cannot be read. */
function threadCpuMs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

/**
 * Wraps the stages of app.retrieval so that each request's wall time per stage is added to `current` (stages overlap:
 * the walk and the embedding run off the main thread while the keyword SQL runs on it). A measuring aid: it reaches
 * into the service's private parts.
 */
function timeStages(app: FastifyInstance): { current: Record<string, number> } {
  const timing = { current: {} as Record<string, number> };
  const service = app.retrieval as unknown as Record<string, unknown> & { repository: Record<string, unknown> };
  const wrap = (target: Record<string, unknown>, name: string) => {
    const original = (target[name] as (...args: unknown[]) => Promise<unknown>).bind(target);
    target[name] = async (...args: unknown[]) => {
      const started = performance.now();
      try {
        return await original(...args);
      } finally {
        timing.current[name] = (timing.current[name] ?? 0) + performance.now() - started;
      }
    };
  };
  for (const name of STAGES.repository) wrap(service.repository, name);
  for (const name of STAGES.service) wrap(service, name);
  return timing;
}

const FILTERS = { '1%': ['p1'], '10%': ['p10'], '50%': ['half'], 'none (all groups)': ['p1', 'p10', 'half', 'other'] } as const;
export const groupsOf = (d: number) => [...(d % 100 === 0 ? ['p1'] : []), ...(d % 10 === 0 ? ['p10'] : []), d % 2 === 0 ? 'half' : 'other'];

export async function benchFilteredSearch(chunks: number, queryCount: number, embedder: Embedder): Promise<FilteredSearchResult> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-filtered-'));
  // SEARCH_SOFT_MATCH_CHUNKS passes through: soft term matching's cost at this size (with a token-table model: BENCH_SEARCH_MODEL=shipped).
  const soft = process.env.SEARCH_SOFT_MATCH_CHUNKS === undefined ? {} : { SEARCH_SOFT_MATCH_CHUNKS: process.env.SEARCH_SOFT_MATCH_CHUNKS };
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'WARNING', HEARTH_DEFAULT_EMBEDDER: 'off', JWT_SECRET_KEY: 'bench-secret-that-is-long-enough-for-hs256', MFA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), ...soft }, { secretDirs: [] });
  const app: FastifyInstance = await buildApp({ config });
  try {
    await app.ready();
    const random = rng(chunks);
    const documents = syntheticDocuments(chunks, random).map((doc, d) => ({ ...doc, id: `bench-doc-${d}`, groups: groupsOf(d) }));
    const seeded = await insertDocuments(app.db, documents);
    const documentIndex = new Map(documents.map((doc, d) => [doc.id, d]));
    const position = new Map(seeded.map((c, i) => [c.rowid, i]));
    const vectors = await openVectorIndex({ file: path.join(dataDir, 'vectors.hnsw'), dimension: embedder.dimension, modelId: embedder.modelId });
    const synthetic = lowRankVectors(seeded.length, embedder.dimension, random);
    addSyntheticVectors(vectors, seeded, synthetic);
    app.activeEmbedding.swap({ embedder, vectors });
    await app.keywordIndexMerger.compact();
    const admin = (await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD } })).json().access_token;
    // BENCH_FILTERED_ONLY: only those filters, e.g. under a profiler.
    const only = process.env.BENCH_FILTERED_ONLY?.split(',');
    const names = (Object.keys(FILTERS) as Array<keyof typeof FILTERS>).filter((name) => !only || only.includes(name));
    const { specific } = queriesFrom(seeded.map((c) => c.text), queryCount * names.length, random);
    const queryVectors = lowRankVectors(100, embedder.dimension, rng(7));
    const rows: FilteredSearchResult['rows'] = [];
    const filters = await Promise.all(
      names.map(async (filter) => ({ filter, groups: FILTERS[filter] as readonly string[], token: await userIn(app, admin, filter, [...FILTERS[filter]]), wall: [] as number[], stages: [] as Array<Record<string, number>> })),
    );
    // BENCH_FILTERED_STAGES=1: each stage's wall time and the main thread's CPU time per request, as means per filter.
    const timing = process.env.BENCH_FILTERED_STAGES === '1' ? timeStages(app) : null;
    // The filters take turns, in a rotating order, so that the box's drift falls on all of them alike; each asks
    // questions of its own (no search finds the query's vector or term frequencies cached by another filter's).
    for (let i = 0; i < queryCount; i++) {
      for (let turn = 0; turn < filters.length; turn++) {
        const f = (i + turn) % filters.length;
        if (timing) timing.current = {};
        const cpu = timing && threadCpuMs();
        const start = performance.now();
        const res = await app.inject({ method: 'POST', url: '/api/search', headers: { authorization: `Bearer ${filters[f].token}` }, payload: { query: specific[i * filters.length + f], k: 5, mode: 'hybrid' } });
        if (i >= 20) filters[f].wall.push(performance.now() - start); // the first 20 warm the caches
        if (timing && i >= 20) filters[f].stages.push({ ...timing.current, ...(cpu !== null ? { 'main thread CPU': threadCpuMs()! - cpu } : {}) });
        if (res.statusCode !== 200) throw new Error(`search failed: ${res.statusCode} ${res.body}`);
      }
    }
    for (const { filter, groups, wall, stages } of filters) {
      const admittedKeys = new Set(seeded.filter((c) => groupsOf(documentIndex.get(c.documentId)!).some((g) => groups.includes(g))).map((c) => c.key));
      const admitted = seeded.filter((c) => admittedKeys.has(c.key));
      const recall10 = admitted.length === seeded.length ? null : await recallAt10(vectors, queryVectors, Uint32Array.from(admittedKeys), admitted.map((c) => ({ rowid: c.rowid, vector: synthetic[position.get(c.rowid)!] })));
      const { p50, p95 } = stats(wall);
      rows.push({ filter, admitted: admitted.length, p50, p95, recall10, ...(stages.length ? { stages: meanStages(stages) } : {}) });
    }
    return { chunks: seeded.length, rows };
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Each stage's mean over the requests (a stage a request did not run counts as 0 there). */
function meanStages(requests: Array<Record<string, number>>): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const request of requests) for (const [stage, ms] of Object.entries(request)) sums[stage] = (sums[stage] ?? 0) + ms;
  return Object.fromEntries(Object.entries(sums).map(([stage, sum]) => [stage, sum / requests.length]));
}

/** A viewer whose groups are set straight in the database (the bench measures search, not group management). */
export async function userIn(app: FastifyInstance, admin: string, name: string, groups: string[]): Promise<string> {
  const username = `bench-${name.replace(/[^a-z0-9]+/gi, '-')}`.replace(/-+$/, '');
  const password = `${username}-password-long`;
  const created = await app.inject({ method: 'POST', url: '/api/auth/users', headers: { authorization: `Bearer ${admin}` }, payload: { username, password, role: 'viewer' } });
  await app.db.updateTable('users').set({ groups: JSON.stringify(['everyone', ...groups]) }).where('id', '=', created.json().id).execute();
  return (await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } })).json().access_token;
}

/**
 * Share of the exact filtered top 10 (float32 cosine over the admitted vectors) that the filtered HNSW search
 * returns, through searchVectors as retrieval calls it.
 */
async function recallAt10(index: Awaited<ReturnType<typeof openVectorIndex>>, queries: Float32Array[], keys: Uint32Array, admitted: Array<{ rowid: number; vector: Float32Array }>): Promise<number> {
  let found = 0;
  for (const query of queries) {
    const exact = admitted
      .map(({ rowid, vector }) => ({ rowid, score: vector.reduce((sum, x, i) => sum + x * query[i], 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10);
    const truth = new Set(exact.map((e) => e.rowid));
    found += (await searchVectors(index, query, 10, undefined, keys)).filter(({ label }) => truth.has(label)).length;
  }
  return found / (queries.length * 10);
}

export function formatFilteredSearchBench(result: FilteredSearchResult): string {
  const lines = [`Filtered hybrid /api/search at ${result.chunks} chunks, ${os.availableParallelism()} cores, ms`, 'filter               admitted  wall p50  wall p95  vector recall@10'];
  for (const row of result.rows) {
    lines.push(`${row.filter.padEnd(20)} ${String(row.admitted).padStart(8)} ${row.p50.toFixed(2).padStart(9)} ${row.p95.toFixed(2).padStart(9)}  ${row.recall10 === null ? 'n/a' : row.recall10.toFixed(3)}`);
    if (row.stages) lines.push(`  mean ms: ${Object.entries(row.stages).map(([stage, ms]) => `${stage} ${ms.toFixed(2)}`).join(', ')}`);
  }
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  // The tiny test model unless BENCH_SEARCH_MODEL names another (shipped: the embedder a fresh box installs).
  const temporary = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-filtered-model-'));
  try {
    const { modelDir } = await searchModel(temporary, 'tiny');
    const embedder = await loadEmbedder({ modelDir, device: 'cpu' });
    if (!embedder) throw new Error('the embedding model did not load');
    const result = await benchFilteredSearch(Number(process.env.BENCH_FILTERED_CHUNKS ?? 100_000), Number(process.env.BENCH_FILTERED_QUERIES ?? 220), embedder);
    console.log(formatFilteredSearchBench(result));
    await embedder.close();
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
}
