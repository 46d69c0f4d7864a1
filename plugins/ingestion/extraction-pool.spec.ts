import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { constants, type FileHandle, open, readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread } from 'node:worker_threads';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExtractionError, type ExtractedDocument, type ExtractOptions } from './extracted-document.js';
import { ExtractionPool } from './extraction-pool.js';
import * as fixtures from '../../test/fixtures/documents.js';

const TABLES_ON: ExtractOptions = { tablesEnabled: true, ocrEnabled: false };
const TABLES_OFF: ExtractOptions = { tablesEnabled: false, ocrEnabled: false };

let dir: string;
let pool: ExtractionPool;
const files = {} as Record<'pdf' | 'docx' | 'xlsx' | 'csv' | 'html' | 'md' | 'txt' | 'bigPdf', string>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-extract-'));
  pool = new ExtractionPool({ workers: 2 });
  Object.assign(files, await fixtures.makeOneOfEachType(dir), { bigPdf: await fixtures.makePdf(dir, 200) });
});

afterAll(async () => {
  await pool?.close();
  rmSync(dir, { recursive: true, force: true });
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the extraction to fail');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(ExtractionError);
      return error as ExtractionError;
    },
  );

const sectionWith = (doc: ExtractedDocument, text: string) => doc.sections.find((section) => section.text.includes(text));

const MAIN_THREAD_STAT = `/proc/self/task/${process.pid}/stat`;
const PROCESS_STAT = '/proc/self/stat';
/** User + system CPU time in clock ticks (proc(5): fields 14 and 15): of one thread, or of the whole process with its ended threads. */
const cpuTicks = (statFile: string) => {
  const stat = readFileSync(statFile, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // the name in parentheses may hold spaces
  return Number(fields[11]) + Number(fields[12]);
};

/**
 * A file whose reader waits for the rest forever: a FIFO. opened() resolves once a reader has opened it (the
 * extraction is running), having written a first line; the write end stays open until close().
 */
function endlessFile(fifo: string): { path: string; opened: () => Promise<void>; close: () => Promise<void> } {
  execFileSync('mkfifo', [fifo]);
  let writeEnd: FileHandle | undefined;
  const opened = async () => {
    for (;;) {
      try {
        writeEnd = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK); // ENXIO while nobody reads it
        await writeEnd.write('The first line arrives; the rest never does.\n');
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
        await sleep(10);
      }
    }
  };
  return { path: fifo, opened, close: async () => writeEnd?.close() };
}

