import { readFile } from 'node:fs/promises';
const t0 = Date.now();
const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
console.log('import', Date.now() - t0);
const doc = await pdfjs.getDocument({ data: new Uint8Array(await readFile('/tmp/ocrp/report-3p.pdf')), verbosity: 0, isEvalSupported: false }).promise;
console.log('open', Date.now() - t0);
for (let i = 1; i <= doc.numPages; i++) { const p = await doc.getPage(i); await p.getTextContent(); console.log('page', i, Date.now() - t0); }
await doc.getMetadata(); console.log('meta', Date.now() - t0);
await doc.destroy(); console.log('destroy', Date.now() - t0);
