import type { FileType } from '../../documents/index.js';
import { compactSection, type ExtractedDocument, ExtractionError, type ExtractOptions } from '../extracted-document.js';
import { extractCsv } from './csv.js';
import { extractDocx } from './docx.js';
import { extractHtml } from './html.js';
import { extractMd } from './md.js';
import { extractPdf } from './pdf.js';
import { extractTxt } from './txt.js';
import { extractXlsx } from './xlsx.js';

type Extractor = (filePath: string, options: ExtractOptions) => Promise<ExtractedDocument>;

/** Images have no text layer: they are read by OCR only, which this release does not ship. */
const imageWithoutOcr: Extractor = async (_filePath, options) => {
  throw new ExtractionError('unsupported', options.ocrEnabled ? 'OCR is not available in this release' : 'Images are indexed only with OCR enabled (INDEXING_OCR_ENABLED)');
};

/** One extractor per type documents detects: a new type does not compile until it has one. */
const EXTRACTORS: Record<FileType, Extractor> = {
  pdf: extractPdf,
  docx: extractDocx,
  xlsx: extractXlsx,
  csv: extractCsv,
  html: extractHtml,
  md: extractMd,
  txt: extractTxt,
  png: imageWithoutOcr,
  jpg: imageWithoutOcr,
  tiff: imageWithoutOcr,
};

const EMPTY_MESSAGE: Partial<Record<FileType, string>> = {
  pdf: 'The PDF has no text layer (a scanned document?) and OCR is not available in this release',
};

/** One document, by its detected type; every failure is an ExtractionError with a reason for the user. */
export async function extractDocument(filePath: string, fileType: FileType, options: ExtractOptions): Promise<ExtractedDocument> {
  const extractor = Object.hasOwn(EXTRACTORS, fileType) ? EXTRACTORS[fileType] : undefined;
  if (!extractor) throw new ExtractionError('unsupported', `Files of type ${fileType} are not supported`);
  let document: ExtractedDocument;
  try {
    document = await extractor(filePath, options);
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    throw new ExtractionError('corrupt', `The ${fileType.toUpperCase()} file could not be read`);
  }
  const sections = document.sections
    .map((section) => compactSection({ ...section, text: section.text.replace(/\u0000/g, '').trim() }))
    .filter((section) => section.text);
  if (!sections.length) throw new ExtractionError('empty', EMPTY_MESSAGE[fileType] ?? 'The document contains no text to index');
  return { ...document, sections };
}
