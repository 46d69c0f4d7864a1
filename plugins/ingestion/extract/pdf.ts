import { readFile } from 'node:fs/promises';
import { PDFParse } from 'pdf-parse';
import { type ExtractedDocument, type ExtractedSection, ExtractionError } from '../extracted-document.js';

/** PDF text page by page (pdf-parse over pdf.js), so every chunk can cite its page. */
export async function extractPdf(filePath: string): Promise<ExtractedDocument> {
  const parser = new PDFParse({ data: new Uint8Array(await readFile(filePath)), verbosity: 0 });
  try {
    const text = await parser.getText();
    const info = await parser.getInfo().catch(() => undefined);
    const sections: ExtractedSection[] = text.pages
      .map((page) => ({ kind: 'text' as const, page: page.num, text: page.text.replace(/\r\n?/g, '\n').trim() }))
      .filter((section) => section.text);
    const title = typeof info?.info?.Title === 'string' ? info.info.Title.trim() : '';
    return { pageCount: text.total, ...(title ? { title } : {}), sections };
  } catch (error) {
    throw pdfFailure(error);
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

function pdfFailure(error: unknown): ExtractionError {
  const name = error instanceof Error ? error.name : '';
  if (name === 'PasswordException') return new ExtractionError('encrypted', 'The PDF is password-protected');
  if (name === 'InvalidPDFException' || name === 'FormatError') return new ExtractionError('corrupt', 'The PDF is damaged or truncated');
  return new ExtractionError('corrupt', 'The PDF could not be read');
}
