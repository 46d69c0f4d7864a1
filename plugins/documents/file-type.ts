import { open } from 'node:fs/promises';
import path from 'node:path';
import { fileTypeFromBuffer } from 'file-type';
import type { Tier } from '../../core/tiers.js';

/** Detecting a document's type from its bytes: the name only breaks ties between text formats. */

export const FILE_TYPES = ['pdf', 'docx', 'xlsx', 'csv', 'html', 'md', 'txt', 'png', 'jpg', 'tiff', 'webp'] as const;
export type FileType = (typeof FILE_TYPES)[number];

export interface DetectedFileType {
  fileType: FileType;
  mime: string;
}

const MIME_FOR_TYPE: Record<FileType, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv',
  html: 'text/html',
  md: 'text/markdown',
  txt: 'text/plain',
  png: 'image/png',
  jpg: 'image/jpeg',
  tiff: 'image/tiff',
  webp: 'image/webp',
};

/** Lowest plan that may index each type (spec: Documents). Images also need INDEXING_OCR_ENABLED. */
export const TIER_FOR_TYPE: Record<FileType, Tier> = {
  pdf: 'FREE',
  docx: 'FREE',
  txt: 'FREE',
  md: 'FREE',
  csv: 'PRO',
  xlsx: 'PRO',
  html: 'PRO',
  png: 'FREE',
  jpg: 'FREE',
  tiff: 'FREE',
  webp: 'FREE',
};

/** Types that carry no text layer: indexed only through OCR. */
export const OCR_FILE_TYPES: ReadonlySet<FileType> = new Set(['png', 'jpg', 'tiff', 'webp']);

/** How many leading bytes detection wants: enough for the first zip entries of an Office file. */
const DETECT_HEAD_BYTES = 64 * 1024;

const BINARY_TYPES: Record<string, FileType> = { pdf: 'pdf', ai: 'pdf', docx: 'docx', xlsx: 'xlsx', png: 'png', jpg: 'jpg', tif: 'tiff', webp: 'webp' };

const detected = (fileType: FileType): DetectedFileType => ({ fileType, mime: MIME_FOR_TYPE[fileType] });

/** A zip's first local headers name its parts in clear: word/ is a DOCX, xl/ a workbook. */
function officeTypeOfZip(head: Buffer, extension: string): FileType | null {
  const names = head.toString('latin1');
  if (names.includes('word/document.xml') || names.includes('word/_rels/')) return 'docx';
  if (names.includes('xl/workbook.xml') || names.includes('xl/worksheets/') || names.includes('xl/_rels/')) return 'xlsx';
  // The part names may sit past the head; the extractor validates the structure anyway.
  if (extension === '.docx' || extension === '.xlsx') return extension.slice(1) as FileType;
  return null;
}

/** Text decodes as UTF-8 (or reads as single-byte text) with no NUL and almost no control characters. */
function decodeText(head: Buffer): string | null {
  if (head.length === 0 || head.includes(0)) return null;
  let body = head;
  // The head may end inside a multi-byte character: drop an incomplete tail sequence.
  for (let back = 1; back <= 3 && back <= body.length; back++) {
    const byte = body[body.length - back];
    if ((byte & 0xc0) === 0x80) continue;
    if (byte >= 0xc0 && back < (byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2)) body = body.subarray(0, body.length - back);
    break;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    text = new TextDecoder('windows-1252').decode(body);
  }
  let control = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 32 && code !== 9 && code !== 10 && code !== 12 && code !== 13) control++;
  }
  return control / text.length < 0.01 ? text : null;
}

function textTypeOf(text: string, extension: string): FileType {
  const start = text.replace(/^\uFEFF/, '').trimStart().slice(0, 512).toLowerCase();
  if (start.startsWith('<!doctype html') || start.startsWith('<html') || ['.html', '.htm', '.xhtml'].includes(extension)) return 'html';
  if (['.md', '.markdown', '.mdown'].includes(extension)) return 'md';
  if (['.csv', '.tsv'].includes(extension)) return 'csv';
  return 'txt';
}

/**
 * The type of a document from its first bytes (pass at least DETECT_HEAD_BYTES when the file is that
 * long) and its name; null when it is no type Hearth indexes (binary garbage, other formats).
 */
export async function detectFileType(head: Buffer, filename: string): Promise<DetectedFileType | null> {
  const extension = path.extname(filename).toLowerCase();
  const binary = await fileTypeFromBuffer(head);
  if (binary) {
    if (binary.ext === 'zip') {
      const office = officeTypeOfZip(head, extension);
      return office ? detected(office) : null;
    }
    const known = BINARY_TYPES[binary.ext];
    return known ? detected(known) : null;
  }
  // Readers accept a PDF header anywhere in the first KiB.
  const pdfAt = head.subarray(0, 1024).indexOf('%PDF-');
  if (pdfAt >= 0) return detected('pdf');
  const text = decodeText(head);
  return text === null ? null : detected(textTypeOf(text, extension));
}

/** detectFileType on a file on disk. */
export async function detectFileTypeOfFile(filePath: string, filename = path.basename(filePath)): Promise<DetectedFileType | null> {
  const handle = await open(filePath, 'r');
  try {
    const head = Buffer.alloc(DETECT_HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return await detectFileType(head.subarray(0, bytesRead), filename);
  } finally {
    await handle.close();
  }
}
