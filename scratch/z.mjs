import { readFile } from 'node:fs/promises';
const t0 = Date.now();
const { PDFParse } = await import('pdf-parse');
console.log('import', Date.now() - t0);
const p = new PDFParse({ data: new Uint8Array(await readFile('/tmp/ocrp/report-3p.pdf')), verbosity: 0 });
await p.getText(); console.log('text', Date.now() - t0);
