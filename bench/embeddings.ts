/**
 * Raw embedding throughput of one model, measured alone (no SQLite, no index): texts/s and
 * tokens/s at batch sizes 1, 16 and 64. The main bench calls `benchEmbeddings` to report ingestion
 * as a fraction of it. Alone: `npx tsx bench/embeddings.ts` uses MODEL_DIR's active model when
 * MODEL_DIR is set, else builds the tiny test model, or with BENCH_EMBED_MODEL=minilm-shape a
 * random-weight model with all-MiniLM-L6-v2's compute. BENCH_EMBED_SECONDS (default 3) per batch size.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadEmbedder, type Embedder } from '../native/embeddings/index.js';

export interface EmbeddingBenchRow {
  batchSize: number;
  texts: number;
  tokens: number;
  seconds: number;
  /** CPU time of this process (every thread) over the same span: steadier than wall time on a shared box. */
  cpuSeconds: number;
  textsPerSecond: number;
  tokensPerSecond: number;
}

export interface EmbeddingBenchOptions {
  batchSizes?: number[];
  /** Time spent per batch size, after one warm-up batch. */
  secondsPerSize?: number;
  /** Words per generated text: ~120 words is about one retrieval chunk. */
  wordsPerText?: number;
  texts?: string[];
}

const WORDS =
  'the boiler manual explains how to bleed radiators before winter while the invoice lists quarterly totals for heating oil and the contract names a supplier warranty service engineer annual inspection pressure valve thermostat schedule tenant landlord repair deposit meter reading tariff kilowatt hour emergency contact'.split(
    ' ',
  );

/** Deterministic chunk-like texts: same corpus on every run and every machine. */
export function generateTexts(count: number, wordsPerText = 120): string[] {
  let seed = 12345;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  return Array.from({ length: count }, () => Array.from({ length: wordsPerText }, () => WORDS[next() % WORDS.length]).join(' ') + '.');
}

/**
 * Measures `embedder` as configured: a batch of 64 is one ONNX run only if the embedder was
 * loaded with batchSize ≥ 64 (otherwise it measures its own sub-batching).
 */
export async function benchEmbeddings(embedder: Embedder, options: EmbeddingBenchOptions = {}): Promise<EmbeddingBenchRow[]> {
  const sizes = options.batchSizes ?? [1, 16, 64];
  const seconds = options.secondsPerSize ?? 3;
  const corpus = options.texts ?? generateTexts(512, options.wordsPerText);
  const tokensOf = corpus.map((t) => Math.min(embedder.countTokens(t) + 2, embedder.maxTokens));
  const rows: EmbeddingBenchRow[] = [];
  for (const batchSize of sizes) {
    let cursor = 0;
    const take = () => {
      const idx = Array.from({ length: batchSize }, (_, i) => (cursor + i) % corpus.length);
      cursor = (cursor + batchSize) % corpus.length;
      return idx;
    };
    await embedder.embed(take().map((i) => corpus[i])); // warm-up: first run allocates arenas
    let texts = 0;
    let tokens = 0;
    const start = process.hrtime.bigint();
    const cpuStart = process.cpuUsage();
    let elapsed = 0;
    while (elapsed < seconds) {
      const idx = take();
      await embedder.embed(idx.map((i) => corpus[i]));
      texts += idx.length;
      for (const i of idx) tokens += tokensOf[i];
      elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    }
    const cpu = process.cpuUsage(cpuStart);
    rows.push({ batchSize, texts, tokens, seconds: elapsed, cpuSeconds: (cpu.user + cpu.system) / 1e6, textsPerSecond: texts / elapsed, tokensPerSecond: tokens / elapsed });
  }
  return rows;
}

export function formatEmbeddingBench(modelId: string, rows: EmbeddingBenchRow[]): string {
  const lines = [`embedding throughput, ${modelId}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'})`, 'batch   texts/s   tokens/s'];
  for (const r of rows) lines.push(`${String(r.batchSize).padStart(5)} ${r.textsPerSecond.toFixed(1).padStart(9)} ${r.tokensPerSecond.toFixed(0).padStart(10)}`);
  return lines.join('\n');
}

async function standalone(): Promise<void> {
  let tmpDir: string | undefined;
  let modelDir = process.env.MODEL_DIR;
  if (!modelDir) {
    tmpDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-embed-'));
    if (process.env.BENCH_EMBED_MODEL === 'minilm-shape') await (await import('./minilm-shape-model.js')).installMiniLmShapeModel(tmpDir);
    else await (await import('../test/fixtures/tiny-embedding-model.js')).installTinyEmbeddingModel(tmpDir);
    modelDir = tmpDir;
  }
  try {
    const embedder = await loadEmbedder({ modelDir, device: (process.env.EMBED_DEVICE as 'auto' | 'cpu' | 'cuda') ?? 'auto', batchSize: 64, log: console });
    if (!embedder) throw new Error(`no embedding model installed in ${modelDir}`);
    const rows = await benchEmbeddings(embedder, { secondsPerSize: Number(process.env.BENCH_EMBED_SECONDS ?? 3) });
    console.log(formatEmbeddingBench(`${embedder.modelId} on ${embedder.device}`, rows));
    console.log(JSON.stringify({ model: embedder.modelId, device: embedder.device, rows }));
    await embedder.close();
  } finally {
    if (tmpDir) await rm(tmpDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await standalone();
