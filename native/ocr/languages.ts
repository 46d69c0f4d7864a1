import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** Tesseract language codes: eng, deu, chi_sim, ... (also what keeps a code from naming another path). */
const LANGUAGE_CODE = /^[a-z]{3}(_[a-z]+)?$/;

/** A configured OCR language whose npm data package is not installed (or a code that names none). */
export class OcrLanguageMissing extends Error {
  constructor(readonly language: string, readonly packageName: string) {
    super(`OCR language "${language}" needs the package ${packageName}, which is not installed`);
    this.name = 'OcrLanguageMissing';
  }
}

/** Where tesseract.js reads `<code>.traineddata.gz` for every configured language: one folder, never a URL. */
export interface OcrLanguages {
  codes: string[];
  langPath: string;
}

export const ocrLanguagePackage = (code: string) => `@tesseract.js-data/${code}`;

/** The language's traineddata folder: the LSTM-only "best_int" model the package ships, else its default folder. */
function dataFolderOf(code: string): string {
  const packageName = ocrLanguagePackage(code);
  if (!LANGUAGE_CODE.test(code)) throw new OcrLanguageMissing(code, packageName);
  let entry: string;
  try {
    entry = require.resolve(packageName);
  } catch {
    throw new OcrLanguageMissing(code, packageName);
  }
  const lstmOnly = path.join(path.dirname(entry), '4.0.0_best_int');
  const folder = existsSync(path.join(lstmOnly, `${code}.traineddata.gz`)) ? lstmOnly : (require(packageName) as { langPath: string }).langPath;
  if (!existsSync(path.join(folder, `${code}.traineddata.gz`))) throw new OcrLanguageMissing(code, packageName);
  return folder;
}

/**
 * Finds the data of every language (throws OcrLanguageMissing for the first one missing). tesseract.js
 * reads all languages from one folder: several packages are copied into `stagingDir` once.
 */
export function resolveOcrLanguages(codes: string[], stagingDir: string): OcrLanguages {
  const folders = codes.map(dataFolderOf);
  if (new Set(folders).size <= 1) return { codes, langPath: folders[0] ?? stagingDir };
  mkdirSync(stagingDir, { recursive: true });
  codes.forEach((code, i) => {
    const target = path.join(stagingDir, `${code}.traineddata.gz`);
    if (!existsSync(target)) copyFileSync(path.join(folders[i], `${code}.traineddata.gz`), target);
  });
  return { codes, langPath: stagingDir };
}
