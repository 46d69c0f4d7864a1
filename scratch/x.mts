import { makePdf } from '/work/wt/ocr/test/fixtures/documents.ts';
import { extractDocument } from '/work/wt/ocr/plugins/ingestion/extract/index.ts';
const f = await makePdf('/tmp/ocrp', 3);
console.time('x');
const d = await extractDocument(f, 'pdf', { tablesEnabled: false, ocrEnabled: false });
console.timeEnd('x');
console.log(JSON.stringify(d).slice(0, 600));
