/**
 * Ingestion throughput of the built service, end to end over HTTP: a generated PDF of 200 pages
 * and 1,000 generated text files are uploaded to `node dist/server.js` and timed until their jobs
 * finish. In the same run the same embedding model embeds chunks of the same documents alone, in
 * this process and on its calling thread (models.ts's loadEmbedder: no worker, no SQLite, no HTTP),
 * in windows before, between and after the phases (the service idle or stopped; the text files go
 * in 4 rounds and the PDF 3 times over, a window after each round): each phase is reported as a fraction of the raw
 * throughput measured around it (issue target: at least 80%), and, steadier on a shared machine, as
 * the fraction of the service's CPU time per chunk that the model alone needs.
 *
 * Models. The target is about a real encoder, and no pretrained weights exist on the bench machine:
 * the main row uses bench/minilm-shape-model.ts, all-MiniLM-L6-v2's exact architecture with random
 * weights, int8 quantised as the model `models pull` installs by default (Xenova's
 * model_quantized.onnx, 23 MB), so each chunk costs what the default model costs. The fp32 form of
 * the same weights (90 MB, the all-MiniLM-L6-v2-fp32 preset's cost: about 2.3 times the CPU per
 * chunk) is `minilm-shape`, run on request. The last row uses the tiny bag-of-tokens test model
 * (test/fixtures/tiny-embedding-model.ts), whose ONNX run is nearly free: there ingestion's fixed
 * costs (HTTP upload, extraction, SQLite, HNSW) stand alone.
 *
 * Peak RSS at scale (issue target: under 400 MB at 100k chunks with the embedder loaded): 100k
 * synthetic chunks (bench/search.ts's corpus) and low-rank vectors are written straight into a data
 * dir, as the service finds them at boot; the service then starts on it with the int8 MiniLM-shape
 * model (the default model's weights and kernels in memory), ingests the 200-page PDF and some text
 * files, and answers hybrid searches. VmHWM of the service (all its threads) is read from /proc after
 * each step.
 *
 * Alone: `npm run build && npx tsx bench/ingest.ts`. BENCH_INGEST_PAGES (200), BENCH_INGEST_FILES
 * (1000), BENCH_INGEST_CONCURRENCY (uploads in flight, 4), BENCH_EMBED_SECONDS (5 per batch size and raw window),
 * BENCH_INGEST_MODELS (minilm-shape-int8,tiny; minilm-shape is the fp32 one, shipped the embedder shipped with Hearth; none skips),
 * BENCH_INGEST_RSS_MODEL (minilm-shape-int8, or another of those), BENCH_INGEST_RSS_CHUNKS (100000; 0 skips),
 * BENCH_CPU_PROF=1 (V8 CPU profiles of the service's threads into bench/results/profiles/).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { buildApp } from '../core/app.js';
import { loadConfig } from '../core/config.js';
import { loadEmbedderOnThisThread as loadEmbedder, type Embedder } from '../native/embeddings/index.js';
import { chunkDocument } from '../plugins/ingestion/chunker.js';
import { extractDocument } from '../plugins/ingestion/extract/index.js';
import type { FileType } from '../plugins/documents/file-type.js';
import { generateLicenseKeyPair, issueLicense } from '../plugins/license/license-key.js';
import { makePdf, prose } from '../test/fixtures/documents.js';
import { installTinyEmbeddingModel, TINY_MODEL_ID } from '../test/fixtures/tiny-embedding-model.js';
import { SHIPPED_EMBEDDER, installShippedEmbedder } from '../native/embeddings/index.js';
import { benchEmbeddings, type EmbeddingBenchRow } from './embeddings.js';
import { BENCH_SECRETS, DEPLOYED_ENV, login, num, pct, peakRssMiB, processCpuMicros, procStatus, ROOT, type Service, startService, stopService } from './harness.js';
import { installMiniLmShapeModel, MINILM_SHAPE_INT8_MODEL_ID, MINILM_SHAPE_MODEL_ID } from './minilm-shape-model.js';
import { queriesFrom, rng, seedForBoot } from './search.js';

export const INGEST_TARGET_RATIO = 0.8;
export const RSS_TARGET_MB = 400;

export type BenchModel = 'minilm-shape-int8' | 'minilm-shape' | 'tiny' | 'shipped';

/** Chunk texts of the raw sample. */
const RAW_SAMPLE = 96;