describe('extractors (through the worker pool)', () => {
  it('PDF: one section per page with its page number, the page count and the title', async () => {
    const doc = await pool.extract(files.pdf, 'pdf', TABLES_OFF);
    expect(doc.pageCount).toBe(3);
    expect(doc.title).toBe('Annual report in 3 pages');
    expect(doc.sections.map((section) => section.page)).toEqual([1, 2, 3]);
    expect(sectionWith(doc, 'page2 of the report')?.page).toBe(2);
    expect(doc.sections[2].text).toMatch(/^Chapter 3: /);
  });

  it('DOCX: headings become context, table rows carry the header (tables on)', async () => {
    const doc = await pool.extract(files.docx, 'docx', TABLES_ON);
    expect(doc.title).toBe('Harbour Operations Manual');
    expect(sectionWith(doc, 'lifejacket')).toMatchObject({ kind: 'text', heading: 'Safety Rules' });
    const rows = doc.sections.filter((section) => section.kind === 'table-row');
    expect(rows).toEqual([
      { kind: 'table-row', text: 'Vessel: Dinghy; Length: 4 m; Fee per night: 12 EUR', heading: 'Mooring Fees', row: 2 },
      { kind: 'table-row', text: 'Vessel: Yacht; Length: 15 m; Fee per night: 80 EUR', heading: 'Mooring Fees', row: 3 },
    ]);
    expect(sectionWith(doc, 'Fees are due on arrival')?.heading).toBe('Mooring Fees');
  });

  it('DOCX: tables are flattened as text with tables off', async () => {
    const doc = await pool.extract(files.docx, 'docx', TABLES_OFF);
    expect(doc.sections.some((section) => section.kind === 'table-row')).toBe(false);
    expect(sectionWith(doc, 'Dinghy | 4 m | 12 EUR')).toMatchObject({ kind: 'text', heading: 'Mooring Fees', row: 2 });
  });

  it('XLSX: every sheet, with sheet name and row number, header repeated per row', async () => {
    const doc = await pool.extract(files.xlsx, 'xlsx', TABLES_ON);
    expect(doc.sections).toEqual([
      { kind: 'table-row', text: 'Region: North; Quarter: Q1; Revenue: 1200', sheet: 'Sales', row: 2 },
      { kind: 'table-row', text: 'Region: South; Quarter: Q1; Revenue: 950', sheet: 'Sales', row: 3 },
      { kind: 'table-row', text: 'Region: Total; Quarter: Q1; Revenue: 2150', sheet: 'Sales', row: 4 },
      { kind: 'table-row', text: 'Name: Ada Lovelace; Role: Engineer; Started: 2021-03-01', sheet: 'Staff', row: 2 },
      { kind: 'table-row', text: 'Name: Grace Hopper; Role: Admiral; Started: 2019-06-15', sheet: 'Staff', row: 3 },
    ]);
    const flat = await pool.extract(files.xlsx, 'xlsx', TABLES_OFF);
    expect(flat.sections[0]).toEqual({ kind: 'text', text: 'Region | Quarter | Revenue', sheet: 'Sales', row: 1 });
    expect(flat.sections[1]).toEqual({ kind: 'text', text: 'North | Q1 | 1200', sheet: 'Sales', row: 2 });
  });

  it('CSV: quoted fields, blank lines skipped, rows keep their line number', async () => {
    const doc = await pool.extract(files.csv, 'csv', TABLES_ON);
    expect(doc.sections).toEqual([
      { kind: 'table-row', text: 'Item: Lantern; Colour: amber; Notes: Brass, hand-made', row: 2 },
      { kind: 'table-row', text: 'Item: Kettle; Colour: cobalt; Notes: Says "hello" when boiling', row: 3 },
      { kind: 'table-row', text: 'Item: Anchor; Colour: umber; Notes: Heavy', row: 5 },
    ]);
    const flat = await pool.extract(files.csv, 'csv', TABLES_OFF);
    expect(flat.sections.every((section) => section.kind === 'text')).toBe(true);
    expect(flat.sections[3]).toEqual({ kind: 'text', text: 'Anchor | umber | Heavy', row: 5 });
  });

  it('HTML: title, headings and table rows kept; scripts and styles dropped', async () => {
    const doc = await pool.extract(files.html, 'html', TABLES_ON);
    expect(doc.title).toBe('Orchard & Meadow Guide');
    const all = doc.sections.map((section) => section.text).join('\n');
    expect(all).not.toContain('do-not-index');
    expect(all).not.toContain('color: red');
    expect(sectionWith(doc, 'Apples ripen')?.heading).toBe('Orchard Guide');
    expect(doc.sections.filter((section) => section.kind === 'table-row')).toEqual([
      { kind: 'table-row', text: 'Fruit: Apple; Month: September', heading: 'Harvest Table', row: 2 },
      { kind: 'table-row', text: 'Fruit: Pear; Month: October', heading: 'Harvest Table', row: 3 },
    ]);
    expect(sectionWith(doc, 'cool cellar')?.heading).toBe('Storage');
  });

  it('MD: sections by # heading, a # inside a code fence is code', async () => {
    const doc = await pool.extract(files.md, 'md', TABLES_OFF);
    expect(doc.title).toBe('Field Notes');
    expect(doc.sections.map((section) => section.heading)).toEqual(['Field Notes', 'Glaciers', 'Rivers']);
    expect(sectionWith(doc, 'glacier retreated')?.text).toContain('# not a heading');
    expect(sectionWith(doc, 'river froze')?.heading).toBe('Rivers');
  });

  it('TXT: the whole text, line endings normalised', async () => {
    const doc = await pool.extract(files.txt, 'txt', TABLES_OFF);
    expect(doc.sections).toHaveLength(1);
    expect(doc.sections[0].text).toMatch(/^Dear reader,\n\n/);
    expect(doc.sections[0].text).toMatch(/lighthouse keeper\.$/);
  });
});

