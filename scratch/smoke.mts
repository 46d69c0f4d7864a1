import os from 'node:os';
import * as s from '../test/fixtures/scans.ts';
import { ExtractionPool } from '../plugins/ingestion/extraction-pool.ts';
import { resolveOcrLanguages } from '../native/ocr/index.ts';
const dir = '/tmp/ocrp';
const langs = resolveOcrLanguages(['eng'], '/tmp/ocrp/lang');
const opts = { tablesEnabled: true, ocrEnabled: true, ocrLanguages: langs };
const pool = new ExtractionPool({ workers: 1 });
const letter = s.textImage(s.LETTER);
const files: Record<string, [string, any]> = {
  png: [await s.writeFixture(dir, 'l.png', letter), 'png'],
  rot: [await s.writeFixture(dir, 'r.png', await s.turned(letter, 90)), 'png'],
  two: [await s.writeFixture(dir, 't.png', s.twoColumnImage(s.LEFT_COLUMN, s.RIGHT_COLUMN)), 'png'],
  tiff: [await s.writeFixture(dir, 'm.tiff', await s.multiPageTiff([letter, s.textImage(s.LEFT_COLUMN, 200 + 4 * 90)])), 'tiff'],
  mixed: [await s.writeFixture(dir, 'x.pdf', await s.mixedPdf([{ text: 'A page with a real text layer about lighthouses.' }, { image: letter }])), 'pdf'],
  bad: [await s.writeFixture(dir, 'b.png', s.corruptPng()), 'png'],
  grid: [await s.writeFixture(dir, 'g.pdf', await s.gridPdf(s.STAFF)), 'pdf'],
  two2: [await s.writeFixture(dir, 'g2.pdf', await s.twoPageTablePdf(s.STAFF, 2)), 'pdf'],
  tt: [await s.writeFixture(dir, 'tt.pdf', await s.textAndTablePdf(s.STAFF, 'The staff directory lists who sits where.', 'Ask reception for anyone not listed.')), 'pdf'],
};
for (const [k, [f, t]] of Object.entries(files)) {
  const t0 = Date.now();
  try { const d = await pool.extract(f, t, opts, (a, b) => console.log('  page', a, b)); console.log(k, Date.now() - t0, JSON.stringify(d)); }
  catch (e: any) { console.log(k, 'ERR', e.reason, e.message); }
}
await pool.close();
