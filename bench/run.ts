/**
 * `npm run bench`: request throughput of the built service against a bare Fastify baseline.
 *
 * autocannon runs in this process; every server is its own child process, so the load generator
 * and the server do not share an event loop (they do share the machine's cores: see `cores`).
 * Targets, all with the same settings:
 *   1. hello-world   bench/hello-world.mjs, GET /            (bare Fastify, the baseline)
 *   2. health        node dist/server.js, GET /api/health    (public route: the full hook chain, no auth)
 *   3. auth-me       node dist/server.js, GET /api/auth/me   (JWT verify + session lookup + user read)
 *   4. fastify-floor bench/fastify-floor.mjs, GET /me        (bare Fastify with only what such a route
 *                    needs: the API security headers, a Bearer-token hook, a response schema; no Hearth
 *                    code: the most an authenticated read can keep on this framework and machine)
 * The goal (issue): auth-me keeps at least 70% of hello-world's requests/s. The project's standard: Hearth's server CPU
 * per authenticated read stays within 1.5x of the floor's. A FAIL is reported, not turned into an exit code:
 * benchmarks are not tests.
 *
 * Environment: BENCH_DURATION (s per target, default 10, split over BENCH_ROUNDS interleaved rounds,
 * default 5), BENCH_WARMUP (s per target, default 8: Hearth's
 * first seconds under load run 20-40% above its steady CPU a request while V8 compiles its path), BENCH_CONNECTIONS (default 10), BENCH_PIPELINING (default 1), BENCH_CPU_PROF=1 (write V8 CPU profiles of the
 * server children to bench/results/profiles/, for `chrome://inspect` or speedscope), BENCH_SERVER (the built
 * service to run, default dist/server.js).
 *
 * Then six more sections (BENCH_ONLY=api|ingest|search|chat|embedder|analytics|ocr runs one of the seven):
 *   ingest  bench/ingest.ts: a 200-page PDF and 1,000 text files uploaded to the built service,
 *           pages/s, files/s and chunks/s, as a fraction of the raw embedding throughput of the
 *           same model measured alone in the same run (target >= 80%), with a random-weight model of
 *           all-MiniLM-L6-v2's architecture quantised to int8 as the default pulled model is
 *           (bench/minilm-shape-model.ts) and with the tiny test model; then the service's peak RSS at
 *           100k chunks with that int8 MiniLM-shape model loaded (< 400 MB).
 *           BENCH_INGEST_PAGES, BENCH_INGEST_FILES, BENCH_INGEST_CONCURRENCY, BENCH_EMBED_SECONDS,
 *           BENCH_INGEST_MODELS (minilm-shape-int8,tiny; minilm-shape is the fp32 one; none skips),
 *           BENCH_INGEST_RSS_CHUNKS (100000; 0 skips).
 *   search  bench/search.ts: POST /api/search p50/p95 at 10k and 100k chunks against raw hnswlib
 *           and FTS5 query times, queries embedded by the int8 MiniLM-shape model. BENCH_SEARCH_SIZES,
 *           BENCH_SEARCH_QUERIES, BENCH_SEARCH_MODEL (minilm-shape-int8, tiny, shipped: the embedder a fresh box installs, or builtin: the WordNet build).
 *   chat    bench/chat.ts: time to first token and tokens/s of the local model (stories260K) through
 *           node-llama-cpp directly, and what POST /api/chat (SSE, over HTTP) adds before the first
 *           token at 10k and 100k chunks against the same prompt run directly (target < 50 ms).
 *           BENCH_CHAT_SIZES, BENCH_CHAT_QUESTIONS, BENCH_CHAT_WARMUP, BENCH_CHAT_RUNS, BENCH_CHAT_THREADS.
 *   embedder  bench/default-embedder.ts: Hearth's built-in default embedder (built once per version
 *           into the temp dir, reused): chunks/s at 1, 16 and 64 texts per call, model size, peak RSS
 *           of a fresh process that loads it and embeds against a bare node, the retrieval harness and
 *           the word-similarity check. BENCH_EMBED_SECONDS, BENCH_EMBEDDER_MEMORY_TEXTS.
 *   analytics  bench/analytics.ts: GET /api/analytics/{source_id}/* p50/p95 per endpoint for a source of 100k
 *           chunks with metadata rules (target p95 <= 200 ms). BENCH_ANALYTICS_CHUNKS, BENCH_ANALYTICS_RUNS.
 *   ocr     bench/ocr.ts: a 50-page scan (ten 5-page image-only PDFs) read by OCR in the built service,
 *           pages/s with 1 and 2 extraction workers (target >= 1 with 2), GET /api/auth/me p95 during the
 *           scan (target < 50 ms), peak RSS. BENCH_OCR_PAGES, BENCH_OCR_WORKERS.
 * The other sections use the tiny test embedding model (they say so).
 * bench/results/latest.json keeps the latest figures of every section: a section not run keeps
 * its previous figures (`measured_at` says when each was taken).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { apiHeaders } from '../core/security-headers.js';
import { loadEmbedder } from '../native/embeddings/index.js';
import { benchIngest, formatIngestSummary, ingestTable, parseBenchModels } from './ingest.js';
import { benchChat, chatTable, formatChatBench } from './chat.js';
import { benchDefaultEmbedder, formatDefaultEmbedderBench } from './default-embedder.js';
import { benchOcr, formatOcrSummary, ocrTable } from './ocr.js';
import { BENCH_SECRETS, DEPLOYED_ENV, login, processCpuMicros, ROOT, type Service, startService, stopService } from './harness.js';
import { benchSearch, formatSearchBench, searchModel } from './search.js';
import { benchAnalytics, formatAnalyticsBench } from './analytics.js';
import { benchFilteredSearch, formatFilteredSearchBench } from './filtered-search.js';

const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
const TARGET_RATIO = 0.7;
/** The standard: Hearth's server CPU per authenticated read at most this many times the floor's. */
const MAX_FLOOR_CPU_RATIO = 1.5;