describe('bad files fail that one document with a clear reason', () => {
  it('encrypted PDF', async () => {
    const error = await failure(pool.extract(await fixtures.makeEncryptedPdf(dir), 'pdf'));
    expect(error).toMatchObject({ reason: 'encrypted', message: 'The PDF is password-protected' });
  });

  it('truncated PDF', async () => {
    const error = await failure(pool.extract(await fixtures.makeCorruptPdf(dir), 'pdf'));
    expect(error.reason).toBe('corrupt');
  });

  it('a PNG named .pdf: corrupt when read as PDF, unsupported (OCR off) when read as what it is', async () => {
    const png = await fixtures.makePngNamedPdf(dir);
    expect((await failure(pool.extract(png, 'pdf'))).reason).toBe('corrupt');
    expect(await failure(pool.extract(png, 'png', TABLES_OFF))).toMatchObject({
      reason: 'unsupported',
      message: 'Images are indexed only with OCR enabled (INDEXING_OCR_ENABLED)',
    });
  });

  it('zip bomb in a .docx: refused from the zip directory, before anything is inflated', async () => {
    const bomb = await fixtures.makeZipBombDocx(dir);
    expect((await readFile(bomb)).length).toBeLessThan(1024 * 1024);
    const error = await failure(pool.extract(bomb, 'docx'));
    expect(error.reason).toBe('zip_bomb');
    // The refusal names a part's declared sizes (zip-guard's checkSizes, read from the directory entry), not the
    // whole archive's ratio that is only known once every part has been inflated.
    expect(error.message).toMatch(/^The file was refused as a likely zip bomb: (a part unpacks over \d+ times its size|it unpacks to more than \d+ MB)$/);
  });

  it('zip bomb that lies about its sizes: caught while inflating', async () => {
    const bomb = await fixtures.makeZipBombDocx(dir, { lying: true, size: 64 * 1024 * 1024 });
    const error = await failure(pool.extract(bomb, 'docx'));
    expect(error).toMatchObject({ reason: 'zip_bomb', message: expect.stringMatching(/larger than the zip declares/) });
  });

  it('too many parts in an Office zip, and an XLSX over the size cap', async () => {
    const tooMany = await failure(pool.extract(files.docx, 'docx', { ...TABLES_OFF, zipLimits: { maxEntries: 3 } }));
    expect(tooMany.reason).toBe('zip_bomb');
    const tooBig = await failure(pool.extract(files.xlsx, 'xlsx', { ...TABLES_OFF, zipLimits: { maxTotalBytes: 1000 } }));
    expect(tooBig.reason).toBe('zip_bomb');
  });

  it('a zip that is no DOCX, and bytes that are no zip at all', async () => {
    const otherZip = await fixtures.writeZip(path.join(dir, 'other.docx'), [{ name: 'readme.txt', data: Buffer.from('hello') }]);
    expect((await failure(pool.extract(otherZip, 'docx'))).reason).toBe('corrupt');
    const notZip = path.join(dir, 'garbage.xlsx');
    await writeFile(notZip, Buffer.from('this is not a workbook at all'));
    expect((await failure(pool.extract(notZip, 'xlsx'))).reason).toBe('corrupt');
  });

  it('a document with no text', async () => {
    const blank = path.join(dir, 'blank.txt');
    await writeFile(blank, '   \n\n  \n');
    expect(await failure(pool.extract(blank, 'txt'))).toMatchObject({ reason: 'empty' });
    const emptyPdf = await fixtures.makePdf(dir, 0, 'blank.pdf');
    expect(await failure(pool.extract(emptyPdf, 'pdf'))).toMatchObject({ reason: 'empty', message: expect.stringMatching(/OCR/) });
  });

  it('the pool still extracts good documents afterwards', async () => {
    const doc = await pool.extract(files.txt, 'txt');
    expect(doc.sections[0].text).toContain('Dear reader');
  });
});

describe('the worker pool', () => {
  it('extracts a 200-page PDF in a worker thread: the main thread spends under a tenth of the CPU the extraction takes', async () => {
    expect(isMainThread).toBe(true); // the test itself runs on the main thread it measures (vitest pool: forks)
    const before = { main: cpuTicks(MAIN_THREAD_STAT), all: cpuTicks(PROCESS_STAT) };
    const doc = await pool.extract(files.bigPdf, 'pdf', TABLES_OFF);
    const main = cpuTicks(MAIN_THREAD_STAT) - before.main;
    const others = cpuTicks(PROCESS_STAT) - before.all - main;
    expect(doc.pageCount).toBe(200);
    expect(doc.sections).toHaveLength(200);
    expect(sectionWith(doc, 'page137 of the report')?.page).toBe(137);
    // CPU time per thread, not wall time: the same on a loaded box. Parsed on the main thread, main would be nearly all of it.
    expect(others).toBeGreaterThan(0);
    expect(main * 10, `main thread ${main} ticks, other threads ${others}`).toBeLessThanOrEqual(others);
  });

  it('runs documents in parallel, and one failure does not touch its neighbours', async () => {
    const bad = await fixtures.makeCorruptPdf(dir);
    const results = await Promise.allSettled([
      pool.extract(files.pdf, 'pdf'),
      pool.extract(bad, 'pdf'),
      pool.extract(files.md, 'md'),
      pool.extract(files.csv, 'csv', TABLES_ON),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
  });

  it('a worker that dies (out of memory) fails only that document', async () => {
    const small = new ExtractionPool({ workers: 1, maxMemoryMb: 128, timeoutMs: 60_000 });
    try {
      const huge = path.join(dir, 'huge.csv');
      await writeFile(huge, Buffer.alloc(48 * 1024 * 1024, 'a,'));
      expect(await failure(small.extract(huge, 'csv'))).toMatchObject({ reason: 'crashed', message: 'Extraction ran out of memory on this file' });
      expect((await small.extract(files.txt, 'txt')).sections).toHaveLength(1);
    } finally {
      await small.close();
    }
  });

  it('a document that never ends times out, and the pool then serves the next one', async () => {
    const endless = endlessFile(path.join(dir, 'endless.txt'));
    const hasty = new ExtractionPool({ workers: 1, timeoutMs: 1_000 });
    // The pool's clock is the test's: its timeout passes once the document is being read, and never for the next one,
    // however long this box takes to start a worker thread.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const hung = failure(hasty.extract(endless.path, 'txt'));
      await endless.opened();
      vi.advanceTimersByTime(1_000);
      expect(await hung).toMatchObject({ reason: 'timeout', message: 'Extraction took longer than 1 s' });
      expect((await hasty.extract(files.txt, 'txt')).sections[0].text).toContain('Dear reader');
    } finally {
      vi.useRealTimers();
      await endless.close();
      await hasty.close();
    }
  });
});
