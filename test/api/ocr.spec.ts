import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartBody } from '../fixtures/multipart.js';
import * as scans from '../fixtures/scans.js';
import { cleanupServices, ensureBuilt, exitWithin, listening, ROOT, startService, tempDir, waitFor } from '../fixtures/service-process.js';
import { ADMIN, startApp, type TestApp } from '../helpers.js';

const LETTER_TEXT = scans.LETTER.join(' ');
const SCANNED_PAGE = ['Cargo manifest for the schooner Zephyrine', 'Cloves, nutmeg and cinnamon from Zanzibar'];

let t: TestApp;
let editor: string;

const upload = (filename: string, content: Buffer) =>
  t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content, filename }]) });

async function documentOf(id: string) {
  return (await t.request({ method: 'GET', url: '/api/docs?limit=500', token: editor })).json().documents.find((doc: { id: string }) => doc.id === id);
}

/** Uploads, waits for its job, returns the document as listed and its chunks as stored (page order). */
async function ingest(filename: string, content: Buffer) {
  const res = await upload(filename, content);
  expect(res.statusCode, res.body).toBe(202);
  await t.app.jobs.idle();
  const id = res.json().document.id as string;
  const chunks = await t.app.db.selectFrom('chunks').select(['text', 'page', 'ocr_confidence']).where('document_id', '=', id).orderBy('ordinal').execute();
  return { id, job: res.json().job.id as string, doc: await documentOf(id), chunks };
}

const search = async (query: string) =>
  (await t.request({ method: 'POST', url: '/api/search', token: editor, payload: { query, mode: 'keyword', k: 10 } })).json().results as Array<{ filename: string; page?: number; text: string }>;

const accuracies: Record<string, number> = {};

function expectAccurate(name: string, expected: string, chunks: Array<{ text: string }>) {
  const accuracy = scans.characterAccuracy(expected, chunks.map((chunk) => chunk.text).join(' '));
  accuracies[name] = accuracy;
  expect(accuracy, `${name}: ${chunks.map((chunk) => chunk.text).join(' | ')}`).toBeGreaterThanOrEqual(0.98);
}