function envNumber(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`${name} must be a positive number, got "${value}"`);
  return parsed;
}

const settings = {
  durationSeconds: envNumber('BENCH_DURATION', 10),
  warmupSeconds: envNumber('BENCH_WARMUP', 8),
  connections: envNumber('BENCH_CONNECTIONS', 10),
  pipelining: envNumber('BENCH_PIPELINING', 1),
  rounds: Math.round(envNumber('BENCH_ROUNDS', 5)),
};
const cpuProfile = process.env.BENCH_CPU_PROF === '1';

// --- child servers ---

interface Server extends Service {
  name: string;
}

const servers = new Set<Server>();
const tempDirs: string[] = [];

/** Spawns `node script` on a free port and waits until readyPath answers over HTTP. */
async function startServer(name: string, script: string, env: Record<string, string>, readyPath: string): Promise<Server> {
  const nodeArgs = cpuProfile ? ['--cpu-prof', '--cpu-prof-dir', path.join(RESULTS_DIR, 'profiles'), '--cpu-prof-name', `${name}-${Date.now()}.cpuprofile`] : [];
  let server: Server | undefined;
  // Any answer counts as ready; the set holds the child from its spawn, so cleanup() kills it whatever happens.
  await startService(script, env, { nodeArgs, name, readyPath, ready: () => true, timeoutMs: 30_000, onSpawn: (service) => servers.add((server = { name, ...service })) });
  return server!;
}

/** SIGTERM (a graceful exit also writes the CPU profile), SIGKILL if it lingers. */
async function stopServer(server: Server): Promise<void> {
  servers.delete(server);
  await stopService(server, 15_000);
}

