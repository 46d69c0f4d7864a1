import { type ExtractedDocument, ExtractionError, type ExtractOptions } from '../extracted-document.js';
import { firstElementText, htmlToSections } from './html-sections.js';
import { guardZip } from './zip-guard.js';

/** DOCX through mammoth's semantic HTML, so Word headings (h1-h6) and tables survive. */
export async function extractDocx(filePath: string, options: ExtractOptions): Promise<ExtractedDocument> {
  await guardZip(filePath, 'DOCX', options.zipLimits);
  // Loaded with the first DOCX: mammoth and exceljs (xlsx.ts) made every extraction thread about 9 MB larger.
  const { default: mammoth } = await import('mammoth');
  // Images carry no text and would be inlined as base64: drop them.
  const noImages = mammoth.images.imgElement(async () => ({ src: '' }));
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ path: filePath }, { convertImage: noImages, externalFileAccess: false })).value;
  } catch {
    throw new ExtractionError('corrupt', 'The file is damaged or is not a valid DOCX document');
  }
  const title = firstElementText(html, 'h1');
  return { ...(title ? { title } : {}), sections: htmlToSections(html, options) };
}
