import type { Sharp, SharpOptions } from 'sharp';
import { type Ocr, OcrTimeout } from '../../../native/ocr/index.js';
import { type ExtractContext, type ExtractedSection, ExtractionError, type ExtractOptions, type PageFailure, type PageRead } from '../extracted-document.js';

/** A file declaring more pixels is refused before decoding (a decompression bomb): 600 dpi A3 is about 70 MP. */
export const MAX_INPUT_PIXELS = 100_000_000;
/** What tesseract is given at most (about 300 dpi A3): its memory and time grow with the pixels. */
export const MAX_OCR_PIXELS = 16_000_000;
/** A page read longer than this fails with a reason; the next page goes on. */
export const DEFAULT_PAGE_TIMEOUT_MS = 60_000;
/** Below this mean confidence a page is flagged, and tried in the other three orientations first. */
export const LOW_CONFIDENCE = 60;

export const loadSharp = async () => (await import('sharp')).default;

/** sharp reports limitInputPixels only through its message (as the logo path reads it). */
export const exceedsPixelLimit = (error: unknown) => error instanceof Error && /pixel limit/i.test(error.message);

export const SHARP_INPUT: SharpOptions = { limitInputPixels: MAX_INPUT_PIXELS };

/** What tesseract reads: a greyscale PNG, and its resolution when known (a rendered PDF page). */
export interface OcrImage {
  image: Buffer;
  dpi?: number;
}

/** The PNG tesseract decodes cheapest: fastest deflate, no filters (a filter search costs more than it saves). */
export const FAST_PNG = { compressionLevel: 1, adaptiveFiltering: false } as const;

/** Greyscale, EXIF orientation applied, at most MAX_OCR_PIXELS, as a fast PNG for tesseract. */
export async function normalised(image: Sharp): Promise<OcrImage> {
  const { width = 0, height = 0 } = await image.metadata();
  const scale = Math.min(1, Math.sqrt(MAX_OCR_PIXELS / Math.max(1, width * height)));
  let pipeline = image.rotate().greyscale();
  if (scale < 1) pipeline = pipeline.resize({ width: Math.floor(width * scale), height: Math.floor(height * scale), fit: 'inside' });
  return { image: await pipeline.png(FAST_PNG).toBuffer() };
}

/** The page read in its best orientation: a page turned on its side reads with low confidence until turned back. */
async function readTurned({ image, dpi }: OcrImage, ocr: Ocr, deadline: number): Promise<{ text: string; confidence: number }> {
  const remaining = () => Math.max(1, deadline - Date.now());
  let best = await ocr.recognize(image, { timeoutMs: remaining(), dpi });
  if (best.confidence >= LOW_CONFIDENCE) return best;
  const sharp = await loadSharp();
  for (const angle of [90, 270, 180]) {
    const turned = await sharp(image).rotate(angle).png(FAST_PNG).toBuffer();
    const read = await ocr.recognize(turned, { timeoutMs: remaining(), dpi });
    if (read.confidence > best.confidence) best = read;
    if (best.confidence >= LOW_CONFIDENCE) break;
  }
  return best;
}

/** One page for OCR: its number, and how to get it as an image (rendering or decoding happens only then). */
export interface OcrPageSource {
  page: number;
  image: () => Promise<OcrImage>;
}

export interface OcrOutcome {
  sections: ExtractedSection[];
  read: PageRead[];
  failures: PageFailure[];
}

function failureOf(page: number, error: unknown): PageFailure {
  if (error instanceof OcrTimeout) return { page, reason: 'timeout', message: error.message };
  if (exceedsPixelLimit(error)) return { page, reason: 'too_large', message: `The page image has more than ${MAX_INPUT_PIXELS} pixels` };
  if (error instanceof ExtractionError) return { page, reason: 'unreadable', message: error.message };
  return { page, reason: 'unreadable', message: 'The page image could not be read' };
}

/** Reads one page by OCR; a page that fails says why, and never fails the others. */
export async function ocrPage(source: OcrPageSource, ocr: Ocr, options: ExtractOptions): Promise<{ section?: ExtractedSection; read?: PageRead; failure?: PageFailure }> {
  const deadline = Date.now() + (options.ocrPageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS);
  try {
    const { text, confidence } = await readTurned(await source.image(), ocr, deadline);
    const clean = text.replace(/[ \t]+\n/g, '\n').trim();
    if (!clean) return { failure: { page: source.page, reason: 'no_text', message: 'OCR found no text on this page' } };
    const read = { page: source.page, confidence: Math.round(confidence * 10) / 10 };
    return { section: { kind: 'text', page: source.page, text: clean, ocrConfidence: read.confidence }, read };
  } catch (error) {
    return { failure: failureOf(source.page, error) };
  }
}

/** Pages of an image file, each read by OCR in turn, progress reported after each. */
export async function ocrPages(sources: OcrPageSource[], context: ExtractContext, options: ExtractOptions): Promise<OcrOutcome> {
  const outcome: OcrOutcome = { sections: [], read: [], failures: [] };
  const ocr = context.ocr;
  if (!ocr) throw new ExtractionError('unsupported', 'Images are indexed only with OCR enabled (INDEXING_OCR_ENABLED)');
  let done = 0;
  for (const source of sources) {
    const { section, read, failure } = await ocrPage(source, ocr, options);
    if (section) outcome.sections.push(section);
    if (read) outcome.read.push(read);
    if (failure) outcome.failures.push(failure);
    context.onPage?.(++done, sources.length);
  }
  return outcome;
}
