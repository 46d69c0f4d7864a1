/**
 * POST /api/search latency (app.inject: routing, auth, validation, serialisation included) at 10k
 * and 100k synthetic chunks, against the raw query times measured in the same run: the HNSW index
 * search alone (our thin wrapper over hnswlib) and one FTS5 statement alone (better-sqlite3, no
 * kysely), both for the MATCH the planner builds and for a naive OR of every query word; and how
 * much of exhaustive bm25's top 10 the planned match keeps among its candidates.
 * Chunks: Zipf-distributed words over a 30k vocabulary topped by English function words; vectors:
 * low-rank random unit vectors of the embedder's dimension (the embedder passed in, 384 dimensions,
 * embeds the queries: `npm run bench` passes the int8 MiniLM-shape model). Queries: "specific"
 * (content words of one chunk) and "vague" (words drawn as they occur, so mostly common ones).
 * Alone: `npx tsx bench/search.ts`; BENCH_SEARCH_SIZES (default 10000,100000), BENCH_SEARCH_QUERIES (default 300).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../core/app.js';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD, loadConfig } from '../core/config.js';
import { installShippedEmbedder, loadEmbedder, type Embedder } from '../native/embeddings/index.js';
import { openVectorIndex, type VectorIndex } from '../native/vector-index/index.js';
import { STOPWORDS } from '../core/text/words.js';
import { KEYWORD_LIMITS, candidateTerms, planKeywordQuery, probedFrequency, queryWords, quoteTerm } from '../plugins/retrieval/keyword-query.js';
import { insertDocuments, type SeedDocument, type SeededChunk } from '../test/fixtures/search-data.js';
import { installTinyEmbeddingModel } from '../test/fixtures/tiny-embedding-model.js';
import { installAdaptedShippedModel } from './corpus-adaptation.js';
import { cachedDefaultModel } from './default-embedder.js';
import { installMiniLmShapeModel } from './minilm-shape-model.js';

export interface LatencyRow {
  series: string;
  p50: number;
  p95: number;
  /** CPU time of the whole process per query (all threads): what the query costs, whatever else the machine runs. */
  cpuP50: number;
  cpuP95: number;
  queries: number;
}

export interface SearchBenchResult {
  chunks: number;
  rows: LatencyRow[];
  /** Share of exhaustive bm25's top 10 (every content word OR'd, every match scored) among the planned match's first 20 candidates: what bounding the plan gives up. */
  keywordRecall: { specific: number; vague: number };
  loadavg: number[];
}

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Function words first (the most frequent ranks), then made-up words; Zipf (s = 1) over all of them. */
function zipfWords(random: () => number): () => string {
  const syllables = ['ka', 'to', 'ri', 'ne', 'sa', 'mo', 'lu', 'pe', 'di', 'ga', 'vo', 'xi', 'ber', 'tan', 'sol', 'mer', 'quin', 'dra', 'plo', 'ent'];
  const vocabulary = ['the', 'of', 'and', 'to', 'a', 'in', 'is', 'that', 'for', 'it', 'as', 'with', 'be', 'by', 'on', 'not', 'this', 'are', 'or', 'from', 'at', 'which', 'have', 'an', 'they', 'was', 'will', 'can', 'if', 'their'];
  const seen = new Set(vocabulary);
  while (vocabulary.length < 30_000) {
    let word = '';
    for (let n = 2 + Math.floor(random() * 3); n > 0; n--) word += syllables[Math.floor(random() * syllables.length)];
    if (!seen.has(word)) vocabulary.push(word), seen.add(word);
  }
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < vocabulary.length; i++) cumulative.push((total += 1 / (i + 1)));
  return () => {
    const r = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < r) lo = mid + 1;
      else hi = mid;
    }
    return vocabulary[lo];
  };
}

export function syntheticDocuments(chunks: number, random: () => number): SeedDocument[] {
  const word = zipfWords(random);
  const documents: SeedDocument[] = [];
  for (let d = 0; d * 50 < chunks; d++) {
    const texts = Array.from({ length: Math.min(50, chunks - d * 50) }, () => Array.from({ length: 60 + Math.floor(random() * 100) }, word).join(' ') + '.');
    documents.push({ filename: `doc-${d}.txt`, chunks: texts.map((text, i) => ({ text, heading: i % 10 === 0 ? word() : null })) });
  }
  return documents;
}

