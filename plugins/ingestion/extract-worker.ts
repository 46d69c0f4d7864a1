import type { MessagePort } from 'node:worker_threads';
import { createOcr, type Ocr } from '../../native/ocr/index.js';
import { extractDocument } from './extract/index.js';
import { type ExtractedDocument, ExtractionError, type ExtractionFailure, type ExtractOptions } from './extracted-document.js';
import type { FileType } from '../documents/index.js';

/** Piscina worker entry: one extraction per task, off the event loop of the service. */

export interface ExtractTask {
  filePath: string;
  fileType: FileType;
  options: ExtractOptions;
  /** Receives `{ done, total }` after each page. */
  progress?: MessagePort;
}

/** Errors do not keep their class across threads, so the outcome travels as plain data. */
export type ExtractOutcome = { ok: true; document: ExtractedDocument } | { ok: false; reason: ExtractionFailure; message: string };

/** The thread's OCR engine ends this long after its last document, just before the pool ends an idle thread (5 s). */
const OCR_IDLE_MS = 4_000;

/** One tesseract engine per extraction thread, loaded with the first image (about a second) and kept for the next. */
let ocr: Ocr | undefined;
let ocrIdle: NodeJS.Timeout | undefined;

function ocrFor(options: ExtractOptions): Ocr | undefined {
  if (!options.ocrEnabled || !options.ocrLanguages) return undefined;
  ocr ??= createOcr(options.ocrLanguages);
  return ocr;
}

function closeOcrWhenIdle(): void {
  clearTimeout(ocrIdle);
  ocrIdle = setTimeout(() => void ocr?.close(), OCR_IDLE_MS).unref();
}

export default async function extract(task: ExtractTask): Promise<ExtractOutcome> {
  clearTimeout(ocrIdle);
  const onPage = task.progress ? (done: number, total: number) => task.progress?.postMessage({ done, total }) : undefined;
  try {
    return { ok: true, document: await extractDocument(task.filePath, task.fileType, task.options, { ocr: ocrFor(task.options), onPage }) };
  } catch (error) {
    if (error instanceof ExtractionError) return { ok: false, reason: error.reason, message: error.message };
    return { ok: false, reason: 'corrupt', message: 'The file could not be read' };
  } finally {
    task.progress?.close();
    closeOcrWhenIdle();
  }
}
