// Public surface of native/ocr: the rest of Hearth imports from here, never tesseract.js.
export { createOcr, localPaths as ocrEnginePaths, type Ocr, type OcrText, OcrTimeout } from './tesseract-ocr.js';
export { type OcrLanguages, OcrLanguageMissing, ocrLanguagePackage, resolveOcrLanguages } from './languages.js';