/** Unit vectors of intrinsic dimension 32, as sentence embeddings have low intrinsic dimension. */
export function lowRankVectors(count: number, dimension: number, random: () => number): Float32Array[] {
  const gauss = () => Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());
  const basis = Array.from({ length: 32 }, () => Float32Array.from({ length: dimension }, gauss));
  return Array.from({ length: count }, () => {
    const v = new Float32Array(dimension);
    for (const b of basis) {
      const z = gauss();
      for (let i = 0; i < dimension; i++) v[i] += z * b[i];
    }
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

/** Adds the seeded chunks' synthetic vectors, a thousand a call, with their documents' access keys (as ingestion adds them). */
export function addSyntheticVectors(vectors: VectorIndex, seeded: SeededChunk[], synthetic: Float32Array[]): void {
  for (let i = 0; i < seeded.length; i += 1000) {
    const page = seeded.slice(i, i + 1000);
    vectors.add(page.map((c) => c.rowid), synthetic.slice(i, i + 1000), page.map((c) => c.key));
  }
}

/**
 * Writes `chunks` synthetic chunks and their vectors through a built app, as the service finds them at its next boot:
 * marked embedded with the model in force and the vector index saved. The adds go around the index store, whose save
 * at close does not know of them: unsaved, the file stayed empty and the next boot embedded every chunk again (100k
 * chunks: 20 CPU-minutes). Returns the chunks, and the generator for the caller's questions.
 */
export async function seedForBoot(app: FastifyInstance, chunks: number): Promise<{ seeded: SeededChunk[]; random: () => number }> {
  await app.ready();
  const embedder = app.activeEmbedding.embedder();
  const vectors = app.activeEmbedding.vectors();
  if (!embedder || !vectors) throw new Error('the embedding model did not load');
  const random = rng(chunks);
  const seeded = await insertDocuments(app.db, syntheticDocuments(chunks, random));
  addSyntheticVectors(vectors, seeded, lowRankVectors(seeded.length, embedder.dimension, random));
  await app.db.updateTable('chunks').set({ embedded_with: embedder.modelId }).execute();
  await vectors.save();
  return { seeded, random };
}

export function queriesFrom(texts: string[], count: number, random: () => number): { specific: string[]; vague: string[] } {
  const specific: string[] = [];
  const vague: string[] = [];
  const glue = ['how', 'do', 'the', 'what', 'is', 'for', 'of', 'in'];
  for (let i = 0; i < count; i++) {
    const tokens = texts[Math.floor(random() * texts.length)].replace('.', '').split(' ');
    const content = [...new Set(tokens.filter((t) => !STOPWORDS.has(t)))];
    const n = 3 + Math.floor(random() * 4);
    const pickFrom = (list: string[]) => Array.from({ length: n }, () => list[Math.floor(random() * list.length)]);
    const withGlue = (words: string[]) => [glue[i % 4], ...words.slice(0, 2), glue[4 + (i % 4)], ...words.slice(2)].join(' ');
    specific.push(withGlue(pickFrom(content)));
    vague.push(withGlue(pickFrom(tokens)));
  }
  return { specific, vague };
}

async function time(series: string, inputs: string[], run: (input: string) => unknown): Promise<LatencyRow> {
  for (const input of inputs.slice(0, 20)) await run(input); // warm-up: statement cache, page cache
  const wall: number[] = [];
  const cpu: number[] = [];
  for (const input of inputs) {
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    await run(input);
    const used = process.cpuUsage(cpuStart);
    wall.push(performance.now() - start);
    cpu.push((used.user + used.system) / 1000);
  }
  const at = (samples: number[], q: number) => samples.sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return { series, p50: at(wall, 0.5), p95: at(wall, 0.95), cpuP50: at(cpu, 0.5), cpuP95: at(cpu, 0.95), queries: wall.length };
}

async function benchSize(chunks: number, queryCount: number, embedder: Embedder): Promise<SearchBenchResult> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-search-'));
  // HEARTH_DEFAULT_EMBEDDER off: building the default model in the background would take a core from the searches measured.
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'WARNING', HEARTH_DEFAULT_EMBEDDER: 'off', JWT_SECRET_KEY: 'bench-secret-that-is-long-enough-for-hs256', MFA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }, { secretDirs: [] });
  const app: FastifyInstance = await buildApp({ config });
  const raw = new SQLite(config.databaseFile, { readonly: true });
  try {
    await app.ready();
    const random = rng(chunks);
    const seeded = await insertDocuments(app.db, syntheticDocuments(chunks, random));
    const vectors = await openVectorIndex({ file: path.join(dataDir, 'vectors.hnsw'), dimension: embedder.dimension, modelId: embedder.modelId });
    addSyntheticVectors(vectors, seeded, lowRankVectors(seeded.length, embedder.dimension, random));
    app.activeEmbedding.swap({ embedder, vectors });
    // What the service does by itself within half a minute of ingestion: merge the keyword index's segments.
    await app.keywordIndexMerger.compact();

    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD } });
    const headers = { authorization: `Bearer ${login.json().access_token}` };
    const { specific, vague } = queriesFrom(seeded.map((c) => c.text), queryCount, random);
    const api = (mode: string) => async (query: string) => {
      const res = await app.inject({ method: 'POST', url: '/api/search', headers, payload: { query, k: 5, mode } });
      if (res.statusCode !== 200) throw new Error(`search failed: ${res.statusCode} ${res.body}`);
    };
    const queryVectors = new Map((await embedder.embed(specific)).map((v, i) => [specific[i], v]));
    // The statements of plugins/retrieval/repository.ts, run bare; the naive one is the textbook ORDER BY rank.
    const fts = raw.prepare('select rowid, bm25(chunks_fts) as bm25 from chunks_fts where chunks_fts match ? and rowid >= ? order by bm25 limit 40');
    const naiveFts = raw.prepare('select rowid, rank from chunks_fts where chunks_fts match ? order by rank limit 40');
    const probe = raw.prepare('select count(*) as n, max(rowid) as last from (select rowid from chunks_fts where chunks_fts match ? limit ?)');
    const span = raw.prepare('select (select min(rowid) from chunks) as first, (select max(rowid) from chunks) as last');
    const floor = raw.prepare('select rowid from chunks_fts where chunks_fts match ? order by rowid desc limit 1 offset ?');
    type Probe = { n: number; last: number | null };
    const planned = (query: string) => {
      const rowids = span.get() as { first: number | null; last: number | null };
      return planKeywordQuery(candidateTerms(query).map((term) => ({ term, df: probedFrequency(probe.get(quoteTerm(term), KEYWORD_LIMITS.probeCap) as Probe, KEYWORD_LIMITS.probeCap, rowids) })));
    };
    const plans = new Map([...specific, ...vague].map((q) => [q, planned(q)]));
    const runPlan = (query: string) => {
      const plan = plans.get(query);
      if (!plan) return;
      const from = plan.windowed ? ((floor.get(plan.match, KEYWORD_LIMITS.rowBudget) as { rowid: number } | undefined)?.rowid ?? 0) : 0;
      return fts.all(plan.match, from) as Array<{ rowid: number }>;
    };
    const naive = (query: string) => queryWords(query).map(quoteTerm).join(' OR ');

    const rows = [
      await time('api hybrid, specific', specific, api('hybrid')),
      await time('api hybrid, vague', vague, api('hybrid')),
      await time('api keyword, specific', specific, api('keyword')),
      await time('api keyword, vague', vague, api('keyword')),
      await time('api vector', specific, api('vector')),
      await time('raw embed query', specific, (q) => embedder.embed([q])),
      await time('raw hnsw search, 20 neighbours', specific, (q) => vectors.search(queryVectors.get(q)!, 20)),
      await time('raw fts5 planned match, specific', specific, runPlan),
      await time('raw fts5 planned match, vague', vague, runPlan),
      await time('raw fts5 term probes + plan', specific, planned),
      await time('raw fts5 naive OR of every word', specific.slice(0, 60), (q) => naiveFts.all(naive(q))),
    ];
    const exhaustive = raw.prepare('select rowid from chunks_fts where chunks_fts match ? order by bm25(chunks_fts) limit 10');
    const recall = (queries: string[]) => {
      const shares = queries.slice(0, 100).flatMap((query) => {
        const terms = candidateTerms(query);
        const best = terms.length ? (exhaustive.all(terms.map(quoteTerm).join(' OR ')) as Array<{ rowid: number }>) : [];
        if (!best.length) return [];
        const kept = new Set((runPlan(query) ?? []).slice(0, 20).map((row) => row.rowid));
        return [best.filter((row) => kept.has(row.rowid)).length / best.length];
      });
      return shares.reduce((a, b) => a + b, 0) / shares.length;
    };
    return { chunks: seeded.length, rows, keywordRecall: { specific: recall(specific), vague: recall(vague) }, loadavg: os.loadavg() };
  } finally {
    app.activeEmbedding.swap(null); // the search-index plugin would otherwise save these vectors and close the embedder
    raw.close();
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The models the search benches embed queries with (BENCH_SEARCH_MODEL). */
export const SEARCH_MODELS = ['minilm-shape-int8', 'tiny', 'builtin', 'shipped', 'adapted'] as const;
export type SearchModel = (typeof SEARCH_MODELS)[number];

/**
 * BENCH_SEARCH_MODEL (else `fallback`), checked, and the folder to load it from: the int8 MiniLM shape (the default
 * pulled model's architecture), the tiny test model and the embedder shipped with Hearth (what a fresh box runs:
 * potion-base-4M-int8, 128 dimensions) and the same adapted to 3,000 chunks of node_modules' markdown (the model EMBED_ADAPT
 * puts in force: 192 dimensions) are written into `scratch`; Hearth's WordNet build (hearth-wordnet-static,
 * 256 dimensions, HEARTH_DEFAULT_EMBEDDER=build) is the benches' cached build.
 */
export async function searchModel(scratch: string, fallback: SearchModel): Promise<{ model: SearchModel; modelDir: string }> {
  const model = (process.env.BENCH_SEARCH_MODEL ?? fallback) as SearchModel;
  if (!SEARCH_MODELS.includes(model)) throw new Error(`BENCH_SEARCH_MODEL must be one of ${SEARCH_MODELS.join(', ')}, got "${model}"`);
  if (model === 'builtin') return { model, modelDir: (await cachedDefaultModel()).modelDir };
  if (model === 'tiny') await installTinyEmbeddingModel(scratch, { hidden: 384 });
  else if (model === 'shipped') await installShippedEmbedder({ modelDir: scratch });
  else if (model === 'adapted') await installAdaptedShippedModel(scratch);
  else await installMiniLmShapeModel(scratch, { int8: true });
  return { model, modelDir: scratch };
}

export async function benchSearch(sizes: number[], queryCount: number, embedder: Embedder): Promise<SearchBenchResult[]> {
  const results: SearchBenchResult[] = [];
  for (const size of sizes) results.push(await benchSize(size, queryCount, embedder));
  return results;
}

export function formatSearchBench(results: SearchBenchResult[]): string {
  const lines = [`/api/search latency, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ms`];
  for (const r of results) {
    lines.push(`${r.chunks} chunks (load average after: ${r.loadavg.map((l) => l.toFixed(2)).join(' ')})`, 'series                               wall p50 wall p95  cpu p50  cpu p95');
    const ms = (value: number) => value.toFixed(2).padStart(8);
    for (const row of r.rows) lines.push(`${row.series.padEnd(36)} ${ms(row.p50)} ${ms(row.p95)} ${ms(row.cpuP50)} ${ms(row.cpuP95)}`);
    const get = (series: string) => r.rows.find((row) => row.series === series)!;
    const keywordRaw = get('raw fts5 term probes + plan').p50 + get('raw fts5 planned match, specific').p50;
    const hybridRaw = keywordRaw + get('raw hnsw search, 20 neighbours').p50 + get('raw embed query').p50;
    const overhead = (series: string, rawMs: number) => `${(get(series).p50 - rawMs).toFixed(2)} ms (${((100 * (get(series).p50 - rawMs)) / get(series).p50).toFixed(0)}%)`;
    lines.push(`overhead over the raw parts, p50: keyword ${overhead('api keyword, specific', keywordRaw)} over probes + fts5; hybrid ${overhead('api hybrid, specific', hybridRaw)} over embed + hnsw + probes + fts5`);
    lines.push(`exhaustive bm25's top 10 found among the planned match's 20 candidates: ${r.keywordRecall.specific.toFixed(2)} (specific), ${r.keywordRecall.vague.toFixed(2)} (vague)`);
  }
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const modelDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-search-model-'));
  try {
    await installTinyEmbeddingModel(modelDir, { hidden: 384 });
    const embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
    const sizes = (process.env.BENCH_SEARCH_SIZES ?? '10000,100000').split(',').map(Number);
    const results = await benchSearch(sizes, Number(process.env.BENCH_SEARCH_QUERIES ?? 300), embedder);
    console.log(formatSearchBench(results));
    console.log(JSON.stringify(results));
    await embedder.close();
  } finally {
    await rm(modelDir, { recursive: true, force: true });
  }
}
