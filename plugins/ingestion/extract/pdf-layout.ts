/**
 * Tables of a PDF page from the positions pdf.js gives its text: a table is a run of lines whose
 * cells start at the same column edges as a header of short labels (a ruled grid's cells align too).
 * Coordinates are top-down points.
 */

export interface PositionedText {
  str: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

interface Cell {
  text: string;
  left: number;
  right: number;
}

interface Line {
  y: number;
  height: number;
  cells: Cell[];
}

/** Items on one baseline form a line; a gap wider than about a character's height starts a new cell (pdf.js fills gaps with blank items). */
function linesOf(items: PositionedText[]): Line[] {
  const rows: PositionedText[][] = [];
  for (const item of items.filter((candidate) => candidate.str.trim()).sort((a, b) => a.y - b.y || a.x - b.x)) {
    const row = rows.at(-1);
    if (row && Math.abs(row[0].y - item.y) <= Math.max(2, row[0].height * 0.4)) row.push(item);
    else rows.push([item]);
  }
  return rows.map((row) => {
    const sorted = row.sort((a, b) => a.x - b.x);
    const height = Math.max(...sorted.map((item) => item.height), 1);
    const cells: Cell[] = [];
    for (const item of sorted) {
      const cell = cells.at(-1);
      if (cell && item.x - cell.right < height * 1.2) {
        cell.text += (item.x - cell.right > height * 0.15 ? ' ' : '') + item.str;
        cell.right = Math.max(cell.right, item.x + item.width);
      } else cells.push({ text: item.str, left: item.x, right: item.x + item.width });
    }
    for (const cell of cells) cell.text = cell.text.replace(/\s+/g, ' ').trim();
    return { y: sorted[0].y, height, cells };
  });
}

/** Column left edges of a table, from its header line. */
export type Columns = number[];

const ALIGN_TOLERANCE = 6;
const MIN_TABLE_LINES = 3;
/** Two columns of prose also align: a header's cells are labels, short. */
const MAX_HEADER_CELL = 40;

/** The line as a row of these columns: two cells or more, in increasing columns, two at least on a column edge; null when it is not. */
function rowIn(line: Line, columns: Columns): string[] | null {
  if (line.cells.length < 2) return null;
  const row = columns.map(() => '');
  let previous = -1;
  let onEdge = 0;
  for (const cell of line.cells) {
    const exact = columns.findIndex((left) => Math.abs(cell.left - left) <= ALIGN_TOLERANCE);
    const index = exact >= 0 ? exact : columns.reduce((found, left, i) => (left <= cell.left ? i : found), -1);
    if (index <= previous) return null;
    if (exact >= 0) onEdge++;
    row[index] = cell.text;
    previous = index;
  }
  return onEdge >= 2 ? row : null;
}

export interface PageTable {
  /** First row is the header (for a table continued from the page before: its first row on this page). */
  rows: string[][];
  columns: Columns;
  /** True when the rows run on from a table that ended the page before. */
  continued: boolean;
}

export type PageBlock = { kind: 'text'; text: string } | { kind: 'table'; table: PageTable };

/**
 * The page as text blocks and tables in reading order. `previous` is the columns of a table that
 * ended the page before: lines at the top of this page in those columns continue it.
 */
export function pageBlocks(items: PositionedText[], previous?: Columns): PageBlock[] {
  const lines = linesOf(items);
  const blocks: PageBlock[] = [];
  let prose: string[] = [];
  const flushProse = () => {
    if (prose.length) blocks.push({ kind: 'text', text: prose.join('\n') });
    prose = [];
  };
  let i = 0;
  if (previous) {
    const rows: string[][] = [];
    for (; i < lines.length; i++) {
      const row = rowIn(lines[i], previous);
      if (!row) break;
      rows.push(row);
    }
    if (rows.length) blocks.push({ kind: 'table', table: { rows, columns: previous, continued: true } });
  }
  while (i < lines.length) {
    const table = tableAt(lines, i);
    if (table) {
      flushProse();
      blocks.push({ kind: 'table', table: table.table });
      i = table.end;
    } else {
      prose.push(lines[i++].cells.map((cell) => cell.text).join('\t'));
    }
  }
  flushProse();
  return blocks;
}

/** A table whose header is lines[start]: at least three lines in the header's columns, close together. */
function tableAt(lines: Line[], start: number): { table: PageTable; end: number } | null {
  const header = lines[start];
  if (header.cells.length < 2 || header.cells.some((cell) => cell.text.length > MAX_HEADER_CELL)) return null;
  const columns = header.cells.map((cell) => cell.left);
  const rows = [header.cells.map((cell) => cell.text)];
  let end = start + 1;
  while (end < lines.length) {
    const closeBy = lines[end].y - lines[end - 1].y <= Math.max(lines[end - 1].height, lines[end].height) * 3.5;
    const row = closeBy ? rowIn(lines[end], columns) : null;
    if (!row) break;
    rows.push(row);
    end++;
  }
  return rows.length >= MIN_TABLE_LINES ? { table: { rows, columns, continued: false }, end } : null;
}
