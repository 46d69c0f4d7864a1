import type { FileType } from '../../documents/index.js';
import { compactSection, type ExtractContext, type ExtractedDocument, ExtractionError, type ExtractOptions, type PageFailure } from '../extracted-document.js';
import { extractCsv } from './csv.js';
import { extractDocx } from './docx.js';
import { extractHtml } from './html.js';
import { extractImage } from './image.js';
import { extractMd } from './md.js';
import { extractPdf } from './pdf.js';
import { extractTxt } from './txt.js';
import { extractXlsx } from './xlsx.js';

type Extractor = (filePath: string, options: ExtractOptions, context: ExtractContext) => Promise<ExtractedDocument>;

/** One extractor per type documents detects: a new type does not compile until it has one. */
const EXTRACTORS: Record<FileType, Extractor> = {
  pdf: extractPdf,
  docx: extractDocx,
  xlsx: extractXlsx,
  csv: extractCsv,
  html: extractHtml,
  md: extractMd,
  txt: extractTxt,
  png: extractImage,
  jpg: extractImage,
  tiff: extractImage,
  webp: extractImage,
};

/** Why a document with no text failed: its pages' reasons when OCR read it, else what the type suggests. */
function emptyMessage(fileType: FileType, options: ExtractOptions, failures: PageFailure[] = []): string {
  if (failures.length) {
    const reasons = failures.slice(0, 3).map((failure) => `page ${failure.page}: ${failure.message}`);
    return `No page could be read (${reasons.join('; ')}${failures.length > 3 ? `; and ${failures.length - 3} more` : ''})`;
  }
  if (fileType === 'pdf' && !options.ocrEnabled) return 'The PDF has no text layer (a scanned document?): it is indexed only with OCR enabled (INDEXING_OCR_ENABLED)';
  return 'The document contains no text to index';
}

/** One document, by its detected type; every failure is an ExtractionError with a reason for the user. */
export async function extractDocument(filePath: string, fileType: FileType, options: ExtractOptions, context: ExtractContext = {}): Promise<ExtractedDocument> {
  const extractor = Object.hasOwn(EXTRACTORS, fileType) ? EXTRACTORS[fileType] : undefined;
  if (!extractor) throw new ExtractionError('unsupported', `Files of type ${fileType} are not supported`);
  let document: ExtractedDocument;
  try {
    document = await extractor(filePath, options, context);
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    throw new ExtractionError('corrupt', `The ${fileType.toUpperCase()} file could not be read`);
  }
  const sections = document.sections
    .map((section) => compactSection({ ...section, text: section.text.replace(/\u0000/g, '').trim() }))
    .filter((section) => section.text);
  if (!sections.length) throw new ExtractionError('empty', emptyMessage(fileType, options, document.pageFailures));
  return { ...document, sections };
}
