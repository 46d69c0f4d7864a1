import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OcrLanguageMissing, resolveOcrLanguages } from './languages.js';

let staging: string;
afterEach(() => rmSync(staging, { recursive: true, force: true }));

describe('OCR language data', () => {
  it('eng comes from @tesseract.js-data/eng in node_modules (its LSTM-only model), nothing staged', () => {
    staging = mkdtempSync(path.join(os.tmpdir(), 'hearth-ocr-staging-'));
    const languages = resolveOcrLanguages(['eng'], staging);
    expect(languages.codes).toEqual(['eng']);
    expect(languages.langPath).toMatch(/node_modules[\\/]@tesseract\.js-data[\\/]eng[\\/]4\.0\.0_best_int$/);
    expect(existsSync(path.join(languages.langPath, 'eng.traineddata.gz'))).toBe(true);
  });

  it('a language without its package, or a code that names no language, is refused naming the package', () => {
    staging = mkdtempSync(path.join(os.tmpdir(), 'hearth-ocr-staging-'));
    expect(() => resolveOcrLanguages(['eng', 'zzz'], staging)).toThrow(new OcrLanguageMissing('zzz', '@tesseract.js-data/zzz'));
    expect(() => resolveOcrLanguages(['../eng'], staging)).toThrow(OcrLanguageMissing);
  });
});
