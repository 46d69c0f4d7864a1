import type { Cell } from 'exceljs';
import { type ExtractedDocument, type ExtractedSection, ExtractionError, type ExtractOptions, tableSections } from '../extracted-document.js';
import { guardZip } from './zip-guard.js';

/** What the user reads in the cell; dates as ISO days rather than Date.toString(). */
function cellText(cell: Cell): string {
  const value = cell.value;
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  if (value && typeof value === 'object' && 'result' in value && value.result instanceof Date) return value.result.toISOString().slice(0, 10);
  return cell.text ?? '';
}

/** Every worksheet, row by row, keeping the sheet name and the row number the user sees. */
export async function extractXlsx(filePath: string, options: ExtractOptions): Promise<ExtractedDocument> {
  await guardZip(filePath, 'XLSX', options.zipLimits);
  // Loaded with the first XLSX, as mammoth with the first DOCX (docx.ts).
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.readFile(filePath);
  } catch {
    throw new ExtractionError('corrupt', 'The file is damaged or is not a valid XLSX workbook');
  }
  const sections: ExtractedSection[] = [];
  workbook.eachSheet((sheet) => {
    const rows: string[][] = [];
    const rowNumbers: number[] = [];
    sheet.eachRow({ includeEmpty: false }, (row, rowNumber) => {
      const cells = Array.from({ length: Math.max(sheet.columnCount, row.cellCount) }, (_, i) => cellText(row.getCell(i + 1)));
      if (!cells.some((cell) => cell.trim())) return;
      rows.push(cells);
      rowNumbers.push(rowNumber);
    });
    sections.push(...tableSections(rows, { tablesEnabled: options.tablesEnabled, sheet: sheet.name, rowNumbers }));
  });
  return { ...(workbook.title ? { title: workbook.title } : {}), sections };
}
