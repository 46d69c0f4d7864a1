/**
 * Ingestion throughput of the built service, end to end over HTTP: a generated PDF of 200 pages
 * and 1,000 generated text files are uploaded to `node dist/server.js` and timed until their jobs
 * finish. In the same run, with the service stopped, the same embedding model embeds the same
 * chunk texts alone (benchEmbeddings): ingestion is reported as a fraction of that raw throughput
 * (issue target: at least 80%). Peak RSS is the service's VmHWM from /proc.
 *
 * The only embedding model on the bench machine is the tiny test model (test/fixtures/
 * tiny-embedding-model.ts: a bag-of-tokens ONNX graph with the real all-MiniLM-L6-v2 tokenizer,
 * built here with 384 dimensions like MiniLM). Its ONNX run is nearly free, so its "raw" throughput
 * is mostly tokenisation, and every other cost of ingestion weighs far more than it would beside
 * a real encoder: read the fraction with that in mind.
 *
 * Alone: `npm run build && npx tsx bench/ingest.ts`. BENCH_INGEST_PAGES (200), BENCH_INGEST_FILES
 * (1000), BENCH_INGEST_CONCURRENCY (uploads in flight, 4), BENCH_EMBED_SECONDS (3 per batch size),
 * BENCH_CPU_PROF=1 (V8 CPU profiles of the service, main thread and extraction workers, into
 * bench/results/profiles/).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { loadEmbedder } from '../native/embeddings/index.js';
import { generateLicenceKeyPair, issueLicence } from '../plugins/license/licence-key.js';
import { makePdf, prose } from '../test/fixtures/documents.js';
import { installTinyEmbeddingModel, TINY_MODEL_ID } from '../test/fixtures/tiny-embedding-model.js';
import { benchEmbeddings, type EmbeddingBenchRow } from './embeddings.js';
import { BENCH_SECRETS, login, num, pct, peakRssMiB, ROOT, type Service, startService, stopService } from './harness.js';

export const INGEST_TARGET_RATIO = 0.8;
/** The service's default INDEX_UPSERT_BATCH_SIZE: the pipeline embeds this many chunk texts per call. */
const UPSERT_BATCH = 256;

export interface IngestBenchOptions {
  serverScript?: string;
  pdfPages?: number;
  textFiles?: number;
  uploadConcurrency?: number;
  /** Seconds per batch size of the raw embedding measurement. */
  embedSeconds?: number;
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
  /** Chunks/s as a fraction of the raw embedding throughput. */
  ofRawEmbedding: number;
  /** Wall time per chunk beyond what embedding it alone takes (extraction, chunking, SQLite, HNSW, HTTP), ms. */
  overheadMsPerChunk: number;
  /**
   * The raw embedder throughput (chunks/s) at or below which this overhead would leave ingestion at the
   * 80% target, if it stayed the same beside a slower model (it competes for the same 2 cores, so roughly).
   */
  targetHoldsUpToRawChunksPerSecond: number;
  failed: number;
  /** VmHWM of the service at the end of the phase, MiB. */
  peakRssMiB: number | null;
}

