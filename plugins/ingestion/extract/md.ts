import type { ExtractedDocument, ExtractedSection } from '../extracted-document.js';
import { readText } from './txt.js';

const ATX = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Markdown kept as written, split at ATX (#) and setext headings; '#' inside code fences is code. */
export async function extractMd(filePath: string): Promise<ExtractedDocument> {
  const lines = (await readText(filePath)).split('\n');
  const sections: ExtractedSection[] = [];
  let heading: string | undefined;
  let title: string | undefined;
  let body: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    const text = body.join('\n').trim();
    if (text) sections.push(heading === undefined ? { kind: 'text', text } : { kind: 'text', text, heading });
    body = [];
  };
  const startSection = (text: string, level: number) => {
    flush();
    heading = text;
    if (level === 1 && title === undefined) title = text;
    body.push(text, '');
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fenceMatch = FENCE.exec(line);
    if (fenceMatch && (!fence || fenceMatch[1][0] === fence[0])) fence = fence ? undefined : fenceMatch[1];
    const atx = fence ? null : ATX.exec(line);
    const next = lines[i + 1];
    if (atx && atx[2]) startSection(atx[2], atx[1].length);
    else if (!fence && line.trim() && next !== undefined && SETEXT.test(next) && !body.at(-1)?.trim()) {
      startSection(line.trim(), next.trim().startsWith('=') ? 1 : 2);
      i++;
    } else body.push(line);
  }
  flush();
  return { ...(title ? { title } : {}), sections };
}
