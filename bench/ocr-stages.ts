/**
 * Where one OCR'd PDF page's time goes, in CPU seconds of this process (all its threads, tesseract's
 * included: robust to a shared box's load, unlike wall clock). The pages are the OCR bench's (a letter
 * scanned into 5-page image-only PDFs). Stages, in order, each awaited alone:
 *   render   pdf.js draws the page on @napi-rs/canvas, its pixels read back (PREPARE=png: the path before,
 *            pdf-parse's screenshot, a PNG encoded by the canvas)
 *   prepare  greyscale and the PNG for tesseract (PREPARE=png: sharp decodes, flattens, greys, encodes)
 *   decode   tesseract.js: the image into leptonica (SetImageFile), message to its thread included
 *   layout   FindLines (thresholding, page segmentation, skew)
 *   read     the LSTM recognition and text dump
 * `npx tsx bench/ocr-stages.ts` (BENCH_OCR_PAGES, default 5; RENDER_DPI, default 300; OCR_PSM, default AUTO;
 * OCR_INIT and OCR_PARAMS, JSON: tesseract parameters at init and set after).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFParse } from 'pdf-parse';
import { createWorker, OEM, PSM } from 'tesseract.js';
import { ocrEnginePaths, resolveOcrLanguages } from '../native/ocr/index.js';
import { LETTER, characterAccuracy, mixedPdf, textImage } from '../test/fixtures/scans.js';
import { loadSharp, normalised } from '../plugins/ingestion/extract/ocr-pages.js';
import { drawPage, greyPng } from '../plugins/ingestion/extract/pdf.js';

const pages = Number(process.env.BENCH_OCR_PAGES ?? 5);

const cpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};
async function timed<T>(totals: Record<string, number>, stage: string, work: () => Promise<T>): Promise<T> {
  const before = cpu();
  const result = await work();
  totals[stage] = (totals[stage] ?? 0) + cpu() - before;
  return result;
}

const staging = mkdtempSync(path.join(os.tmpdir(), 'hearth-ocr-stages-'));
const languages = resolveOcrLanguages(['eng'], staging);
const worker = await createWorker(languages.codes, OEM.LSTM_ONLY, ocrEnginePaths(languages), JSON.parse(process.env.OCR_INIT ?? '{}'));
const psm = (process.env.OCR_PSM ?? 'AUTO') as keyof typeof PSM;
await worker.setParameters({ tessedit_pageseg_mode: PSM[psm], user_defined_dpi: process.env.OCR_DPI ?? process.env.RENDER_DPI ?? '300', ...JSON.parse(process.env.OCR_PARAMS ?? '{}') });

const pdfs = await Promise.all(Array.from({ length: Math.ceil(pages / 5) }, (_, f) =>
  mixedPdf(Array.from({ length: 5 }, (_, i) => ({ image: textImage([`Page ${f * 5 + i + 1} of the harbour scan`, ...LETTER]) })))));

const RENDER_DPI = Number(process.env.RENDER_DPI ?? 300);

/** The path of pdf.ts before this profiler: PNG from the canvas, sharp to a greyscale PNG. */
async function prepared(parser: PDFParse, page: number, totals: Record<string, number>): Promise<Buffer> {
  const png = await timed(totals, 'render', async () => {
    const size = (await parser.getInfo({ parsePageInfo: true, partial: [page] })).pages[0];
    const desiredWidth = Math.floor((size?.width ?? 595) * RENDER_DPI / 72);
    const shot = await parser.getScreenshot({ partial: [page], desiredWidth, imageBuffer: true, imageDataUrl: false });
    return shot.pages[0].data;
  });
  const sharp = await loadSharp();
  return timed(totals, 'prepare', async () => (await normalised(sharp(Buffer.from(png)).flatten({ background: '#ffffff' }))).image);
}

/** The service's path (pdf.ts): pixels read straight off the canvas, greyscale PNG without filters. */
async function preparedNow(parser: PDFParse, page: number, totals: Record<string, number>): Promise<Buffer> {
  const pixels = await timed(totals, 'render', () => drawPage(parser, page, RENDER_DPI));
  return timed(totals, 'prepare', () => greyPng(pixels));
}
const prepare = process.env.PREPARE === 'png' ? prepared : preparedNow;

const totals: Record<string, number> = {};
let accuracy = 1;
let done = 0;
const wallStart = performance.now();
for (const [f, pdf] of pdfs.entries()) {
  const parser = new PDFParse({ data: new Uint8Array(pdf), verbosity: 0 });
  await parser.getText();
  for (let p = 1; p <= 5 && done < pages; p++, done++) {
    const image = await prepare(parser, p, totals);
    await timed(totals, 'decode', () => worker.recognize(image, {}, { text: false }));
    await timed(totals, 'decode+layout', () => worker.recognize(image, { rotateAuto: true }, { text: false }));
    const result = await timed(totals, 'decode+layout+read', () => worker.recognize(image, { rotateAuto: true }));
    const expected = [`Page ${f * 5 + p} of the harbour scan`, ...LETTER].join(' ');
    accuracy = Math.min(accuracy, characterAccuracy(expected, result.data.text));
  }
  await parser.destroy();
}
const wall = (performance.now() - wallStart) / 1000;
await worker.terminate();
rmSync(staging, { recursive: true, force: true });

const per = (stage: string) => (totals[stage] ?? 0) / pages;
const row = {
  render: per('render'),
  prepare: per('prepare'),
  decode: per('decode'),
  layout: per('decode+layout') - per('decode'),
  read: per('decode+layout+read') - per('decode+layout'),
};
const pipeline = row.render + row.prepare + per('decode+layout+read');
console.log(JSON.stringify({ init: process.env.OCR_INIT, params: process.env.OCR_PARAMS, prepare: process.env.PREPARE ?? 'canvas-pixels', renderDpi: RENDER_DPI, pages, psm, dpi: process.env.OCR_DPI ?? process.env.RENDER_DPI ?? '300', cpuSecondsPerPage: Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Math.round(v * 1000) / 1000])), pipelineCpuPerPage: Math.round(pipeline * 1000) / 1000, minAccuracy: Math.round(accuracy * 10000) / 10000, wallSeconds: Math.round(wall), load: os.loadavg().map((l) => l.toFixed(1)).join(' ') }));
