import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ExtractOutcome, ExtractTask } from './extract-worker.js';
import { type ExtractedDocument, ExtractionError, type ExtractOptions } from './extracted-document.js';
import type { FileType } from '../documents/index.js';

interface ExtractionPoolOptions {
  /** INDEX_EXTRACTION_WORKERS. */
  workers: number;
  /** A document taking longer (without finishing a page, for paged documents) fails with 'timeout' and its thread is replaced. */
  timeoutMs?: number;
  /** Heap cap per worker thread: a document that needs more fails with 'crashed', not the service. */
  maxMemoryMb?: number;
}

export type PageProgress = (done: number, total: number) => void;

const DEFAULT_OPTIONS: ExtractOptions = { tablesEnabled: false, ocrEnabled: false };

/** From source (vitest, tsx) the worker is TypeScript; in dist/ tsup builds it as extract-worker.js beside this chunk. */
function workerEntry(): { filename: string; execArgv?: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const filename = new URL(fromSource ? './extract-worker.ts' : './extract-worker.js', import.meta.url).href;
  return fromSource ? { filename, execArgv: ['--import', 'tsx'] } : { filename };
}

/** Text extraction in a pool of worker threads, so a large PDF never blocks the event loop. */
export class ExtractionPool {
  private readonly pool: Piscina<ExtractTask, ExtractOutcome>;
  private readonly timeoutMs: number;
  private readonly threads: number;
  private running = 0;
  /** Extractions waiting for a thread: the timeout counts from the start of the work, not from the request. */
  private readonly waiting: Array<() => void> = [];

  constructor(options: ExtractionPoolOptions) {
    const workers = Math.max(1, Math.floor(options.workers));
    this.threads = workers;
    this.timeoutMs = options.timeoutMs ?? 5 * 60_000;
    this.pool = new Piscina<ExtractTask, ExtractOutcome>({
      ...workerEntry(),
      minThreads: 0,
      maxThreads: workers,
      // A thread that has read a PDF holds pdf.js and its caches (60-100 MB): it ends 5 s after the last document,
      // not a minute, yet lives through the gaps of a burst (a new thread costs ~0.2 s of CPU, loading pdf.js).
      idleTimeout: 5_000,
      // A young generation of 8 MB (V8's default is sized for big heaps) keeps a 200-page PDF's thread about 25 MB smaller, at no CPU cost measured.
      resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb ?? 512, maxYoungGenerationSizeMb: 8 },
    });
    // A dying worker also emits 'error' on the pool: unhandled, that would end the process. The task's rejection reports it.
    this.pool.on('error', () => undefined);
  }

  /** Extracts one document; rejects with an ExtractionError only, whatever happened in the worker. `onPage` hears of each page done. */
  async extract(filePath: string, fileType: FileType, options: ExtractOptions = DEFAULT_OPTIONS, onPage?: PageProgress): Promise<ExtractedDocument> {
    if (this.running < this.threads) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve)); // a finishing extraction hands its thread over
    try {
      return await this.extractNow(filePath, fileType, options, onPage);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  private async extractNow(filePath: string, fileType: FileType, options: ExtractOptions, onPage?: PageProgress): Promise<ExtractedDocument> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    // A long scan is bounded per page (OCR's page timeout): each page done restarts the document's clock.
    const { port1: pages, port2: progress } = new MessageChannel();
    pages.on('message', (page: { done: number; total: number }) => {
      timer.refresh();
      onPage?.(page.done, page.total);
    });
    let outcome: ExtractOutcome;
    try {
      outcome = await this.pool.run({ filePath, fileType, options, progress }, { signal: abort.signal, transferList: [progress] });
    } catch (error) {
      if (abort.signal.aborted) throw new ExtractionError('timeout', `Extraction took longer than ${Math.round(this.timeoutMs / 1000)} s`);
      const outOfMemory = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      throw new ExtractionError('crashed', outOfMemory ? 'Extraction ran out of memory on this file' : 'Extraction stopped unexpectedly on this file');
    } finally {
      clearTimeout(timer);
      pages.close();
    }
    if (!outcome.ok) throw new ExtractionError(outcome.reason, outcome.message);
    return outcome.document;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