export interface IngestBenchResult {
  model: { id: string; dimension: number; device: string; note: string };
  settings: { pdfPages: number; textFiles: number; uploadConcurrency: number; upsertBatchSize: number; extractionWorkers: string };
  pdf: PhaseResult & { pagesPerSecond: number; jobSeconds: number | null };
  text: PhaseResult & { filesPerSecond: number };
  embedding: { rows: EmbeddingBenchRow[]; texts: number; meanTokens: number; bestTextsPerSecond: number };
  index: { chunks: number; vectors: number; stale_chunks: number };
  peakRssMiB: { boot: number | null; afterPdf: number | null; afterText: number | null };
  target: { minRatio: number; pass: boolean };
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
    const res = await fetch(`${this.url}${route}`, {
      method,
      headers: { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
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

async function poll<T>(what: string, service: Service, probe: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (service.child.exitCode !== null || service.child.signalCode !== null) throw new Error(`the service exited while waiting for ${what}:\n${service.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
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

// --- the bench ---

export async function benchIngest(options: IngestBenchOptions = {}): Promise<IngestBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const serverScript = options.serverScript ?? path.join(ROOT, 'dist', 'server.js');
  const pdfPages = options.pdfPages ?? 200;
  const textFiles = options.textFiles ?? 1000;
  const concurrency = options.uploadConcurrency ?? 4;
  const work = mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-ingest-'));
  let service: Service | undefined;
  try {
    const modelDir = path.join(work, 'models');
    await installTinyEmbeddingModel(modelDir, { hidden: 384 });
    log(`  generating a ${pdfPages}-page PDF and ${textFiles} text files…`);
    const pdf = await makePdf(work, pdfPages);
    const texts = writeTextFiles(path.join(work, 'texts'), textFiles);

    const signer = generateLicenceKeyPair();
    const dataDir = path.join(work, 'data');
    service = await startService(
      serverScript,
      { DATA_DIR: dataDir, MODEL_DIR: modelDir, ...BENCH_SECRETS, LICENSE_PUBLIC_KEYS: signer.publicKeyBase64, LOG_LEVEL: 'ERROR' },
      { nodeArgs: options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir] : [] },
    );
    const pid = service.child.pid;
    const client = new Client(service.url);
    await client.login();
    // 1,000 documents are over the FREE plan's 500: apply a PRO licence, as a customer would.
    const day = 86_400_000;
    const licence = issueLicence(signer.privateKeyPem, {
      id: 'bench',
      licensee: 'Hearth bench',
      tier: 'PRO',
      issued_at: new Date(Date.now() - day).toISOString(),
      expires_at: new Date(Date.now() + 30 * day).toISOString(),
    });
    await client.json('POST', '/api/license', { license_key: licence });
    const health = await client.json<{ components: Record<string, { status: string; detail?: string }> }>('GET', '/api/health');
    if (health.components.embedder?.status !== 'ok') throw new Error(`the service has no embedder: ${JSON.stringify(health.components.embedder)}`);
    const rssBoot = peakRssMiB(pid);

    // 1. One PDF of 200 pages: upload, then wait for its job.
    log(`  PDF: uploading ${path.basename(pdf)} (${(readFileSync(pdf).length / 1024).toFixed(0)} KiB) and waiting for its job…`);
    const pdfStart = process.hrtime.bigint();
    const uploaded = await client.upload(pdf);
    const pdfUploadSeconds = seconds(pdfStart);
    type JobView = { state: string; started_at?: string; finished_at?: string; error?: string };
    const job = await poll('the PDF job', service, async () => {
      const view = await client.json<JobView>('GET', `/api/jobs/${uploaded.job.id}`);
      return ['succeeded', 'failed', 'cancelled'].includes(view.state) ? view : undefined;
    }, 600_000, 10);
    const pdfSeconds = seconds(pdfStart);
    const rssAfterPdf = peakRssMiB(pid);
    type DocView = { id: string; status: string; chunk_count: number; error: string | null };
    const pdfDoc = (await client.json<{ documents: DocView[] }>('GET', '/api/docs?limit=5')).documents.find((d) => d.id === uploaded.document.id)!;
    if (job.state !== 'succeeded' || pdfDoc.status !== 'indexed') throw new Error(`the PDF was not indexed: job ${job.state} ${job.error ?? ''}, document ${pdfDoc.status} ${pdfDoc.error ?? ''}`);
    const jobSeconds = job.started_at && job.finished_at ? (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000 : null;

    // 2. 1,000 text files, `concurrency` uploads in flight; each upload is a job, and they run one at a time.
    log(`  text: uploading ${textFiles} files, ${concurrency} at a time, and waiting for their jobs…`);
    const textStart = process.hrtime.bigint();
    await inParallel(texts, concurrency, (file) => client.upload(file));
    const textUploadSeconds = seconds(textStart);
    await poll('the text files to be indexed', service, async () => ((await client.count('queued')) + (await client.count('indexing')) === 0 ? true : undefined), 1_800_000, 50);
    const textSeconds = seconds(textStart);
    const rssAfterText = peakRssMiB(pid);
    const failed = await client.count('failed');
    const stats = await client.json<{ chunks: number; vectors: number; stale_chunks: number; model_id: string; dimension: number; device: string }>('GET', '/api/index/stats');
    await stopService(service);
    service = undefined;

    // 3. The same model alone, on the very chunk texts just indexed, with the service stopped.
    const db = new Database(path.join(dataDir, 'hearth.db'), { readonly: true, fileMustExist: true });
    let sample: string[];
    try {
      // Every k-th chunk, PDF and notes alike, up to 1,024 texts.
      const all = db.prepare('SELECT text FROM chunks ORDER BY rowid').pluck().all() as string[];
      const step = Math.max(1, Math.floor(all.length / 1024));
      sample = all.filter((_, i) => i % step === 0).slice(0, 1024);
    } finally {
      db.close();
    }
    log(`  raw embedding: the same model alone on ${sample.length} of the indexed chunk texts…`);
    const embedder = await loadEmbedder({ modelDir, device: 'cpu' });
    if (!embedder) throw new Error('the model did not load for the raw measurement');
    let rows: EmbeddingBenchRow[];
    let meanTokens: number;
    try {
      meanTokens = sample.reduce((sum, text) => sum + embedder.countTokens(text), 0) / sample.length;
      // As the service embeds: one call per upsert batch (256 texts; the embedder runs them 16 per ONNX run),
      // and 16 (one ONNX run) for comparison.
      rows = await benchEmbeddings(embedder, { batchSizes: [16, UPSERT_BATCH], secondsPerSize: options.embedSeconds ?? 3, texts: sample });
    } finally {
      await embedder.close();
    }
    const best = Math.max(...rows.map((row) => row.textsPerSecond));

    const pdfChunks = pdfDoc.chunk_count;
    const textChunks = stats.chunks - pdfChunks;
    const phase = (items: number, chunks: number, total: number, upload: number, failures: number, rss: number | null): PhaseResult => ({
      items,
      chunks,
      seconds: total,
      uploadSeconds: upload,
      itemsPerSecond: items / total,
      chunksPerSecond: chunks / total,
      ofRawEmbedding: chunks / total / best,
      overheadMsPerChunk: ((total - chunks / best) / chunks) * 1000,
      // embed / (embed + overhead) >= 0.8  <=>  embed >= 4 x overhead  <=>  raw <= 1 / (4 x overhead)
      targetHoldsUpToRawChunksPerSecond: 1 / ((INGEST_TARGET_RATIO / (1 - INGEST_TARGET_RATIO)) * ((total - chunks / best) / chunks)),
      failed: failures,
      peakRssMiB: rss,
    });
    const pdfPhase = phase(pdfPages, pdfChunks, pdfSeconds, pdfUploadSeconds, 0, rssAfterPdf);
    const textPhase = phase(textFiles, textChunks, textSeconds, textUploadSeconds, failed, rssAfterText);
    return {
      model: {
        id: stats.model_id,
        dimension: stats.dimension,
        device: stats.device,
        note: `${TINY_MODEL_ID}: the tiny bag-of-tokens test model (real all-MiniLM-L6-v2 tokenizer, random weights, ${stats.dimension} dimensions) is the only embedding model on this machine; a real encoder is far slower per chunk, so ingestion overhead weighs less beside it`,
      },
      settings: { pdfPages, textFiles, uploadConcurrency: concurrency, upsertBatchSize: UPSERT_BATCH, extractionWorkers: 'default (cores - 1)' },
      pdf: { ...pdfPhase, pagesPerSecond: pdfPages / pdfSeconds, jobSeconds },
      text: { ...textPhase, filesPerSecond: textFiles / textSeconds },
      embedding: { rows, texts: sample.length, meanTokens, bestTextsPerSecond: best },
      index: { chunks: stats.chunks, vectors: stats.vectors, stale_chunks: stats.stale_chunks },
      peakRssMiB: { boot: rssBoot, afterPdf: rssAfterPdf, afterText: rssAfterText },
      target: { minRatio: INGEST_TARGET_RATIO, pass: Math.min(pdfPhase.ofRawEmbedding, textPhase.ofRawEmbedding) >= INGEST_TARGET_RATIO },
    };
  } finally {
    if (service) await stopService(service).catch(() => service!.child.kill('SIGKILL'));
    rmSync(work, { recursive: true, force: true });
  }
}

export function ingestTable(result: IngestBenchResult): Record<string, Record<string, string | number>> {
  return {
    [`PDF, ${result.settings.pdfPages} pages`]: {
      'items/s': `${num(result.pdf.pagesPerSecond)} pages/s`,
      'chunks/s': num(result.pdf.chunksPerSecond),
      chunks: result.pdf.chunks,
      seconds: num(result.pdf.seconds, 2),
      'of raw embedding': pct(result.pdf.ofRawEmbedding),
      'peak RSS MiB': result.pdf.peakRssMiB === null ? 'n/a' : num(result.pdf.peakRssMiB, 0),
    },
    [`${result.settings.textFiles} text files`]: {
      'items/s': `${num(result.text.filesPerSecond)} files/s`,
      'chunks/s': num(result.text.chunksPerSecond),
      chunks: result.text.chunks,
      seconds: num(result.text.seconds, 2),
      'of raw embedding': pct(result.text.ofRawEmbedding),
      'peak RSS MiB': result.text.peakRssMiB === null ? 'n/a' : num(result.text.peakRssMiB, 0),
    },
    ...Object.fromEntries(
      result.embedding.rows.map((row) => [
        `raw embed, batch ${row.batchSize}`,
        { 'items/s': '', 'chunks/s': num(row.textsPerSecond), chunks: row.texts, seconds: num(row.seconds, 2), 'of raw embedding': '', 'peak RSS MiB': '' },
      ]),
    ),
  };
}

export function formatIngestSummary(result: IngestBenchResult): string {
  const lines = [
    `model: ${result.model.id} (${result.model.dimension} dimensions, ${result.model.device}). NOTE: ${result.model.note}`,
    `raw embedding: ${num(result.embedding.bestTextsPerSecond)} chunks/s at best, on ${result.embedding.texts} of the indexed chunks (mean ${num(result.embedding.meanTokens)} tokens)`,
    `PDF job alone (started to finished): ${result.pdf.jobSeconds === null ? 'n/a' : `${num(result.pdf.jobSeconds, 2)} s`}; text uploads took ${num(result.text.uploadSeconds, 2)} s of ${num(result.text.seconds, 2)} s`,
    `index after ingestion: ${result.index.chunks} chunks, ${result.index.vectors} vectors, ${result.index.stale_chunks} stale; ${result.text.failed} documents failed`,
    `peak RSS of the service (VmHWM): ${result.peakRssMiB.boot?.toFixed(0) ?? 'n/a'} MiB after boot, ${result.peakRssMiB.afterPdf?.toFixed(0) ?? 'n/a'} MiB after the PDF, ${result.peakRssMiB.afterText?.toFixed(0) ?? 'n/a'} MiB after the text files`,
    `overhead beyond embedding: ${num(result.pdf.overheadMsPerChunk, 2)} ms/chunk (PDF), ${num(result.text.overheadMsPerChunk, 2)} ms/chunk (text files): ` +
      `the 80% target would hold with an embedder of at most ${num(result.pdf.targetHoldsUpToRawChunksPerSecond)} (PDF) and ${num(result.text.targetHoldsUpToRawChunksPerSecond)} (text) chunks/s raw on this machine (an estimate: the overhead shares the cores with the model)`,
    `${result.target.pass ? 'PASS' : 'FAIL'}: ingestion keeps ${pct(result.pdf.ofRawEmbedding)} (PDF) and ${pct(result.text.ofRawEmbedding)} (text files) of the raw embedding throughput (target >= ${pct(result.target.minRatio)})`,
  ];
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const envInt = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
  const profiles = process.env.BENCH_CPU_PROF === '1' ? path.join(ROOT, 'bench', 'results', 'profiles') : undefined;
  if (profiles) mkdirSync(profiles, { recursive: true });
  const result = await benchIngest({
    pdfPages: envInt('BENCH_INGEST_PAGES', 200),
    textFiles: envInt('BENCH_INGEST_FILES', 1000),
    uploadConcurrency: envInt('BENCH_INGEST_CONCURRENCY', 4),
    embedSeconds: envInt('BENCH_EMBED_SECONDS', 3),
    cpuProfileDir: profiles,
  });
  console.table(ingestTable(result));
  console.log(formatIngestSummary(result));
  console.log(JSON.stringify(result));
}
