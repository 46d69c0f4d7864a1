import type { ExtractedDocument, ExtractOptions } from '../extracted-document.js';
import { tableSections } from '../extracted-document.js';
import { readText } from './txt.js';

/** The delimiter that splits the header line most often: comma, semicolon (European Excel) or tab. */
function delimiterOf(text: string): string {
  const end = text.indexOf('\n');
  const firstLine = end < 0 ? text : text.slice(0, end);
  const counts = [',', ';', '\t'].map((candidate) => [candidate, firstLine.split(candidate).length] as const);
  return counts.reduce((best, current) => (current[1] > best[1] ? current : best))[0];
}

/** RFC 4180 records: quoted fields may hold delimiters, doubled quotes and newlines. */
function parseCsv(text: string, delimiter = delimiterOf(text)): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char !== '"') field += char;
      else if (text[i + 1] === '"') field += text[++i];
      else quoted = false;
    } else if (char === '"' && field === '') quoted = true;
    else if (char === delimiter) {
      record.push(field);
      field = '';
    } else if (char === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else field += char;
  }
  if (field !== '' || record.length) records.push([...record, field]);
  return records;
}

/** Rows keep their line number in the file (header = row 1) so a chunk can cite it. */
export async function extractCsv(filePath: string, options: ExtractOptions): Promise<ExtractedDocument> {
  const records = parseCsv(await readText(filePath));
  const rowNumbers: number[] = [];
  const rows: string[][] = [];
  records.forEach((cells, index) => {
    if (!cells.some((cell) => cell.trim())) return;
    rows.push(cells);
    rowNumbers.push(index + 1);
  });
  return { sections: tableSections(rows, { tablesEnabled: options.tablesEnabled, rowNumbers }) };
}
