import { readFile } from 'node:fs/promises';
const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
const doc = await pdfjs.getDocument({ data: new Uint8Array(await readFile('/tmp/ocrp/g.pdf')), verbosity: 0 }).promise;
const p = await doc.getPage(1); const c = await p.getTextContent();
for (const it of c.items.slice(0, 12)) console.log(JSON.stringify(it.str), it.transform[4].toFixed(1), it.transform[5].toFixed(1), it.width.toFixed(1), it.hasEOL);
