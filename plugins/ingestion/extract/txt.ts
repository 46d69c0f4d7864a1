import { readFile } from 'node:fs/promises';
import type { ExtractedDocument } from '../extracted-document.js';

/** UTF-8, or a single-byte code page when the bytes are not valid UTF-8 (older Windows files). */
export async function readText(filePath: string): Promise<string> {
  const bytes = await readFile(filePath);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = new TextDecoder('windows-1252').decode(bytes);
  }
  return text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
}

export async function extractTxt(filePath: string): Promise<ExtractedDocument> {
  const text = (await readText(filePath)).trim();
  return { sections: text ? [{ kind: 'text', text }] : [] };
}
