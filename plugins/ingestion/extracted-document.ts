import type { Ocr, OcrLanguages } from '../../native/ocr/index.js';

/** What every extractor returns, and the one error type of extraction. */

export type SectionKind = 'text' | 'table-row';

export interface ExtractedSection {
  text: string;
  /** 1-based page (PDF). */
  page?: number;
  /** Nearest heading above the text (DOCX, MD, HTML). */
  heading?: string;
  /** Worksheet name (XLSX). */
  sheet?: string;
  /** 1-based row as the user sees it in the source, header included (XLSX, CSV, tables). */
  row?: number;
  /** Tesseract's confidence (0-100) on the page the text was read from by OCR. */
  ocrConfidence?: number;
  kind: SectionKind;
  /** Starts a chunk of its own: a metadata rule's chunk_boundary matched here (the chunker never joins it to the text before). */
  boundary?: boolean;
}

/** A page read by OCR. */
export interface PageRead {
  page: number;
  confidence: number;
}

/** A page nothing could be read from, and why; the document's other pages are still indexed. */
export interface PageFailure {
  page: number;
  reason: 'timeout' | 'too_large' | 'unreadable' | 'no_text';
  message: string;
}

export interface ExtractedDocument {
  pageCount?: number;
  title?: string;
  sections: ExtractedSection[];
  /** Pages read by OCR (scanned PDF pages, image pages). */
  ocrPages?: PageRead[];
  pageFailures?: PageFailure[];
}

/** What an extraction gets besides its options: the thread's OCR engine (OCR enabled) and where to report pages. */
export interface ExtractContext {
  ocr?: Ocr;
  /** Pages done out of the document's pages, after each page. */
  onPage?: (done: number, total: number) => void;
}

export interface ExtractOptions {
  /** INDEXING_TABLES_ENABLED: table rows become their own 'table-row' sections with the header repeated. */
  tablesEnabled: boolean;
  /** INDEXING_OCR_ENABLED. */
  ocrEnabled: boolean;
  /** INDEXING_OCR_LANGUAGES, resolved to their data at boot; set when OCR is enabled. */
  ocrLanguages?: OcrLanguages;
  /** Bound on reading one page by OCR (default DEFAULT_PAGE_TIMEOUT_MS). */
  ocrPageTimeoutMs?: number;
  /** Overrides of the zip-bomb guard (tests use small caps). */
  zipLimits?: Partial<ZipLimits>;
}

export interface ZipLimits {
  /** Sum of the uncompressed sizes of every entry. */
  maxTotalBytes: number;
  maxEntries: number;
  /** Uncompressed / compressed, per entry above 1 MiB and over the whole archive. */
  maxRatio: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxTotalBytes: 200 * 1024 * 1024, maxEntries: 10_000, maxRatio: 200 };

export type ExtractionFailure = 'corrupt' | 'encrypted' | 'zip_bomb' | 'too_large' | 'unsupported' | 'empty' | 'timeout' | 'crashed';

/** A document that cannot be extracted: `reason` is machine-readable, `message` is one sentence for the user. */
export class ExtractionError extends Error {
  constructor(
    readonly reason: ExtractionFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}

/** "Col A: v1; Col B: v2": the header is repeated so one row reads on its own. Empty cells are left out. */
function tableRowText(header: string[], cells: string[]): string {
  const parts: string[] = [];
  cells.forEach((cell, i) => {
    const value = cell.trim();
    if (!value) return;
    const name = header[i]?.trim();
    parts.push(name ? `${name}: ${value}` : value);
  });
  return parts.join('; ');
}

/** A row flattened as plain text when table extraction is off. */
function flatRowText(cells: string[]): string {
  return cells.map((cell) => cell.trim()).filter(Boolean).join(' | ');
}

/** Rows of a table as sections: header repeated per row (tables on) or plain lines (tables off). */
export function tableSections(
  rows: string[][],
  options: { tablesEnabled: boolean; heading?: string; sheet?: string; firstRow?: number; rowNumbers?: number[] },
): ExtractedSection[] {
  const [header = [], ...body] = rows;
  const rowNumber = (index: number) => options.rowNumbers?.[index] ?? (options.firstRow ?? 1) + index;
  const where = { heading: options.heading, sheet: options.sheet };
  if (!options.tablesEnabled) {
    return rows
      .map((cells, index) => ({ kind: 'text' as const, text: flatRowText(cells), row: rowNumber(index), ...where }))
      .filter((section) => section.text);
  }
  const sections: ExtractedSection[] = [];
  body.forEach((cells, index) => {
    const text = tableRowText(header, cells);
    if (text) sections.push({ kind: 'table-row', text, row: rowNumber(index + 1), ...where });
  });
  // A table with a header only still says something.
  if (!sections.length && header.some((cell) => cell.trim())) sections.push({ kind: 'text', text: flatRowText(header), row: rowNumber(0), ...where });
  return sections;
}

/** Drops undefined keys so sections compare and serialise cleanly. */
export function compactSection(section: ExtractedSection): ExtractedSection {
  const out: ExtractedSection = { kind: section.kind, text: section.text };
  if (section.page !== undefined) out.page = section.page;
  if (section.heading !== undefined) out.heading = section.heading;
  if (section.sheet !== undefined) out.sheet = section.sheet;
  if (section.row !== undefined) out.row = section.row;
  if (section.ocrConfidence !== undefined) out.ocrConfidence = section.ocrConfidence;
  if (section.boundary) out.boundary = true;
  return out;
}
