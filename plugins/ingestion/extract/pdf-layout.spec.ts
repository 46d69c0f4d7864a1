import { describe, expect, it } from 'vitest';
import { pageBlocks, type PositionedText } from './pdf-layout.js';

/** Text items as pdf.js gives them for cells at column edges, with the blank items it puts in the gaps. */
function line(y: number, cells: Array<[number, string]>): PositionedText[] {
  return cells.flatMap(([x, str], i) => {
    const item = { str, x, y, width: str.length * 5, height: 11 };
    const next = cells[i + 1];
    return next ? [item, { str: ' ', x: x + item.width, y, width: next[0] - x - item.width, height: 11 }] : [item];
  });
}

describe('PDF tables from text positions', () => {
  it('aligned columns under a header of labels are a table; prose above and below stays text', () => {
    const items = [
      ...line(40, [[60, 'Opening hours of the branch offices']]),
      ...line(80, [[60, 'Branch'], [200, 'Opens'], [300, 'Closes']]),
      ...line(100, [[60, 'Leeds'], [200, '08:00'], [300, '17:00']]),
      ...line(120, [[60, 'York'], [200, '09:00'], [300, '16:30']]),
      ...line(160, [[60, 'Closed on public holidays']]),
    ];
    expect(pageBlocks(items)).toEqual([
      { kind: 'text', text: 'Opening hours of the branch offices' },
      { kind: 'table', table: { rows: [['Branch', 'Opens', 'Closes'], ['Leeds', '08:00', '17:00'], ['York', '09:00', '16:30']], columns: [60, 200, 300], continued: false } },
      { kind: 'text', text: 'Closed on public holidays' },
    ]);
  });

  it('an empty cell keeps the other cells in their columns', () => {
    const items = [...line(80, [[60, 'Item'], [200, 'Size'], [300, 'Note']]), ...line(100, [[60, 'Rope'], [300, 'spare']]), ...line(120, [[60, 'Net'], [200, 'L'], [300, 'new']])];
    expect(pageBlocks(items)[0]).toMatchObject({ table: { rows: [['Item', 'Size', 'Note'], ['Rope', '', 'spare'], ['Net', 'L', 'new']] } });
  });

  it('two columns of prose are not a table: their lines are longer than labels', () => {
    const left = 'The harbour office keeps its ledgers in a dry room';
    const right = 'Salt stock is running low this winter and rope too';
    const items = [0, 1, 2].flatMap((i) => line(80 + i * 20, [[60, left], [320, right]]));
    expect(pageBlocks(items).every((block) => block.kind === 'text')).toBe(true);
  });

  it('rows at the top of the next page in the same columns continue the table before', () => {
    const items = [...line(60, [[60, 'Grace Hopper'], [246, 'Arlington']]), ...line(100, [[60, 'Footnote: phone numbers change yearly']])];
    expect(pageBlocks(items, [60, 246])).toEqual([
      { kind: 'table', table: { rows: [['Grace Hopper', 'Arlington']], columns: [60, 246], continued: true } },
      { kind: 'text', text: 'Footnote: phone numbers change yearly' },
    ]);
  });
});