const MODELS: Record<BenchModel, { install: (dir: string) => Promise<unknown>; batchSizes: number[]; note: string }> = {
  'minilm-shape-int8': {
    install: (dir) => installMiniLmShapeModel(dir, { int8: true }),
    // The whole sample per call: the embedder sorts it by length, so its ONNX runs of 16 pad little (its best case).
    batchSizes: [RAW_SAMPLE],
    note: `${MINILM_SHAPE_INT8_MODEL_ID}: all-MiniLM-L6-v2's architecture (6 layers, hidden 384, 12 heads) with random weights and the real tokenizer, int8 quantised as the default pulled model is (quantize_dynamic: int8 MatMul weights, uint8 embedding tables). No pretrained weights are on this machine; this one costs per chunk what the default model costs, which is what the 80% target is about`,
  },
  'minilm-shape': {
    install: (dir) => installMiniLmShapeModel(dir),
    batchSizes: [RAW_SAMPLE],
    note: `${MINILM_SHAPE_MODEL_ID}: the same architecture and random weights in fp32, the cost of the all-MiniLM-L6-v2-fp32 preset (about 2.3 times the int8 model's CPU per chunk)`,
  },
  shipped: {
    install: (dir) => installShippedEmbedder({ modelDir: dir }),
    batchSizes: [RAW_SAMPLE],
    note: `${SHIPPED_EMBEDDER.id}: the embedder shipped with Hearth, what a fresh box installs at first start (a Model2Vec token table, 128 dimensions: no network to run, tokenisation and a mean per chunk)`,
  },
  tiny: {
    install: (dir) => installTinyEmbeddingModel(dir, { hidden: 384 }),
    batchSizes: [16, 256],
    note: `${TINY_MODEL_ID}: the tiny bag-of-tokens test model (real tokenizer, 384 dimensions) whose ONNX run costs almost nothing, so its raw throughput is mostly tokenisation: this row shows ingestion's fixed costs per document and chunk, not the target`,
  },
};

/** The model of the peak RSS run (BENCH_INGEST_RSS_MODEL): by default what `models pull` installs, int8, the heavier of the defaults. */
const rssModel = (): BenchModel => {
  const name = process.env.BENCH_INGEST_RSS_MODEL ?? 'minilm-shape-int8';
  if (!Object.hasOwn(MODELS, name)) throw new Error(`BENCH_INGEST_RSS_MODEL must be one of ${Object.keys(MODELS).join(', ')}, got "${name}"`);
  return name as BenchModel;
};

/** BENCH_INGEST_MODELS as a list of known models (unknown names dropped, so "none" runs none); unset: the default list. */
export function parseBenchModels(value: string | undefined): BenchModel[] | undefined {
  return value === undefined || value === '' ? undefined : (value.split(',').filter((m) => Object.hasOwn(MODELS, m)) as BenchModel[]);
}

export interface IngestBenchOptions {
  serverScript?: string;
  pdfPages?: number;
  textFiles?: number;
  uploadConcurrency?: number;
  /** Seconds per batch size of the raw embedding measurement. */
  embedSeconds?: number;
  models?: BenchModel[];
  /** Chunks in the index of the peak RSS run; 0 skips it. */
  rssChunks?: number;
  /** Write V8 CPU profiles of the service here. */
  cpuProfileDir?: string;
  log?: (line: string) => void;
}

export interface PhaseResult {
  items: number;
  chunks: number;
  /** First upload sent to last job finished. */
  seconds: number;
  /** Time spent sending the uploads (they overlap with indexing for the text files). */
  uploadSeconds: number;
  itemsPerSecond: number;
  chunksPerSecond: number;
  /** The model alone (this thread, no service), chunks/s, over the phase's time: each round against the raw windows just before and after it. */
  rawChunksPerSecond: number;
  /** Chunks/s as a fraction of rawChunksPerSecond. */
  ofRawEmbedding: number;
  /** CPU time of the service (all threads) per chunk, ms. */
  cpuMsPerChunk: number | null;
  /** The model's own CPU time per chunk (raw) as a fraction of the service's: the share of ingestion's CPU that is embedding. */
  cpuShareOfModel: number | null;
  failed: number;
  /** VmHWM of the service at the end of the phase, MiB. */
  peakRssMiB: number | null;
}

export interface RawEmbedding {
  windows: RawWindow[];
  /** Texts of each phase's sample and their mean tokens, against the mean of the chunks the service indexed. */
  samples: { pdf: { texts: number; meanTokens: number }; text: { texts: number; meanTokens: number } };
  indexedTokens: { pdf: number; text: number };
}

export interface ModelRun {
  model: { name: BenchModel; id: string; dimension: number; device: string; note: string };
  pdf: PhaseResult & { pagesPerSecond: number; rounds: number; jobSeconds: number | null };
  text: PhaseResult & { filesPerSecond: number; rounds: number };
  embedding: RawEmbedding;
  index: { chunks: number; vectors: number; stale_chunks: number };
  peakRssMiB: { boot: number | null; afterPdf: number | null; afterText: number | null };
  target: { minRatio: number; pass: boolean };
}

export interface RssAtScale {
  model: string;
  chunks: number;
  vectors: number;
  ingested: { pdfPages: number; textFiles: number; chunks: number };
  searches: number;
  /** VmHWM of the service, MiB, after each step (afterAdaptation: once the embedder adapted to the collection is in force, EMBED_ADAPT). */
  peakRssMiB: { boot: number | null; afterIngest: number | null; afterSearch: number | null; afterAdaptation: number | null };
  /** The embedder adaptation's outcome and its seconds (null: it did not run, e.g. EMBED_ADAPT=off or a model that is not static). */
  adaptation: { state: string; detail: string; seconds: number; model: string | null } | null;
  /** At the end: resident anonymous and file-backed memory (MiB), threads. */
  end: { rssMiB: number | null; anonMiB: number | null; fileMiB: number | null; threads: number | null };
  target: { maxMB: number; pass: boolean };
  howMeasured: string;
}

export interface IngestBenchResult {
  settings: { pdfPages: number; textFiles: number; uploadConcurrency: number; extractionWorkers: string };
  runs: ModelRun[];
  rssAtScale: RssAtScale | null;
}

// --- the service ---

class Client {
  constructor(
    readonly url: string,
    private token = '',
  ) {}

