import { extractDocument } from './extract/index.js';
import { type ExtractedDocument, ExtractionError, type ExtractionFailure, type ExtractOptions } from './extracted-document.js';
import type { FileType } from '../documents/index.js';

/** Piscina worker entry: one extraction per task, off the event loop of the service. */

export interface ExtractTask {
  filePath: string;
  fileType: FileType;
  options: ExtractOptions;
}

/** Errors do not keep their class across threads, so the outcome travels as plain data. */
export type ExtractOutcome = { ok: true; document: ExtractedDocument } | { ok: false; reason: ExtractionFailure; message: string };

export default async function extract(task: ExtractTask): Promise<ExtractOutcome> {
  try {
    return { ok: true, document: await extractDocument(task.filePath, task.fileType, task.options) };
  } catch (error) {
    if (error instanceof ExtractionError) return { ok: false, reason: error.reason, message: error.message };
    return { ok: false, reason: 'corrupt', message: 'The file could not be read' };
  }
}
