import { convert, type DomNode, type FormatCallback } from 'html-to-text';
import { type ExtractedSection, type SectionKind, tableSections } from '../extracted-document.js';

/**
 * HTML (a web page, or what mammoth makes of a DOCX) into sections: headings h1-h6 become the
 * heading context of the text below them, tables become rows, scripts and styles are dropped.
 * html-to-text does the layout; our formatters leave private-use markers that are read back here.
 */

const HEADING = '\uE000';
const ROW = '\uE001';
const SKIPPED = ['script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object', 'head', 'img'];
const BLOCK_TAGS = new Set(['p', 'div', 'br', 'li', 'tr', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'section', 'article', 'table']);

/** Visible text of a node, whitespace collapsed. */
function textOf(node: DomNode): string {
  const parts: string[] = [];
  const visit = (current: DomNode) => {
    if (current.type === 'text') parts.push(current.data ?? '');
    else if (current.type === 'tag' && !SKIPPED.includes(current.name ?? '')) {
      const block = BLOCK_TAGS.has(current.name ?? '');
      if (block) parts.push(' ');
      for (const child of current.children ?? []) visit(child);
      if (block) parts.push(' ');
    }
  };
  visit(node);
  return parts.join('').replace(/\s+/g, ' ').trim();
}

/** Rows of one table, cells as text; rows of nested tables stay inside their cell's text. */
function rowsOf(table: DomNode): string[][] {
  const rows: string[][] = [];
  const visit = (node: DomNode) => {
    for (const child of node.children ?? []) {
      if (child.type !== 'tag') continue;
      if (child.name === 'tr') rows.push(child.children.filter((cell) => cell.name === 'td' || cell.name === 'th').map(textOf));
      else if (child.name !== 'table') visit(child);
    }
  };
  visit(table);
  return rows.filter((cells) => cells.some(Boolean));
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function formatters(tablesEnabled: boolean): Record<string, FormatCallback> {
  const heading: FormatCallback = (elem, _walk, builder) => {
    const text = textOf(elem);
    if (!text) return;
    builder.openBlock({ leadingLineBreaks: 2 });
    builder.addLiteral(`${HEADING}${text}`);
    builder.closeBlock({ trailingLineBreaks: 2 });
  };
  const table: FormatCallback = (elem, _walk, builder) => {
    for (const section of tableSections(rowsOf(elem), { tablesEnabled })) {
      builder.openBlock({ leadingLineBreaks: 1 });
      builder.addLiteral(`${ROW}${section.kind}${ROW}${section.row}${ROW}${oneLine(section.text)}`);
      builder.closeBlock({ trailingLineBreaks: 1 });
    }
  };
  return { heading, table };
}

/** Reads html-to-text's output back into sections. */
function sectionsOf(text: string): ExtractedSection[] {
  const sections: ExtractedSection[] = [];
  let heading: string | undefined;
  let paragraphs: string[] = [];
  const flush = () => {
    const body = paragraphs.join('\n').replace(/\n{3,}/g, '\n\n').trim();
    if (body) sections.push(heading === undefined ? { kind: 'text', text: body } : { kind: 'text', text: body, heading });
    paragraphs = [];
  };
  for (const line of text.split('\n')) {
    // Markers may be indented (a table inside a list item), so they are looked for anywhere in the line.
    const headingAt = line.indexOf(HEADING);
    const rowAt = line.indexOf(ROW);
    if (headingAt >= 0) {
      flush();
      heading = line.slice(headingAt + 1).trim();
      paragraphs.push(heading, '');
    } else if (rowAt >= 0) {
      flush();
      const [kind, row, rowText] = line.slice(rowAt + 1).split(ROW);
      const section: ExtractedSection = { kind: kind as SectionKind, text: rowText, row: Number(row) };
      if (heading !== undefined) section.heading = heading;
      sections.push(section);
    } else {
      paragraphs.push(line.replace(/\s+$/, ''));
    }
  }
  flush();
  return sections;
}

export function htmlToSections(html: string, options: { tablesEnabled: boolean }): ExtractedSection[] {
  // Markers in the source itself would be read back as structure.
  const text = convert(html.replace(/[\uE000\uE001]/g, ''), {
    wordwrap: false,
    formatters: formatters(options.tablesEnabled),
    selectors: [
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, format: 'heading' })),
      { selector: 'table', format: 'table' },
      ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
      { selector: 'a', options: { ignoreHref: true } },
    ],
  });
  return sectionsOf(text);
}

/** Plain text of the first `tag` element (a page's <title>, a DOCX's first <h1>), entities decoded. */
export function firstElementText(html: string, tag: 'title' | 'h1'): string | undefined {
  const match = new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'i').exec(html);
  const text = match ? oneLine(convert(match[1], { wordwrap: false })) : '';
  return text || undefined;
}
