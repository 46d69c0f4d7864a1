import type { ExtractedDocument, ExtractOptions } from '../extracted-document.js';
import { firstElementText, htmlToSections } from './html-sections.js';
import { readText } from './txt.js';

export async function extractHtml(filePath: string, options: ExtractOptions): Promise<ExtractedDocument> {
  const html = await readText(filePath);
  const title = firstElementText(html, 'title');
  return { ...(title ? { title } : {}), sections: htmlToSections(html, options) };
}