  async login(): Promise<void> {
    this.token = await login(this.url);
  }

  async json<T>(method: string, route: string, body?: unknown): Promise<T> {
    const send = () =>
      fetch(`${this.url}${route}`, {
        method,
        headers: { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    let res = await send();
    // A long wait (a 200-page PDF's job at 100k chunks) can outlive the access token: sign in again, once.
    if (res.status === 401 && this.token) {
      await this.login();
      res = await send();
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async upload(file: string): Promise<{ document: { id: string }; job: { id: string } }> {
    const form = new FormData();
    form.append('file', new Blob([readFileSync(file)]), path.basename(file));
    const res = await fetch(`${this.url}/api/docs/upload`, { method: 'POST', headers: { authorization: `Bearer ${this.token}` }, body: form });
    const text = await res.text();
    if (res.status !== 202) throw new Error(`upload ${path.basename(file)}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text);
  }

  async count(status: string): Promise<number> {
    return (await this.json<{ total: number }>('GET', `/api/docs?status=${status}&limit=1`)).total;
  }
}

/**
 * How often the bench asks whether indexing is done: polling every 10 ms took CPU on this 2-core machine
 * (its requests, and this process) from the service being measured; 100 ms costs at most that much time.
 */
const POLL_MS = 100;

async function poll<T>(what: string, service: Service, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (service.child.exitCode !== null || service.child.signalCode !== null) throw new Error(`the service exited while waiting for ${what}:\n${service.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Starts the service on a data dir with a PRO license (1,000 documents are over the FREE plan's 500, as a customer would).
 * Access tokens last a day here: on a loaded box a run outlasts the default 15 minutes, and auth is not what this measures.
 */
async function startLicensed(serverScript: string, dataDir: string, modelDir: string, nodeArgs: string[] = []): Promise<{ service: Service; client: Client }> {
  const signer = generateLicenseKeyPair();
  const service = await startService(
    serverScript,
    { ...DEPLOYED_ENV, DATA_DIR: dataDir, MODEL_DIR: modelDir, ...BENCH_SECRETS, LICENSE_PUBLIC_KEYS: signer.publicKeyBase64, LOG_LEVEL: 'ERROR', ACCESS_TOKEN_EXPIRE_SECONDS: '86400' },
    { nodeArgs, timeoutMs: 300_000 },
  );
  try {
    const client = new Client(service.url);
    await client.login();
    const day = 86_400_000;
    const license = issueLicense(signer.privateKeyPem, {
      id: 'bench',
      licensee: 'Hearth bench',
      tier: 'PRO',
      issued_at: new Date(Date.now() - day).toISOString(),
      expires_at: new Date(Date.now() + 30 * day).toISOString(),
    });
    await client.json('POST', '/api/license', { license_key: license });
    const health = await client.json<{ components: Record<string, { status: string; detail?: string }> }>('GET', '/api/health');
    if (health.components.embedder?.status !== 'ok') throw new Error(`the service has no embedder: ${JSON.stringify(health.components.embedder)}`);
    return { service, client };
  } catch (error) {
    await stopService(service).catch(() => service.child.kill('SIGKILL'));
    throw error;
  }
}

type JobView = { state: string; started_at?: string; finished_at?: string; error?: string };
type DocView = { id: string; status: string; chunk_count: number; error: string | null };

/** Uploads one file and waits for its job; returns the document as indexed. */
async function ingestOne(client: Client, service: Service, file: string): Promise<{ doc: DocView; job: JobView; uploadSeconds: number }> {
  const start = process.hrtime.bigint();
  const uploaded = await client.upload(file);
  const uploadSeconds = seconds(start);
  const job = await poll(`the job of ${path.basename(file)}`, service, async () => {
    const view = await client.json<JobView>('GET', `/api/jobs/${uploaded.job.id}`);
    return ['succeeded', 'failed', 'cancelled'].includes(view.state) ? view : undefined;
  }, 1_800_000);
  const doc = (await client.json<{ documents: DocView[] }>('GET', '/api/docs?limit=5')).documents.find((d) => d.id === uploaded.document.id)!;
  if (job.state !== 'succeeded' || doc.status !== 'indexed') throw new Error(`${path.basename(file)} was not indexed: job ${job.state} ${job.error ?? ''}, document ${doc.status} ${doc.error ?? ''}`);
  return { doc, job, uploadSeconds };
}

/** Uploads files, `concurrency` in flight (each upload is a job; they run one at a time), then waits until none is queued or indexing. */
async function ingestMany(client: Client, service: Service, files: string[], concurrency: number): Promise<{ uploadSeconds: number; failed: number }> {
  const start = process.hrtime.bigint();
  await inParallel(files, concurrency, (file) => client.upload(file));
  const uploadSeconds = seconds(start);
  await poll('the text files to be indexed', service, async () => ((await client.count('queued')) + (await client.count('indexing')) === 0 ? true : undefined), 3_600_000);
  return { uploadSeconds, failed: await client.count('failed') };
}

// --- the corpus ---

/** 1,000 distinct notes of 2 to 4 paragraphs (about 250 to 600 words: one to three chunks each). */
function writeTextFiles(dir: string, count: number): string[] {
  mkdirSync(dir, { recursive: true });
  return Array.from({ length: count }, (_, i) => {
    const paragraphs = Array.from({ length: 2 + (i % 3) }, (_, p) => prose(100_000 + i * 7 + p, 6 + ((i + p) % 7)));
    const file = path.join(dir, `note-${String(i).padStart(4, '0')}.txt`);
    writeFileSync(file, `Note ${i}\n\n${paragraphs.join('\n\n')}\n`);
    return file;
  });
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

const seconds = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e9;

// --- raw embedding ---

/**
 * What the model embeds alone: documents of a phase (the PDF, the first notes) extracted and cut by
 * the product's extractor and chunker as the pipeline cuts them (chunks of at most 256 tokens, 12%
 * overlap, RAG_MIN_CHUNK_LENGTH 50). Each phase is compared on its own chunks: the PDF's are full
 * pages of prose (224 tokens on average), the notes' much shorter (178), and a chunk costs the model
 * about its tokens.
 */
async function rawSample(files: string[], fileType: FileType, embedder: Embedder, count: number): Promise<{ texts: string[]; meanTokens: number }> {
  const maxTokens = Math.min(256, embedder.maxTokens - 2);
  const options = { maxTokens, overlapTokens: Math.round(maxTokens * 0.12), minChars: 50, countTokens: (text: string) => embedder.countTokens(text) };
  const texts: string[] = [];
  for (const file of files) {
    const document = await extractDocument(file, fileType, { tablesEnabled: false, ocrEnabled: false });
    for (const draft of chunkDocument(document, options)) texts.push(draft.text);
    if (texts.length >= count) break;
  }
  const sample = texts.slice(0, count);
  return { texts: sample, meanTokens: sample.reduce((sum, text) => sum + embedder.countTokens(text), 0) / sample.length };
}

interface RawWindow {
  when: string;
  rows: EmbeddingBenchRow[];
  best: number;
  /** CPU time of this process per text at the best batch size, ms. */
  cpuMsPerText: number;
  loadAverage: number;
}

/** The model alone on this thread (models.ts's loadEmbedder: no worker, no service) over the sample, at each batch size. */
async function rawWindow(when: string, modelDir: string, texts: string[], batchSizes: number[], secondsPerSize: number): Promise<RawWindow> {
  const embedder = await loadEmbedder({ modelDir, device: 'cpu' });
  if (!embedder) throw new Error('the model did not load for the raw measurement');
  try {
    const rows: EmbeddingBenchRow[] = [];
    const cpu: number[] = [];
    for (const batchSize of batchSizes) {
      const before = process.cpuUsage();
      const [row] = await benchEmbeddings(embedder, { batchSizes: [batchSize], secondsPerSize, texts });
      const used = process.cpuUsage(before);
      rows.push(row);
      // The warm-up batch is in the CPU time but not in row.texts: count it.
      cpu.push((used.user + used.system) / 1000 / (row.texts + batchSize));
    }
    const bestAt = rows.reduce((best, row, i) => (row.textsPerSecond > rows[best].textsPerSecond ? i : best), 0);
    return { when, rows, best: rows[bestAt].textsPerSecond, cpuMsPerText: cpu[bestAt], loadAverage: os.loadavg()[0] };
  } finally {
    await embedder.close();
  }
}

// --- one model, throughput ---

/** The text files go in this many rounds, a raw window between rounds: load changes on a shared machine hit both sides alike. */
const TEXT_ROUNDS = 4;
/** The same for the PDF: indexed this many times over. */
const PDF_ROUNDS = 3;

interface Segment {
  chunks: number;
  seconds: number;
  cpuMicros: number | null;
  /** The raw throughput around it: the mean of the windows just before and just after. */
  reference: number;
}

/** A phase against the raw windows around its segments: the chunks raw embedding would have made in the same spans of time. */
function phaseResult(items: number, segments: Segment[], extra: { uploadSeconds: number; failed: number; rss: number | null }, modelCpuMs: number): PhaseResult {
  const chunks = segments.reduce((sum, s) => sum + s.chunks, 0);
  const seconds = segments.reduce((sum, s) => sum + s.seconds, 0);
  const rawChunks = segments.reduce((sum, s) => sum + s.seconds * s.reference, 0);
  const cpuMicros = segments.every((s) => s.cpuMicros !== null) ? segments.reduce((sum, s) => sum + s.cpuMicros!, 0) : null;
  const cpuMsPerChunk = cpuMicros === null ? null : cpuMicros / 1000 / chunks;
  return {
    items,
    chunks,
    seconds,
    uploadSeconds: extra.uploadSeconds,
    itemsPerSecond: items / seconds,
    chunksPerSecond: chunks / seconds,
    rawChunksPerSecond: rawChunks / seconds,
    ofRawEmbedding: chunks / rawChunks,
    cpuMsPerChunk,
    cpuShareOfModel: cpuMsPerChunk === null ? null : modelCpuMs / cpuMsPerChunk,
    failed: extra.failed,
    peakRssMiB: extra.rss,
  };
}

async function benchModel(name: BenchModel, work: string, pdf: string, texts: string[], options: Required<Pick<IngestBenchOptions, 'serverScript' | 'pdfPages' | 'textFiles' | 'uploadConcurrency' | 'embedSeconds'>> & Pick<IngestBenchOptions, 'cpuProfileDir'>, log: (line: string) => void): Promise<ModelRun> {
  const spec = MODELS[name];
  const modelDir = path.join(work, `models-${name}`);
  await spec.install(modelDir);
  const dataDir = path.join(work, `data-${name}`);
  const sampler = await loadEmbedder({ modelDir, device: 'cpu' });
  if (!sampler) throw new Error(`the ${name} model did not load`);
  const samples = { pdf: await rawSample([pdf], 'pdf', sampler, RAW_SAMPLE), text: await rawSample(texts, 'txt', sampler, RAW_SAMPLE) };
  await sampler.close();
  // Raw windows before, between and after the phases and the rounds of text files, the service idle or stopped.
  const windows: RawWindow[] = [];
  const raw = async (when: string, phase: 'pdf' | 'text') => {
    log(`  [${name}] raw embedding of the ${phase} chunks ${when}…`);
    windows.push(await rawWindow(`${phase} chunks ${when}`, modelDir, samples[phase].texts, spec.batchSizes, options.embedSeconds));
    return windows.at(-1)!;
  };
  const around = (a: RawWindow, b: RawWindow) => (a.best + b.best) / 2;

  const first = await raw('before the service starts', 'pdf');
  const profile = options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir, '--cpu-prof-name', `ingest-${name}-${Date.now()}.cpuprofile`] : [];
  const { service, client } = await startLicensed(options.serverScript, dataDir, modelDir, profile);
  const pid = service.child.pid;
  const rssBoot = peakRssMiB(pid);
  const cpuSince = (from: number | null) => {
    const now = processCpuMicros(pid);
    return from !== null && now !== null ? now - from : null;
  };
  let stats: { chunks: number; vectors: number; stale_chunks: number; model_id: string; dimension: number; device: string };
  const pdfSegments: Segment[] = [];
  let pdfDoc: { doc: DocView; job: JobView; uploadSeconds: number } | undefined;
  let pdfUpload = 0;
  const textSegments: Segment[] = [];
  let textUpload = 0;
  let failed = 0;
  let rssAfterPdf: number | null;
  let rssAfterText: number | null;
  try {
    // The PDF is one document of some seconds: it goes in rounds too (deleted, then uploaded again), a window after each.
    let before = first;
    for (let round = 1; round <= PDF_ROUNDS; round++) {
      if (pdfDoc) await client.json('DELETE', `/api/docs/${pdfDoc.doc.id}`);
      log(`  [${name}] PDF, round ${round}/${PDF_ROUNDS}: uploading ${path.basename(pdf)} (${(readFileSync(pdf).length / 1024).toFixed(0)} KiB) and waiting for its job…`);
      const cpu = processCpuMicros(pid);
      const start = process.hrtime.bigint();
      pdfDoc = await ingestOne(client, service, pdf);
      const segment = { chunks: pdfDoc.doc.chunk_count, seconds: seconds(start), cpuMicros: cpuSince(cpu), reference: 0 };
      pdfUpload += pdfDoc.uploadSeconds;
      const after = await raw(`after PDF round ${round} (the service idle)`, 'pdf');
      segment.reference = around(before, after);
      pdfSegments.push(segment);
      before = after;
    }
    rssAfterPdf = peakRssMiB(pid);
    let previous = await raw('after the PDF rounds (the service idle)', 'text');

    let indexed = pdfDoc!.doc.chunk_count;
    const rounds = Math.min(TEXT_ROUNDS, texts.length);
    for (let round = 0; round < rounds; round++) {
      const files = texts.slice(Math.round((round * texts.length) / rounds), Math.round(((round + 1) * texts.length) / rounds));
      log(`  [${name}] text, round ${round + 1}/${rounds}: uploading ${files.length} files, ${options.uploadConcurrency} at a time, and waiting for their jobs…`);
      const cpuRound = processCpuMicros(pid);
      const startRound = process.hrtime.bigint();
      const result = await ingestMany(client, service, files, options.uploadConcurrency);
      const elapsed = seconds(startRound);
      const cpuMicros = cpuSince(cpuRound);
      const total = (await client.json<{ chunks: number }>('GET', '/api/index/stats')).chunks;
      textUpload += result.uploadSeconds;
      failed = result.failed;
      const next = round === rounds - 1 ? null : await raw(`after text round ${round + 1} (the service idle)`, 'text');
      textSegments.push({ chunks: total - indexed, seconds: elapsed, cpuMicros, reference: next ? around(previous, next) : NaN });
      indexed = total;
      if (next) previous = next;
    }
    stats = await client.json('GET', '/api/index/stats');
    rssAfterText = peakRssMiB(pid);
  } finally {
    await stopService(service).catch(() => service.child.kill('SIGKILL'));
  }
  const last = await raw('after the service stopped', 'text');
  textSegments.at(-1)!.reference = around(windows.at(-2)!, last);

  const db = new Database(path.join(dataDir, 'hearth.db'), { readonly: true, fileMustExist: true });
  const meanTokens = (where: string) => (db.prepare(`SELECT avg(token_count) FROM chunks WHERE document_id ${where} ?`).pluck().get(pdfDoc!.doc.id) as number) ?? 0;
  const indexedTokens = { pdf: meanTokens('='), text: meanTokens('!=') };
  db.close();
  const cpuOf = (phase: string) => {
    const own = windows.filter((w) => w.when.startsWith(phase));
    return own.reduce((sum, w) => sum + w.cpuMsPerText, 0) / own.length;
  };
  const pdfPhase = phaseResult(options.pdfPages * PDF_ROUNDS, pdfSegments, { uploadSeconds: pdfUpload, failed: 0, rss: rssAfterPdf }, cpuOf('pdf'));
  const textPhase = phaseResult(options.textFiles, textSegments, { uploadSeconds: textUpload, failed, rss: rssAfterText }, cpuOf('text'));
  const { job } = pdfDoc!;
  return {
    model: { name, id: stats.model_id, dimension: stats.dimension, device: stats.device, note: spec.note },
    pdf: { ...pdfPhase, pagesPerSecond: pdfPhase.itemsPerSecond, rounds: pdfSegments.length, jobSeconds: job.started_at && job.finished_at ? (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000 : null },
    text: { ...textPhase, filesPerSecond: options.textFiles / textPhase.seconds, rounds: textSegments.length },
    embedding: { windows, samples: { pdf: { texts: samples.pdf.texts.length, meanTokens: samples.pdf.meanTokens }, text: { texts: samples.text.texts.length, meanTokens: samples.text.meanTokens } }, indexedTokens },
    index: { chunks: stats.chunks, vectors: stats.vectors, stale_chunks: stats.stale_chunks },
    peakRssMiB: { boot: rssBoot, afterPdf: rssAfterPdf, afterText: rssAfterText },
    target: { minRatio: INGEST_TARGET_RATIO, pass: Math.min(pdfPhase.ofRawEmbedding, textPhase.ofRawEmbedding) >= INGEST_TARGET_RATIO },
  };
}

// --- peak RSS at scale ---

/** Writes the corpus straight into SQLite and the HNSW file of a data dir, as the service finds them at boot. */
async function seedIndex(dataDir: string, modelDir: string, chunks: number): Promise<{ texts: string[] }> {
  const config = loadConfig({ DATA_DIR: dataDir, MODEL_DIR: modelDir, LOG_LEVEL: 'ERROR', ...BENCH_SECRETS }, { secretDirs: [] });
  const app = await buildApp({ config });
  try {
    const { seeded } = await seedForBoot(app, chunks);
    return { texts: seeded.filter((_, i) => i % 97 === 0).map((c) => c.text) };
  } finally {
    await app.close();
  }
}

function memoryNow(pid: number | undefined): { rssMiB: number | null; anonMiB: number | null; fileMiB: number | null; threads: number | null } {
  const status = procStatus(pid);
  const mib = (name: string) => (status?.[name] === undefined ? null : status[name] / 1024);
  return { rssMiB: mib('VmRSS'), anonMiB: mib('RssAnon'), fileMiB: mib('RssFile'), threads: status?.Threads ?? null };
}

async function benchRssAtScale(work: string, pdf: string, texts: string[], chunks: number, options: { serverScript: string; pdfPages: number; uploadConcurrency: number }, log: (line: string) => void): Promise<RssAtScale> {
  const modelDir = path.join(work, 'models-rss');
  await MODELS[rssModel()].install(modelDir);
  const dataDir = path.join(work, 'data-rss');
  log(`  [rss] writing ${chunks} chunks and their vectors into a data dir…`);
  const { texts: corpus } = await seedIndex(dataDir, modelDir, chunks);
  log('  [rss] starting the service on it, ingesting the PDF and text files, searching…');
  const { service, client } = await startLicensed(options.serverScript, dataDir, modelDir);
  const pid = service.child.pid;
  try {
    const boot = peakRssMiB(pid);
    const pdfRun = await ingestOne(client, service, pdf);
    const { failed } = await ingestMany(client, service, texts, options.uploadConcurrency);
    if (failed > 0) throw new Error(`${failed} documents failed during the RSS run`);
    const afterIngest = peakRssMiB(pid);
    const { specific, vague } = queriesFrom(corpus, 50, rng(7));
    const queries = [...specific, ...vague];
    for (const query of queries) await client.json('POST', '/api/search', { query, k: 5, mode: 'hybrid' });
    const afterSearch = peakRssMiB(pid);
    const adaptation = await adapted(client, service, log);
    const afterAdaptation = adaptation ? peakRssMiB(pid) : null;
    const stats = await client.json<{ chunks: number; vectors: number; model_id: string }>('GET', '/api/index/stats');
    const peak = Math.max(boot ?? 0, afterIngest ?? 0, afterSearch ?? 0, afterAdaptation ?? 0);
    return {
      model: stats.model_id,
      chunks: stats.chunks,
      vectors: stats.vectors,
      ingested: { pdfPages: options.pdfPages, textFiles: texts.length, chunks: stats.chunks - chunks },
      searches: queries.length,
      peakRssMiB: { boot, afterIngest, afterSearch, afterAdaptation },
      adaptation,
      end: memoryNow(pid),
      target: { maxMB: RSS_TARGET_MB, pass: peak * 1.048576 < RSS_TARGET_MB },
      howMeasured:
        `${chunks} synthetic chunks (bench/search.ts corpus) and low-rank vectors written into SQLite and the HNSW file, as the service finds them at boot; ` +
        `the built service started on that data dir with ${stats.model_id} loaded, ingested a ${pdfRun.doc.chunk_count}-chunk PDF and ${texts.length} text files over HTTP, ` +
        `then answered ${queries.length} hybrid searches, then adapted its static embedder to the collection and rebuilt the index onto it (EMBED_ADAPT) where it does; peak RSS is the service's VmHWM (/proc/<pid>/status, all threads, anonymous and file-backed pages)`,
    };
  } finally {
    await stopService(service).catch(() => service.child.kill('SIGKILL'));
  }
}

/**
 * Waits (at most 30 minutes) for the service to adapt a static embedder to the collection and rebuild the index onto
 * it (EMBED_ADAPT: once the jobs are idle and the collection holds still); null when it does not (off, not static).
 */
async function adapted(client: Client, service: Service, log: (line: string) => void): Promise<RssAtScale['adaptation']> {
  type Stats = { model_id: string | null; stale_chunks: number; corpus_adaptation: { state: string; detail: string } };
  const started = Date.now();
  log('  [rss] waiting for the embedder\'s adaptation to the collection and the rebuild after it…');
  for (;;) {
    const stats = await client.json<Stats>('GET', '/api/index/stats');
    const { state, detail } = stats.corpus_adaptation;
    const seconds = Math.round((Date.now() - started) / 1000);
    if (state === 'off' || (state === 'waiting' && /EMBED_ADAPT_M(IN|AX)_CHUNKS/.test(detail))) return null;
    if (state === 'failed' || (state === 'in_force' && stats.model_id?.startsWith(`${detail.split(',')[0]}@`) && stats.stale_chunks === 0)) return { state, detail, seconds, model: stats.model_id };
    if (service.child.exitCode !== null) throw new Error('the service exited while adapting its embedder');
    if (seconds > 1800) return { state: 'timed out', detail, seconds, model: stats.model_id };
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

// --- the bench ---

export async function benchIngest(options: IngestBenchOptions = {}): Promise<IngestBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = {
    serverScript: options.serverScript ?? path.join(ROOT, 'dist', 'server.js'),
    pdfPages: options.pdfPages ?? 200,
    textFiles: options.textFiles ?? 1000,
    uploadConcurrency: options.uploadConcurrency ?? 4,
    embedSeconds: options.embedSeconds ?? 5,
    cpuProfileDir: options.cpuProfileDir,
  };
  const work = mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-ingest-'));
  try {
    log(`  generating a ${settings.pdfPages}-page PDF and ${settings.textFiles} text files…`);
    const pdf = await makePdf(work, settings.pdfPages);
    const texts = writeTextFiles(path.join(work, 'texts'), settings.textFiles);
    const runs: ModelRun[] = [];
    for (const name of options.models ?? (['minilm-shape-int8', 'tiny'] as const)) runs.push(await benchModel(name, work, pdf, texts, settings, log));
    const rssChunks = options.rssChunks ?? 100_000;
    const rssAtScale = rssChunks > 0 ? await benchRssAtScale(work, pdf, texts.slice(0, 100), rssChunks, settings, log) : null;
    return {
      settings: { pdfPages: settings.pdfPages, textFiles: settings.textFiles, uploadConcurrency: settings.uploadConcurrency, extractionWorkers: 'default (cores - 1)' },
      runs,
      rssAtScale,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function ingestTable(result: IngestBenchResult): Record<string, Record<string, string | number>> {
  const rows: Record<string, Record<string, string | number>> = {};
  const row = (phase: PhaseResult, itemsPerSecond: string) => ({
    'items/s': itemsPerSecond,
    'chunks/s': num(phase.chunksPerSecond, 2),
    chunks: phase.chunks,
    seconds: num(phase.seconds, 1),
    'of raw': pct(phase.ofRawEmbedding),
    'CPU ms/chunk': phase.cpuMsPerChunk === null ? 'n/a' : num(phase.cpuMsPerChunk, 1),
    'model share of CPU': phase.cpuShareOfModel === null ? 'n/a' : pct(phase.cpuShareOfModel),
    'peak RSS MiB': phase.peakRssMiB === null ? 'n/a' : num(phase.peakRssMiB, 0),
  });
  for (const run of result.runs) {
    const m = run.model.name;
    rows[`${m}: PDF, ${result.settings.pdfPages} pages ×${run.pdf.rounds}`] = row(run.pdf, `${num(run.pdf.pagesPerSecond)} pages/s`);
    rows[`${m}: ${result.settings.textFiles} text files`] = row(run.text, `${num(run.text.filesPerSecond)} files/s`);
    run.embedding.windows.forEach((window, i) => {
      const best = window.rows.reduce((a, b) => (b.textsPerSecond > a.textsPerSecond ? b : a));
      rows[`${m}: raw ${i + 1}, batch ${best.batchSize}`] = { 'items/s': '', 'chunks/s': num(best.textsPerSecond, 2), chunks: best.texts, seconds: num(best.seconds, 1), 'of raw': '', 'CPU ms/chunk': num(window.cpuMsPerText, 1), 'model share of CPU': '', 'peak RSS MiB': '' };
    });
  }
  return rows;
}

export function formatIngestSummary(result: IngestBenchResult): string {
  const lines: string[] = [];
  for (const run of result.runs) {
    const e = run.embedding;
    const windows = e.windows.map((w) => `${w.when}: ${num(w.best, 2)} (${num(w.cpuMsPerText, 1)} ms CPU, load ${num(w.loadAverage)})`).join('; ');
    lines.push(
      `[${run.model.name}] model: ${run.model.id} (${run.model.dimension} dimensions, ${run.model.device}). NOTE: ${run.model.note}`,
      `[${run.model.name}] raw embedding, the model alone on this thread, on ${e.samples.pdf.texts} of the PDF's chunks (mean ${num(e.samples.pdf.meanTokens)} tokens; the service's: ${num(e.indexedTokens.pdf)}) ` +
        `and ${e.samples.text.texts} of the notes' (mean ${num(e.samples.text.meanTokens)} tokens; the service's: ${num(e.indexedTokens.text)}): ` +
        `chunks/s ${windows}; reference over each phase's time ${num(run.pdf.rawChunksPerSecond, 2)} (PDF, ${run.pdf.rounds} rounds) and ${num(run.text.rawChunksPerSecond, 2)} (text, ${run.text.rounds} rounds) chunks/s`,
      `[${run.model.name}] CPU of the service per chunk (all threads): ${run.pdf.cpuMsPerChunk === null ? 'n/a' : num(run.pdf.cpuMsPerChunk, 1)} ms (PDF), ${run.text.cpuMsPerChunk === null ? 'n/a' : num(run.text.cpuMsPerChunk, 1)} ms (text); ` +
        `the model alone needs ${pct(run.pdf.cpuShareOfModel ?? NaN)} and ${pct(run.text.cpuShareOfModel ?? NaN)} of that`,
      `[${run.model.name}] last PDF job alone (started to finished): ${run.pdf.jobSeconds === null ? 'n/a' : `${num(run.pdf.jobSeconds, 2)} s`}; text uploads took ${num(run.text.uploadSeconds, 1)} s of ${num(run.text.seconds, 1)} s`,
      `[${run.model.name}] index after ingestion: ${run.index.chunks} chunks, ${run.index.vectors} vectors, ${run.index.stale_chunks} stale; ${run.text.failed} documents failed`,
      `[${run.model.name}] peak RSS of the service (VmHWM): ${run.peakRssMiB.boot?.toFixed(0) ?? 'n/a'} MiB after boot, ${run.peakRssMiB.afterPdf?.toFixed(0) ?? 'n/a'} MiB after the PDF, ${run.peakRssMiB.afterText?.toFixed(0) ?? 'n/a'} MiB after the text files`,
      `[${run.model.name}] ${run.target.pass ? 'PASS' : 'FAIL'}: ingestion keeps ${pct(run.pdf.ofRawEmbedding)} (PDF) and ${pct(run.text.ofRawEmbedding)} (text files) of the raw embedding throughput (target >= ${pct(run.target.minRatio)})`,
    );
  }
  const rss = result.rssAtScale;
  if (rss) {
    const peak = Math.max(rss.peakRssMiB.boot ?? 0, rss.peakRssMiB.afterIngest ?? 0, rss.peakRssMiB.afterSearch ?? 0, rss.peakRssMiB.afterAdaptation ?? 0);
    lines.push(
      `[rss] ${rss.howMeasured}`,
      `[rss] VmHWM ${rss.peakRssMiB.boot?.toFixed(0) ?? 'n/a'} MiB after boot, ${rss.peakRssMiB.afterIngest?.toFixed(0) ?? 'n/a'} MiB after ingesting ${rss.ingested.chunks} chunks, ${rss.peakRssMiB.afterSearch?.toFixed(0) ?? 'n/a'} MiB after ${rss.searches} searches, ${rss.adaptation ? `${rss.peakRssMiB.afterAdaptation?.toFixed(0) ?? 'n/a'} MiB after the embedder's adaptation (${rss.adaptation.state}, ${rss.adaptation.seconds} s: ${rss.adaptation.detail})` : 'no adaptation'}; at the end RSS ${rss.end.rssMiB?.toFixed(0) ?? 'n/a'} MiB (anonymous ${rss.end.anonMiB?.toFixed(0) ?? 'n/a'}, file-backed ${rss.end.fileMiB?.toFixed(0) ?? 'n/a'}), ${rss.end.threads ?? 'n/a'} threads`,
      `[rss] ${rss.target.pass ? 'PASS' : 'FAIL'}: peak RSS ${num(peak * 1.048576, 0)} MB at ${rss.chunks} chunks with ${rss.model} loaded (target < ${rss.target.maxMB} MB)`,
    );
  }
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const envInt = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
  const profiles = process.env.BENCH_CPU_PROF === '1' ? path.join(ROOT, 'bench', 'results', 'profiles') : undefined;
  if (profiles) mkdirSync(profiles, { recursive: true });
  const result = await benchIngest({
    serverScript: process.env.BENCH_SERVER ? path.resolve(process.env.BENCH_SERVER) : undefined,
    pdfPages: envInt('BENCH_INGEST_PAGES', 200),
    textFiles: envInt('BENCH_INGEST_FILES', 1000),
    uploadConcurrency: envInt('BENCH_INGEST_CONCURRENCY', 4),
    embedSeconds: envInt('BENCH_EMBED_SECONDS', 5),
    models: parseBenchModels(process.env.BENCH_INGEST_MODELS),
    rssChunks: envInt('BENCH_INGEST_RSS_CHUNKS', 100_000),
    cpuProfileDir: profiles,
  });
  console.table(ingestTable(result));
  console.log(formatIngestSummary(result));
  console.log(JSON.stringify(result));
}