function cleanup(): void {
  for (const server of servers) server.child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

// --- measuring ---

interface Measurement {
  target: string;
  url: string;
  requestsPerSecond: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** CPU time the server process spent per request (user + system), Linux only: steadier than req/s on a busy machine. */
  serverCpuMicrosPerRequest: number | null;
  ratioToBaseline?: number;
}

function cannon(url: string, headers: Record<string, string>, seconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, headers, duration: seconds, connections: settings.connections, pipelining: settings.pipelining },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

interface Target {
  server: Server;
  target: string;
  route: string;
  headers?: Record<string, string>;
}

interface Round {
  result: autocannon.Result;
  cpuMicros: number | null;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Measures every target in turn, `settings.rounds` times (round 1 of each, then round 2 of each…),
 * so that a change in the machine's load hits every target alike instead of the one that happened
 * to run then. Figures are totals over the rounds; latency percentiles are medians of the rounds'.
 */
async function measureInterleaved(targets: Target[]): Promise<Measurement[]> {
  const seconds = settings.durationSeconds / settings.rounds;
  for (const t of targets) {
    process.stdout.write(`  warm-up ${t.target} ${settings.warmupSeconds}s\n`);
    await cannon(`${t.server.url}${t.route}`, t.headers ?? {}, settings.warmupSeconds);
  }
  const rounds = new Map<Target, Round[]>(targets.map((t) => [t, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    process.stdout.write(`  round ${round}/${settings.rounds}:`);
    for (const t of targets) {
      const cpuBefore = processCpuMicros(t.server.child.pid);
      const result = await cannon(`${t.server.url}${t.route}`, t.headers ?? {}, seconds);
      const cpuAfter = processCpuMicros(t.server.child.pid);
      rounds.get(t)!.push({ result, cpuMicros: cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null });
      process.stdout.write(` ${t.target} ${Math.round(result.requests.average)} req/s;`);
    }
    process.stdout.write('\n');
  }
  const baseline = rounds.get(targets[0])!;
  return targets.map((t) => {
    const own = rounds.get(t)!;
    const requests = own.reduce((sum, r) => sum + r.result.requests.total, 0);
    const cpu = own.every((r) => r.cpuMicros !== null) ? own.reduce((sum, r) => sum + r.cpuMicros!, 0) : null;
    const latency = (key: 'mean' | 'p50' | 'p90' | 'p99') => median(own.map((r) => r.result.latency[key]));
    return {
      target: t.target,
      url: `${t.server.url}${t.route}`,
      requestsPerSecond: requests / settings.durationSeconds,
      latencyMs: { mean: latency('mean'), p50: latency('p50'), p90: latency('p90'), p99: latency('p99'), max: Math.max(...own.map((r) => r.result.latency.max)) },
      requests,
      non2xx: own.reduce((sum, r) => sum + r.result.non2xx, 0),
      errors: own.reduce((sum, r) => sum + r.result.errors, 0),
      timeouts: own.reduce((sum, r) => sum + r.result.timeouts, 0),
      serverCpuMicrosPerRequest: cpu !== null && requests > 0 ? Math.round(cpu / requests) : null,
      // Each round against the baseline's round just before it: the median of those ratios.
      ratioToBaseline: median(own.map((r, i) => r.result.requests.average / baseline[i].result.requests.average)),
    };
  });
}

// --- API section ---

async function benchApi(serverScript: string) {
  console.log(
    `  ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmupSeconds}s warm-up, then ${settings.durationSeconds}s per target ` +
      `in ${settings.rounds} interleaved rounds; autocannon shares the machine with the servers under test\n`,
  );

  const hello = await startServer('hello-world', path.join(ROOT, 'bench', 'hello-world.mjs'), {}, '/');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-'));
  tempDirs.push(dataDir);
  const hearth = await startServer(
    'hearth',
    serverScript,
    // Request lines are not written (ERROR): this measures handling a request, not log I/O. The built-in
    // embedder's one-time build (a minute of both cores on a first start) would be measured with it: off.
    { ...DEPLOYED_ENV, DATA_DIR: dataDir, ...BENCH_SECRETS, LOG_LEVEL: 'ERROR', HEARTH_DEFAULT_EMBEDDER: 'off' },
    '/api/health',
  );
  const authorization = `Bearer ${await login(hearth.url)}`;
  const check = await fetch(`${hearth.url}/api/auth/me`, { headers: { authorization } });
  if (check.status !== 200) throw new Error(`GET /api/auth/me failed: ${check.status} ${await check.text()}`);

  const token = authorization.slice('Bearer '.length);
  const floor = await startServer('fastify-floor', path.join(ROOT, 'bench', 'fastify-floor.mjs'), { FLOOR_TOKEN: token, FLOOR_HEADERS: JSON.stringify(apiHeaders({})) }, '/me');

  const results = await measureInterleaved([
    { server: hello, target: 'hello-world', route: '/' },
    { server: hearth, target: 'health', route: '/api/health' },
    { server: hearth, target: 'auth-me', route: '/api/auth/me', headers: { authorization } },
    { server: floor, target: 'fastify-floor', route: '/me', headers: { authorization } },
  ]);
  await stopServer(hello);
  await stopServer(floor);
  await stopServer(hearth);

  console.log('');
  console.table(
    Object.fromEntries(
      results.map((r) => [
        r.target,
        {
          'req/s': Math.round(r.requestsPerSecond),
          'p50 ms': r.latencyMs.p50,
          'p99 ms': r.latencyMs.p99,
          'mean ms': Number(r.latencyMs.mean.toFixed(2)),
          'vs baseline': `${(r.ratioToBaseline! * 100).toFixed(1)}%`,
          'server CPU µs/req': r.serverCpuMicrosPerRequest ?? 'n/a',
          non2xx: r.non2xx,
          errors: r.errors,
        },
      ]),
    ),
  );

  const invalid = results.filter((r) => r.non2xx > 0 || r.errors > 0);
  for (const r of invalid) console.log(`WARNING: ${r.target} had ${r.non2xx} non-2xx responses and ${r.errors} errors: its figures do not measure a working route`);

  const me = results.find((r) => r.target === 'auth-me')!;
  const pass = me.ratioToBaseline! >= TARGET_RATIO && me.non2xx === 0 && me.errors === 0;
  console.log(
    `\n${pass ? 'PASS' : 'FAIL'}: authenticated GET /api/auth/me keeps ${(me.ratioToBaseline! * 100).toFixed(1)}% of hello-world's requests/s ` +
      `(median of ${settings.rounds} interleaved rounds; target >= ${TARGET_RATIO * 100}%)`,
  );

  const floorResult = results.find((r) => r.target === 'fastify-floor')!;
  const [mine, floorCpu] = [me.serverCpuMicrosPerRequest, floorResult.serverCpuMicrosPerRequest];
  const floorRatio = mine !== null && floorCpu !== null && floorCpu > 0 ? mine / floorCpu : null;
  console.log(
    `fastify-floor (bare Fastify with the same headers, a token hook and a response schema, no Hearth code) keeps ${(floorResult.ratioToBaseline! * 100).toFixed(1)}%: ` +
      `Hearth's own work costs ${floorRatio !== null ? mine! - floorCpu! : '?'} µs of server CPU per request on top`,
  );
  const floorPass = floorRatio !== null && floorRatio <= MAX_FLOOR_CPU_RATIO && me.non2xx === 0 && me.errors === 0;
  console.log(
    `${floorRatio === null ? 'n/a' : floorPass ? 'PASS' : 'FAIL'}: server CPU per authenticated GET /api/auth/me ${mine ?? '?'} µs against the floor's ${floorCpu ?? '?'} µs ` +
      `(${floorRatio === null ? '?' : floorRatio.toFixed(2)}x; standard <= ${MAX_FLOOR_CPU_RATIO}x)`,
  );

  return { settings, target: { route: 'GET /api/auth/me', minRatio: TARGET_RATIO, pass, maxFloorCpuRatio: MAX_FLOOR_CPU_RATIO, floorCpuRatio: floorRatio, floorPass }, results };
}

// --- main ---

/** Where the CPU profiles of the service go (BENCH_CPU_PROF=1), created; undefined without it. */
function profilesDir(): string | undefined {
  if (!cpuProfile) return undefined;
  const dir = path.join(RESULTS_DIR, 'profiles');
  mkdirSync(dir, { recursive: true });
  return dir;
}

const SECTIONS = ['api', 'ingest', 'search', 'chat', 'embedder', 'analytics', 'ocr'] as const;
type Section = (typeof SECTIONS)[number];

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY?.trim() || undefined;
  if (only && !SECTIONS.includes(only as Section)) throw new Error(`BENCH_ONLY must be one of ${SECTIONS.join(', ')}, got "${only}"`);
  const runs = (section: Section) => !only || only === section;
  // BENCH_SERVER: another build of the service (e.g. `tsup --out-dir` elsewhere while dist/ is in use).
  const serverScript = path.resolve(ROOT, process.env.BENCH_SERVER ?? path.join('dist', 'server.js'));
  if (!existsSync(serverScript)) throw new Error(`${serverScript} is missing: run \`npm run build\` (npm run bench does)`);
  mkdirSync(RESULTS_DIR, { recursive: true });

  const machine = {
    node: process.version,
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  };
  console.log(`Hearth bench: node ${machine.node}, ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

  // Sections not run this time keep their previous figures.
  const file = path.join(RESULTS_DIR, 'latest.json');
  let latest: Record<string, unknown> = {};
  try {
    latest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // first run
  }
  const now = new Date().toISOString();
  const measuredAt = { ...(latest.measured_at as Record<string, string> | undefined) };
  if (!latest.measured_at && typeof latest.date === 'string' && latest.results) measuredAt.api = latest.date;

  if (runs('api')) {
    console.log('\n== API: request throughput against a bare Fastify baseline');
    Object.assign(latest, await benchApi(serverScript));
    measuredAt.api = now;
  }

  if (runs('ingest')) {
    console.log('\n== Ingestion: the built service over HTTP, against the raw embedding throughput of the same model; peak RSS at 100k chunks');
    const profiles = profilesDir();
    const ingest = await benchIngest({
      serverScript,
      pdfPages: envNumber('BENCH_INGEST_PAGES', 200),
      textFiles: envNumber('BENCH_INGEST_FILES', 1000),
      uploadConcurrency: envNumber('BENCH_INGEST_CONCURRENCY', 4),
      embedSeconds: envNumber('BENCH_EMBED_SECONDS', 5),
      models: parseBenchModels(process.env.BENCH_INGEST_MODELS),
      rssChunks: process.env.BENCH_INGEST_RSS_CHUNKS === '0' ? 0 : envNumber('BENCH_INGEST_RSS_CHUNKS', 100_000),
      cpuProfileDir: profiles,
    });
    console.log('');
    console.table(ingestTable(ingest));
    console.log(formatIngestSummary(ingest));
    latest.ingest = ingest;
    measuredAt.ingest = now;
  }

  if (runs('search')) {
    // Queries embedded by the default pulled model's architecture (int8 MiniLM shape) unless BENCH_SEARCH_MODEL says tiny or builtin.
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-search-model-'));
    tempDirs.push(scratch);
    const { model, modelDir } = await searchModel(scratch, 'minilm-shape-int8');
    console.log(`\n== Search: POST /api/search against raw hnswlib and FTS5 (queries embedded by the ${model} model, ${model === 'builtin' ? 256 : 384} dimensions, in its worker thread)`);
    const embedder = await loadEmbedder({ modelDir, device: 'cpu' });
    if (!embedder) throw new Error(`the ${model} embedding model did not load`);
    try {
      const sizes = (process.env.BENCH_SEARCH_SIZES ?? '10000,100000').split(',').map(Number);
      const search = await benchSearch(sizes, envNumber('BENCH_SEARCH_QUERIES', 300), embedder);
      console.log(formatSearchBench(search));
      latest.search = search;
      measuredAt.search = now;
      // Issue 18: the same search when the caller's groups admit 1% and 50% of the chunks.
      console.log(formatFilteredSearchBench(await benchFilteredSearch(sizes[sizes.length - 1], envNumber('BENCH_SEARCH_QUERIES', 300), embedder)));
    } finally {
      await embedder.close();
    }
  }

  if (runs('chat')) {
    console.log('\n== Chat: time to first token of the local model, and what the service adds before it (stories260K; tiny test embedding model)');
    const profiles = profilesDir();
    const chat = await benchChat({
      serverScript,
      sizes: (process.env.BENCH_CHAT_SIZES ?? '10000,100000').split(',').map(Number),
      questions: envNumber('BENCH_CHAT_QUESTIONS', 20),
      warmup: envNumber('BENCH_CHAT_WARMUP', 3),
      directRuns: envNumber('BENCH_CHAT_RUNS', 20),
      threads: envNumber('BENCH_CHAT_THREADS', 1),
      cpuProfileDir: profiles,
    });
    console.log('');
    console.table(chatTable(chat));
    console.log(formatChatBench(chat));
    latest.chat = chat;
    measuredAt.chat = now;
  }

  if (runs('embedder')) {
    console.log("\n== Default embedder: Hearth's own offline model (throughput, size, memory, retrieval quality)");
    const embedder = await benchDefaultEmbedder({
      secondsPerSize: envNumber('BENCH_EMBED_SECONDS', 3),
      memoryTexts: envNumber('BENCH_EMBEDDER_MEMORY_TEXTS', 3000),
      progress: (message) => console.log(`  ${message}`),
    });
    console.log(formatDefaultEmbedderBench(embedder));
    latest.embedder = embedder;
    measuredAt.embedder = now;
  }

  if (runs('analytics')) {
    console.log('\n== Analytics: the seven endpoints over a source of 100k chunks with metadata rules');
    const analytics = await benchAnalytics(envNumber('BENCH_ANALYTICS_CHUNKS', 100_000), envNumber('BENCH_ANALYTICS_RUNS', 30));
    console.log(formatAnalyticsBench(analytics));
    latest.analytics = analytics;
    measuredAt.analytics = now;
  }
  if (runs('ocr')) {
    console.log('\n== OCR: a 50-page scan read by the built service, 1 and 2 extraction workers; GET /api/auth/me meanwhile');
    const ocr = await benchOcr({
      serverScript,
      pages: envNumber('BENCH_OCR_PAGES', 50),
      workers: (process.env.BENCH_OCR_WORKERS ?? '1,2').split(',').map(Number),
    });
    console.table(ocrTable(ocr));
    console.log(formatOcrSummary(ocr));
    latest.ocr = ocr;
    measuredAt.ocr = now;
  }

  writeFileSync(file, `${JSON.stringify({ ...latest, date: now, machine, measured_at: measuredAt }, null, 2)}\n`);
  console.log(`\nresults written to ${path.relative(ROOT, file)}${cpuProfile ? `; CPU profiles in ${path.relative(ROOT, path.join(RESULTS_DIR, 'profiles'))}/` : ''}`);
}

process.once('SIGINT', () => {
  cleanup();
  process.exit(130);
});

main()
  .catch((error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  })
  .finally(cleanup);
