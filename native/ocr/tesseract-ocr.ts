import { createRequire } from 'node:module';
import path from 'node:path';
import type { OcrLanguages } from './languages.js';

const require = createRequire(import.meta.url);

/** What OCR read on one image. */
export interface OcrText {
  text: string;
  /** Tesseract's mean word confidence, 0-100. */
  confidence: number;
}

/** Resolution assumed for an image that says nothing of its own (a photo, a scan without dpi). */
export const DEFAULT_OCR_DPI = 300;

/**
 * One image at a time; a read that runs past its deadline rejects with OcrTimeout and the engine is restarted.
 * `dpi`: the image's resolution when known (a rendered PDF page), else DEFAULT_OCR_DPI.
 */
export interface Ocr {
  recognize(image: Buffer, options: { timeoutMs: number; dpi?: number }): Promise<OcrText>;
  close(): Promise<void>;
}

export class OcrTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`OCR took longer than ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`}`);
    this.name = 'OcrTimeout';
  }
}

type TesseractWorker = Awaited<ReturnType<typeof import('tesseract.js')['createWorker']>>;

/** The engine's files, all inside node_modules: tesseract.js falls back to a CDN for anything left unset. */
export function localPaths(languages: OcrLanguages) {
  return {
    workerPath: require.resolve('tesseract.js/src/worker-script/node/index.js'),
    corePath: path.dirname(require.resolve('tesseract.js-core/package.json')),
    langPath: languages.langPath,
    gzip: true,
    // Nothing is cached: no traineddata written to the working directory.
    cacheMethod: 'none',
  };
}

/**
 * tesseract.js (WebAssembly in a worker thread of its own), loaded on the first image and kept for
 * the next: loading the engine and a language costs about a second.
 */
class TesseractOcr implements Ocr {
  private worker: Promise<TesseractWorker> | null = null;
  /** The resolution the engine was last told. */
  private dpi = DEFAULT_OCR_DPI;

  constructor(private readonly languages: OcrLanguages) {}

  async recognize(image: Buffer, options: { timeoutMs: number; dpi?: number }): Promise<OcrText> {
    const worker = await this.started();
    const dpi = Math.round(options.dpi ?? DEFAULT_OCR_DPI);
    if (dpi !== this.dpi) {
      await worker.setParameters({ user_defined_dpi: String(dpi) });
      this.dpi = dpi;
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new OcrTimeout(options.timeoutMs)), options.timeoutMs);
    });
    try {
      // rotateAuto straightens a skewed scan before reading it.
      const result = await Promise.race([worker.recognize(image, { rotateAuto: true }), deadline]);
      return { text: result.data.text, confidence: result.data.confidence };
    } catch (error) {
      // Stuck in WebAssembly or crashed: the thread is ended and the next image starts a fresh one.
      await this.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private started(): Promise<TesseractWorker> {
    if (!this.worker) {
      this.worker = import('tesseract.js').then(async ({ createWorker, OEM, PSM }) => {
        const worker = await createWorker(this.languages.codes, OEM.LSTM_ONLY, localPaths(this.languages));
        // Automatic page segmentation finds columns (tesseract.js reads one block by default); images carry no reliable dpi.
        await worker.setParameters({ tessedit_pageseg_mode: PSM.AUTO, user_defined_dpi: String(DEFAULT_OCR_DPI) });
        this.dpi = DEFAULT_OCR_DPI;
        return worker;
      });
      this.worker.catch(() => (this.worker = null));
    }
    return this.worker;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await (await worker.catch(() => null))?.terminate();
  }
}

export function createOcr(languages: OcrLanguages): Ocr {
  return new TesseractOcr(languages);
}
