import { readFile } from 'node:fs/promises';
import { PDFParse } from 'pdf-parse';
import type { PDFDocumentProxy } from 'pdfjs-dist/types/src/display/api.js';
import { type ExtractContext, type ExtractedDocument, type ExtractedSection, ExtractionError, type ExtractOptions, tableSections } from '../extracted-document.js';
import { FAST_PNG, loadSharp, MAX_OCR_PIXELS, type OcrImage, ocrPage, type OcrOutcome } from './ocr-pages.js';
import { type Columns, type PageTable, pageBlocks, type PositionedText } from './pdf-layout.js';

/** Fewer visible characters than this and the page has no usable text layer (a scan, perhaps with a stamped page number). */
const MIN_TEXT_LAYER_CHARS = 10;
/**
 * Pages are rendered for OCR at 200 dpi (PDF units are 1/72 inch; a page so large that it would pass
 * MAX_OCR_PIXELS at less), and tesseract is told the resolution. 300 dpi cost about 1.5x the CPU a page
 * (2.25x the pixels) for no accuracy measured: clean text down to 6 pt read 100% at 200 dpi as at 300
 * (docs/ocr.md, Figures).
 */
export const RENDER_DPI = 200;

/**
 * PDF page by page (pdf-parse over pdf.js), so every chunk can cite its page: the text layer where
 * there is one, OCR of the rendered page where there is none (OCR enabled), tables as rows (tables enabled).
 */
