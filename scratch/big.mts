import { makePdf } from '../test/fixtures/documents.ts';
import { ExtractionPool } from '../plugins/ingestion/extraction-pool.ts';
const f = await makePdf('/tmp/ocrp', 200);
const pool = new ExtractionPool({ workers: 1 });
console.time('x');
try { const d = await pool.extract(f, 'pdf', { tablesEnabled: false, ocrEnabled: false }, (d, t) => { if (d % 50 === 0) console.log(d, t, process.memoryUsage().heapUsed >> 20); });
console.log(d.sections.length); } catch (e) { console.log('ERR', e); }
console.timeEnd('x');
await pool.close();
