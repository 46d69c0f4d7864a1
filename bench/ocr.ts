/**
 * OCR throughput of the built service, end to end over HTTP: a 50-page scan (generated pages of
 * text rendered to images, no text layer) uploaded as ten 5-page PDFs to `node dist/server.js` with
 * INDEXING_OCR_ENABLED=true, timed until their jobs finish, once with INDEX_EXTRACTION_WORKERS=1 and
 * once with 2 (the pool reads queued documents ahead, so two workers read two PDFs at once). During
 * each scan GET /api/auth/me is asked one request at a time: its p95 says whether the API stays
 * responsive (issue target: < 50 ms). VmHWM of the service (all its threads, tesseract's included)
 * after each scan is its peak RSS. The service's CPU seconds a page (all threads, from /proc) and the cores it kept
 * busy are beside the wall clock: on a shared box they say what the load hides. Targets (issue 19): >= 1 page/s
 * with 2 workers.
 *
 * Alone: `npm run build && npx tsx bench/ocr.ts`. BENCH_OCR_PAGES (50), BENCH_OCR_WORKERS (1,2).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { multipartBody } from '../test/fixtures/multipart.js';
import { LETTER, mixedPdf, textImage } from '../test/fixtures/scans.js';
import { BENCH_SECRETS, DEPLOYED_ENV, login, num, peakRssMiB, processCpuMicros, ROOT, startService, stats, type Stats, stopService } from './harness.js';

const PAGES_PER_FILE = 5;

export interface OcrRun {
  workers: number;
  pages: number;
  seconds: number;
  pagesPerSecond: number;
  authMeMs: Stats;
  peakRssMiB: number | null;
  /** CPU seconds the service (all its threads) spent a page during the scan: hardly moved by the load of a shared box. */
  cpuSecondsPerPage: number | null;
  /** Its CPU seconds over the scan's wall seconds: how many cores it kept busy (2 workers on 2 idle cores: near 2). */
  coresBusy: number | null;
  failed: number;
  /** Load average (1 min) when the scan started and when it ended. */
  load: [number, number];
}

export interface OcrBench {
  runs: OcrRun[];
}

/** The scan's files: pages of a letter with the page number in it, so no two pages are the same. */
async function scanFiles(pages: number): Promise<Buffer[]> {
  const files: Buffer[] = [];
  for (let first = 1; first <= pages; first += PAGES_PER_FILE) {
    const count = Math.min(PAGES_PER_FILE, pages - first + 1);
    files.push(await mixedPdf(Array.from({ length: count }, (_, i) => ({ image: textImage([`Page ${first + i} of the harbour scan`, ...LETTER]) }))));
  }
  return files;
}

async function runOnce(serverScript: string, files: Buffer[], pages: number, workers: number): Promise<OcrRun> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-ocr-'));
  const service = await startService(serverScript, {
    ...DEPLOYED_ENV, ...BENCH_SECRETS, DATA_DIR: dataDir, LOG_LEVEL: 'WARNING', HEARTH_DEFAULT_EMBEDDER: 'off',
    INDEXING_OCR_ENABLED: 'true', INDEX_EXTRACTION_WORKERS: String(workers),
  }, { name: `the service (${workers} OCR workers)` });
  try {
    const authorization = `Bearer ${await login(service.url)}`;
    const loadBefore = os.loadavg()[0];
    const cpuBefore = processCpuMicros(service.child.pid);
    const started = performance.now();
    for (const [i, content] of files.entries()) {
      const { payload, headers } = multipartBody([{ name: 'file', content, filename: `scan-${i + 1}.pdf` }]);
      const res = await fetch(`${service.url}/api/docs/upload`, { method: 'POST', headers: { ...headers, authorization }, body: payload });
      if (res.status !== 202) throw new Error(`upload: ${res.status} ${await res.text()}`);
    }
    const latencies: number[] = [];
    let documents: Array<{ status: string }> = [];
    while (documents.length < files.length || documents.some((doc) => doc.status === 'queued' || doc.status === 'indexing')) {
      const asked = performance.now();
      const me = await fetch(`${service.url}/api/auth/me`, { headers: { authorization } });
      await me.arrayBuffer();
      latencies.push(performance.now() - asked);
      documents = ((await (await fetch(`${service.url}/api/docs?limit=500`, { headers: { authorization } })).json()) as { documents: Array<{ status: string }> }).documents;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = processCpuMicros(service.child.pid);
    const cpu = cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / 1e6;
    return {
      workers,
      pages,
      seconds: num(seconds),
      pagesPerSecond: num(pages / seconds, 2),
      authMeMs: stats(latencies),
      peakRssMiB: peakRssMiB(service.child.pid),
      cpuSecondsPerPage: cpu === null ? null : num(cpu / pages, 3),
      coresBusy: cpu === null ? null : num(cpu / seconds, 2),
      failed: documents.filter((doc) => doc.status === 'failed').length,
      load: [num(loadBefore, 1), num(os.loadavg()[0], 1)],
    };
  } finally {
    await stopService(service);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchOcr(options: { serverScript: string; pages: number; workers: number[] }): Promise<OcrBench> {
  const files = await scanFiles(options.pages);
  const runs: OcrRun[] = [];
  for (const workers of options.workers) runs.push(await runOnce(options.serverScript, files, options.pages, workers));
  return { runs };
}

export function ocrTable(bench: OcrBench) {
  return bench.runs.map((run) => ({
    workers: run.workers,
    pages: run.pages,
    's': run.seconds,
    'pages/s': run.pagesPerSecond,
    'auth/me p50 ms': run.authMeMs.p50,
    'auth/me p95 ms': run.authMeMs.p95,
    'peak RSS MiB': run.peakRssMiB === null ? 'n/a' : num(run.peakRssMiB),
    'CPU s/page': run.cpuSecondsPerPage ?? 'n/a',
    'cores busy': run.coresBusy ?? 'n/a',
    'load before/after': run.load.join(' / '),
    failed: run.failed,
  }));
}

export function formatOcrSummary(bench: OcrBench): string {
  const two = bench.runs.find((run) => run.workers === 2);
  const worstP95 = Math.max(...bench.runs.map((run) => run.authMeMs.p95));
  return [
    two ? `2 workers: ${two.pagesPerSecond} pages/s (target >= 1): ${two.pagesPerSecond >= 1 ? 'PASS' : 'FAIL'}` : '',
    `GET /api/auth/me p95 during the scans: ${worstP95} ms (target < 50): ${worstP95 < 50 ? 'PASS' : 'FAIL'}`,
    two?.cpuSecondsPerPage ? `2 workers: ${two.cpuSecondsPerPage} CPU s a page: at most ${num(os.cpus().length / two.cpuSecondsPerPage, 2)} pages/s on ${os.cpus().length} idle cores` : '',
  ].filter(Boolean).join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const bench = await benchOcr({
    serverScript: path.join(ROOT, 'dist', 'server.js'),
    pages: Number(process.env.BENCH_OCR_PAGES ?? 50),
    workers: (process.env.BENCH_OCR_WORKERS ?? '1,2').split(',').map(Number),
  });
  console.table(ocrTable(bench));
  console.log(formatOcrSummary(bench));
}
