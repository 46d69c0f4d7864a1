/**
 * The embedder adapted to the collection (EMBED_ADAPT, plugins/search-index/corpus-adaptation): time, CPU and peak
 * RSS of the product's own build (`buildAdaptedModel`: every chunk read from SQLite, tokenised, counted, PPMI, SVD,
 * the table written and installed in a MODEL_DIR) at N chunks.
 *
 * Chunks: the markdown of the eval corpus rule (every *.md under node_modules, 1-300 KB), paragraph-packed to about
 * 1,000 characters (bench/adaptive-embedder.ts's chunksOf), cycled up to N into a SQLite `chunks` table:
 *   repeat    the real chunks again and again;
 *   shuffled  each copy after the first with its words shuffled within the chunk (seeded): the distinct pairs grow
 *             as a larger collection's would (an upper bound).
 * The database is written by one child process; another loads the shipped table and tokenizer, as the service holds
 * them, and builds in a worker thread as the service does (`adaptInWorker`; its peak RSS is the process's, worker
 * included, plus tsx's loader); a third only loads the table and tokenizer: the baseline the build's peak is read
 * against. HEARTH_BENCH_WORKER_YOUNG_MB sets the worker's young generation (default the service's; 0: V8's default).
 *
 * `npx tsx bench/corpus-adaptation.ts` (HEARTH_BENCH_CHUNKS=100000, HEARTH_BENCH_SOURCES=repeat,shuffled). Linux only (/proc).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { installShippedEmbedder, SHIPPED_EMBEDDER } from '../native/embeddings/index.js';
import { readTokenizer } from '../native/embeddings/onnx-embedder.js';
import { readTokenTable } from '../native/embeddings/safetensors.js';
import { buildAdaptedModel } from '../plugins/search-index/corpus-adaptation/build.js';
import { ADAPT_WORKER_YOUNG_MB, adaptInWorker } from '../plugins/search-index/corpus-adaptation/index.js';
import { setActiveModel } from '../native/model-files/index.js';
import { mulberry32 } from '../plugins/search-index/default-embedder/linalg.js';
import { listCorpus } from '../scripts/eval/corpus.js';
import { chunksOf, shuffledWords } from './adaptive-embedder.js';
import { peakRssMiB, ROOT } from './harness.js';

const peakRss = () => Math.round(peakRssMiB(process.pid) ?? 0);

/** `n` chunks of node_modules' markdown (`source` repeat or shuffled, above) in a `chunks` table; the distinct ones' count. */
export async function writeDatabase(file: string, source: string, n: number): Promise<number> {
  const base: string[] = [];
  for (const doc of await listCorpus(path.join(ROOT, 'node_modules'))) base.push(...chunksOf(readFileSync(doc.file, 'utf8')));
  const random = mulberry32(20261130);
  const db = new Database(file);
  db.exec('CREATE TABLE chunks (rowid INTEGER PRIMARY KEY, text TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO chunks (text) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const text = base[i % base.length];
      insert.run(source === 'shuffled' && i >= base.length ? shuffledWords(text, random) : text);
    }
  })();
  db.close();
  return base.length;
}

/** The shipped model's table and tokenizer loaded, as the service holds them while it adapts. */
async function loadShippedModel(modelDir: string): Promise<void> {
  await installShippedEmbedder({ modelDir, activate: false });
  const folder = path.join(modelDir, 'embeddings', SHIPPED_EMBEDDER.id);
  await readTokenizer(path.join(folder, 'tokenizer.json'));
  readTokenTable(readFileSync(path.join(folder, 'model.safetensors')), 'embeddings');
}

async function build(file: string, modelDir: string): Promise<void> {
  await loadShippedModel(modelDir);
  const started = peakRss();
  const cpu0 = process.cpuUsage();
  const steps: Array<[string, number]> = [];
  const t0 = performance.now();
  const youngMb = Number(process.env.HEARTH_BENCH_WORKER_YOUNG_MB ?? ADAPT_WORKER_YOUNG_MB);
  const result = await adaptInWorker({ databaseFile: file, modelDir, baseId: SHIPPED_EMBEDDER.id }, (step) => {
    if (!step.startsWith('co-occurrence:') || step.includes(' of ')) steps.push([step, Math.round((performance.now() - t0) / 100) / 10]);
  }, youngMb).done;
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ workerYoungMb: youngMb || 'V8 default', chunks: result.chunks, contentTokens: result.tokens, adaptedTokens: result.corpusRows, seconds: +result.seconds.toFixed(1), cpuSeconds: +((cpu.user + cpu.system) / 1e6).toFixed(1), peakRssMB: { beforeBuild: started, end: peakRss() }, firstAndLastSteps: [steps[0], steps.at(-1)] }));
  process.exit(0); // the worker is done; nothing else to wait for
}

/**
 * The shipped model adapted to `chunks` chunks of node_modules' markdown, installed and made active in `modelDir`: a
 * real adapted model (192 dimensions) for the search benches (BENCH_SEARCH_MODEL=adapted).
 */
export async function installAdaptedShippedModel(modelDir: string, chunks = 3000): Promise<void> {
  await installShippedEmbedder({ modelDir });
  const file = path.join(modelDir, 'adapt-chunks.db');
  await writeDatabase(file, 'repeat', chunks);
  const { manifest } = await buildAdaptedModel({ databaseFile: file, modelDir, baseId: SHIPPED_EMBEDDER.id });
  rmSync(file);
  await setActiveModel(modelDir, 'embedding', manifest!.id);
}

async function baseline(modelDir: string): Promise<void> {
  await loadShippedModel(modelDir);
  console.log(JSON.stringify({ baselinePeakRssMB: peakRss() }));
}

async function main(): Promise<void> {
  const n = Number(process.env.HEARTH_BENCH_CHUNKS ?? 100_000);
  const [flag, a, b] = process.argv.slice(2);
  if (flag === '--write') return console.log(JSON.stringify({ distinctBaseChunks: await writeDatabase(a, b, n) }));
  if (flag === '--build') return build(a, b);
  if (flag === '--baseline') return baseline(a);
  const self = path.join(ROOT, 'bench', 'corpus-adaptation.ts');
  const run = (args: string[]) => spawnSync('npx', ['tsx', self, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, HEARTH_BENCH_CHUNKS: String(n) } }).stdout.trim();
  const work = mkdtempSync(path.join(os.tmpdir(), 'hearth-adapt-bench-'));
  try {
    console.log(run(['--baseline', path.join(work, 'models-baseline')]));
    for (const source of (process.env.HEARTH_BENCH_SOURCES ?? 'repeat,shuffled').split(',')) {
      const file = path.join(work, `${source}.db`);
      console.log(`${source}: ${run(['--write', file, source])}`);
      console.log(`uptime before: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
      console.log(`${source}: ${run(['--build', file, path.join(work, `models-${source}`)])}`);
      console.log(`uptime after: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
