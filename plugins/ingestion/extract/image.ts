import { readFile } from 'node:fs/promises';
import { type ExtractContext, type ExtractedDocument, ExtractionError, type ExtractOptions } from '../extracted-document.js';
import { exceedsPixelLimit, loadSharp, MAX_INPUT_PIXELS, normalised, ocrPages, SHARP_INPUT } from './ocr-pages.js';

/** PNG, JPEG, WebP and TIFF (every page of a multi-page TIFF), read by OCR; page numbers are the image's pages. */
export async function extractImage(filePath: string, options: ExtractOptions, context: ExtractContext): Promise<ExtractedDocument> {
  if (!context.ocr) throw new ExtractionError('unsupported', 'Images are indexed only with OCR enabled (INDEXING_OCR_ENABLED)');
  const sharp = await loadSharp();
  const bytes = await readFile(filePath);
  const tooLarge = new ExtractionError('too_large', `The image was refused: it has more than ${MAX_INPUT_PIXELS} pixels`);
  let metadata;
  try {
    metadata = await sharp(bytes, SHARP_INPUT).metadata();
  } catch (error) {
    if (exceedsPixelLimit(error)) throw tooLarge;
    throw new ExtractionError('corrupt', 'The image is damaged or is not a valid PNG, JPEG, WebP or TIFF file');
  }
  // metadata() reads the header only: the declared size is checked before any pixel is decoded.
  if ((metadata.width ?? 0) * (metadata.height ?? 0) > MAX_INPUT_PIXELS) throw tooLarge;
  const pageCount = metadata.pages ?? 1;
  const sources = Array.from({ length: pageCount }, (_, i) => ({ page: i + 1, image: () => normalised(sharp(bytes, { ...SHARP_INPUT, page: i })) }));
  const { sections, read, failures } = await ocrPages(sources, context, options);
  return { pageCount, sections, ocrPages: read, pageFailures: failures };
}
