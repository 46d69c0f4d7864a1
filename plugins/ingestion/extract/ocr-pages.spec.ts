import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOcr, type Ocr, resolveOcrLanguages } from '../../../native/ocr/index.js';
import { LETTER, textImage } from '../../../test/fixtures/scans.js';
import { ocrPages } from './ocr-pages.js';

let staging: string;
let ocr: Ocr;

beforeAll(() => {
  staging = mkdtempSync(path.join(os.tmpdir(), 'hearth-ocr-pages-'));
  ocr = createOcr(resolveOcrLanguages(['eng'], staging));
});

afterAll(async () => {
  await ocr.close();
  rmSync(staging, { recursive: true, force: true });
});

const options = { tablesEnabled: false, ocrEnabled: true };

describe('OCR page by page', () => {
  it('a page past its time bound fails with that reason; the next page is read by a fresh engine', async () => {
    const letter = textImage(LETTER);
    const progress: string[] = [];
    const hasty = await ocrPages([{ page: 1, image: async () => ({ image: letter }) }], { ocr, onPage: (done, total) => progress.push(`${done}/${total}`) }, { ...options, ocrPageTimeoutMs: 1 });
    expect(hasty).toEqual({ sections: [], read: [], failures: [{ page: 1, reason: 'timeout', message: 'OCR took longer than 1 ms' }] });
    expect(progress).toEqual(['1/1']);

    const patient = await ocrPages([{ page: 1, image: async () => ({ image: letter }) }, { page: 2, image: async () => { throw new Error('decoder gave up'); } }], { ocr }, options);
    expect(patient.sections).toEqual([{ kind: 'text', page: 1, text: expect.stringContaining('forty crates of quince jam'), ocrConfidence: expect.any(Number) }]);
    expect(patient.failures).toEqual([{ page: 2, reason: 'unreadable', message: 'The page image could not be read' }]);
  });
});