export async function extractPdf(filePath: string, options: ExtractOptions, context: ExtractContext = {}): Promise<ExtractedDocument> {
  const parser = new PDFParse({ data: new Uint8Array(await readFile(filePath)), verbosity: 0 });
  try {
    const text = await parser.getText();
    const info = await parser.getInfo().catch(() => undefined);
    const tables = new TableRows();
    const sections: ExtractedSection[] = [];
    const ocr: OcrOutcome = { sections: [], read: [], failures: [] };
    for (const page of text.pages) {
      const pageText = page.text.replace(/\r\n?/g, '\n');
      if (pageText.replace(/\s/g, '').length >= MIN_TEXT_LAYER_CHARS || !context.ocr) {
        sections.push(...(options.tablesEnabled ? tables.page(page.num, await positionedText(parser, page.num)) : textSection(page.num, pageText)));
      } else {
        tables.interrupt();
        const { section, read, failure } = await ocrPage({ page: page.num, image: () => renderPage(parser, page.num) }, context.ocr, options);
        if (section) sections.push(section);
        if (read) ocr.read.push(read);
        if (failure) ocr.failures.push(failure);
      }
      context.onPage?.(page.num, text.total);
    }
    const title = typeof info?.info?.Title === 'string' ? info.info.Title.trim() : '';
    return { pageCount: text.total, ...(title ? { title } : {}), sections, ...(context.ocr ? { ocrPages: ocr.read, pageFailures: ocr.failures } : {}) };
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    throw pdfFailure(error);
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

function textSection(page: number, raw: string): ExtractedSection[] {
  const text = raw.trim();
  return text ? [{ kind: 'text', page, text }] : [];
}

/**
 * The page's text items with their positions, top-down. pdf-parse's text joins a column gap into a
 * space (pdf.js fills the gap with a blank item), so tables are read from the pdf.js document it loaded.
 */
async function positionedText(parser: PDFParse, pageNumber: number): Promise<PositionedText[]> {
  const doc = (parser as unknown as { doc: PDFDocumentProxy }).doc;
  const page = await doc.getPage(pageNumber);
  try {
    const viewport = page.getViewport({ scale: 1 });
    const items: PositionedText[] = [];
    for (const item of (await page.getTextContent()).items) {
      if (!('str' in item)) continue;
      const [x, y] = viewport.convertToViewportPoint(item.transform[4], item.transform[5]);
      items.push({ str: item.str, x, y, width: item.width, height: item.height });
    }
    return items;
  } finally {
    page.cleanup();
  }
}

/** A page's pixels as drawn by pdf.js: RGBA, 4 bytes a pixel, row after row. */
export interface PagePixels {
  width: number;
  height: number;
  data: Uint8ClampedArray;
  dpi: number;
}

interface CanvasAndContext {
  canvas: { width: number; height: number };
  context: { getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray } };
}
interface CanvasFactory {
  create(width: number, height: number): CanvasAndContext;
  destroy?(canvasAndContext: CanvasAndContext): void;
}

/**
 * One page drawn by pdf.js on an @napi-rs/canvas at `dpi` (less where the page would pass MAX_OCR_PIXELS),
 * its pixels read straight back: no PNG is encoded only to be decoded again.
 */
export async function drawPage(parser: PDFParse, pageNumber: number, dpi = RENDER_DPI): Promise<PagePixels> {
  const doc = (parser as unknown as { doc: PDFDocumentProxy }).doc;
  const page = await doc.getPage(pageNumber);
  try {
    const unit = page.getViewport({ scale: 1 });
    const scale = Math.min(dpi / 72, Math.sqrt(MAX_OCR_PIXELS / Math.max(1, unit.width * unit.height)));
    const viewport = page.getViewport({ scale });
    const width = Math.max(1, Math.floor(viewport.width));
    const height = Math.max(1, Math.floor(viewport.height));
    const factory = (doc as unknown as { canvasFactory: CanvasFactory }).canvasFactory;
    const drawn = factory.create(width, height);
    try {
      // pdf.js paints the page's white background first, as paper.
      await page.render({ canvasContext: drawn.context, viewport, canvas: drawn.canvas } as unknown as Parameters<typeof page.render>[0]).promise;
      return { width, height, data: drawn.context.getImageData(0, 0, width, height).data, dpi: Math.round(scale * 72) };
    } finally {
      factory.destroy?.(drawn);
    }
  } finally {
    page.cleanup();
  }
}

/** The page's pixels in greyscale (ITU-R 601 luma, as sharp's), as the fast PNG tesseract decodes cheapest. */
export async function greyPng(pixels: PagePixels): Promise<Buffer> {
  const { width, height, data } = pixels;
  const grey = Buffer.allocUnsafe(width * height);
  for (let i = 0, o = 0; o < grey.length; i += 4, o++) grey[o] = (data[i] * 77 + data[i + 1] * 150 + data[i + 2] * 29 + 128) >> 8;
  const sharp = await loadSharp();
  return sharp(grey, { raw: { width, height, channels: 1 } }).toColourspace('b-w').png(FAST_PNG).toBuffer();
}

/** One page rendered for OCR, and the resolution it was rendered at (tesseract is told it). */
async function renderPage(parser: PDFParse, page: number): Promise<OcrImage> {
  const pixels = await drawPage(parser, page);
  if (!pixels.data.length) throw new ExtractionError('corrupt', 'The page could not be rendered');
  return { image: await greyPng(pixels), dpi: pixels.dpi };
}

interface RunningTable {
  header: string[];
  columns: Columns;
  /** Rows so far, header included. */
  rows: number;
}

/**
 * Table rows of a PDF as sections, page after page: a table that ends one page and whose shape goes
 * on at the top of the next is one table (its header repeated on the next page is not a row).
 */
class TableRows {
  /** The table that ended the last page read, if the page ended with one. */
  private last?: RunningTable;

  page(page: number, items: PositionedText[]): ExtractedSection[] {
    const sections: ExtractedSection[] = [];
    let last: RunningTable | undefined;
    for (const block of pageBlocks(items, this.last?.columns)) {
      if (block.kind === 'text') {
        sections.push(...textSection(page, block.text));
        last = undefined;
      } else {
        last = block.table.continued && this.last ? this.last : { header: block.table.rows[0], columns: block.table.columns, rows: 1 };
        sections.push(...rowSections(page, block.table, last));
      }
    }
    this.last = last;
    return sections;
  }

  /** A page read by OCR breaks any table running across pages. */
  interrupt(): void {
    this.last = undefined;
  }
}

/** The table's rows on this page as `header: value; ...` sections, numbered on from its rows before (`table` counts them). */
function rowSections(page: number, block: PageTable, table: RunningTable): ExtractedSection[] {
  let rows = block.continued ? block.rows : block.rows.slice(1);
  if (block.continued && sameRow(rows[0], table.header)) rows = rows.slice(1);
  const rowNumbers = [1, ...rows.map((_, i) => table.rows + 1 + i)];
  table.rows += rows.length;
  return tableSections([table.header, ...rows], { tablesEnabled: true, rowNumbers })
    .filter((section) => section.kind === 'table-row')
    .map((section) => ({ ...section, page }));
}

const sameRow = (a: string[] | undefined, b: string[]) => !!a && a.length === b.length && a.every((cell, i) => cell === b[i]);

function pdfFailure(error: unknown): ExtractionError {
  const name = error instanceof Error ? error.name : '';
  if (name === 'PasswordException') return new ExtractionError('encrypted', 'The PDF is password-protected');
  if (name === 'InvalidPDFException' || name === 'FormatError') return new ExtractionError('corrupt', 'The PDF is damaged or truncated');
  return new ExtractionError('corrupt', 'The PDF could not be read');
}