describe('OCR enabled (INDEXING_OCR_ENABLED=true)', () => {
  const workingDirBefore = readdirSync(process.cwd());
  let letter: Buffer;

  beforeAll(async () => {
    t = await startApp({ INDEXING_OCR_ENABLED: 'true', INDEXING_TABLES_ENABLED: 'true' });
    editor = (await t.userWithRole('editor')).access;
    letter = scans.textImage(scans.LETTER);
  });

  afterAll(async () => {
    await t?.close();
    console.log(`character accuracy on the generated fixtures: ${JSON.stringify(accuracies)}`);
  });

  it('a PNG is read: search finds its words on page 1, the chunk keeps its OCR confidence', async () => {
    const { doc, chunks } = await ingest('letter.png', letter);
    expect(doc).toMatchObject({ status: 'indexed', file_type: 'png', page_count: 1, page_warnings: [] });
    expectAccurate('png', LETTER_TEXT, chunks);
    expect(chunks[0].ocr_confidence).toBeGreaterThan(80);
    const hits = await search('quince crates');
    expect(hits[0]).toMatchObject({ filename: 'letter.png', page: 1 });
  });

  it('a JPEG, a page scanned on its side, and a two-column page', async () => {
    expectAccurate('jpeg', LETTER_TEXT, (await ingest('letter.jpg', await scans.asJpeg(letter))).chunks);
    expectAccurate('rotated', LETTER_TEXT, (await ingest('sideways.png', await scans.turned(letter, 90))).chunks);
    // Columns are read one after the other, not line by line across the gutter.
    const columns = await ingest('columns.png', scans.twoColumnImage(scans.LEFT_COLUMN, scans.RIGHT_COLUMN));
    expectAccurate('two columns', [...scans.LEFT_COLUMN, ...scans.RIGHT_COLUMN].join(' '), columns.chunks);
  });

  it('a two-page TIFF: both pages read, page numbers kept; the job showed its pages one by one', async () => {
    const second = scans.textImage(scans.RIGHT_COLUMN, 200 + scans.LETTER.length * 90);
    const res = await upload('two-pages.tiff', await scans.multiPageTiff([letter, second]));
    const jobId = res.json().job.id as string;
    const seen = new Set<string>();
    while ((await t.app.jobs.store.get(jobId))?.state !== 'succeeded') {
      const job = (await t.request({ method: 'GET', url: `/api/jobs/${jobId}`, token: editor })).json();
      if (job.progress.pages) seen.add(`${job.progress.pages.done}/${job.progress.pages.total}`);
      expect(job.state).not.toBe('failed');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(seen).toContain('1/2');
    const chunks = await t.app.db.selectFrom('chunks').select(['text', 'page']).where('document_id', '=', res.json().document.id).orderBy('ordinal').execute();
    expectAccurate('tiff page 1', LETTER_TEXT, chunks.filter((chunk) => chunk.page === 1));
    expectAccurate('tiff page 2', scans.RIGHT_COLUMN.join(' '), chunks.filter((chunk) => chunk.page === 2));
  });

  it('a scanned PDF and a mixed PDF: the text page keeps its text layer, the scanned page is read by OCR', async () => {
    const scanned = await ingest('scan.pdf', await scans.mixedPdf([{ image: letter }]));
    expect(scanned.doc).toMatchObject({ status: 'indexed', page_count: 1 });
    expectAccurate('scanned pdf', LETTER_TEXT, scanned.chunks);

    const mixed = await ingest('mixed.pdf', await scans.mixedPdf([{ text: 'Lighthouse keepers log the weather every four hours.' }, { image: scans.textImage(SCANNED_PAGE) }]));
    expect(mixed.doc).toMatchObject({ status: 'indexed', page_count: 2, page_warnings: [] });
    const byPage = new Map(mixed.chunks.map((chunk) => [chunk.page, chunk]));
    expect(byPage.get(1)).toMatchObject({ text: expect.stringContaining('Lighthouse keepers'), ocr_confidence: null });
    expect(byPage.get(2)?.ocr_confidence).toBeGreaterThan(80);
    expectAccurate('mixed pdf, scanned page', SCANNED_PAGE.join(' '), mixed.chunks.filter((chunk) => chunk.page === 2));
    expect((await search('Zanzibar cloves'))[0]).toMatchObject({ filename: 'mixed.pdf', page: 2 });
    expect((await search('lighthouse keepers'))[0]).toMatchObject({ filename: 'mixed.pdf', page: 1 });
  });

  it('a blank page is flagged with its reason while the other pages are indexed; a document with nothing readable fails and says why', async () => {
    const blank = scans.textImage([], 200 + scans.LETTER.length * 90);
    const partly = await ingest('partly-blank.tiff', await scans.multiPageTiff([letter, blank]));
    expect(partly.doc).toMatchObject({ status: 'indexed', page_count: 2, page_warnings: [{ page: 2, reason: 'no_text', message: 'OCR found no text on this page' }] });

    const empty = await ingest('blank.png', blank);
    expect(empty.doc).toMatchObject({ status: 'failed', error: 'No page could be read (page 1: OCR found no text on this page)' });
  });

  it('a corrupt image fails that document with a reason', async () => {
    const { doc } = await ingest('broken.png', scans.truncatedPng(letter));
    expect(doc).toMatchObject({ status: 'failed', error: 'No page could be read (page 1: The page image could not be read)' });
  });

  it('an image declaring more pixels than the bound is refused before it is decoded (a decompression bomb)', async () => {
    const { doc } = await ingest('bomb.png', await scans.pngDeclaring(20_000, 20_000));
    expect(doc).toMatchObject({ status: 'failed', error: 'The image was refused: it has more than 100000000 pixels' });
  });

  it('nothing was cached in the working directory', () => {
    expect(readdirSync(process.cwd()).filter((name) => !workingDirBefore.includes(name))).toEqual([]);
    expect(existsSync(path.join(process.cwd(), 'eng.traineddata'))).toBe(false);
  });

  it('PDF tables (INDEXING_TABLES_ENABLED): each row a chunk, `header: value; ...`, with its page', async () => {
    const grid = await ingest('staff.pdf', await scans.gridPdf(scans.STAFF));
    expect(grid.chunks).toEqual(scans.STAFF.rows.map((row) => ({ text: `Name: ${row[0]}; Office: ${row[1]}; Extension: ${row[2]}`, page: 1, ocr_confidence: null })));

    const spanning = await ingest('staff-2-pages.pdf', await scans.twoPageTablePdf(scans.STAFF, 2));
    expect(spanning.chunks.map((chunk) => [chunk.page, chunk.text])).toEqual([
      [1, 'Name: Ada Lovelace; Office: London; Extension: 4411'],
      [1, 'Name: Grace Hopper; Office: Arlington; Extension: 5522'],
      [2, 'Name: Alan Turing; Office: Manchester; Extension: 6633'],
      [2, 'Name: Edsger Dijkstra; Office: Austin; Extension: 7744'],
    ]);

    const mixed = await ingest('directory.pdf', await scans.textAndTablePdf(scans.STAFF, 'The staff directory lists who sits where.', 'Ask reception for anyone not listed.'));
    const texts = mixed.chunks.map((chunk) => chunk.text);
    expect(texts).toContain('Name: Grace Hopper; Office: Arlington; Extension: 5522');
    expect(texts.join('\n')).toMatch(/staff directory lists who sits where[\s\S]*Edsger Dijkstra[\s\S]*Ask reception/);
    expect((await search('Arlington'))[0]).toMatchObject({ page: 1, text: expect.stringContaining('Office: Arlington') });
  });
});

describe('OCR off (the default)', () => {
  beforeAll(async () => {
    t = await startApp();
    editor = (await t.userWithRole('editor')).access;
  });
  afterAll(async () => t?.close());

  it('an image upload is refused and a scanned PDF fails saying OCR is off', async () => {
    const letter = scans.textImage(scans.LETTER);
    const image = await upload('letter.png', letter);
    expect(image.statusCode).toBe(415);
    expect(image.json().error.message).toMatch(/INDEXING_OCR_ENABLED/);
    const { doc } = await ingest('scan.pdf', await scans.mixedPdf([{ image: letter }]));
    expect(doc).toMatchObject({ status: 'failed', error: expect.stringMatching(/no text layer.*INDEXING_OCR_ENABLED/) });
  });
});

describe('OCR languages', () => {
  it('a language whose data package is not installed stops the app at boot, naming the package', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-ocr-lang-'));
    try {
      await expect(startApp({ INDEXING_OCR_ENABLED: 'true', INDEXING_OCR_LANGUAGES: 'eng,zzz' }, dir)).rejects.toMatchObject({
        name: 'ConfigError',
        message: 'INDEXING_OCR_LANGUAGES: OCR language "zzz" needs the package @tesseract.js-data/zzz, which is not installed (npm install @tesseract.js-data/zzz)',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the built service (node dist/server.js) with OCR enabled', () => {
  beforeAll(() => ensureBuilt(), 240_000);
  afterAll(() => cleanupServices());

  it('reads an image with no connection attempted beyond loopback, and writes no language cache', async () => {
    const dataDir = tempDir();
    const workDir = tempDir('hearth-ocr-cwd-');
    const egressLog = path.join(tempDir(), 'egress.log');
    const service = startService({
      PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, INDEXING_OCR_ENABLED: 'true', LOG_LEVEL: 'INFO',
      NODE_OPTIONS: `--require ${path.join(ROOT, 'test', 'fixtures', 'no-egress.cjs')}`, HEARTH_EGRESS_LOG: egressLog,
    }, workDir);
    const baseUrl = await listening(service);
    const login = await fetch(`${baseUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const authorization = `Bearer ${((await login.json()) as { access_token: string }).access_token}`;
    const { payload, headers } = multipartBody([{ name: 'file', content: scans.textImage(scans.LETTER), filename: 'letter.png' }]);
    expect((await fetch(`${baseUrl}/api/docs/upload`, { method: 'POST', headers: { ...headers, authorization }, body: payload })).status).toBe(202);
    const doc = await waitFor('the image to be indexed', service, async () => {
      const { documents } = (await (await fetch(`${baseUrl}/api/docs`, { headers: { authorization } })).json()) as { documents: Array<{ status: string; error: string | null }> };
      return documents[0]?.status === 'indexed' || documents[0]?.status === 'failed' ? documents[0] : undefined;
    }, 120_000, 100);
    expect(doc).toMatchObject({ status: 'indexed' });

    const log = readFileSync(egressLog, 'utf8');
    // The guard ran in the service, its extraction thread and tesseract's own thread, and refused nothing.
    expect(new Set(log.match(/^guard thread \d+$/gm)).size).toBeGreaterThanOrEqual(3);
    expect(log).not.toMatch(/refused/);
    expect(readdirSync(workDir)).toEqual([]);
    service.child.kill('SIGTERM');
    expect((await exitWithin(service, 15_000)).code).toBe(0);
  });

  it('a configured language whose package is missing: exit 78 with one line naming the package', async () => {
    const dataDir = tempDir();
    const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, INDEXING_OCR_ENABLED: 'true', INDEXING_OCR_LANGUAGES: 'eng,deu' });
    expect(await exitWithin(service, 20_000)).toEqual({ code: 78, signal: null });
    expect(service.stderr().trim().split('\n')).toEqual([
      'hearth: invalid configuration: INDEXING_OCR_LANGUAGES: OCR language "deu" needs the package @tesseract.js-data/deu, which is not installed (npm install @tesseract.js-data/deu)',
    ]);
  });
});
